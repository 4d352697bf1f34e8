/* shm_transport.h - single-copy transport between ranks of one node.
 *
 * A sender publishes (address, length, tag) of its buffer in a descriptor
 * ring inside an MPI shared-memory window; the receiver copies the bytes
 * straight from the sender's address space into its own buffer and marks the
 * descriptor done: with memcpy from its mapping of the sender's allocation
 * when the buffer lies in memory from pccl_mem_alloc (shared_mem.h), else
 * with Linux cross-memory attach (process_vm_readv). Each
 * byte crosses memory once, by the core that needs it. Where the kernel
 * forbids cross-memory attach (ptrace policy, seccomp) or the platform lacks
 * it, creation reports why and the communicator keeps MPI for those peers. */
#ifndef PCCL_SHM_TRANSPORT_H
#define PCCL_SHM_TRANSPORT_H

#include <mpi.h>

#include "exec.h"

typedef struct pccl_shm_tp pccl_shm_tp_t;

extern const pccl_transport_t pccl_shm_transport;

/* Collective over `comm`: ranks with equal `group` that share memory form a
 * shm group. On success *out serves the peers of this rank's group; on
 * PCCL_ERR_UNSUPPORTED (every rank of the group agrees) `why` says what was
 * missing and *out is NULL. */
pccl_status_t pccl_shm_tp_create(MPI_Comm comm, int group, pccl_shm_tp_t **out, char *why,
                                 size_t whylen);
/* Frees the transport. The shared window and the group's communicator go
 * too when every rank of the group comes here healthy within `timeout`
 * seconds (0: no limit) of this one; when one comes broken (its peers may
 * never come) or not in time, they stay until the process ends, on every
 * rank alike, and no rank waits for the others past that. */
void pccl_shm_tp_destroy(pccl_shm_tp_t *t, int healthy, double timeout);

/* Whether global rank `peer` is reached through this transport. */
int pccl_shm_tp_serves(const pccl_shm_tp_t *t, int peer);
/* Operations in flight (sends waiting for their reader, receives not yet copied). */
int pccl_shm_tp_active(const pccl_shm_tp_t *t);
/* Makes room for `n` operations in flight at once. */
pccl_status_t pccl_shm_tp_reserve(pccl_shm_tp_t *t, uint32_t n);
/* Forgets what is in flight after a failure (descriptors are withdrawn). */
void pccl_shm_tp_reset(pccl_shm_tp_t *t);

#endif /* PCCL_SHM_TRANSPORT_H */
