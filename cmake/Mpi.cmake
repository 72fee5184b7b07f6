# MPI for runtime/distributed/ (yagrad/distributed.h), optional: with
# YG_WITH_MPI OFF, or no MPI found, the library leaves out
# process_group_mpi.c and yg_process_group_create says "built without
# MPI" (distributed/process_group.c).  YG_MPIEXEC (mpirun plus the flags every multi-rank test needs) is
# what tests/CMakeLists.txt launches them with.
find_package(MPI COMPONENTS C QUIET)
if(MPI_C_FOUND)
  set(YG_MPI_DEFAULT ON)
else()
  set(YG_MPI_DEFAULT OFF)
endif()
option(YG_WITH_MPI "Build yagrad/distributed.h's process groups over MPI" ${YG_MPI_DEFAULT})
if(YG_WITH_MPI AND NOT MPI_C_FOUND)
  message(FATAL_ERROR "YG_WITH_MPI is ON but CMake's FindMPI found no MPI for C "
                      "(install libopenmpi-dev openmpi-bin: scripts/install-deps.sh)")
endif()
if(YG_WITH_MPI)
  # --oversubscribe: the tests start more ranks than this machine has
  # cores; --allow-run-as-root: CI runs as root.
  set(YG_MPIEXEC ${MPIEXEC_EXECUTABLE} --oversubscribe --allow-run-as-root
      --mca btl_vader_single_copy_mechanism none)
  message(STATUS "yagrad: distributed over MPI ${MPI_C_VERSION} (${MPIEXEC_EXECUTABLE})")
else()
  message(STATUS "yagrad: built without MPI: yagrad/distributed.h's process groups say so")
endif()
