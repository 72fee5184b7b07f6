# The install tests (tests/CMakeLists.txt, install.*): cmake -P this file
# with -DSTEP=<step> and
#   BUILD   the build tree of yagrad to install
#   PREFIX  the temporary install prefix
#   WORK    a scratch folder for this step
#   SRC     tests/external (the consumer project)
#   CC, C_FLAGS, LINKER_FLAGS, GENERATOR, VERSION
#   STATIC  whether the build has libyagrad.a (YG_BUILD_STATIC)
# Steps:
#   install     cmake --install BUILD --prefix PREFIX (the fixture)
#   cmake       configure, build and run tests/external/CMakeLists.txt against
#               PREFIX: yagrad::yagrad and yagrad::yagrad_static
#   pkg-config  build and run main.c with a plain compiler command line
#               from `pkg-config yagrad`, shared and static
#   headers     every installed header compiles on its own, and the
#               installed set is exactly what yagrad/yagrad.h includes
# Every command's output is printed; any failure ends with FATAL_ERROR.
cmake_minimum_required(VERSION 3.25)

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REPLACE ";" " " cmd "${ARGN}")
  message("$ ${cmd}\n${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc})")
  endif()
  set(OUT "${out}" PARENT_SCOPE)
endfunction()

# The NEEDED entries of an ELF file, as "libfoo.so.1;libbar.so.2".
function(needed file var)
  execute_process(COMMAND readelf -d ${file} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "readelf -d ${file} failed")
  endif()
  string(REGEX MATCHALL "Shared library: \\[[^]]*\\]" lines "${out}")
  set(libs "")
  foreach(l ${lines})
    string(REGEX REPLACE "Shared library: \\[(.*)\\]" "\\1" l "${l}")
    list(APPEND libs ${l})
  endforeach()
  set(${var} "${libs}" PARENT_SCOPE)
endfunction()

# The program's output must end with "ok" and its gradient lines.
function(run_program exe)
  run("${exe}" ${exe})
  if(NOT OUT MATCHES "gradient:.*\nexpected:.*\nok\n$")
    message(FATAL_ERROR "${exe}: unexpected output:\n${OUT}")
  endif()
endfunction()

function(expect_linkage exe shared)
  needed(${exe} libs)
  string(REPLACE "." ";" v "${VERSION}")
  list(GET v 0 major)
  list(GET v 1 minor)
  if(major EQUAL 0)
    set(soname libyagrad.so.${major}.${minor})
  else()
    set(soname libyagrad.so.${major})
  endif()
  if(shared AND NOT soname IN_LIST libs)
    message(FATAL_ERROR "${exe} should need ${soname}; NEEDED: ${libs}")
  endif()
  if(NOT shared AND libs MATCHES "libyagrad")
    message(FATAL_ERROR "${exe} is linked with libyagrad.a but needs: ${libs}")
  endif()
  message("${exe}: NEEDED ${libs}")
endfunction()

separate_arguments(c_flags UNIX_COMMAND "${C_FLAGS}")
separate_arguments(linker_flags UNIX_COMMAND "${LINKER_FLAGS}")

if(STEP STREQUAL "install")
  file(REMOVE_RECURSE ${PREFIX})
  run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD} --prefix ${PREFIX})
  file(GLOB_RECURSE files RELATIVE ${PREFIX} ${PREFIX}/*)
  list(SORT files)
  string(REPLACE ";" "\n  " listing "${files}")
  message("installed into ${PREFIX}:\n  ${listing}")

elseif(STEP STREQUAL "cmake")
  file(REMOVE_RECURSE ${WORK})
  run("configure the consumer" ${CMAKE_COMMAND} -S ${SRC} -B ${WORK} -G ${GENERATOR}
      -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_C_COMPILER=${CC} "-DCMAKE_C_FLAGS=${C_FLAGS}"
      "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}" -DSTATIC=${STATIC})
  if(NOT OUT MATCHES "yagrad ${VERSION} from ${PREFIX}/")
    message(FATAL_ERROR "the consumer did not find yagrad ${VERSION} in ${PREFIX}")
  endif()
  run("build the consumer" ${CMAKE_COMMAND} --build ${WORK})
  expect_linkage(${WORK}/grad_shared TRUE)
  run_program(${WORK}/grad_shared)
  if(STATIC)
    expect_linkage(${WORK}/grad_static FALSE)
    run_program(${WORK}/grad_static)
  endif()

elseif(STEP STREQUAL "pkg-config")
  file(REMOVE_RECURSE ${WORK})
  file(MAKE_DIRECTORY ${WORK})
  find_program(PKG_CONFIG pkg-config REQUIRED)
  file(GLOB pcs ${PREFIX}/*/pkgconfig/yagrad.pc ${PREFIX}/*/*/pkgconfig/yagrad.pc)
  list(GET pcs 0 pc)
  get_filename_component(pcdir ${pc} DIRECTORY)
  set(ENV{PKG_CONFIG_PATH} ${pcdir})
  run("pkg-config --modversion" ${PKG_CONFIG} --modversion yagrad)
  string(STRIP "${OUT}" v)
  if(NOT v STREQUAL VERSION)
    message(FATAL_ERROR "pkg-config says yagrad ${v}, the build is ${VERSION}")
  endif()
  run("pkg-config --cflags" ${PKG_CONFIG} --cflags yagrad)
  separate_arguments(cflags UNIX_COMMAND "${OUT}")
  run("pkg-config --libs" ${PKG_CONFIG} --libs yagrad)
  separate_arguments(libs UNIX_COMMAND "${OUT}")
  run("pkg-config --variable=libdir" ${PKG_CONFIG} --variable=libdir yagrad)
  string(STRIP "${OUT}" libdir)
  # Shared: the usual line, with an rpath so the program finds the
  # library in the temporary prefix.
  run("cc (shared)" ${CC} ${c_flags} ${SRC}/main.c ${cflags} ${libs} -lm
      -Wl,-rpath,${libdir} ${linker_flags} -o ${WORK}/grad_pc_shared)
  expect_linkage(${WORK}/grad_pc_shared TRUE)
  run_program(${WORK}/grad_pc_shared)
  # Static: Libs.private too, and -l:libyagrad.a so the linker takes the
  # archive although libyagrad.so sits beside it.
  if(STATIC)
    run("pkg-config --static --libs" ${PKG_CONFIG} --static --libs yagrad)
    string(REGEX REPLACE "(^| )-lyagrad( |$)" "\\1-l:libyagrad.a\\2" static_libs "${OUT}")
    separate_arguments(static_libs UNIX_COMMAND "${static_libs}")
    run("cc (static)" ${CC} ${c_flags} ${SRC}/main.c ${cflags} ${static_libs} -lm
        ${linker_flags} -o ${WORK}/grad_pc_static)
    expect_linkage(${WORK}/grad_pc_static FALSE)
    run_program(${WORK}/grad_pc_static)
  endif()
  run("pkg-config --variable=components" ${PKG_CONFIG} --variable=components yagrad)

elseif(STEP STREQUAL "headers")
  file(REMOVE_RECURSE ${WORK})
  file(MAKE_DIRECTORY ${WORK})
  file(GLOB installed RELATIVE ${PREFIX}/include/yagrad ${PREFIX}/include/yagrad/*)
  list(SORT installed)
  set(sources "")
  foreach(h ${installed})
    if(NOT h MATCHES "\\.h$")
      message(FATAL_ERROR "include/yagrad/${h} is not a header")
    endif()
    string(REPLACE "." "_" stem ${h})
    file(WRITE ${WORK}/${stem}.c "#include <yagrad/${h}>\n")
    list(APPEND sources ${WORK}/${stem}.c)
  endforeach()
  # Each header alone, strict C11, only the install prefix on the path:
  # an internal header it included would not be found.
  run("compile each installed header alone" ${CC} ${c_flags} -std=c11 -Wall -Wextra -Wpedantic
      -Werror -fsyntax-only -I${PREFIX}/include ${sources})
  # The headers yagrad.h reaches, following #include "yagrad/..." lines.
  set(reached "")
  set(todo yagrad.h)
  while(todo)
    list(POP_FRONT todo h)
    if(h IN_LIST reached)
      continue()
    endif()
    if(NOT EXISTS ${PREFIX}/include/yagrad/${h})
      message(FATAL_ERROR "yagrad/${h} is included but not installed")
    endif()
    list(APPEND reached ${h})
    file(STRINGS ${PREFIX}/include/yagrad/${h} incs REGEX "^#include [\"<]yagrad/")
    foreach(inc ${incs})
      string(REGEX REPLACE "^#include [\"<]yagrad/([^\">]*)[\">].*" "\\1" inc "${inc}")
      list(APPEND todo ${inc})
    endforeach()
  endwhile()
  list(SORT reached)
  if(NOT reached STREQUAL installed)
    message(FATAL_ERROR "installed: ${installed}\nreached from yagrad.h: ${reached}")
  endif()
  list(LENGTH installed n)
  message("${n} headers installed, each compiles alone, all reached from yagrad/yagrad.h")
else()
  message(FATAL_ERROR "unknown STEP '${STEP}'")
endif()
