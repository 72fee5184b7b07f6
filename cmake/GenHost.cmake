# yg_gen_host(): builds yagrad-gen now, while the library is being
# configured, and makes the target yagrad-gen name that executable.
#
#   yg_gen_host([SOURCE_DIR <gen/>] [BINARY_DIR <build>/gen-host]
#               [RUNTIME_DIR <build>])
#
# Why at configure time: the library's targets list gen's output files
# as sources, and only gen knows them (`yagrad-gen --list-outputs`, the
# table of gen/main.c; cmake/GenFiles.cmake asks it).  So gen is a
# project of its own (gen/CMakeLists.txt), configured and built here with
# the library build's generator, compiler, build type, flags and
# warnings, in BINARY_DIR; the executable lands in RUNTIME_DIR
# (<build>/yagrad-gen, where it always was).  The target yagrad-gen is an
# IMPORTED executable: `COMMAND yagrad-gen`, `DEPENDS yagrad-gen` and
# $<TARGET_FILE:yagrad-gen> mean that file, as they meant the built one.
#
# Every file of gen/ is a configure dependency: gen decides the output
# list, so an edited gen means a new list.  Edit gen, run `cmake --build`:
# the build tool (Ninja or Make) sees the edit, reruns this configure
# step, which rebuilds gen incrementally (its own build tool, one object
# per edited file) and asks it for the list again; the edges that run gen
# depend on the executable, so the output is generated again too.  A
# compiler error in gen stops the configure step with the compiler's
# messages and says so.  Sets YG_GEN_EXECUTABLE in the caller's scope.
function(yg_gen_host)
  cmake_parse_arguments(PARSE_ARGV 0 H "" "SOURCE_DIR;BINARY_DIR;RUNTIME_DIR" "")
  if(NOT H_SOURCE_DIR)
    set(H_SOURCE_DIR ${PROJECT_SOURCE_DIR}/gen)
  endif()
  if(NOT H_BINARY_DIR)
    set(H_BINARY_DIR ${PROJECT_BINARY_DIR}/gen-host)
  endif()
  if(NOT H_RUNTIME_DIR)
    set(H_RUNTIME_DIR ${PROJECT_BINARY_DIR})
  endif()
  set(exe ${H_RUNTIME_DIR}/yagrad-gen${CMAKE_EXECUTABLE_SUFFIX})
  get_filename_component(deps ${H_SOURCE_DIR}/../cmake/GenDependencies.cmake ABSOLUTE)
  file(GLOB sources CONFIGURE_DEPENDS ${H_SOURCE_DIR}/*.c ${H_SOURCE_DIR}/*.h)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${sources}
               ${H_SOURCE_DIR}/CMakeLists.txt ${deps} ${exe})

  # What gen's project takes from this one, FORCEd so that a changed
  # value reaches its cache; rewritten only when a value changed, so
  # an unchanged setup skips configuring gen's project again.
  set(type ${CMAKE_BUILD_TYPE})
  if(NOT type)
    set(type Release)
  endif()
  string(TOUPPER ${type} TYPE)
  set(init "")
  foreach(var CMAKE_C_COMPILER CMAKE_C_COMPILER_LAUNCHER CMAKE_MAKE_PROGRAM CMAKE_C_FLAGS
              CMAKE_C_FLAGS_${TYPE} CMAKE_EXE_LINKER_FLAGS YG_WARNINGS YAML_INCLUDE_DIR
              YAML_LIBRARY CLANG_INCLUDE_DIR CLANG_LIBRARY)
    if(DEFINED ${var})
      string(APPEND init "set(${var} [==[${${var}}]==] CACHE STRING \"\" FORCE)\n")
    endif()
  endforeach()
  string(APPEND init "set(CMAKE_BUILD_TYPE ${type} CACHE STRING \"\" FORCE)\n"
                     "set(YG_GEN_RUNTIME_DIR [==[${H_RUNTIME_DIR}]==] CACHE PATH \"\" FORCE)\n")
  set(init_file ${H_BINARY_DIR}-init.cmake)
  set(configured ${H_BINARY_DIR}/yg-configured.stamp)
  file(CONFIGURE OUTPUT ${init_file} CONTENT "${init}")
  if(NOT EXISTS ${configured} OR ${init_file} IS_NEWER_THAN ${configured})
    execute_process(COMMAND ${CMAKE_COMMAND} -S ${H_SOURCE_DIR} -B ${H_BINARY_DIR}
                            -G ${CMAKE_GENERATOR} -C ${init_file}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
    if(NOT rc EQUAL 0)
      message(NOTICE "${out}")
      message(FATAL_ERROR "configuring yagrad-gen's project (${H_SOURCE_DIR}) failed: "
                          "its messages are above")
    endif()
    file(TOUCH ${configured})
  endif()

  # Make's job server belongs to the make that may have started this
  # configure step (a build that reconfigures): the nested build runs
  # without it, with as many jobs as the machine has cores unless
  # CMAKE_BUILD_PARALLEL_LEVEL says otherwise.
  set(parallel "")
  if(NOT DEFINED ENV{CMAKE_BUILD_PARALLEL_LEVEL})
    cmake_host_system_information(RESULT cores QUERY NUMBER_OF_LOGICAL_CORES)
    set(parallel --parallel ${cores})
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=MAKEFLAGS --unset=MFLAGS
                          --unset=MAKELEVEL
                          ${CMAKE_COMMAND} --build ${H_BINARY_DIR} --config ${type} ${parallel}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0 OR NOT EXISTS ${exe})
    message(NOTICE "${out}")
    message(FATAL_ERROR "yagrad-gen did not build (${H_SOURCE_DIR}): the compiler's messages "
                        "are above; the library's build needs gen to configure")
  endif()
  message(STATUS "yagrad-gen: ${exe} (built from ${H_SOURCE_DIR} in ${H_BINARY_DIR})")

  add_executable(yagrad-gen IMPORTED)
  set_target_properties(yagrad-gen PROPERTIES IMPORTED_LOCATION ${exe})
  set(YG_GEN_EXECUTABLE ${exe} PARENT_SCOPE)
endfunction()
