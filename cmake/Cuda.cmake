# The CUDA backend (runtime/cuda/, yagrad/cuda.h), optional: built when
# nvcc and the toolkit's libraries (cudart, cuBLAS) are found and
# YG_WITH_CUDA is ON (the default).  Without it the library builds
# runtime/cuda/cuda_stub.c and yagrad/cuda.h says "built without CUDA".
# nvcc is looked for as CMake does (CUDACXX, PATH) and then in
# /usr/local/cuda/bin, where NVIDIA's packages put it.
#
# Kernels are compiled for sm_80 (A100) and sm_90 (H100) as machine code,
# plus compute_90 PTX that the driver compiles for newer GPUs.  The CUDA
# runtime is linked statically (no libcudart.so needed where the library
# runs); cuBLAS dynamically.  Sets YG_HAVE_CUDA.
option(YG_WITH_CUDA "Build the CUDA backend when the CUDA toolkit (nvcc) is found" ON)
set(YG_HAVE_CUDA OFF)
if(YG_WITH_CUDA)
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
    find_program(YG_NVCC nvcc HINTS /usr/local/cuda/bin)
    if(YG_NVCC)
      set(CMAKE_CUDA_COMPILER ${YG_NVCC})
    endif()
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 80-real 90)
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit QUIET)
    if(CUDAToolkit_FOUND AND TARGET CUDA::cudart_static AND TARGET CUDA::cublas)
      set(YG_HAVE_CUDA ON)
      message(STATUS "yagrad: CUDA backend built with nvcc ${CMAKE_CUDA_COMPILER_VERSION} "
                     "for ${CMAKE_CUDA_ARCHITECTURES}")
    else()
      message(STATUS "yagrad: built without CUDA: nvcc found but not cudart and cuBLAS")
    endif()
  else()
    message(STATUS "yagrad: built without CUDA (no nvcc): yagrad/cuda.h says so")
  endif()
else()
  message(STATUS "yagrad: built without CUDA (YG_WITH_CUDA=OFF)")
endif()
