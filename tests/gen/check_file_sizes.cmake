# gen.generated_files_are_short: fails when a checked-in generated file
# (DIR, the repository's generated/) is longer than LIMIT lines, naming the
# file and the section of specs/native_functions.yaml to split.
# The project's rule for generated code: a file stays under ~1500 lines
# so it can be read and reviewed, split by meaning (the YAML's sections),
# never by hash or size.
#
# Exempt: registry.c, the two tables yg__ops[] and yg__derivatives[] (one
# row per op and per derivative entry, in YAML order, for the tests and
# tools that enumerate them).  It is data read row by row, not code; split
# by section it would become one partial table per section that the
# runtime would have to concatenate at startup.
cmake_minimum_required(VERSION 3.20)
set(exempt registry.c)
file(GLOB_RECURSE files RELATIVE ${DIR} ${DIR}/*.c ${DIR}/*.h)
list(SORT files)
set(failures "")
foreach(f ${files})
  if(f IN_LIST exempt)
    continue()
  endif()
  file(READ ${DIR}/${f} text)
  string(REGEX REPLACE "[^\n]" "" newlines "${text}")
  string(LENGTH "${newlines}" n)
  if(n GREATER LIMIT)
    get_filename_component(stem ${f} NAME_WE)
    string(REGEX REPLACE "^ops_" "" section ${stem})
    if(f MATCHES "^(api|nodes|boxed|kernels)/" OR f MATCHES "^include/yagrad/ops_")
      string(APPEND failures
             "generated/${f} has ${n} lines (limit ${LIMIT}): split the section "
             "'${section}' of specs/native_functions.yaml into sections by meaning "
             "(a new '- section: <name>' item before the ops that move)\n")
    else()
      string(APPEND failures
             "generated/${f} has ${n} lines (limit ${LIMIT}); it is not a section's file: "
             "make its rows compact or split it in gen (gen/main.c write_outputs)\n")
    endif()
  endif()
endforeach()
if(NOT failures STREQUAL "")
  message(FATAL_ERROR "generated files over ${LIMIT} lines:\n${failures}")
endif()
list(LENGTH files n_files)
message(STATUS "${n_files} generated files, each at most ${LIMIT} lines (registry.c exempt)")
