/* stream.c - a collective whose scratch would exceed PCCL_MAX_SCRATCH runs
 * in pieces: the same collective, with the same algorithm, on `seg`
 * elements of every block at a time, so scratch and staging together stay
 * within the limit however large the message.
 *
 * One-buffer collectives (all-reduce, broadcast, reduce) take consecutive
 * slices of their buffers directly. Where a buffer holds one block per rank
 * (all-gather's output, reduce-scatter's input, scatter, gather, all-to-all),
 * slice [a, a + seg) of every block is copied into a staging buffer of
 * nranks * seg elements, the piece runs on it in its in-place layout, and
 * the result is copied back: one extra pass over the data, paid only above
 * the limit. */
#include <stdlib.h>
#include <string.h>

#include "stream.h"

static const void *at(const void *base, size_t elems, size_t esize) {
  return base ? (const char *)base + elems * esize : NULL;
}

/* Copies slice [a, a + n) of each of p blocks of `count` into (pack) or out
 * of (unpack) a staging buffer of p blocks of n. */
static void pack(void *stage, const void *blocks, int p, size_t count, size_t a, size_t n,
                 size_t es) {
  for (int q = 0; q < p; q++)
    memcpy((char *)stage + (size_t)q * n * es, (const char *)blocks + ((size_t)q * count + a) * es,
           n * es);
}

static void unpack(void *blocks, const void *stage, int p, size_t count, size_t a, size_t n,
                   size_t es) {
  for (int q = 0; q < p; q++)
    memcpy((char *)blocks + ((size_t)q * count + a) * es, (const char *)stage + (size_t)q * n * es,
           n * es);
}

static pccl_status_t piece(const pccl_stream_t *s, size_t a, size_t n, char *stage) {
  size_t es = s->esize, sn = (size_t)s->size * n * es; /* bytes of one staged side */
  int p = s->size, me = s->rank, at_root = me == s->root;
  pccl_status_t st;
  switch (s->coll) {
    case PCCL_COLL_ALLGATHER:
      memcpy(stage + (size_t)me * n * es, at(s->send, a, es), n * es);
      st = s->run(s->ctx, stage + (size_t)me * n * es, stage, n);
      if (st == PCCL_OK) unpack(s->recv, stage, p, s->count, a, n, es);
      return st;
    case PCCL_COLL_REDUCE_SCATTER:
      pack(stage, s->send, p, s->count, a, n, es);
      st = s->run(s->ctx, stage, stage + (size_t)me * n * es, n);
      if (st == PCCL_OK) memcpy((char *)s->recv + a * es, stage + (size_t)me * n * es, n * es);
      return st;
    case PCCL_COLL_SCATTER:
      if (at_root) pack(stage, s->send, p, s->count, a, n, es);
      return s->run(s->ctx, at_root ? stage : NULL, (char *)s->recv + a * es, n);
    case PCCL_COLL_GATHER:
      st = s->run(s->ctx, at(s->send, a, es), at_root ? stage : NULL, n);
      if (st == PCCL_OK && at_root) unpack(s->recv, stage, p, s->count, a, n, es);
      return st;
    case PCCL_COLL_ALLTOALL:
      pack(stage, s->send, p, s->count, a, n, es);
      st = s->run(s->ctx, stage, stage + sn, n);
      if (st == PCCL_OK) unpack(s->recv, stage + sn, p, s->count, a, n, es);
      return st;
    default: /* one buffer each: consecutive slices */
      return s->run(s->ctx, at(s->send, a, es), (void *)at(s->recv, a, es), n);
  }
}

size_t pccl__stream_stage_blocks(pccl_coll_t coll, int size) {
  switch (coll) {
    case PCCL_COLL_ALLGATHER:
    case PCCL_COLL_REDUCE_SCATTER:
    case PCCL_COLL_SCATTER:
    case PCCL_COLL_GATHER: return (size_t)size;
    case PCCL_COLL_ALLTOALL: return 2 * (size_t)size;
    default: return 0;
  }
}

pccl_status_t pccl__stream(const pccl_stream_t *s) {
  size_t stage_bytes = pccl__stream_stage_blocks(s->coll, s->size) * s->seg * s->esize;
  char *stage = NULL;
  if (stage_bytes && posix_memalign((void **)&stage, 64, stage_bytes) != 0)
    return PCCL_ERR_NO_MEMORY;
  pccl_status_t st = PCCL_OK;
  for (size_t a = 0; a < s->count && st == PCCL_OK; a += s->seg)
    st = piece(s, a, s->count - a < s->seg ? s->count - a : s->seg, stage);
  free(stage);
  return st;
}
