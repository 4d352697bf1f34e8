/* stage_transport.h - device buffers over a host transport: each message
 * goes through host memory. A send copies its device region into a staging
 * area first; a receive lands in staging and is copied to the device when
 * the inner transport reports it. The copies are the hooks' (CUDA's, or
 * memcpy in the unit tests), so the logic runs and is tested on machines
 * without a GPU. Staging for a whole collective is one area, taken in order
 * by its messages and reset by pccl_stage_begin.
 *
 * Fused receive-reduce and variable-length messages are not offered: the
 * executor then receives into the step's staging region and reduces on the
 * device; compressed collectives are refused. */
#ifndef PCCL_STAGE_TRANSPORT_H
#define PCCL_STAGE_TRANSPORT_H

#include "exec.h"

typedef struct {
  /* bytes between host and device memory; finished when they return */
  pccl_status_t (*to_host)(void *ctx, void *dst, const void *src, size_t bytes);
  pccl_status_t (*to_device)(void *ctx, void *dst, const void *src, size_t bytes);
  /* the staging area's memory (pinned, for CUDA) */
  pccl_status_t (*host_alloc)(void *ctx, void **p, size_t bytes);
  void (*host_free)(void *ctx, void *p);
  void *ctx;
} pccl_stage_hooks_t;

typedef struct {
  uint8_t *host; /* where the message lies in staging */
  void *dev;     /* a receive's device destination (NULL for a send) */
  size_t bytes;
} pccl_stage_msg_t;

typedef struct {
  const pccl_transport_t *inner;
  void *inner_ctx;
  pccl_stage_hooks_t hooks;
  uint8_t *area;
  size_t cap, used;
  pccl_stage_msg_t *msg; /* per slot (step index) */
  size_t nmsg;
} pccl_stage_t;

extern const pccl_transport_t pccl_stage_transport;

/* Total bytes the messages of `sched` move (elements of elem_size). */
size_t pccl_stage_bytes(const pccl_sched_t *sched, size_t elem_size);

/* Prepares a collective: staging of at least `bytes`, room for the
 * schedule's `nsteps` slots. Keeps the memory between calls. */
pccl_status_t pccl_stage_begin(pccl_stage_t *s, size_t bytes, uint32_t nsteps);
void pccl_stage_free(pccl_stage_t *s);

#endif /* PCCL_STAGE_TRANSPORT_H */
