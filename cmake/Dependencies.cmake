# Finds yagrad's system dependencies and says what to install when one is
# missing.  scripts/install-deps.sh installs all of them on Debian 12.
set(YG_INSTALL_HINT "run scripts/install-deps.sh (Debian 12)")

find_package(PkgConfig QUIET)

# libyaml and libclang 14, what gen links (cmake/GenDependencies.cmake,
# shared with the generator's own project, gen/CMakeLists.txt)
include(${CMAKE_CURRENT_LIST_DIR}/GenDependencies.cmake)

# OpenBLAS, the OpenMP build (one thread pool with the library's own loops)
find_path(OPENBLAS_INCLUDE_DIR cblas.h
  PATHS /usr/include/x86_64-linux-gnu/openblas-openmp /usr/include/openblas NO_DEFAULT_PATH)
find_library(OPENBLAS_LIBRARY openblas
  PATHS /usr/lib/x86_64-linux-gnu/openblas-openmp NO_DEFAULT_PATH)
if(NOT OPENBLAS_INCLUDE_DIR OR NOT OPENBLAS_LIBRARY)
  message(FATAL_ERROR "OpenBLAS (OpenMP build) not found: install libopenblas-openmp-dev (${YG_INSTALL_HINT})")
endif()
add_library(yg::openblas INTERFACE IMPORTED)
target_include_directories(yg::openblas INTERFACE ${OPENBLAS_INCLUDE_DIR})
target_link_libraries(yg::openblas INTERFACE ${OPENBLAS_LIBRARY})

find_package(OpenMP REQUIRED COMPONENTS C)

# SLEEF: vectorised transcendental math for the kernels (runtime/cpu/vec/)
find_path(SLEEF_INCLUDE_DIR sleef.h)
find_library(SLEEF_LIBRARY sleef)
if(NOT SLEEF_INCLUDE_DIR OR NOT SLEEF_LIBRARY)
  message(FATAL_ERROR "SLEEF not found: install libsleef-dev (${YG_INSTALL_HINT})")
endif()
add_library(yg::sleef INTERFACE IMPORTED)
target_include_directories(yg::sleef INTERFACE ${SLEEF_INCLUDE_DIR})
target_link_libraries(yg::sleef INTERFACE ${SLEEF_LIBRARY})

# jansson: the JSON of safetensors headers (runtime/io/safetensors.c).
# pkg-config says where it is; the library's full path is what the
# install files need (cmake/Install.cmake).
if(PkgConfig_FOUND)
  pkg_check_modules(YG_JANSSON_PC QUIET jansson)
endif()
find_path(JANSSON_INCLUDE_DIR jansson.h HINTS ${YG_JANSSON_PC_INCLUDE_DIRS})
find_library(JANSSON_LIBRARY jansson HINTS ${YG_JANSSON_PC_LIBRARY_DIRS})
if(NOT JANSSON_INCLUDE_DIR OR NOT JANSSON_LIBRARY)
  message(FATAL_ERROR "jansson not found: install libjansson-dev (${YG_INSTALL_HINT})")
endif()
add_library(yg::jansson INTERFACE IMPORTED)
target_include_directories(yg::jansson INTERFACE ${JANSSON_INCLUDE_DIR})
target_link_libraries(yg::jansson INTERFACE ${JANSSON_LIBRARY})

# cmocka
find_path(CMOCKA_INCLUDE_DIR cmocka.h)
find_library(CMOCKA_LIBRARY cmocka)
if(NOT CMOCKA_INCLUDE_DIR OR NOT CMOCKA_LIBRARY)
  message(FATAL_ERROR "cmocka not found: install libcmocka-dev (${YG_INSTALL_HINT})")
endif()
add_library(yg::cmocka INTERFACE IMPORTED)
target_include_directories(yg::cmocka INTERFACE ${CMOCKA_INCLUDE_DIR})
target_link_libraries(yg::cmocka INTERFACE ${CMOCKA_LIBRARY})

find_package(Threads REQUIRED)

# oneDNN (optional): the default CPU convolution backend for float32
# (runtime/conv/onednn.c).  Without it the library builds the stub
# (runtime/conv/onednn_stub.c) and a forced onednn says "built without
# oneDNN".  -DYG_WITH_ONEDNN=OFF builds without it even when installed.
option(YG_WITH_ONEDNN "Build the oneDNN convolution backend when oneDNN is found" ON)
set(YG_HAVE_ONEDNN OFF)
if(YG_WITH_ONEDNN)
  find_path(DNNL_INCLUDE_DIR dnnl.h)
  find_library(DNNL_LIBRARY dnnl)
  if(DNNL_INCLUDE_DIR AND DNNL_LIBRARY)
    set(YG_HAVE_ONEDNN ON)
    add_library(yg::dnnl INTERFACE IMPORTED)
    target_include_directories(yg::dnnl INTERFACE ${DNNL_INCLUDE_DIR})
    target_link_libraries(yg::dnnl INTERFACE ${DNNL_LIBRARY})
    message(STATUS "oneDNN: ${DNNL_LIBRARY} (convolution backend onednn built)")
  else()
    message(STATUS "oneDNN not found: convolutions run on native only; install libdnnl-dev (${YG_INSTALL_HINT})")
  endif()
else()
  message(STATUS "oneDNN: off (YG_WITH_ONEDNN=OFF)")
endif()
