/* mem_transport.h - an in-process transport that connects many ranks'
 * executors inside one process, so every rank's schedule of a collective can
 * run and be checked without MPI (unit tests, and a reference for new
 * algorithms). A send completes only when its receive is posted (rendezvous),
 * the strictest behaviour an MPI may show, so schedules that rely on
 * buffering are caught as deadlocks. */
#ifndef PCCL_MEM_TRANSPORT_H
#define PCCL_MEM_TRANSPORT_H

#include "exec.h"

typedef struct pccl_mem_world pccl_mem_world_t;

/* Per-rank context to pass as the executor's tp_ctx. */
typedef struct {
  pccl_mem_world_t *world;
  int rank;
} pccl_mem_rank_t;

/* Folds fused receive-reduces in straight from the sender's buffer ... */
extern const pccl_transport_t pccl_mem_transport;
/* ... or leaves them to the executor (receive into staging, then reduce). */
extern const pccl_transport_t pccl_mem_transport_staged;

pccl_status_t pccl_mem_world_create(int nranks, pccl_mem_world_t **world);
void pccl_mem_world_destroy(pccl_mem_world_t *world);
pccl_mem_rank_t *pccl_mem_world_rank(pccl_mem_world_t *world, int rank);

/* Advances every executor in turn until all are done. Returns
 * PCCL_ERR_INTERNAL on a deadlock (a full pass with no progress) or on a
 * message whose send and receive sizes differ. */
pccl_status_t pccl_mem_run_all(pccl_exec_t *execs, int nranks);

#endif /* PCCL_MEM_TRANSPORT_H */
