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

# Replaces FROM by TO in the copy's spec FILE, which must hold FROM.
function(edit_spec file from to)
  file(READ ${specs}/${file} text)
  string(REPLACE "${from}" "${to}" edited "${text}")
  if(edited STREQUAL text)
    message(FATAL_ERROR "the golden ${file} no longer has '${from}'")
  endif()
  file(WRITE ${specs}/${file} "${edited}")
endfunction()

# Builds, expecting a failure that shows gen's located error (REGEX) in
# at most LIMIT bytes; sets OUT_VAR to the output, N_VAR to its length.
function(expect_short_failure what regex limit out_var n_var)
  build(FALSE out)
  string(LENGTH "${out}" n)
  message("${what}: ${n} bytes of build output:\n${out}")
  if(NOT out MATCHES "${regex}")
    message(FATAL_ERROR "gen's located error is missing from the output above")
  endif()
  if(n GREATER limit)
    message(FATAL_ERROR "the output above is ${n} bytes; expected gen's message and little else")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
  set(${n_var} ${n} PARENT_SCOPE)
endfunction()

set(good "self: mul(grad, other)")
set(bad "self: mull(grad, other)")
edit_spec(derivatives.yaml "${good}" "${bad}")
expect_short_failure("a broken spec"
                     "derivatives\\.yaml:[0-9]+:[0-9]+: error: mul: unknown op 'mull'"
                     2000 out n)
if(out MATCHES "(api|nodes|boxed|graph_grad|kernels|loops|onnx)/[a-z_]+\\.[ch]")
  message(FATAL_ERROR "the output above names generated files (${CMAKE_MATCH_0})")
endif()

edit_spec(derivatives.yaml "${bad}" "${good}")
build(TRUE out)
file(GLOB_RECURSE generated ${build}/out/api/*.c)
list(GET generated 0 victim)
file(REMOVE ${victim})
build(TRUE out)
if(NOT EXISTS ${victim})
  message(FATAL_ERROR "${victim} was deleted and the build did not write it again:\n${out}")
endif()

set(good "  pointwise: \"self + alpha * other\"\n")
set(bad "${good}  pointwize: \"self\"\n")
edit_spec(native_functions.yaml "${good}" "${bad}")
expect_short_failure("a spec error the configure step meets"
                     "native_functions\\.yaml:[0-9]+:[0-9]+: error: add: unknown key 'pointwize'"
                     3000 out n_configure)
edit_spec(native_functions.yaml "${bad}" "${good}")
build(TRUE out)
message(STATUS "a spec error prints ${n} bytes (${n_configure} when the configure step finds "
               "it); a deleted generated file is written again")
