# cmake --install: what a program that uses yagrad needs, and nothing else.
#
#   include/yagrad/*.h        the public headers: runtime/include/yagrad/,
#                             gen's ops.h and ops_<section>.h, version.h
#   lib/libyagrad.so.0.2.0    SONAME libyagrad.so.0.2 (CMakeLists.txt)
#   lib/libyagrad_cuda.so.0.2 the CUDA module, loaded by libyagrad.so on
#                             the first request for a GPU (not by
#                             programs linked with libyagrad.a)
#   lib/libyagrad.a           YG_BUILD_STATIC
#   lib/cmake/yagrad/         yagradConfig.cmake, yagradConfigVersion.cmake,
#                             the exported targets yagrad::yagrad and
#                             yagrad::yagrad_static
#   lib/pkgconfig/yagrad.pc   pkg-config, Libs.private for static linking
#
# tests/external/ installs a build into a temporary prefix and builds a
# program against it both ways (CTest install.external_project_*).
# docs/architecture.md, "Installing", gives the reasons.

set(YG_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/yagrad)

# ---- headers ----------------------------------------------------------------
# Every header a public header includes is public and installed; internal
# headers (runtime/<area>/*.h, generated_int.h, nodes/, boxed/...) are not.
# install.headers_are_self_contained checks both: each installed header
# compiles on its own from the install tree, and the set is closed.
file(GLOB YG_PUBLIC_HEADERS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/runtime/include/yagrad/*.h)
set(YG_GEN_PUBLIC_HEADERS ${YG_GEN_FILES})
list(FILTER YG_GEN_PUBLIC_HEADERS INCLUDE REGEX "^include/yagrad/[^/]*\\.h$")
list(TRANSFORM YG_GEN_PUBLIC_HEADERS PREPEND ${YG_GEN_DIR}/)
install(FILES ${YG_PUBLIC_HEADERS} ${YG_GEN_PUBLIC_HEADERS}
              ${YG_CONFIG_INCLUDE_DIR}/yagrad/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/yagrad
        COMPONENT yagrad_development)

# ---- libraries and the CMake package ------------------------------------------
install(TARGETS yagrad EXPORT yagradTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT yagrad_runtime
                NAMELINK_COMPONENT yagrad_development)
install(EXPORT yagradTargets NAMESPACE yagrad:: DESTINATION ${YG_INSTALL_CMAKEDIR}
        COMPONENT yagrad_development)
# The CUDA and MPI modules beside libyagrad, where it looks for them
# (core/backend.c's yg__module_open).
if(YG_HAVE_CUDA)
  install(TARGETS yagrad_cuda_module
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT yagrad_runtime)
endif()
if(YG_WITH_MPI)
  install(TARGETS yagrad_mpi_module
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT yagrad_runtime)
endif()
if(YG_BUILD_STATIC)
  # A separate export set: yagradConfig.cmake includes it only once it has
  # found what the archive needs at link time.
  install(TARGETS yagrad_static EXPORT yagradStaticTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT yagrad_development)
  install(EXPORT yagradStaticTargets NAMESPACE yagrad:: DESTINATION ${YG_INSTALL_CMAKEDIR}
          COMPONENT yagrad_development)
endif()

# What the config file needs to find the static library's dependencies
# again on the user's side: the folder each was found in here (a hint),
# and which optional components exist.
get_filename_component(YG_OPENBLAS_LIBDIR ${OPENBLAS_LIBRARY} DIRECTORY)
get_filename_component(YG_SLEEF_LIBDIR ${SLEEF_LIBRARY} DIRECTORY)
get_filename_component(YG_JANSSON_LIBDIR ${JANSSON_LIBRARY} DIRECTORY)
set(YG_DNNL_LIBDIR "")
if(YG_HAVE_ONEDNN)
  get_filename_component(YG_DNNL_LIBDIR ${DNNL_LIBRARY} DIRECTORY)
endif()
set(YG_PROTOBUF_C_LIBDIR "")
if(YG_HAVE_ONNX)
  get_filename_component(YG_PROTOBUF_C_LIBDIR ${PROTOBUF_C_LIBRARY} DIRECTORY)
endif()
foreach(c MPI ONNX ONEDNN NVRTC CUDA)
  set(YG_CFG_HAS_${c} OFF)
endforeach()
if(YG_WITH_MPI)
  set(YG_CFG_HAS_MPI ON)
endif()
if(YG_HAVE_ONNX)
  set(YG_CFG_HAS_ONNX ON)
endif()
if(YG_HAVE_ONEDNN)
  set(YG_CFG_HAS_ONEDNN ON)
endif()
if(YG_HAVE_NVRTC)
  set(YG_CFG_HAS_NVRTC ON)
endif()
set(YG_NCCL_LIBDIR "")
set(YG_CFG_HAS_NCCL OFF)
if(YG_HAVE_NCCL)
  set(YG_CFG_HAS_NCCL ON)
  get_filename_component(YG_NCCL_LIBDIR ${NCCL_LIBRARY} DIRECTORY)
endif()
set(YG_CUDNN_LIBDIR "")
set(YG_CFG_HAS_CUDNN OFF)
if(YG_HAVE_CUDNN)
  set(YG_CFG_HAS_CUDNN ON)
  get_filename_component(YG_CUDNN_LIBDIR ${CUDNN_LIBRARY} DIRECTORY)
endif()
set(YG_CUDA_ROOT "")
if(YG_HAVE_CUDA)
  set(YG_CFG_HAS_CUDA ON)
  get_filename_component(YG_CUDA_ROOT ${CUDAToolkit_BIN_DIR} DIRECTORY)
endif()

include(CMakePackageConfigHelpers)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/yagradConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/yagradConfig.cmake
  INSTALL_DESTINATION ${YG_INSTALL_CMAKEDIR})
# SameMinorVersion: 0.2.x satisfies find_package(yagrad 0.2) and
# 0.2.1 satisfies 0.2.0, but 0.3 does not: before 1.0 a minor release may
# break the API, exactly when the SONAME changes.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/yagradConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/yagradConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/yagradConfigVersion.cmake
        DESTINATION ${YG_INSTALL_CMAKEDIR} COMPONENT yagrad_development)

# ---- pkg-config -----------------------------------------------------------------
# Libs.private lists what the library links, from the libraries CMake
# found (not Requires.private: Debian's openblas.pc follows the
# libopenblas alternative, which may be the pthread build, while yagrad
# links the OpenMP one; and Requires.private would put every dependency's
# Cflags on every user's compile line).  A library in a folder the
# compiler searches anyway becomes -l<name>, any other -L<dir> -l<name>.
set(YG_PC_PRIVATE "")
function(yg_pc_add_lib path)
  if(path MATCHES "^-" OR NOT IS_ABSOLUTE "${path}")
    if(path MATCHES "^-")
      set(flag "${path}")
    else()
      set(flag "-l${path}")
    endif()
  else()
    get_filename_component(dir ${path} DIRECTORY)
    get_filename_component(name ${path} NAME_WE)
    string(REGEX REPLACE "^lib" "" name ${name})
    if(dir IN_LIST CMAKE_C_IMPLICIT_LINK_DIRECTORIES)
      set(flag "-l${name}")
    else()
      set(flag "-L${dir} -l${name}")
    endif()
  endif()
  string(FIND " ${YG_PC_PRIVATE} " " ${flag} " at)
  if(at EQUAL -1)
    set(YG_PC_PRIVATE "${YG_PC_PRIVATE} ${flag}" PARENT_SCOPE)
  endif()
endfunction()
yg_pc_add_lib(${OPENBLAS_LIBRARY})
yg_pc_add_lib(${SLEEF_LIBRARY})
yg_pc_add_lib(${JANSSON_LIBRARY})
if(YG_HAVE_ONEDNN)
  yg_pc_add_lib(${DNNL_LIBRARY})
endif()
if(YG_HAVE_ONNX)
  yg_pc_add_lib(${PROTOBUF_C_LIBRARY})
endif()
if(YG_WITH_MPI)
  foreach(lib ${MPI_C_LIBRARIES})
    yg_pc_add_lib(${lib})
  endforeach()
endif()
foreach(lib ${OpenMP_C_LIB_NAMES})
  if(DEFINED OpenMP_${lib}_LIBRARY)
    yg_pc_add_lib(${OpenMP_${lib}_LIBRARY})
  else()
    yg_pc_add_lib(${lib})
  endif()
endforeach()
yg_pc_add_lib(m)
foreach(lib ${CMAKE_DL_LIBS})
  yg_pc_add_lib(${lib})
endforeach()
if(CMAKE_THREAD_LIBS_INIT)
  yg_pc_add_lib(${CMAKE_THREAD_LIBS_INIT})
endif()
string(STRIP "${YG_PC_PRIVATE}" YG_PC_LIBS_PRIVATE)
set(YG_PC_COMPONENTS "")
foreach(c MPI ONNX ONEDNN NVRTC CUDA)
  if(YG_CFG_HAS_${c})
    string(TOLOWER ${c} lc)
    string(APPEND YG_PC_COMPONENTS " ${lc}")
  endif()
endforeach()
string(STRIP "${YG_PC_COMPONENTS}" YG_PC_COMPONENTS)
# The prefix is found from the .pc file's own place (${pcfiledir}), so
# `cmake --install --prefix <anywhere>` gives a correct file.
file(RELATIVE_PATH YG_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" YG_PC_TO_PREFIX "${YG_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/yagrad.pc.in ${PROJECT_BINARY_DIR}/yagrad.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/yagrad.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
        COMPONENT yagrad_development)
