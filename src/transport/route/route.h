/* route.h - the transport the executor sees: each peer is served by the
 * shared-memory transport when it shares this rank's node (and shm is up),
 * by MPI otherwise. */
#ifndef PCCL_ROUTE_H
#define PCCL_ROUTE_H

#include "mpi_transport.h"
#include "shm_transport.h"

typedef struct {
  pccl_mpi_tp_t *mpi;
  pccl_shm_tp_t *shm; /* NULL: every peer goes through MPI */
} pccl_route_t;

extern const pccl_transport_t pccl_route_transport;

/* Room for `n` operations in flight on each transport. */
pccl_status_t pccl_route_reserve(pccl_route_t *r, uint32_t n);
/* Abandons what is in flight after a failure. */
void pccl_route_reset(pccl_route_t *r);

#endif /* PCCL_ROUTE_H */
