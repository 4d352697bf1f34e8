# mpi_tests.cmake - how the test suites start MPI jobs: mpiexec's flags for
# this MPI, the environment every MPI test runs in, and the functions that
# add such tests. Included before the test directories.
# Open MPI refuses to start more ranks than cores (and to run as root)
# unless told; MPICH needs neither flag and rejects --oversubscribe.
execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version
                OUTPUT_VARIABLE PCCL_MPIEXEC_VERSION ERROR_VARIABLE PCCL_MPIEXEC_VERSION)
set(PCCL_MPIEXEC_FLAGS "")
if(PCCL_MPIEXEC_VERSION MATCHES "Open MPI|OpenRTE")
  set(PCCL_MPIEXEC_FLAGS --oversubscribe --mca mpi_yield_when_idle 1)
endif()
string(REPLACE ";" " " PCCL_MPIEXEC_FLAGS_STRING "${PCCL_MPIEXEC_FLAGS}")
# OMPI_MCA_pml=ob1: the point-to-point layer Open MPI picks on these machines
# anyway, named so that each start skips probing the others (UCX, libfabric):
# mpiexec -n 2 of an empty MPI program took 0.46 s, 0.28 s with it; MPICH
# ignores the variable.
set(PCCL_MPI_TEST_ENV
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1
  OMPI_MCA_rmaps_base_oversubscribe=1 PCCL_ALGO= PCCL_RANKS_PER_NODE= PCCL_SHM=
  PCCL_MPI= PCCL_MPI_STATS= PCCL_TIMEOUT= PCCL_CHECK= PCCL_CYCLE_TIME_MS=
  PCCL_FUSION_THRESHOLD= PCCL_CACHE_CAPACITY= PCCL_STALL_CHECK_SECONDS= PCCL_TIMELINE=
  PCCL_MAX_SCRATCH= PCCL_CUDA=)

function(pccl_mpi_test name np)
  add_test(NAME ${name}
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${PCCL_MPIEXEC_FLAGS}
                   ${ARGN})
  set_tests_properties(${name} PROPERTIES
    LABELS mpi TIMEOUT 600 PROCESSORS 2
    ENVIRONMENT "${PCCL_MPI_TEST_ENV}")
endfunction()

# The same with extra environment (later entries win over PCCL_MPI_TEST_ENV's).
function(pccl_mpi_test_env name np env)
  pccl_mpi_test(${name} ${np} ${ARGN})
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${PCCL_MPI_TEST_ENV};${env}")
endfunction()

