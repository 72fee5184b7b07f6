# gen.spec_error_build_output_is_short: a spec error in a build shows gen's
# located message and little else (cmake/GenCommand.cmake).  With
# GEN (yagrad-gen), SRC (the source tree), WORK (scratch), GENERATOR:
#   1. a scratch project (tests/gen/quiet/) over a copy of the golden
#      spec builds, and builds again with nothing to do;
#   2. an unknown op in a derivative formula fails the build with gen's
#      `derivatives.yaml:LINE:COL: error:` line, in under 2000 bytes of
#      output that name no generated file;
#   3. fixed, it builds; a generated file deleted by hand is written again
#      by the next build;
#   4. an unknown key in native_functions.yaml, which the configure step
#      meets first (it asks gen for the list of files,
#      cmake/GenFiles.cmake), fails the build with gen's located
#      `native_functions.yaml:LINE:COL: error:` line, in under 3000 bytes;
#      fixed, it builds.
file(REMOVE_RECURSE ${WORK})
file(COPY ${SRC}/tests/gen/golden/specs DESTINATION ${WORK})
set(specs ${WORK}/specs)
set(build ${WORK}/build)

function(build expect_ok var)
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${build} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(out "${out}${err}")
  if(expect_ok AND NOT rc EQUAL 0)
    message(FATAL_ERROR "the scratch build failed:\n${out}")
  elseif(NOT expect_ok AND rc EQUAL 0)
    message(FATAL_ERROR "the scratch build passed with a broken spec:\n${out}")
  endif()
  set(${var} "${out}" PARENT_SCOPE)
endfunction()

execute_process(COMMAND ${CMAKE_COMMAND} -S ${SRC}/tests/gen/quiet -B ${build} -G ${GENERATOR}
                        -DYG_SOURCE=${SRC} -DGEN=${GEN} -DSPECS=${specs}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the scratch project failed:\n${out}${err}")
endif()
build(TRUE out)
build(TRUE out)
if(GENERATOR STREQUAL "Ninja" AND NOT out MATCHES "no work to do")
  message(FATAL_ERROR "a second build ran something:\n${out}")
endif()

file(READ ${specs}/derivatives.yaml good)
string(REPLACE "self: mul(grad, other)" "self: mull(grad, other)" bad "${good}")
if(bad STREQUAL good)
  message(FATAL_ERROR "the golden derivatives.yaml no longer has 'self: mul(grad, other)'")
endif()
file(WRITE ${specs}/derivatives.yaml "${bad}")
build(FALSE out)
string(LENGTH "${out}" n)
message("a broken spec: ${n} bytes of build output:\n${out}")
if(NOT out MATCHES "derivatives\\.yaml:[0-9]+:[0-9]+: error: mul: unknown op 'mull'")
  message(FATAL_ERROR "gen's located error is missing from the output above")
endif()
if(out MATCHES "(api|nodes|boxed|graph_grad|kernels|loops|onnx)/[a-z_]+\\.[ch]")
  message(FATAL_ERROR "the output above names generated files (${CMAKE_MATCH_0})")
endif()
if(n GREATER 2000)
  message(FATAL_ERROR "the output above is ${n} bytes; expected gen's message and little else")
endif()

file(WRITE ${specs}/derivatives.yaml "${good}")
build(TRUE out)
file(GLOB_RECURSE generated ${build}/out/api/*.c)
list(GET generated 0 victim)
file(REMOVE ${victim})
build(TRUE out)
if(NOT EXISTS ${victim})
  message(FATAL_ERROR "${victim} was deleted and the build did not write it again:\n${out}")
endif()

file(READ ${specs}/native_functions.yaml good)
string(REPLACE "  pointwise: \"self + alpha * other\"\n"
               "  pointwise: \"self + alpha * other\"\n  pointwize: \"self\"\n" bad "${good}")
if(bad STREQUAL good)
  message(FATAL_ERROR "the golden native_functions.yaml no longer has "
                      "'pointwise: \"self + alpha * other\"'")
endif()
file(WRITE ${specs}/native_functions.yaml "${bad}")
build(FALSE out)
string(LENGTH "${out}" n_configure)
message("a spec error the configure step meets: ${n_configure} bytes of build output:\n${out}")
if(NOT out MATCHES "native_functions\\.yaml:[0-9]+:[0-9]+: error: add: unknown key 'pointwize'")
  message(FATAL_ERROR "gen's located error is missing from the output above")
endif()
if(n_configure GREATER 3000)
  message(FATAL_ERROR "the output above is ${n_configure} bytes; expected gen's message and "
                      "little else")
endif()
file(WRITE ${specs}/native_functions.yaml "${good}")
build(TRUE out)
message(STATUS "a spec error prints ${n} bytes (${n_configure} when the configure step finds "
               "it); a deleted generated file is written again")
