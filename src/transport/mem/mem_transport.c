/* mem_transport.c - in-process rendezvous transport; see mem_transport.h. */
#include "mem_transport.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  int src, dst, tag;
  char *buf;
  size_t bytes;
  uint32_t slot;
  const char *local; /* a fused receive-reduce: buf = message op local */
  pccl_reducer_t fold;
  size_t *received; /* a variable-length receive: bytes is its capacity */
} posted_t;

typedef struct {
  posted_t *v;
  size_t n, cap;
} posted_list_t;

typedef struct {
  uint32_t *v;
  size_t n, cap;
} slot_list_t;

struct pccl_mem_world {
  int nranks;
  pccl_mem_rank_t *ranks;
  posted_list_t *sends, *recvs; /* unmatched, indexed by destination rank */
  slot_list_t *finished;        /* per rank, not yet polled */
  int size_mismatch;
};

pccl_status_t pccl_mem_world_create(int nranks, pccl_mem_world_t **out) {
  pccl_mem_world_t *w = calloc(1, sizeof(*w));
  if (!w) return PCCL_ERR_NO_MEMORY;
  w->nranks = nranks;
  w->ranks = calloc((size_t)nranks, sizeof(*w->ranks));
  w->sends = calloc((size_t)nranks, sizeof(*w->sends));
  w->recvs = calloc((size_t)nranks, sizeof(*w->recvs));
  w->finished = calloc((size_t)nranks, sizeof(*w->finished));
  if (!w->ranks || !w->sends || !w->recvs || !w->finished) {
    pccl_mem_world_destroy(w);
    return PCCL_ERR_NO_MEMORY;
  }
  for (int r = 0; r < nranks; r++) w->ranks[r] = (pccl_mem_rank_t){w, r};
  *out = w;
  return PCCL_OK;
}

void pccl_mem_world_destroy(pccl_mem_world_t *w) {
  if (!w) return;
  for (int r = 0; w->sends && w->recvs && w->finished && r < w->nranks; r++) {
    free(w->sends[r].v);
    free(w->recvs[r].v);
    free(w->finished[r].v);
  }
  free(w->ranks);
  free(w->sends);
  free(w->recvs);
  free(w->finished);
  free(w);
}

pccl_mem_rank_t *pccl_mem_world_rank(pccl_mem_world_t *w, int rank) { return &w->ranks[rank]; }

static int push_slot(slot_list_t *l, uint32_t slot) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 64;
    uint32_t *v = realloc(l->v, cap * sizeof(*v));
    if (!v) return 0;
    l->v = v;
    l->cap = cap;
  }
  l->v[l->n++] = slot;
  return 1;
}

static int push_posted(posted_list_t *l, posted_t p) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 64;
    posted_t *v = realloc(l->v, cap * sizeof(*v));
    if (!v) return 0;
    l->v = v;
    l->cap = cap;
  }
  l->v[l->n++] = p;
  return 1;
}

/* Finds and removes the oldest posted entry matching (src, tag). */
static int take(posted_list_t *l, int src, int tag, posted_t *out) {
  for (size_t i = 0; i < l->n; i++) {
    if (l->v[i].src != src || l->v[i].tag != tag) continue;
    *out = l->v[i];
    memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof(posted_t));
    l->n--;
    return 1;
  }
  return 0;
}

static pccl_status_t complete(pccl_mem_world_t *w, const posted_t *s, const posted_t *r) {
  if (r->received ? s->bytes > r->bytes : s->bytes != r->bytes) {
    w->size_mismatch = 1;
    return PCCL_ERR_INTERNAL;
  }
  if (r->local) {
    pccl_reducer_apply(&r->fold, r->buf, s->buf, r->local, r->bytes);
  } else if (s->bytes) {
    memcpy(r->buf, s->buf, s->bytes);
  }
  if (r->received) *r->received = s->bytes;
  if (!push_slot(&w->finished[s->src], s->slot) || !push_slot(&w->finished[r->dst], r->slot))
    return PCCL_ERR_NO_MEMORY;
  return PCCL_OK;
}

static pccl_status_t mem_isend(void *ctx, int peer, int tag, const void *buf, size_t bytes,
                               uint32_t slot) {
  pccl_mem_rank_t *me = ctx;
  pccl_mem_world_t *w = me->world;
  posted_t s = {me->rank, peer, tag, (char *)buf, bytes, slot, NULL, {0}, NULL}, r;
  if (take(&w->recvs[peer], me->rank, tag, &r)) return complete(w, &s, &r);
  return push_posted(&w->sends[peer], s) ? PCCL_OK : PCCL_ERR_NO_MEMORY;
}

static pccl_status_t post_recv(pccl_mem_rank_t *me, posted_t r) {
  pccl_mem_world_t *w = me->world;
  posted_t s;
  if (take(&w->sends[me->rank], r.src, r.tag, &s)) return complete(w, &s, &r);
  return push_posted(&w->recvs[me->rank], r) ? PCCL_OK : PCCL_ERR_NO_MEMORY;
}

static pccl_status_t mem_irecv(void *ctx, int peer, int tag, void *buf, size_t bytes,
                               uint32_t slot) {
  pccl_mem_rank_t *me = ctx;
  return post_recv(me, (posted_t){peer, me->rank, tag, buf, bytes, slot, NULL, {0}, NULL});
}

static pccl_status_t mem_irecv_var(void *ctx, int peer, int tag, void *buf, size_t cap,
                                   size_t *received, uint32_t slot) {
  pccl_mem_rank_t *me = ctx;
  return post_recv(me, (posted_t){peer, me->rank, tag, buf, cap, slot, NULL, {0}, received});
}

/* Reduces straight from the sender's buffer, as the shm transport does. */
static pccl_status_t mem_irecv_reduce(void *ctx, int peer, int tag, void *dst, const void *local,
                                      size_t bytes, pccl_reducer_t fold, uint32_t slot) {
  pccl_mem_rank_t *me = ctx;
  return post_recv(me, (posted_t){peer, me->rank, tag, dst, bytes, slot, local, fold, NULL});
}

static pccl_status_t mem_poll(void *ctx, uint32_t *done, int max, int *ndone) {
  pccl_mem_rank_t *me = ctx;
  slot_list_t *l = &me->world->finished[me->rank];
  size_t n = l->n < (size_t)max ? l->n : (size_t)max;
  *ndone = 0;
  if (n == 0) return PCCL_OK; /* l->v may still be NULL */
  memcpy(done, l->v, n * sizeof(uint32_t));
  memmove(l->v, l->v + n, (l->n - n) * sizeof(uint32_t));
  l->n -= n;
  *ndone = (int)n;
  return PCCL_OK;
}

const pccl_transport_t pccl_mem_transport = {mem_isend, mem_irecv, mem_poll, mem_irecv_reduce,
                                             mem_isend, mem_irecv_var};
const pccl_transport_t pccl_mem_transport_staged = {mem_isend, mem_irecv, mem_poll, NULL,
                                                    mem_isend, mem_irecv_var};

pccl_status_t pccl_mem_run_all(pccl_exec_t *execs, int nranks) {
  for (;;) {
    int all_done = 1, any = 0;
    for (int r = 0; r < nranks; r++) {
      if (pccl_exec_done(&execs[r])) continue;
      int progressed = 0;
      pccl_status_t rc = pccl_exec_advance(&execs[r], &progressed);
      if (rc != PCCL_OK) return rc;
      any |= progressed;
      all_done &= pccl_exec_done(&execs[r]);
    }
    if (all_done) return PCCL_OK;
    if (!any) return PCCL_ERR_INTERNAL; /* deadlock */
  }
}
