# gen.checked_in_output_is_fresh: runs gen (GEN) on the source tree's
# specs into a scratch folder (WORK) and compares the result with the
# checked-in generated/ (SRC), so a spec edited without a rebuild, or a
# hand edit anywhere, is caught: nothing of the build tree's own copy is
# trusted.  On a difference it prints the stale files and what most likely
# happened first, then the one command that fixes it, then the diffs.
#
# Which story: when the stale files differ from git's HEAD while specs/
# and gen/ do not, generated/ was edited by hand (and the edit is lost on
# the next regenerate: change specs/ or gen/ instead); otherwise specs/
# or gen/ changed and generated/ was not regenerated.  Without git, both
# are named.
#
# Inputs: GEN, SRC (generated/), ROOT (the source tree), WORK, BUILD.
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${GEN} specs ${WORK}
                WORKING_DIRECTORY ${ROOT}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "yagrad-gen failed on specs/ (fix the spec first):\n${err}")
endif()
file(GLOB_RECURSE src_files RELATIVE ${SRC} ${SRC}/*)
file(GLOB_RECURSE out_files RELATIVE ${WORK} ${WORK}/*)
list(SORT src_files)
list(SORT out_files)
set(stale "")
foreach(f ${out_files})
  if(NOT EXISTS ${SRC}/${f})
    list(APPEND stale ${f})
  else()
    file(READ ${SRC}/${f} a)
    file(READ ${WORK}/${f} b)
    if(NOT a STREQUAL b)
      list(APPEND stale ${f})
    endif()
  endif()
endforeach()
foreach(f ${src_files})
  if(NOT EXISTS ${WORK}/${f})
    list(APPEND stale ${f})
  endif()
endforeach()
if(NOT stale)
  message(STATUS "generated/ equals what gen writes from specs/ now")
  return()
endif()

list(LENGTH stale n)
set(listing "")
foreach(f ${stale})
  string(APPEND listing "  generated/${f}\n")
endforeach()
# What happened, from git when there is one.
set(story "specs/ or gen/ changed but generated/ was not regenerated")
find_program(GIT git)
if(GIT AND EXISTS ${ROOT}/.git)
  set(edited "")
  foreach(f ${stale})
    execute_process(COMMAND ${GIT} diff --quiet HEAD -- generated/${f}
                    WORKING_DIRECTORY ${ROOT} RESULT_VARIABLE d)
    if(d EQUAL 1)
      list(APPEND edited ${f})
    endif()
  endforeach()
  execute_process(COMMAND ${GIT} diff --quiet HEAD -- specs gen
                  WORKING_DIRECTORY ${ROOT} RESULT_VARIABLE sources_changed)
  if(edited AND NOT sources_changed EQUAL 1)
    string(CONCAT story "generated/ was edited by hand (specs/ and gen/ are as committed): "
           "never edit generated/, the next regenerate overwrites it. Change specs/ or gen/ "
           "instead, or drop the edit with `git checkout -- generated/`")
  endif()
else()
  set(story "specs/ or gen/ changed without regenerating, or generated/ was edited by hand")
endif()
message("generated/ is stale: ${n} file(s) differ from what gen writes from specs/ now:\n"
        "${listing}"
        "What happened: ${story}.\n"
        "To update generated/ from specs/ and gen/, run:\n"
        "  cmake --build ${BUILD} --target regenerate\n"
        "then review and commit the diff of generated/.  The diffs follow.\n")
foreach(f ${stale})
  if(EXISTS ${SRC}/${f} AND EXISTS ${WORK}/${f})
    execute_process(COMMAND diff -u ${SRC}/${f} ${WORK}/${f} OUTPUT_VARIABLE d)
    message("${d}")
  endif()
endforeach()
message(FATAL_ERROR "generated/ is stale: ${n} file(s) (listed at the top)")
