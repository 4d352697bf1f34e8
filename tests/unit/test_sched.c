/* test_sched.c - runs every rank's schedule of every registered algorithm in
 * one process over the in-memory transport (no MPI), for every rank count
 * from 1 to 64, several counts, in-place and out-of-place, every root
 * position that matters, and with messages split into small pieces, on
 * int32 sums (and the pipelined scan chain at several pieces; the
 * all-gatherv's blocks of unequal size, packed or placed apart); the reductions again on 16-byte (double, int) pairs under
 * MAXLOC, for an element size and an op of another kind. Each
 * result is checked against a reference computed here from the inputs. The
 * in-memory transport is rendezvous-only, so a schedule that would deadlock
 * under a real MPI fails here too. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo.h"
#include "cache.h"
#include "exec.h"
#include "kernels.h"
#include "mem_transport.h"
#include "stage_transport.h"

static int passed, failed;
static int g_k; /* the parameter the current algorithm runs with */

/* Every rank's input, regenerated wherever a reference needs it. */
static int32_t input(int rank, size_t i) {
  return (int32_t)((uint32_t)rank * 1000003u + (uint32_t)i * 7u + 1u);
}

/* The element type of a pass: its size, rank r's element i, the reduction
 * of element i over p ranks, equality, and the kernel. */
typedef struct {
  const char *name;
  size_t size;
  void (*input)(int rank, size_t i, void *dst);
  void (*reduced)(int p, size_t i, void *dst);
  int (*same)(const void *a, const void *b);
  pccl_dtype_t dtype;
  pccl_op_t op;
} elem_t;

static void int_input(int rank, size_t i, void *dst) {
  int32_t v = input(rank, i);
  memcpy(dst, &v, sizeof v);
}
static void int_sum(int p, size_t i, void *dst) {
  uint32_t s = 0;
  for (int r = 0; r < p; r++) s += (uint32_t)input(r, i);
  memcpy(dst, &s, sizeof s);
}
static int int_same(const void *a, const void *b) { return memcmp(a, b, sizeof(int32_t)) == 0; }

/* Pairs: a few values, so equal ones (where the smaller index wins) meet;
 * the index is not the rank, so the order of the reduction shows. */
static void pair_input(int rank, size_t i, void *dst) {
  uint32_t h = (uint32_t)input(rank, i) * 2654435761u;
  pccl_double_int_t v;
  memset(&v, 0, sizeof v);
  v.value = (double)((h >> 8) % 5);
  v.index = (int32_t)((h >> 16) % 13) - 6;
  memcpy(dst, &v, sizeof v);
}
static void pair_maxloc(int p, size_t i, void *dst) {
  pccl_double_int_t best, x;
  pair_input(0, i, &best);
  for (int r = 1; r < p; r++) {
    pair_input(r, i, &x);
    if (x.value > best.value || (x.value == best.value && x.index < best.index)) best = x;
  }
  memcpy(dst, &best, sizeof best);
}
static int pair_same(const void *a, const void *b) {
  pccl_double_int_t x, y;
  memcpy(&x, a, sizeof x);
  memcpy(&y, b, sizeof y);
  return x.value == y.value && x.index == y.index; /* padding aside */
}

static const elem_t int32_sum = {"int32 sum", sizeof(int32_t), int_input, int_sum, int_same,
                                 PCCL_INT32, PCCL_SUM};
static const elem_t pair_max = {"double_int maxloc", sizeof(pccl_double_int_t), pair_input,
                                pair_maxloc, pair_same, PCCL_DOUBLE_INT, PCCL_MAXLOC};
static const elem_t *g_elem = &int32_sum; /* the current pass's */

/* An all-gatherv's blocks: rank r's count, the packed offsets, where each
 * lands in recvbuf (packed: at boff[r]) and recvbuf's length. Bytes
 * between blocks must keep the fill (0xDE). */
#define MAXP 64
typedef struct {
  size_t count[MAXP], boff[MAXP + 1], place[MAXP], extent;
  int packed, p;
} vlay_t;
static const vlay_t *g_v; /* the current all-gatherv case's, NULL otherwise */

/* Counts by pattern: 0 ramp with zeros (r % 3 == 1 gives none), 1 one
 * rank holds almost all, 2 equal; base scales them. Places: packed, or in
 * reverse rank order with a gap of 2 elements before each block. */
static void vlay_make(vlay_t *v, int p, int pattern, size_t base, int packed) {
  v->boff[0] = 0;
  for (int r = 0; r < p; r++) {
    v->count[r] = pattern == 0 ? (r % 3 == 1 ? 0 : base * (size_t)(r % 4 + 1))
                  : pattern == 1 ? (r == p / 2 ? base * 9 : r % 2)
                                 : base;
    v->boff[r + 1] = v->boff[r] + v->count[r];
  }
  v->packed = packed;
  v->p = p;
  v->extent = 0;
  size_t at = 0;
  for (int r = p - 1; r >= 0; r--) {
    v->place[r] = packed ? v->boff[r] : (at += 2);
    if (!packed) at += v->count[r];
  }
  for (int r = 0; r < p; r++)
    if (v->place[r] + v->count[r] > v->extent) v->extent = v->place[r] + v->count[r];
}

/* An all-to-allv's blocks: m(i, j) elements from rank i to rank j,
 * symmetric so that every case runs in place too; per rank the four
 * arrays as pccl_coll_args_t.a2a lays them out (in place, the send side
 * is the receive side), and its buffers' lengths. */
typedef struct {
  size_t v[MAXP][4 * MAXP]; /* scounts | sdispls | rcounts | rdispls */
  size_t send_ext[MAXP], recv_ext[MAXP];
  int p;
} a2a_t;
static a2a_t g_a2a_store;
static const a2a_t *g_a; /* the current all-to-allv case's, NULL otherwise */

static size_t a2a_count(int p, int pattern, size_t base, int i, int j) {
  if (pattern == 0) return (size_t)((i + j) % 4) * base;
  if (pattern == 1) return i == p / 2 || j == p / 2 ? 9 * base : (size_t)((i + j) % 2);
  return base;
}

/* Places of n blocks (counts c): packed, or in reverse order with a gap
 * of 2 before each; returns the buffer's length. */
static size_t place_blocks(int n, const size_t *c, int packed, size_t *at) {
  size_t end = 0, len = 0;
  for (int k = 0; k < n; k++) {
    int b = packed ? k : n - 1 - k;
    at[b] = end + (packed ? 0 : 2);
    end = at[b] + c[b];
    if (c[b] && end > len) len = end;
  }
  return len;
}

static void a2a_make(a2a_t *a, int p, int pattern, size_t base, int packed, int inplace) {
  a->p = p;
  for (int r = 0; r < p; r++) {
    size_t *sc = a->v[r], *sd = sc + p, *rc = sc + 2 * p, *rd = sc + 3 * p;
    for (int j = 0; j < p; j++)
      sc[j] = a2a_count(p, pattern, base, r, j), rc[j] = a2a_count(p, pattern, base, j, r);
    a->recv_ext[r] = place_blocks(p, rc, packed, rd);
    /* out of place the send side is laid out the other way from the receive side */
    a->send_ext[r] = inplace ? a->recv_ext[r] : place_blocks(p, sc, !packed, sd);
    if (inplace) memcpy(sd, rd, (size_t)p * sizeof *sd);
  }
}

/* Element i of a buffer of the current type. */
static unsigned char *at(void *base, size_t i) { return (unsigned char *)base + i * g_elem->size; }

typedef struct {
  unsigned char *send, *recv; /* what the rank passes (may alias, may be NULL) */
  unsigned char *own_send, *own_recv; /* allocations to free */
  size_t send_elems, recv_elems;
  int aliased;
  long long send_in_recv;
} rank_bufs_t;

/* Gatherv, scatterv and alltoallv with equal blocks (as the simulator
 * runs them) are the plain collectives. */
static pccl_coll_t plain_of(pccl_coll_t c) {
  return c == PCCL_COLL_GATHERV ? PCCL_COLL_GATHER
         : c == PCCL_COLL_SCATTERV ? PCCL_COLL_SCATTER
         : c == PCCL_COLL_ALLTOALLV ? PCCL_COLL_ALLTOALL : c;
}
static int blocks_in(pccl_coll_t c) {
  c = plain_of(c);
  return c == PCCL_COLL_REDUCE_SCATTER || c == PCCL_COLL_SCATTER || c == PCCL_COLL_ALLTOALL;
}
static int blocks_out(pccl_coll_t c) {
  c = plain_of(c);
  return c == PCCL_COLL_ALLGATHER || c == PCCL_COLL_GATHER || c == PCCL_COLL_ALLTOALL;
}
static int rooted(pccl_coll_t c) {
  c = plain_of(c);
  return c == PCCL_COLL_BROADCAST || c == PCCL_COLL_REDUCE || c == PCCL_COLL_SCATTER ||
         c == PCCL_COLL_GATHER;
}

/* Lays out one rank's buffers as a user would, in place or not, and fills
 * the input. */
/* A reduce-scatterv's buffers: every block in, this rank's out (in place
 * at its block of the input). */
static void setup_rsv(rank_bufs_t *b, int rank, int inplace) {
  size_t es = g_elem->size, total = g_v->boff[g_v->p];
  b->send_elems = total;
  b->recv_elems = g_v->count[rank];
  b->own_send = b->send = malloc((total ? total : 1) * es);
  if (inplace) {
    b->recv = at(b->send, g_v->boff[rank]);
    b->send_in_recv = -(long long)g_v->boff[rank];
    b->aliased = 1;
  } else {
    b->own_recv = b->recv = malloc((b->recv_elems ? b->recv_elems : 1) * es);
    memset(b->recv, 0xDE, b->recv_elems * es);
  }
  for (size_t i = 0; i < total; i++) g_elem->input(rank, i, at(b->send, i));
}

static void setup_v(rank_bufs_t *b, int rank, int inplace) {
  size_t es = g_elem->size, n = g_v->count[rank];
  b->send_elems = n;
  b->recv_elems = g_v->extent;
  b->own_recv = b->recv = malloc((b->recv_elems ? b->recv_elems : 1) * es);
  memset(b->recv, 0xDE, b->recv_elems * es);
  if (inplace) {
    b->send = at(b->recv, g_v->place[rank]);
    b->send_in_recv = (long long)g_v->place[rank];
    b->aliased = 1;
  } else {
    b->own_send = b->send = malloc((n ? n : 1) * es);
  }
  for (size_t i = 0; i < n; i++) g_elem->input(rank, i, at(b->send, i));
}

/* A gatherv's or scatterv's buffers: the root's as an all-gatherv's or
 * the mirror; elsewhere the rank's own block alone. */
static void setup_rooted_v(rank_bufs_t *b, pccl_coll_t coll, int rank, int root, int inplace) {
  size_t es = g_elem->size, n = g_v->count[rank];
  if (coll == PCCL_COLL_GATHERV && rank == root) {
    setup_v(b, rank, inplace);
  } else if (coll == PCCL_COLL_GATHERV) {
    b->send_elems = n;
    b->own_send = b->send = malloc((n ? n : 1) * es);
    for (size_t i = 0; i < n; i++) g_elem->input(rank, i, at(b->send, i));
  } else {
    b->recv_elems = n;
    if (rank == root) {
      b->send_elems = g_v->extent;
      b->own_send = b->send = malloc((g_v->extent ? g_v->extent : 1) * es);
      for (size_t i = 0; i < g_v->extent; i++) g_elem->input(rank, i, at(b->send, i));
    }
    if (rank == root && inplace) {
      b->recv = at(b->send, g_v->place[rank]);
      b->send_in_recv = -(long long)g_v->place[rank];
      b->aliased = 1;
    } else {
      b->own_recv = b->recv = malloc((n ? n : 1) * es);
      memset(b->recv, 0xDE, n * es);
    }
  }
}

/* An all-to-allv's buffers; in place, recvbuf holds the input. */
static void setup_a2a(rank_bufs_t *b, int rank, int inplace) {
  size_t es = g_elem->size, rn = g_a->recv_ext[rank], sn = g_a->send_ext[rank];
  b->recv_elems = rn;
  b->own_recv = b->recv = malloc((rn ? rn : 1) * es);
  memset(b->recv, 0xDE, rn * es);
  b->send_elems = sn;
  if (inplace) { /* the blocks hold the input, the gaps keep the fill */
    b->send = b->recv;
    b->aliased = 1;
    const size_t *rc = g_a->v[rank] + 2 * g_a->p, *rd = rc + g_a->p;
    for (int j = 0; j < g_a->p; j++)
      for (size_t i = rd[j]; i < rd[j] + rc[j]; i++) g_elem->input(rank, i, at(b->send, i));
    return;
  }
  b->own_send = b->send = malloc((sn ? sn : 1) * es);
  for (size_t i = 0; i < sn; i++) g_elem->input(rank, i, at(b->send, i));
}

static void setup(rank_bufs_t *b, pccl_coll_t coll, int p, int rank, int root, size_t c,
                  int inplace) {
  memset(b, 0, sizeof(*b));
  if (g_a) {
    setup_a2a(b, rank, inplace);
    return;
  }
  if (g_v) {
    if (coll == PCCL_COLL_GATHERV || coll == PCCL_COLL_SCATTERV)
      setup_rooted_v(b, coll, rank, root, inplace);
    else
      coll == PCCL_COLL_REDUCE_SCATTERV ? setup_rsv(b, rank, inplace) : setup_v(b, rank, inplace);
    return;
  }
  b->send_elems = blocks_in(coll) ? c * (size_t)p : c;
  b->recv_elems = blocks_out(coll) ? c * (size_t)p : c;
  pccl_coll_t pc = plain_of(coll);
  int uses_recv = !((pc == PCCL_COLL_REDUCE || pc == PCCL_COLL_GATHER) && rank != root) &&
                  !(coll == PCCL_COLL_EXSCAN && rank == 0); /* may be NULL there */
  int uses_send = !((pc == PCCL_COLL_BROADCAST || pc == PCCL_COLL_SCATTER) && rank != root);
  if (rooted(coll) && rank != root) { /* only the rank's own block */
    if (pc == PCCL_COLL_GATHER) b->send_elems = c;
    if (pc == PCCL_COLL_SCATTER) b->recv_elems = c;
  }
  if (rooted(coll) && rank != root) inplace = 0;
  if (inplace) {
    size_t owner = (size_t)(rooted(coll) ? root : rank);
    if (b->recv_elems >= b->send_elems) {
      b->own_recv = malloc(b->recv_elems * g_elem->size);
      b->recv = b->own_recv;
      long long shift = blocks_out(coll) && !blocks_in(coll) ? (long long)(owner * c) : 0;
      b->send = at(b->recv, (size_t)shift);
      b->send_in_recv = shift;
    } else {
      b->own_send = malloc(b->send_elems * g_elem->size);
      b->send = b->own_send;
      b->recv = at(b->send, owner * c);
      b->send_in_recv = -(long long)(owner * c);
    }
    b->aliased = 1;
  } else {
    if (uses_send) b->own_send = b->send = malloc(b->send_elems * g_elem->size);
    if (uses_recv) b->own_recv = b->recv = malloc(b->recv_elems * g_elem->size);
    if (b->recv) memset(b->recv, 0xDE, b->recv_elems * g_elem->size);
  }
  if (b->send)
    for (size_t i = 0; i < b->send_elems; i++) g_elem->input(rank, i, at(b->send, i));
}

/* Expected output element i of `rank`, into dst. */
static void expected(pccl_coll_t coll, int p, int rank, int root, size_t c, size_t i, void *dst) {
  if (g_a) { /* the block from rank j that holds i, as j sent it, else the fill */
    const size_t *rc = g_a->v[rank] + 2 * p, *rd = g_a->v[rank] + 3 * p;
    for (int j = 0; j < p; j++)
      if (i >= rd[j] && i < rd[j] + rc[j]) {
        g_elem->input(j, g_a->v[j][p + rank] + (i - rd[j]), dst);
        return;
      }
    memset(dst, 0xDE, g_elem->size);
    return;
  }
  if (g_v && coll == PCCL_COLL_SCATTERV) {
    g_elem->input(root, g_v->place[rank] + i, dst);
    return;
  }
  if (g_v && coll == PCCL_COLL_REDUCE_SCATTERV) { /* this rank's block, reduced */
    g_elem->reduced(p, g_v->boff[rank] + i, dst);
    return;
  }
  if (g_v) { /* the block that holds i, else the fill */
    for (int b = 0; b < p; b++)
      if (i >= g_v->place[b] && i < g_v->place[b] + g_v->count[b]) {
        g_elem->input(b, i - g_v->place[b], dst);
        return;
      }
    memset(dst, 0xDE, g_elem->size);
    return;
  }
  switch (plain_of(coll)) {
    case PCCL_COLL_ALLGATHER: g_elem->input((int)(i / c), i % c, dst); return;
    case PCCL_COLL_REDUCE_SCATTER: g_elem->reduced(p, (size_t)rank * c + i, dst); return;
    case PCCL_COLL_ALLREDUCE: g_elem->reduced(p, i, dst); return;
    case PCCL_COLL_BROADCAST: g_elem->input(root, i, dst); return;
    case PCCL_COLL_REDUCE: g_elem->reduced(p, i, dst); return;
    case PCCL_COLL_SCATTER: g_elem->input(root, (size_t)rank * c + i, dst); return;
    case PCCL_COLL_GATHER: g_elem->input((int)(i / c), i % c, dst); return;
    case PCCL_COLL_ALLTOALL: g_elem->input((int)(i / c), (size_t)rank * c + i % c, dst); return;
    case PCCL_COLL_SCAN: g_elem->reduced(rank + 1, i, dst); return;
    /* rank 0's recvbuf is left alone: in place, it keeps the input */
    case PCCL_COLL_EXSCAN: rank ? g_elem->reduced(rank, i, dst) : g_elem->input(0, i, dst); return;
    default: return;
  }
}

static int check(const pccl_algo_t *al, int p, int root, size_t c, int inplace, size_t max_msg,
                 rank_bufs_t *bufs) {
  for (int r = 0; r < p; r++) {
    rank_bufs_t *b = &bufs[r];
    if (!b->recv) continue;
    unsigned char want[16];
    for (size_t i = 0; i < b->recv_elems; i++) {
      expected(al->coll, p, r, root, c, i, want);
      if (g_elem->same(at(b->recv, i), want)) continue;
      printf("FAIL %s/%s:%d %s p=%d rank=%d root=%d count=%zu inplace=%d max_msg=%zu: element %zu differs\n",
             pccl_coll_name(al->coll), al->name, g_k, g_elem->name, p, r, root, c, inplace, max_msg, i);
      return 0;
    }
    /* Out of place, the send buffer must be left as it was. */
    if (!b->aliased && b->send)
      for (size_t i = 0; i < b->send_elems; i++)
        if ((g_elem->input(r, i, want), !g_elem->same(at(b->send, i), want))) {
          printf("FAIL %s/%s p=%d rank=%d count=%zu: send buffer modified at %zu\n",
                 pccl_coll_name(al->coll), al->name, p, r, c, i);
          return 0;
        }
  }
  return 1;
}

/* The node layout of a case: `per_node` consecutive ranks per node (the
 * last node may be smaller), or with `per_node` < 0, ranks dealt round-robin
 * to -per_node nodes (members of a node are not consecutive ranks). */
typedef struct {
  int per_node;
  pccl_intra_t intra;
} layout_t;

static int make_topo(int p, layout_t l, pccl_topo_t *t) {
  int *node = malloc(2 * (size_t)p * sizeof(int)), *local = node + p;
  if (!node) return 0;
  for (int r = 0; r < p; r++) {
    int nn = l.per_node < 0 ? -l.per_node : 0;
    node[r] = l.per_node > 0 ? r / l.per_node : r % nn;
    local[r] = l.per_node > 0 ? r % l.per_node : r / nn;
  }
  int ok = pccl_topo_create(p, node, local, t) == PCCL_OK;
  free(node);
  return ok;
}

/* Whether a buffer of `coll` holds one block per rank. */
static int blocks_of(pccl_coll_t coll) {
  return coll == PCCL_COLL_ALLGATHER || coll == PCCL_COLL_REDUCE_SCATTER || coll == PCCL_COLL_SCATTER ||
         coll == PCCL_COLL_GATHER || coll == PCCL_COLL_ALLTOALL;
}

/* The staging transport (device buffers' messages through host memory)
 * over the in-memory one, its "device" plain memory: memcpy hooks that
 * count what crosses, so every message is seen to go through staging. */
typedef struct {
  size_t to_host, to_device;
} crossed_t;

static pccl_status_t hook_to_host(void *ctx, void *dst, const void *src, size_t bytes) {
  ((crossed_t *)ctx)->to_host += bytes;
  memcpy(dst, src, bytes);
  return PCCL_OK;
}

static pccl_status_t hook_to_device(void *ctx, void *dst, const void *src, size_t bytes) {
  ((crossed_t *)ctx)->to_device += bytes;
  memcpy(dst, src, bytes);
  return PCCL_OK;
}

static pccl_status_t hook_alloc(void *ctx, void **p, size_t bytes) {
  (void)ctx;
  *p = malloc(bytes ? bytes : 1);
  return *p ? PCCL_OK : PCCL_ERR_NO_MEMORY;
}

static void hook_free(void *ctx, void *p) {
  (void)ctx;
  free(p);
}

/* Bytes rank's schedule sends and receives. */
static void message_bytes(const pccl_sched_t *s, size_t *sent, size_t *received) {
  *sent = *received = 0;
  for (uint32_t i = 0; i < s->nsteps; i++) {
    const pccl_step_t *st = &s->steps[i];
    if (st->kind == PCCL_STEP_SEND) *sent += st->src.len * g_elem->size;
    if (st->kind == PCCL_STEP_RECV || st->kind == PCCL_STEP_RECV_REDUCE)
      *received += st->dst.len * g_elem->size;
  }
}

static void run_case(const pccl_algo_t *al, int p, layout_t lay, int root, size_t c, int inplace,
                     size_t max_msg, const pccl_transport_t *tp) {
  pccl_sched_t *sched = calloc((size_t)p, sizeof(*sched));
  rank_bufs_t *bufs = calloc((size_t)p, sizeof(*bufs));
  pccl_exec_t *execs = calloc((size_t)p, sizeof(*execs));
  unsigned char **tmp = calloc((size_t)p, sizeof(*tmp));
  pccl_exec_ws_t *ws = calloc((size_t)p, sizeof(*ws));
  pccl_stage_t *stage = calloc((size_t)p, sizeof(*stage));
  crossed_t *crossed = calloc((size_t)p, sizeof(*crossed));
  int staging = tp == &pccl_stage_transport;
  pccl_mem_world_t *world = NULL;
  pccl_topo_t topo;
  if (lay.per_node < 0 && -lay.per_node > p) lay.per_node = -p;
  int ok = make_topo(p, lay, &topo);
  ok = ok && pccl_mem_world_create(p, &world) == PCCL_OK;
  for (int r = 0; ok && r < p; r++) {
    setup(&bufs[r], al->coll, p, r, root, c, inplace);
    pccl_sb_t *sb;
    /* a gatherv's or scatterv's rank other than the root sees its own block only */
    int own = g_v && (al->coll == PCCL_COLL_GATHERV || al->coll == PCCL_COLL_SCATTERV) && r != root;
    pccl_coll_args_t a = {al->coll, p, r, root, own ? g_v->count[r] : c, bufs[r].aliased, &topo,
                          lay.intra, g_k, g_v && !own ? g_v->boff : NULL,
                          g_v && !own && !g_v->packed ? g_v->place : NULL, g_a ? g_a->v[r] : NULL};
    ok = pccl_sb_create(p, r, g_elem->size, bufs[r].aliased, bufs[r].send_in_recv, max_msg, &sb) == PCCL_OK;
    if (ok && al->generate(sb, &a) != PCCL_OK) {
      pccl_sb_destroy(sb);
      ok = 0;
    }
    if (ok) ok = pccl_sb_finish(sb, &sched[r]) == PCCL_OK;
    if (!ok) printf("FAIL %s/%s p=%d rank=%d: schedule generation\n", pccl_coll_name(al->coll), al->name, p, r);
    /* coll.c skips PCCL_MAX_SCRATCH's agreement below this bound */
    size_t largest = g_a ? (g_a->send_ext[r] > g_a->recv_ext[r] ? g_a->send_ext[r] : g_a->recv_ext[r])
                     : !g_v ? (blocks_of(plain_of(al->coll)) ? c * (size_t)p : c)
                     : al->coll == PCCL_COLL_REDUCE_SCATTERV ? g_v->boff[p] : g_v->extent;
    /* the in-place all-to-allv's swap needs 64 KiB of scratch at most */
    if (ok && al->coll == PCCL_COLL_ALLTOALLV && sched[r].tmp_elems * g_elem->size > (64u << 10)) {
      printf("FAIL alltoallv/%s p=%d rank=%d: TMP of %zu elements exceeds 64 KiB\n", al->name, p, r,
             sched[r].tmp_elems);
      ok = 0;
    }
    if (ok && sched[r].tmp_elems > PCCL_TMP_FACTOR_MAX * (largest ? largest : 1)) {
      printf("FAIL %s/%s:%d p=%d rank=%d count=%zu: TMP of %zu elements exceeds PCCL_TMP_FACTOR_MAX x %zu\n",
             pccl_coll_name(al->coll), al->name, g_k, p, r, c, sched[r].tmp_elems, largest);
      ok = 0;
    }
    if (ok) {
      tmp[r] = malloc((sched[r].tmp_elems ? sched[r].tmp_elems : 1) * g_elem->size);
      memset(tmp[r], 0xAB, (sched[r].tmp_elems ? sched[r].tmp_elems : 1) * g_elem->size);
      void *ctx = pccl_mem_world_rank(world, r);
      if (staging) {
        stage[r] = (pccl_stage_t){.inner = &pccl_mem_transport, .inner_ctx = ctx,
                                  .hooks = {hook_to_host, hook_to_device, hook_alloc, hook_free, &crossed[r]}};
        ok = pccl_stage_begin(&stage[r], pccl_stage_bytes(&sched[r], g_elem->size), sched[r].nsteps) == PCCL_OK;
        ctx = &stage[r];
      }
      ok = ok && pccl_exec_init(&execs[r], &sched[r], bufs[r].send, bufs[r].recv, tmp[r], g_elem->size,
                                pccl_kernel_reduce(g_elem->dtype, g_elem->op), pccl_kernel_divide(g_elem->dtype),
                                tp, ctx, &ws[r]) == PCCL_OK;
    }
  }
  if (ok) {
    pccl_status_t st = pccl_mem_run_all(execs, p);
    if (st != PCCL_OK) {
      printf("FAIL %s/%s:%d p=%d per_node=%d root=%d count=%zu inplace=%d max_msg=%zu%s: %s (deadlock or size mismatch)\n",
             pccl_coll_name(al->coll), al->name, g_k, p, lay.per_node, root, c, inplace, max_msg,
             tp == &pccl_mem_transport_staged ? " staged" : staging ? " through host staging" : "",
             pccl_status_string(st));
      ok = 0;
    }
  }
  if (ok) ok = check(al, p, root, c, inplace, max_msg, bufs);
  for (int r = 0; ok && staging && r < p; r++) {
    size_t sent, received;
    message_bytes(&sched[r], &sent, &received);
    if (crossed[r].to_host != sent || crossed[r].to_device != received) {
      printf("FAIL %s/%s:%d p=%d rank=%d count=%zu staged through host: %zu/%zu bytes out, %zu/%zu in\n",
             pccl_coll_name(al->coll), al->name, g_k, p, r, c, crossed[r].to_host, sent,
             crossed[r].to_device, received);
      ok = 0;
    }
  }
  ok ? passed++ : failed++;
  for (int r = 0; r < p; r++) {
    pccl_exec_ws_free(&ws[r]);
    pccl_stage_free(&stage[r]);
    pccl_sched_free(&sched[r]);
    free(bufs[r].own_send);
    free(bufs[r].own_recv);
    free(tmp[r]);
  }
  pccl_mem_world_destroy(world);
  pccl_topo_free(&topo);
  free(sched);
  free(bufs);
  free(execs);
  free(tmp);
  free(ws);
  free(stage);
  free(crossed);
}

/* Every count, in-place or not, every distinct root, then split messages;
 * fused receive-reduces are folded by the transport, and for some counts
 * also left to the executor (staged), the path MPI peers take. */
static void run_sweep(const pccl_algo_t *al, int p, layout_t lay) {
  const size_t counts[] = {1, 2, 3, 7, 33};
  int roots[3] = {0, p - 1, p / 2};
  int nroots = rooted(al->coll) ? 3 : 1;
  for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++)
    for (int inplace = 0; inplace < 2; inplace++)
      for (int ri = 0; ri < nroots; ri++) {
        if (ri > 0 && roots[ri] == roots[ri - 1]) continue;
        run_case(al, p, lay, roots[ri], counts[ci], inplace, (size_t)1 << 30, &pccl_mem_transport);
        if (counts[ci] == 7)
          run_case(al, p, lay, roots[ri], 7, inplace, (size_t)1 << 30, &pccl_mem_transport_staged);
        if (counts[ci] == 3) /* as device buffers run: messages through host staging */
          run_case(al, p, lay, roots[ri], 3, inplace, (size_t)1 << 30, &pccl_stage_transport);
      }
  /* Messages split into pieces of 3 elements. */
  run_case(al, p, lay, p - 1, 10, 0, 3 * sizeof(int32_t), &pccl_mem_transport);
  run_case(al, p, lay, p - 1, 10, 1, 3 * sizeof(int32_t), &pccl_mem_transport_staged);
}

/* An all-gatherv's cases: uneven counts with zeros, one rank holding
 * nearly all, equal counts; packed and placed apart (reverse order, gaps);
 * in place or not; messages split into pieces of 3 elements; through host
 * staging. */
static void run_v(const pccl_algo_t *al, int p, layout_t lay) {
  vlay_t v;
  int rs = al->coll == PCCL_COLL_REDUCE_SCATTERV; /* its blocks lie packed */
  for (int pattern = 0; pattern < 3; pattern++)
    for (int packed = rs; packed < 2; packed++)
      for (int inplace = 0; inplace < 2; inplace++) {
        vlay_make(&v, p, pattern, pattern == 1 ? 3 : 2, packed);
        g_v = &v;
        run_case(al, p, lay, 0, 0, inplace, (size_t)1 << 30, &pccl_mem_transport);
        if (pattern == 0) run_case(al, p, lay, 0, 0, inplace, 3 * sizeof(int32_t), &pccl_mem_transport_staged);
        if (pattern == 1) run_case(al, p, lay, 0, 0, inplace, (size_t)1 << 30, &pccl_stage_transport);
        g_v = NULL;
      }
}

/* A gatherv's or scatterv's cases: run_v's layouts, rooted at the first
 * and the last rank. */
static void run_rooted_v(const pccl_algo_t *al, int p, layout_t lay) {
  vlay_t v;
  for (int pattern = 0; pattern < 3; pattern++)
    for (int packed = 0; packed < 2; packed++)
      for (int inplace = 0; inplace < 2; inplace++)
        for (int root = 0; root < p; root += p - 1 > 0 ? p - 1 : 1) {
          vlay_make(&v, p, pattern, pattern == 1 ? 3 : 2, packed);
          g_v = &v;
          run_case(al, p, lay, root, 0, inplace, (size_t)1 << 30, &pccl_mem_transport);
          if (pattern == 0)
            run_case(al, p, lay, root, 0, inplace, 3 * sizeof(int32_t), &pccl_mem_transport_staged);
          if (pattern == 1)
            run_case(al, p, lay, root, 0, inplace, (size_t)1 << 30, &pccl_stage_transport);
          g_v = NULL;
        }
}

/* An all-to-allv's cases: the count patterns, packed or placed apart (the
 * send side the other way), in place or not; split messages; staging; and
 * in place with blocks larger than the swap's 64 KiB of scratch. */
static void run_a2a(const pccl_algo_t *al, int p, layout_t lay) {
  for (int pattern = 0; pattern < 3; pattern++)
    for (int packed = 0; packed < 2; packed++)
      for (int inplace = 0; inplace < 2; inplace++) {
        a2a_make(&g_a2a_store, p, pattern, pattern == 1 ? 3 : 2, packed, inplace);
        g_a = &g_a2a_store;
        run_case(al, p, lay, 0, 0, inplace, (size_t)1 << 30, &pccl_mem_transport);
        if (pattern == 0) run_case(al, p, lay, 0, 0, inplace, 3 * sizeof(int32_t), &pccl_mem_transport_staged);
        if (pattern == 1) run_case(al, p, lay, 0, 0, inplace, (size_t)1 << 30, &pccl_stage_transport);
        g_a = NULL;
      }
  if (p > 4) return;
  a2a_make(&g_a2a_store, p, 0, 20000, 0, 1); /* up to 60000 int32 a block: 4 pieces */
  g_a = &g_a2a_store;
  run_case(al, p, lay, 0, 0, 1, (size_t)1 << 30, &pccl_mem_transport);
  g_a = NULL;
}

/* The reductions on pairs: a few counts in and out of place, the last rank
 * as root, and messages split into pieces of two pairs. */
static void run_pairs(const pccl_algo_t *al, int p, layout_t lay) {
  const size_t counts[] = {1, 7};
  for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++)
    for (int inplace = 0; inplace < 2; inplace++)
      run_case(al, p, lay, p - 1, counts[ci], inplace, (size_t)1 << 30, &pccl_mem_transport);
  run_case(al, p, lay, p - 1, 5, 0, 2 * sizeof(pccl_double_int_t), &pccl_mem_transport_staged);
}

/* The chain's pipeline at counts of several of its 128 KiB pieces, with
 * messages split too: the other sweeps fit in one piece. */
static void run_pieces(const pccl_algo_t *al, int p, layout_t lay) {
  const size_t count = 3 * 32768 + 5; /* int32: 3 whole pieces and 5 elements */
  for (int inplace = 0; inplace < 2; inplace++)
    run_case(al, p, lay, 0, count, inplace, (size_t)1 << 30, &pccl_mem_transport);
  run_case(al, p, lay, 0, count, 1, 40000 * sizeof(int32_t), &pccl_mem_transport_staged);
}

/* The schedule cache tells apart keys that differ in one field only: k
 * once did not count, so a second k of an algorithm ran the first k's
 * schedule at the same count. */
static void test_cache_keys(void) {
  static pccl_sched_cache_t cache;
  const pccl_sched_key_t base = {PCCL_COLL_ALLGATHER, 3, 2, 0, 0, 0, 1000, 4};
  pccl_sched_key_t keys[9];
  for (int f = 0; f < 9; f++) keys[f] = base;
  keys[1].coll = PCCL_COLL_ALLREDUCE, keys[2].algo = 4, keys[3].k = 4, keys[4].root = 1;
  keys[5].inplace = 1, keys[6].avg = 1, keys[7].count = 1001, keys[8].elem_size = 8;
  pccl_sched_t empty;
  memset(&empty, 0, sizeof empty);
  const pccl_sched_t *first = pccl_cache_insert(&cache, &base, &empty);
  int bad = 0;
  for (int f = 1; f < 9; f++) bad += pccl_cache_find(&cache, &keys[f]) != NULL;
  if (bad || pccl_cache_find(&cache, &keys[0]) != first) {
    failed++;
    printf("FAIL schedule cache: %d of 8 keys that differ in one field found the cached schedule\n", bad);
  } else {
    passed++;
  }
  pccl_cache_clear(&cache);
}

int main(int argc, char **argv) {
  int max_p = argc > 1 ? atoi(argv[1]) : 64;
  test_cache_keys();
  /* Hierarchical algorithms run on several node layouts; flat ones on one. */
  const layout_t layouts[] = {{1, PCCL_INTRA_RING},      {2, PCCL_INTRA_RING},
                              {3, PCCL_INTRA_RING},      {4, PCCL_INTRA_RECURSIVE},
                              {5, PCCL_INTRA_RECURSIVE}, {-3, PCCL_INTRA_RING}};
  /* Every algorithm runs on all rank counts up to 24, then on a few powers
   * (27, 32, 64) and their neighbours; parameterized ones for each k, so
   * on counts that are and are not powers of it. (Every count to 64 cost
   * a minute of the suite's fifteen, most of it in the two-level
   * algorithms' six layouts.) */
  const int ks[] = {2, 3, 4, 8};
  for (int ai = 0; ai < PCCL_ALGO_COUNT; ai++) {
    const pccl_algo_t *al = &pccl_algos[ai];
    if (al->lossy) continue; /* bounded, not exact: test_zcoll */
    /* one step run by the node's processes on their shared segment: the MPI
     * matrix (tests/mpi, --algo seg) checks it, test_sim costs it */
    if (al->generate == pccl_gen_seg) continue;
    int hier = strncmp(al->name, "hier", 4) == 0;
    int reduces = al->coll == PCCL_COLL_ALLREDUCE || al->coll == PCCL_COLL_REDUCE_SCATTER ||
                  al->coll == PCCL_COLL_REDUCE || al->coll == PCCL_COLL_SCAN ||
                  al->coll == PCCL_COLL_EXSCAN;
    for (size_t ki = 0; ki < (al->kset ? sizeof ks / sizeof ks[0] : 1); ki++) {
      int before = failed;
      g_k = al->kset ? ks[ki] : al->k;
      for (size_t li = 0; li < (hier ? sizeof layouts / sizeof layouts[0] : 1); li++)
        for (int p = 1; p <= max_p; p++) {
          if (p > 24 && p != 27 && p != 32 && p != 33 && p != 48 && p != 63 && p != 64) continue;
          if (al->coll == PCCL_COLL_ALLGATHERV) {
            run_v(al, p, layouts[li]);
            continue;
          }
          if (al->coll == PCCL_COLL_GATHERV || al->coll == PCCL_COLL_SCATTERV)
            run_rooted_v(al, p, layouts[li]);
          if (al->coll == PCCL_COLL_ALLTOALLV) run_a2a(al, p, layouts[li]);
          if (al->coll == PCCL_COLL_REDUCE_SCATTERV) { /* int32 sums, then MAXLOC pairs */
            run_v(al, p, layouts[li]);
            g_elem = &pair_max;
            run_v(al, p, layouts[li]);
            g_elem = &int32_sum;
            continue;
          }
          run_sweep(al, p, layouts[li]);
          if (al->generate == pccl_gen_scan_chain && p <= 6) run_pieces(al, p, layouts[li]);
          if (!reduces) continue;
          g_elem = &pair_max;
          run_pairs(al, p, layouts[li]);
          g_elem = &int32_sum;
        }
      printf("%-14s %-13s k=%d %s\n", pccl_coll_name(al->coll), al->name, g_k,
             failed == before ? "ok" : "FAILED");
    }
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
