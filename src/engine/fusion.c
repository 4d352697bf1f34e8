/* fusion.c - runs a cycle's ready requests. Requests of one collective,
 * datatype, op and root are packed into one buffer (up to the fusion
 * threshold) and run as one collective through pccl's normal selection;
 * a request alone, or larger than the threshold, runs on its own buffers.
 * Every rank has the same ready list in the same order, so every rank
 * builds the same buckets.
 *
 * Packed layouts (C = sum of the bucket's counts, off_i = sum of the counts
 * before tensor i): all-reduce and broadcast concatenate; all-gather puts
 * tensor i's block at (rank * C + off_i) and gathers in place; reduce-scatter
 * puts tensor i's block q at (q * C + off_i) and reduces in place, leaving
 * this rank's result at rank * C. */
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "engine.h"

static int blocks(int32_t coll) {
  return coll == PCCL_COLL_ALLGATHER || coll == PCCL_COLL_REDUCE_SCATTER;
}

/* Bytes of the larger side of r's collective: what it needs of the buffer. */
static size_t need(const pccl_engine_t *e, const pccl_req_t *r) {
  size_t b = (size_t)r->sig.count * pccl_dtype_size((pccl_dtype_t)r->sig.dtype);
  return blocks(r->sig.coll) ? b * (size_t)e->size : b;
}

static int same_key(const pccl_sig_t *a, const pccl_sig_t *b) {
  return a->coll == b->coll && a->dtype == b->dtype && a->op == b->op && a->root == b->root;
}

static pccl_status_t call(pccl_engine_t *e, const pccl_sig_t *s, const void *send, void *recv,
                          size_t count) {
  pccl_dtype_t dt = (pccl_dtype_t)s->dtype;
  pccl_op_t op = (pccl_op_t)s->op;
  switch (s->coll) {
    case PCCL_COLL_ALLREDUCE: return pccl_allreduce(send, recv, count, dt, op, e->comm);
    case PCCL_COLL_ALLGATHER: return pccl_allgather(send, recv, count, dt, e->comm);
    case PCCL_COLL_REDUCE_SCATTER: return pccl_reduce_scatter(send, recv, count, dt, op, e->comm);
    case PCCL_COLL_BROADCAST: return pccl_broadcast(send, recv, count, dt, s->root, e->comm);
    default: return PCCL_ERR_INTERNAL; /* submit admits only these four */
  }
}

static void finish(pccl_engine_t *e, pccl_req_t **rs, int n, pccl_status_t st) {
  for (int i = 0; i < n; i++) {
    if (st == PCCL_OK) pccl_engine_complete(e, rs[i], st, " ");
    else if (n > 1)
      pccl_engine_complete(e, rs[i], st, "tensor '%s' (fused with %d others): %s", rs[i]->name, n - 1,
                           pccl_last_error(e->comm));
    else
      pccl_engine_complete(e, rs[i], st, "tensor '%s': %s", rs[i]->name, pccl_last_error(e->comm));
  }
  pccl_engine_wake(e);
}

static void run_single(pccl_engine_t *e, pccl_req_t *r) {
  double t0 = MPI_Wtime();
  pccl_status_t st = call(e, &r->sig, r->send, r->recv, (size_t)r->sig.count);
  if (e->timeline.f) pccl_timeline_span(&e->timeline, r->tid, "execute", t0, MPI_Wtime());
  pccl_engine_stats_t d = {.collectives = 1};
  pccl_engine_count(e, &d);
  finish(e, &r, 1, st);
}

/* Packs (in = 1) or unpacks the bucket to/from the fusion buffer. */
static void move(pccl_engine_t *e, pccl_req_t **rs, int n, size_t total, int in) {
  const pccl_sig_t *s = &rs[0]->sig;
  size_t es = pccl_dtype_size((pccl_dtype_t)s->dtype), off = 0;
  uint8_t *f = e->fusion;
  int p = e->size, me = e->rank;
  for (int i = 0; i < n; off += (size_t)rs[i]->sig.count, i++) {
    size_t c = (size_t)rs[i]->sig.count, cb = c * es;
    if (c == 0) continue;
    switch (s->coll) {
      case PCCL_COLL_ALLREDUCE:
      case PCCL_COLL_BROADCAST:
        if (!in) memcpy(rs[i]->recv, f + off * es, cb);
        else if (s->coll != PCCL_COLL_BROADCAST || me == s->root) memcpy(f + off * es, rs[i]->send, cb);
        break;
      case PCCL_COLL_ALLGATHER:
        if (in) memcpy(f + ((size_t)me * total + off) * es, rs[i]->send, cb);
        else
          for (int q = 0; q < p; q++)
            memcpy((uint8_t *)rs[i]->recv + (size_t)q * cb, f + ((size_t)q * total + off) * es, cb);
        break;
      case PCCL_COLL_REDUCE_SCATTER:
        if (!in) memcpy(rs[i]->recv, f + ((size_t)me * total + off) * es, cb);
        else
          for (int q = 0; q < p; q++)
            memcpy(f + ((size_t)q * total + off) * es, (const uint8_t *)rs[i]->send + (size_t)q * cb, cb);
        break;
    }
  }
}

/* The buffer holds fusion_bytes (allocated at creation, so that no rank
 * can fail to fuse where the others fuse). */
static void run_fused(pccl_engine_t *e, pccl_req_t **rs, int n) {
  const pccl_sig_t *s = &rs[0]->sig;
  size_t total = 0, esc = pccl_dtype_size((pccl_dtype_t)s->dtype);
  for (int i = 0; i < n; i++) total += (size_t)rs[i]->sig.count;
  double t0 = MPI_Wtime();
  move(e, rs, n, total, 1);
  double t1 = MPI_Wtime();
  uint8_t *f = e->fusion, *mine = f + (size_t)e->rank * total * esc;
  pccl_status_t st;
  if (s->coll == PCCL_COLL_ALLGATHER) st = call(e, s, mine, f, total);
  else if (s->coll == PCCL_COLL_REDUCE_SCATTER) st = call(e, s, f, mine, total);
  else st = call(e, s, f, f, total);
  double t2 = MPI_Wtime();
  if (st == PCCL_OK) move(e, rs, n, total, 0);
  double t3 = MPI_Wtime();
  for (int i = 0; e->timeline.f && i < n; i++) {
    pccl_timeline_span(&e->timeline, rs[i]->tid, "fuse", t0, t1);
    pccl_timeline_span(&e->timeline, rs[i]->tid, "execute", t1, t2);
    pccl_timeline_span(&e->timeline, rs[i]->tid, "unfuse", t2, t3);
  }
  pccl_engine_stats_t d = {.collectives = 1, .fused_tensors = (uint64_t)n};
  pccl_engine_count(e, &d);
  finish(e, rs, n, st);
}

void pccl_fusion_run(pccl_engine_t *e) {
  size_t n = e->nready;
  pccl_req_t **bucket = e->bucket;
  uint8_t *used = e->used;
  if (n) memset(used, 0, n);
  for (size_t i = 0; i < n; i++) {
    if (used[i]) continue;
    pccl_req_t *r = e->ready[i];
    size_t bytes = need(e, r);
    int nb = 0;
    if (e->fusion_bytes && bytes <= e->fusion_bytes) {
      bucket[nb++] = r;
      for (size_t j = i + 1; j < n; j++) {
        pccl_req_t *q = e->ready[j];
        if (used[j] || !same_key(&r->sig, &q->sig) || bytes + need(e, q) > e->fusion_bytes) continue;
        used[j] = 1;
        bucket[nb++] = q;
        bytes += need(e, q);
      }
    }
    if (nb > 1) run_fused(e, bucket, nb);
    else run_single(e, r);
  }
  e->nready = 0;
}
