# NCCL for runtime/distributed/ (process groups over CUDA tensors,
# yagrad/distributed.h's YG_DIST_NCCL), optional: built when the CUDA
# backend is (YG_HAVE_CUDA, cmake/Cuda.cmake), MPI is (an NCCL group is
# bootstrapped over an MPI group, cmake/Mpi.cmake), and nccl.h and
# libnccl are found: in the CUDA toolkit's folders (NVIDIA's packages put
# NCCL next to cuBLAS), under NCCL_ROOT, or where CMake looks anyway.
# YG_WITH_NCCL (default ON when all of that holds) turns it off.  Without
# it the library builds runtime/distributed/process_group_nccl_stub.c
# and creating an NCCL group says "built without NCCL".  libnccl is linked
# dynamically (yg::nccl).  Sets YG_HAVE_NCCL.
set(YG_HAVE_NCCL OFF)
set(YG_NCCL_WHY "")
if(NOT YG_HAVE_CUDA)
  set(YG_NCCL_WHY "no CUDA backend")
elseif(NOT YG_WITH_MPI)
  set(YG_NCCL_WHY "no MPI to bootstrap it over")
else()
  find_path(NCCL_INCLUDE_DIR nccl.h
            HINTS ${CUDAToolkit_INCLUDE_DIRS} ENV NCCL_ROOT PATH_SUFFIXES include)
  find_library(NCCL_LIBRARY nccl
               HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib
                     ${CUDAToolkit_LIBRARY_ROOT}/lib64 /usr/local/cuda/lib /usr/local/cuda/lib64
                     ENV NCCL_ROOT
               PATH_SUFFIXES lib lib64)
  if(NOT NCCL_INCLUDE_DIR OR NOT NCCL_LIBRARY)
    set(YG_NCCL_WHY "nccl.h or libnccl not found (set NCCL_ROOT)")
  endif()
endif()
if(YG_NCCL_WHY STREQUAL "")
  set(YG_NCCL_DEFAULT ON)
else()
  set(YG_NCCL_DEFAULT OFF)
endif()
option(YG_WITH_NCCL "Build NCCL process groups for CUDA tensors when NCCL is found"
       ${YG_NCCL_DEFAULT})
if(NOT YG_NCCL_WHY STREQUAL "")
  message(STATUS "yagrad: built without NCCL (${YG_NCCL_WHY}): NCCL process groups say so")
elseif(NOT YG_WITH_NCCL)
  message(STATUS "yagrad: built without NCCL (YG_WITH_NCCL=OFF): NCCL process groups say so")
else()
  set(YG_HAVE_NCCL ON)
  add_library(yg::nccl INTERFACE IMPORTED)
  target_include_directories(yg::nccl INTERFACE ${NCCL_INCLUDE_DIR})
  target_link_libraries(yg::nccl INTERFACE ${NCCL_LIBRARY})
  file(STRINGS ${NCCL_INCLUDE_DIR}/nccl.h YG_NCCL_VERSION_LINES
       REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) ")
  string(REGEX REPLACE "[^0-9;]" "" YG_NCCL_VERSION "${YG_NCCL_VERSION_LINES}")
  string(REPLACE ";" "." YG_NCCL_VERSION "${YG_NCCL_VERSION}")
  message(STATUS "yagrad: NCCL process groups built with NCCL ${YG_NCCL_VERSION} (${NCCL_LIBRARY})")
endif()
