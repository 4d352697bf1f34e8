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
  /* shm carries the messages of at least this size (PCCL_ROUTE_SHM_MIN),
   * MPI's eager path the smaller ones. 0: shm carries all, so a call makes
   * no MPI call inside a node, and any thread may move it (non-blocking
   * calls, pccl_comm_progress) without MPI_THREAD_MULTIPLE. */
  size_t shm_min;
} pccl_route_t;

/* Below this size MPI's eager path (copy through its own shared buffers, no
 * handshake) beats a descriptor round trip plus a system call. Both sides
 * know the size and the call, so they route a message alike. */
#define PCCL_ROUTE_SHM_MIN ((size_t)64 << 10)

extern const pccl_transport_t pccl_route_transport;

/* Room for `n` operations in flight on each transport. */
pccl_status_t pccl_route_reserve(pccl_route_t *r, uint32_t n);
/* Abandons what is in flight after a failure. */
void pccl_route_reset(pccl_route_t *r);

#endif /* PCCL_ROUTE_H */
