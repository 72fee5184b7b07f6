# layers.test_catches_a_forbidden_include: the layering check
# (check_layers.cmake) run on a copy of runtime/ and generated/
#   1. as it is: passes;
#   2. with runtime/core/layer_probe.c including "jit/ir/ir.h": fails with
#      exactly that problem, naming the file, its line, the include, both
#      units and what core may include;
#   3. with the include of the first exception deleted: fails with exactly
#      that exception reported stale.
#   cmake -DSRC=<repository root> -DWORK=<scratch folder> -P tests/check_layers_catches.cmake
cmake_minimum_required(VERSION 3.20)
set(checker ${CMAKE_CURRENT_LIST_DIR}/check_layers.cmake)
set(tree ${WORK}/tree)

function(run_checker out_rc out_text)
  execute_process(COMMAND ${CMAKE_COMMAND} -DSRC=${tree} -P ${checker}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${out_rc} ${rc} PARENT_SCOPE)
  set(${out_text} "${out}${err}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK})
file(COPY ${SRC}/runtime ${SRC}/generated DESTINATION ${tree}
     FILES_MATCHING PATTERN "*.c" PATTERN "*.h" PATTERN "*.cu" PATTERN "*.cuh")

# 1. the copy passes, so what fails below is the edit
run_checker(rc all)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the layering check fails on an unedited copy:\n${all}")
endif()

# 2. an upward include
file(WRITE ${tree}/runtime/core/layer_probe.c
     "/* a core file reaching up into the jit */\n#include \"jit/ir/ir.h\"\n")
run_checker(rc all)
if(rc EQUAL 0)
  message(FATAL_ERROR "the layering check passed core including jit/ir/ir.h:\n${all}")
endif()
set(want_problem "runtime/core/layer_probe\\.c:2: #include \"jit/ir/ir\\.h\" goes from core to jit\\.ir \\(runtime/jit/ir/ir\\.h\\), which core may not include\n")
set(want_allowed "\n    core may include: public \\(and core itself\\)")
if(NOT all MATCHES "${want_problem}" OR NOT all MATCHES "${want_allowed}"
   OR NOT all MATCHES "layering: 1 problem\\(s\\):")
  message(FATAL_ERROR "the layering check failed, but not with the one problem "
                      "'core -> jit.ir' named by file, line and include:\n${all}")
endif()
file(REMOVE ${tree}/runtime/core/layer_probe.c)
message(STATUS "an include from core up to jit.ir was caught, named by file, line, include and units")

# 3. a stale exception (none left to try once the list is empty)
file(READ ${checker} text)
if(NOT text MATCHES "\n  ((runtime|generated)/[^|\n]+)\\|([^ \n)]+)")
  message(STATUS "no exception left: the stale-exception case has nothing to remove")
  return()
endif()
set(file ${CMAKE_MATCH_1})
set(inc ${CMAKE_MATCH_3})
file(READ ${tree}/${file} source)
string(REGEX REPLACE "([][.+*?^$()|\\\\])" "\\\\\\1" inc_re "${inc}")
string(REGEX REPLACE "[ \t]*#[ \t]*include[ \t]*\"${inc_re}\"[^\n]*\n" "" edited "${source}")
if(edited STREQUAL source)
  message(FATAL_ERROR "${file} has no #include \"${inc}\" to delete")
endif()
file(WRITE ${tree}/${file} "${edited}")
run_checker(rc all)
string(REGEX REPLACE "([][.+*?^$()|\\\\])" "\\\\\\1" key_re "${file}|${inc}")
if(rc EQUAL 0 OR NOT all MATCHES "\nstale exception: ${key_re} no longer occurs"
   OR NOT all MATCHES "layering: 1 problem\\(s\\):")
  message(FATAL_ERROR "with the include of ${file}|${inc} deleted the layering check "
                      "did not report that one exception stale:\n${all}")
endif()
message(STATUS "a stale exception (${file}|${inc}) was caught")
