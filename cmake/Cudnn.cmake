# cuDNN, the CUDA backend of the convolution dispatcher (runtime/conv/
# cudnn.c), optional: built when the CUDA backend is (YG_HAVE_CUDA,
# cmake/Cuda.cmake) and cudnn.h and libcudnn are found: in the CUDA
# toolkit's folders (NVIDIA's packages put cuDNN next to cuBLAS), under
# CUDNN_ROOT, or where CMake looks anyway.  YG_WITH_CUDNN (default ON when
# all of that holds) turns it off.  Without it the library builds
# runtime/conv/cudnn_stub.c, and a convolution of CUDA tensors fails with
# "backend cudnn: built without cuDNN".  libcudnn is linked dynamically
# (yg::cudnn) and only when found.  Sets YG_HAVE_CUDNN.
set(YG_HAVE_CUDNN OFF)
set(YG_CUDNN_WHY "")
if(NOT YG_HAVE_CUDA)
  set(YG_CUDNN_WHY "no CUDA backend")
else()
  find_path(CUDNN_INCLUDE_DIR cudnn.h
            HINTS ${CUDAToolkit_INCLUDE_DIRS} ENV CUDNN_ROOT PATH_SUFFIXES include)
  find_library(CUDNN_LIBRARY cudnn
               HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib
                     ${CUDAToolkit_LIBRARY_ROOT}/lib64 /usr/local/cuda/lib /usr/local/cuda/lib64
                     ENV CUDNN_ROOT
               PATH_SUFFIXES lib lib64)
  if(NOT CUDNN_INCLUDE_DIR OR NOT CUDNN_LIBRARY)
    set(YG_CUDNN_WHY "cudnn.h or libcudnn not found (set CUDNN_ROOT)")
  elseif(NOT EXISTS ${CUDNN_INCLUDE_DIR}/cudnn_version.h)
    set(YG_CUDNN_WHY "cudnn.h without cudnn_version.h (cuDNN 8 or newer needed)")
  endif()
endif()
if(YG_CUDNN_WHY STREQUAL "")
  set(YG_CUDNN_DEFAULT ON)
else()
  set(YG_CUDNN_DEFAULT OFF)
endif()
option(YG_WITH_CUDNN "Build the cuDNN convolution backend when cuDNN is found" ${YG_CUDNN_DEFAULT})
if(NOT YG_CUDNN_WHY STREQUAL "")
  message(STATUS "yagrad: built without cuDNN (${YG_CUDNN_WHY}): CUDA convolutions say so")
elseif(NOT YG_WITH_CUDNN)
  message(STATUS "yagrad: built without cuDNN (YG_WITH_CUDNN=OFF): CUDA convolutions say so")
else()
  file(STRINGS ${CUDNN_INCLUDE_DIR}/cudnn_version.h YG_CUDNN_VERSION_LINES
       REGEX "^#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) +[0-9]+")
  string(REGEX REPLACE "#define CUDNN_[A-Z]+ +" "" YG_CUDNN_VERSION "${YG_CUDNN_VERSION_LINES}")
  string(REPLACE ";" "." YG_CUDNN_VERSION "${YG_CUDNN_VERSION}")
  if(YG_CUDNN_VERSION VERSION_LESS 8.0)
    message(STATUS "yagrad: built without cuDNN (found ${YG_CUDNN_VERSION}, 8 or newer needed)")
  else()
    set(YG_HAVE_CUDNN ON)
    add_library(yg::cudnn INTERFACE IMPORTED)
    target_include_directories(yg::cudnn INTERFACE ${CUDNN_INCLUDE_DIR})
    target_link_libraries(yg::cudnn INTERFACE ${CUDNN_LIBRARY})
    message(STATUS "yagrad: cuDNN convolution backend built with cuDNN ${YG_CUDNN_VERSION} "
                   "(${CUDNN_LIBRARY})")
  endif()
endif()
