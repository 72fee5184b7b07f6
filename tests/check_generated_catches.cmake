# gen.freshness_check_catches_a_stale_copy: the freshness check
# (check_generated.cmake) run on a copy of generated/ with one file edited
# and one deleted must fail, listing both files before any diff, with the
# command that fixes it.  Inputs: GEN, ROOT, WORK, BUILD.
file(REMOVE_RECURSE ${WORK})
file(COPY ${ROOT}/generated/ DESTINATION ${WORK}/copy)
file(APPEND ${WORK}/copy/api/arithmetic.c "/* a hand edit */\n")
file(REMOVE ${WORK}/copy/nodes/arithmetic.h)
execute_process(
  COMMAND ${CMAKE_COMMAND} -DGEN=${GEN} -DSRC=${WORK}/copy -DROOT=${ROOT}
          -DWORK=${WORK}/fresh -DBUILD=${BUILD} -P ${CMAKE_CURRENT_LIST_DIR}/check_generated.cmake
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
if(rc EQUAL 0)
  message(FATAL_ERROR "the freshness check passed a stale copy:\n${all}")
endif()
string(FIND "${all}" "generated/ is stale: 2 file(s)" head)
string(FIND "${all}" "  generated/api/arithmetic.c\n" f1)
string(FIND "${all}" "  generated/nodes/arithmetic.h\n" f2)
string(FIND "${all}" "--target regenerate" fix)
string(FIND "${all}" "@@" first_diff)
if(head EQUAL -1 OR f1 EQUAL -1 OR f2 EQUAL -1 OR fix EQUAL -1 OR first_diff EQUAL -1
   OR fix GREATER first_diff OR f1 GREATER first_diff)
  message(FATAL_ERROR "the freshness check's report is not list, fix, then diffs:\n${all}")
endif()
message(STATUS "a stale copy was caught, listed, and the fix named before the diffs")
