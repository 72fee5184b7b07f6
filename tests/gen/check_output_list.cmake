# gen.listed_outputs_are_the_written_files: the files
# `yagrad-gen --list-outputs` names, which the build's configure step
# lists as sources and byproducts (cmake/GenFiles.cmake), are exactly the
# files gen writes.  For each folder of SPECS, gen lists, then writes
# into a scratch folder under WORK; a file on one side only is named.
# Both come from the table of outputs in gen/main.c, so this fails when
# something writes around the table, or the listing skips a row the
# writer keeps: a build would then miss a file it compiles, or never
# compile one gen writes.
#
#   cmake -DGEN=<yagrad-gen> "-DSPECS=<dir>;<dir>..." -DWORK=<scratch> -DROOT=<source tree>
#         -P check_output_list.cmake
set(failures "")
set(i 0)
foreach(specs ${SPECS})
  math(EXPR i "${i} + 1")
  set(out ${WORK}/${i})
  file(REMOVE_RECURSE ${out})
  execute_process(COMMAND ${GEN} --list-outputs ${specs} WORKING_DIRECTORY ${ROOT}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE listing ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "yagrad-gen --list-outputs ${specs} failed (${rc}):\n${err}")
  endif()
  execute_process(COMMAND ${GEN} ${specs} ${out} WORKING_DIRECTORY ${ROOT}
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "yagrad-gen ${specs} failed (${rc}):\n${err}")
  endif()
  string(REGEX REPLACE "\n$" "" listing "${listing}")
  string(REPLACE "\n" ";" listed "${listing}")
  file(GLOB_RECURSE written RELATIVE ${out} ${out}/*)
  list(LENGTH listed n_listed)
  list(REMOVE_DUPLICATES listed)
  list(LENGTH listed n_unique)
  if(NOT n_listed EQUAL n_unique)
    string(APPEND failures "${specs}: --list-outputs names a file twice\n")
  endif()
  set(only_listed ${listed})
  list(REMOVE_ITEM only_listed ${written})
  set(only_written ${written})
  list(REMOVE_ITEM only_written ${listed})
  if(only_listed OR only_written)
    string(APPEND failures "${specs}:\n"
           "  listed by --list-outputs, not written: ${only_listed}\n"
           "  written, not listed by --list-outputs: ${only_written}\n")
  endif()
  message(STATUS "${specs}: gen lists the ${n_unique} files it writes")
endforeach()
if(failures)
  message(FATAL_ERROR "gen's listing and its output differ:\n${failures}")
endif()
