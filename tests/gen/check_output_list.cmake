# gen.output_list_matches_cmake: the files `yagrad-gen --list-outputs`
# says a build of the specs gets (gen/main.c's table of outputs) are the
# files cmake/GenFiles.cmake listed at configure time (LIST, one a line),
# which the build compiles and claims as byproducts.  A file on one side
# only is named.
#
#   cmake -DGEN=<yagrad-gen> -DSPECS=<specs dir> -DLIST=<file> -P check_output_list.cmake
execute_process(COMMAND ${GEN} --list-outputs ${SPECS} RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "yagrad-gen --list-outputs failed (${rc}):\n${err}")
endif()
string(REGEX REPLACE "\n$" "" out "${out}")
string(REPLACE "\n" ";" gen_list "${out}")
file(STRINGS ${LIST} cmake_list)
list(SORT gen_list)
list(SORT cmake_list)
set(only_gen ${gen_list})
list(REMOVE_ITEM only_gen ${cmake_list})
set(only_cmake ${cmake_list})
list(REMOVE_ITEM only_cmake ${gen_list})
if(only_gen OR only_cmake)
  message(FATAL_ERROR "gen's outputs and cmake/GenFiles.cmake's list differ:\n"
                      "  written by gen, not listed by CMake: ${only_gen}\n"
                      "  listed by CMake, not written by gen: ${only_cmake}")
endif()
list(LENGTH gen_list n)
message(STATUS "gen and CMake agree on ${n} output files")
