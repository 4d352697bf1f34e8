/* pccl_mpi.h - creating a pccl communicator from an MPI communicator.
 * Kept apart from pccl.h so that programs (and ctypes bindings) that never
 * see MPI types need not include mpi.h. */
#ifndef PCCL_MPI_H
#define PCCL_MPI_H

#include <mpi.h>

#include "pccl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Creates a communicator over the ranks of `mpi_comm`. pccl duplicates the
 * MPI communicator (with MPI_ERRORS_RETURN on its copy), so the caller's
 * communicator and its error handler are untouched and may be freed after
 * this returns. Collective over `mpi_comm`; MPI must be initialised.
 * Returns PCCL_OK, PCCL_ERR_INVALID_ARGUMENT (comm NULL, MPI_COMM_NULL, an
 * inter-communicator, MPI not initialised), PCCL_ERR_MPI, PCCL_ERR_NO_MEMORY,
 * PCCL_ERR_CONFIG (malformed PCCL_* environment). */
PCCL_API pccl_status_t pccl_comm_create_mpi(MPI_Comm mpi_comm, pccl_comm_t **comm);

#ifdef __cplusplus
}
#endif

#endif /* PCCL_MPI_H */
