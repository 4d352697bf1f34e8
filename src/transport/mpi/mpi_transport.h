/* mpi_transport.h - point-to-point transport over MPI non-blocking calls. */
#ifndef PCCL_MPI_TRANSPORT_H
#define PCCL_MPI_TRANSPORT_H

#include <mpi.h>

#include "exec.h"

typedef struct {
  MPI_Comm comm;
  MPI_Request *reqs; /* active requests, compacted after each poll */
  uint32_t *slots;   /* the step each request belongs to */
  size_t **received; /* per request: where a variable-length receive reports its length */
  int *indices;
  MPI_Status *statuses;
  int nactive, cap;
  int last_mpi_error; /* MPI error code of the last failure, for messages */
} pccl_mpi_tp_t;

extern const pccl_transport_t pccl_mpi_transport;

/* Makes room for `n` requests in flight at once (the schedule's message count). */
pccl_status_t pccl_mpi_tp_reserve(pccl_mpi_tp_t *t, uint32_t n);
/* Cancels and frees whatever is still in flight (after a failure). */
void pccl_mpi_tp_reset(pccl_mpi_tp_t *t);
void pccl_mpi_tp_fini(pccl_mpi_tp_t *t);

#endif /* PCCL_MPI_TRANSPORT_H */
