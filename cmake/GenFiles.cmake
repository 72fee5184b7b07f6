# yg_gen_files(<gen> <specs-dir> <out-var>): the files yagrad-gen writes
# for the specs in <specs-dir> (relative to the project's source folder,
# or absolute), relative to its output folder, as gen itself lists them:
# `<gen> --list-outputs <specs-dir>`, which prints the rows of the output
# table of gen/main.c for these specs and writes nothing.  The build lists
# them as sources at configure time, so <gen> must exist by then
# (cmake/GenHost.cmake builds it first).
#
# The list depends on the sections of native_functions.yaml and on which
# of them have a `pointwise:` op, and on gen (cmake/GenHost.cmake makes
# gen/ a configure dependency).  native_functions.yaml is one too, so
# adding a section reconfigures.  derivatives.yaml is not, so editing a
# formula (which names no new file) only reruns gen in the build; gen
# loads it for the listing all the same, and a spec error it finds here
# stops the configure step with gen's located messages.
#
# This replaced regexes over the YAML that re-derived gen's table and
# had to be kept in step with it by a test.
function(yg_gen_files gen specs out_var)
  get_filename_component(dir ${specs} ABSOLUTE BASE_DIR ${PROJECT_SOURCE_DIR})
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${dir}/native_functions.yaml)
  execute_process(COMMAND ${gen} --list-outputs ${specs}
                  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(NOTICE "${err}")
    message(FATAL_ERROR "`yagrad-gen --list-outputs ${specs}` failed (${rc}): fix the spec "
                        "(gen's messages are above)")
  endif()
  string(REGEX REPLACE "\n$" "" out "${out}")
  string(REPLACE "\n" ";" files "${out}")
  set(${out_var} ${files} PARENT_SCOPE)
endfunction()
