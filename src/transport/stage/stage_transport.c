/* stage_transport.c - device messages through host staging (see
 * stage_transport.h). */
#include "stage_transport.h"

#include <stdlib.h>

size_t pccl_stage_bytes(const pccl_sched_t *sched, size_t elem_size) {
  size_t total = 0;
  for (uint32_t i = 0; i < sched->nsteps; i++) {
    const pccl_step_t *st = &sched->steps[i];
    if (st->kind == PCCL_STEP_SEND) total += st->src.len * elem_size;
    else if (st->kind == PCCL_STEP_RECV || st->kind == PCCL_STEP_RECV_REDUCE)
      total += st->dst.len * elem_size;
  }
  return total;
}

pccl_status_t pccl_stage_begin(pccl_stage_t *s, size_t bytes, uint32_t nsteps) {
  if (bytes > s->cap) {
    void *p = NULL;
    pccl_status_t st = s->hooks.host_alloc(s->hooks.ctx, &p, bytes);
    if (st != PCCL_OK) return st;
    if (s->area) s->hooks.host_free(s->hooks.ctx, s->area);
    s->area = p;
    s->cap = bytes;
  }
  if (nsteps > s->nmsg) {
    pccl_stage_msg_t *m = realloc(s->msg, nsteps * sizeof(*m));
    if (!m) return PCCL_ERR_NO_MEMORY;
    s->msg = m;
    s->nmsg = nsteps;
  }
  s->used = 0;
  return PCCL_OK;
}

void pccl_stage_free(pccl_stage_t *s) {
  if (s->area) s->hooks.host_free(s->hooks.ctx, s->area);
  free(s->msg);
  s->area = NULL;
  s->msg = NULL;
  s->cap = s->used = s->nmsg = 0;
}

/* The next `bytes` of staging for slot, or NULL past what begin reserved
 * (a schedule that moves more than pccl_stage_bytes said: a bug). */
static uint8_t *take(pccl_stage_t *s, uint32_t slot, void *dev, size_t bytes) {
  if (slot >= s->nmsg || bytes > s->cap - s->used) return NULL;
  pccl_stage_msg_t *m = &s->msg[slot];
  m->host = s->area + s->used;
  m->dev = dev;
  m->bytes = bytes;
  s->used += bytes;
  return m->host;
}

static pccl_status_t stage_isend(void *ctx, int peer, int tag, const void *buf, size_t bytes,
                                 uint32_t slot) {
  pccl_stage_t *s = ctx;
  uint8_t *h = take(s, slot, NULL, bytes);
  if (!h) return PCCL_ERR_INTERNAL;
  pccl_status_t st = s->hooks.to_host(s->hooks.ctx, h, buf, bytes);
  return st != PCCL_OK ? st : s->inner->isend(s->inner_ctx, peer, tag, h, bytes, slot);
}

static pccl_status_t stage_irecv(void *ctx, int peer, int tag, void *buf, size_t bytes,
                                 uint32_t slot) {
  pccl_stage_t *s = ctx;
  uint8_t *h = take(s, slot, buf, bytes);
  if (!h) return PCCL_ERR_INTERNAL;
  return s->inner->irecv(s->inner_ctx, peer, tag, h, bytes, slot);
}

/* Finished receives reach the device before they are reported. */
static pccl_status_t stage_poll(void *ctx, uint32_t *done, int max, int *ndone) {
  pccl_stage_t *s = ctx;
  pccl_status_t st = s->inner->poll(s->inner_ctx, done, max, ndone);
  for (int i = 0; st == PCCL_OK && i < *ndone; i++) {
    const pccl_stage_msg_t *m = &s->msg[done[i]];
    if (m->dev) st = s->hooks.to_device(s->hooks.ctx, m->dev, m->host, m->bytes);
  }
  return st;
}

const pccl_transport_t pccl_stage_transport = {stage_isend, stage_irecv, stage_poll, NULL, NULL, NULL};
