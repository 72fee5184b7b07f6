# gen.compile_error_stops_configure: gen is built while the library is
# configured (cmake/GenHost.cmake), so a compiler error in gen must stop
# the configure step with the compiler's own message.  With SRC (the
# source tree), WORK (scratch) and GENERATOR: a copy of gen/ (and the
# cmake/ files its build reads) with a syntax error added to main.c
# fails to configure (tests/gen/host/), printing the compiler's
# `main.c:LINE:COL: error:` and the reason; fixed, it configures and
# the built yagrad-gen runs.
file(REMOVE_RECURSE ${WORK})
file(COPY ${SRC}/gen DESTINATION ${WORK}/copy)
file(COPY ${SRC}/cmake/GenHost.cmake ${SRC}/cmake/GenDependencies.cmake
     DESTINATION ${WORK}/copy/cmake)
set(build ${WORK}/build)

function(configure expect_ok var)
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${SRC}/tests/gen/host -B ${build} -G ${GENERATOR}
                          -DYG_COPY=${WORK}/copy
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(out "${out}${err}")
  if(expect_ok AND NOT rc EQUAL 0)
    message(FATAL_ERROR "configuring the scratch project failed:\n${out}")
  elseif(NOT expect_ok AND rc EQUAL 0)
    message(FATAL_ERROR "the scratch project configured with a broken gen:\n${out}")
  endif()
  set(${var} "${out}" PARENT_SCOPE)
endfunction()

file(READ ${WORK}/copy/gen/main.c good)
file(APPEND ${WORK}/copy/gen/main.c "\nint yg_broken = ;\n")
configure(FALSE out)
message("a compiler error in gen, configuring:\n${out}")
if(NOT out MATCHES "main\\.c:[0-9]+:[0-9]+: error:")
  message(FATAL_ERROR "the compiler's error is missing from the output above")
endif()
if(NOT out MATCHES "yagrad-gen did not build")
  message(FATAL_ERROR "the reason is missing from the output above")
endif()

file(WRITE ${WORK}/copy/gen/main.c "${good}")
configure(TRUE out)
execute_process(COMMAND ${build}/yagrad-gen --list-outputs ${SRC}/tests/gen/golden/specs
                RESULT_VARIABLE rc OUTPUT_VARIABLE listing ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT listing MATCHES "api/pointwise\\.c")
  message(FATAL_ERROR "the yagrad-gen built at configure time does not run (${rc}):\n${err}")
endif()
message(STATUS "a compiler error in gen stops configuring with its message")
