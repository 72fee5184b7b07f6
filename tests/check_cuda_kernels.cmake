# cuda.every_dispatch_kernel_is_in_the_module: every CUDA kernel that
# specs/native_functions.yaml names in a `dispatch:` entry of its own
# (`CUDA: yg__cuda_<name>`) is a defined, exported symbol of the built
# CUDA module, so the generated table's lookup by name (core/backend.h's
# yg_kernel_ref) finds it on a GPU machine.  gen checks the declarations
# (runtime/cuda/ops.h); this checks the definitions, with no GPU.
#
#   cmake -DSPEC=<native_functions.yaml> -DMODULE=<libyagrad_cuda.so> \
#         -DNM=<nm> -P tests/check_cuda_kernels.cmake
cmake_minimum_required(VERSION 3.20)
foreach(v SPEC MODULE NM)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "usage: cmake -DSPEC=... -DMODULE=... -DNM=... -P ${CMAKE_CURRENT_LIST_FILE}")
  endif()
endforeach()

file(STRINGS "${SPEC}" lines REGEX "CUDA: *[A-Za-z_][A-Za-z_0-9]*")
set(wanted "")
foreach(line ${lines})
  string(REGEX MATCHALL "CUDA: *[A-Za-z_][A-Za-z_0-9]*" hits "${line}")
  foreach(hit ${hits})
    string(REGEX REPLACE "CUDA: *" "" name "${hit}")
    list(APPEND wanted ${name})
  endforeach()
endforeach()
list(REMOVE_DUPLICATES wanted)

execute_process(COMMAND ${NM} -D --defined-only "${MODULE}"
                OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} could not read ${MODULE} (exit ${rc})")
endif()

set(missing "")
set(found 0)
foreach(name ${wanted})
  if(symbols MATCHES " T ${name}\n")
    math(EXPR found "${found} + 1")
  else()
    list(APPEND missing ${name})
  endif()
endforeach()
list(LENGTH wanted n)
message(STATUS "${found} of ${n} CUDA dispatch kernels are defined in ${MODULE}")
if(n EQUAL 0)
  message(FATAL_ERROR "no `CUDA: <kernel>` entry read from ${SPEC}: the pattern is stale")
endif()
if(missing)
  string(REPLACE ";" ", " missing "${missing}")
  message(FATAL_ERROR "the CUDA module does not define: ${missing} "
                      "(each needs a definition in runtime/cuda/ with the declaration of runtime/cuda/ops.h)")
endif()
