/* coll.c - the collective entry points: validate the call, pick the
 * algorithm, fetch or generate its schedule, and run it over MPI.
 *
 * Validation happens before anything is sent or written, so a call that
 * fails it leaves the receive buffer untouched. */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agree.h"
#include "call.h"
#include "coll.h"
#include "comm.h"
#include "device.h"
#include "exec.h"
#include "kernels.h"
#include "select.h"
#include "shared_mem.h"
#include "stream.h"

/* Messages are split below INT_MAX bytes so MPI's int counts hold them. */
#define PCCL_MAX_MSG_BYTES ((size_t)1 << 30)

/* What each collective needs: which buffers hold nranks blocks, which are
 * used only at the root, and whether it reduces. */
typedef struct {
  const char *api;
  int reduces;
  int rooted;
  int send_blocks; /* send buffer holds nranks*count (else count) */
  int recv_blocks;
  int send_root_only, recv_root_only;
  /* each rank sees only its own counts (gatherv, scatterv, alltoallv): no
   * decision may hang on sizes, and the scratch is bounded by a constant */
  int own_counts;
} coll_info_t;

static const coll_info_t infos[PCCL_COLL_COUNT] = {
    [PCCL_COLL_ALLGATHER] = {"pccl_allgather", 0, 0, 0, 1, 0, 0},
    [PCCL_COLL_REDUCE_SCATTER] = {"pccl_reduce_scatter", 1, 0, 1, 0, 0, 0},
    [PCCL_COLL_ALLREDUCE] = {"pccl_allreduce", 1, 0, 0, 0, 0, 0},
    [PCCL_COLL_BROADCAST] = {"pccl_broadcast", 0, 1, 0, 0, 1, 0},
    [PCCL_COLL_REDUCE] = {"pccl_reduce", 1, 1, 0, 0, 0, 1},
    [PCCL_COLL_SCATTER] = {"pccl_scatter", 0, 1, 1, 0, 1, 0},
    [PCCL_COLL_GATHER] = {"pccl_gather", 0, 1, 0, 1, 0, 1},
    [PCCL_COLL_ALLTOALL] = {"pccl_alltoall", 0, 0, 1, 1, 0, 0},
    [PCCL_COLL_SCAN] = {"pccl_scan", 1, 0, 0, 0, 0, 0},
    [PCCL_COLL_EXSCAN] = {"pccl_exscan", 1, 0, 0, 0, 0, 0},
    [PCCL_COLL_ALLGATHERV] = {"pccl_allgatherv", 0, 0, 0, 1, 0, 0},
    [PCCL_COLL_REDUCE_SCATTERV] = {"pccl_reduce_scatterv", 1, 0, 1, 0, 0, 0},
    [PCCL_COLL_GATHERV] = {"pccl_gatherv", 0, 1, 0, 1, 0, 1, 1},
    [PCCL_COLL_SCATTERV] = {"pccl_scatterv", 0, 1, 1, 0, 1, 0, 1},
    [PCCL_COLL_ALLTOALLV] = {"pccl_alltoallv", 0, 0, 1, 1, 0, 0, 1},
};

static const char *api_of(const pccl_call_t *c) { return c->api ? c->api : infos[c->coll].api; }

/* One limit for every collective: count x nranks x element size must be a
 * valid object size (PTRDIFF_MAX), so no byte offset or pointer difference
 * inside pccl can overflow. Multiplied, not divided: two divisions cost as
 * much as a small call's data. */
static int too_large(size_t count, size_t p, size_t esize) {
  size_t bytes;
  return __builtin_mul_overflow(count, p, &bytes) || __builtin_mul_overflow(bytes, esize, &bytes) ||
         bytes > (size_t)PTRDIFF_MAX;
}

static pccl_status_t check_buffer(pccl_comm_t *comm, const pccl_call_t *c, const void *buf,
                                  const char *name) {
  const char *api = api_of(c);
  if (!buf) return pccl__error(comm, PCCL_ERR_INVALID_ARGUMENT, api, "%s is NULL (count %zu)", name, c->count);
  size_t align = pccl_dtype_align(c->dtype);
  if ((uintptr_t)buf & (align - 1)) /* alignments are powers of two */
    return pccl__error(comm, PCCL_ERR_INVALID_ARGUMENT, api,
                       "%s %p is not aligned to the %zu bytes of %s", name, buf, align,
                       pccl_dtype_name(c->dtype));
  return PCCL_OK;
}

/* Overlapping buffers are allowed only in the documented in-place layout:
 * the smaller buffer at this rank's (or the root's) block of the larger. */
static pccl_status_t check_overlap(pccl_comm_t *comm, int rank, pccl_call_t *c) {
  const char *api = api_of(c);
  uintptr_t s = (uintptr_t)c->sendbuf, r = (uintptr_t)c->recvbuf;
  uintptr_t se = s + c->send_elems * c->esize, re = r + c->recv_elems * c->esize;
  if (!c->use_send || !c->use_recv || se <= r || re <= s) return PCCL_OK;
  int owner = infos[c->coll].rooted ? c->root : rank;
  long long block = (long long)owner * (long long)c->count;
  long long expect = 0; /* send element i is recv element i + expect */
  if (infos[c->coll].recv_blocks && !infos[c->coll].send_blocks) expect = block;
  if (infos[c->coll].send_blocks && !infos[c->coll].recv_blocks) expect = -block;
  long long shift = ((long long)s - (long long)r) / (long long)c->esize;
  if ((long long)s - (long long)r != shift * (long long)c->esize || shift != expect)
    return pccl__error(comm, PCCL_ERR_INVALID_ARGUMENT, api,
                       "sendbuf and recvbuf overlap but are not the in-place layout "
                       "(expected sendbuf = recvbuf %+lld elements)",
                       expect);
  c->inplace = 1;
  c->send_in_recv = shift;
  return PCCL_OK;
}

/* Which memory the buffers are in: both on the host or both on one device
 * (a rank's memory is its own affair: ranks may differ). */
static pccl_status_t check_memory(pccl_comm_t *comm, pccl_call_t *c) {
  const char *api = api_of(c);
  int ks = -1, kr = -1;
  pccl_status_t st = PCCL_OK;
  if (c->use_send) st = pccl__device_classify(c->sendbuf, &ks);
  if (st == PCCL_OK && c->use_recv) st = pccl__device_classify(c->recvbuf, &kr);
  if (st != PCCL_OK) return pccl__error(comm, st, api, "%s", pccl__device_error());
  if (ks >= 0 && kr >= 0 && ks != kr)
    return pccl__error(comm, PCCL_ERR_INVALID_ARGUMENT, api,
                       "sendbuf is %s memory and recvbuf %s memory: both must be on the host or "
                       "both on the device", ks ? "device" : "host", kr ? "device" : "host");
  c->device = ks == 1 || kr == 1;
  return PCCL_OK;
}

/* Errors go to comm (NULL: the calling thread); rank and size are the
 * caller's place in the communicator the call is for. */
static pccl_status_t validate_v(pccl_comm_t *comm, int rank, int size, pccl_call_t *c);
static pccl_status_t validate_rooted_v(pccl_comm_t *comm, int rank, int size, pccl_call_t *c);
static pccl_status_t validate_a2av(pccl_comm_t *comm, int rank, int size, pccl_call_t *c);

static pccl_status_t validate(pccl_comm_t *comm, int rank, int size, pccl_call_t *c) {
  const coll_info_t *info = &infos[c->coll];
  const char *api = api_of(c);
  c->esize = pccl_dtype_size(c->dtype);
  if (c->esize == 0)
    return pccl__error(comm, PCCL_ERR_INVALID_DTYPE, api, "unknown datatype %d", (int)c->dtype);
  if (info->reduces && (unsigned)c->op >= PCCL_OP_COUNT)
    return pccl__error(comm, PCCL_ERR_INVALID_OP, api, "unknown reduction operation %d", (int)c->op);
  if (info->reduces && !pccl_op_supported(c->dtype, c->op))
    return pccl__error(comm, PCCL_ERR_INVALID_OP, api, "op %s is not defined on %s (see pccl_op_t)",
                       pccl_op_name(c->op), pccl_dtype_name(c->dtype));
  if (c->coll == PCCL_COLL_ALLGATHERV || c->coll == PCCL_COLL_REDUCE_SCATTERV)
    return validate_v(comm, rank, size, c);
  if (c->coll == PCCL_COLL_ALLTOALLV) return validate_a2av(comm, rank, size, c);
  if (info->rooted && (c->root < 0 || c->root >= size))
    return pccl__error(comm, PCCL_ERR_INVALID_ARGUMENT, api, "root %d is not a rank of 0..%d",
                       c->root, size - 1);
  if (c->coll == PCCL_COLL_GATHERV || c->coll == PCCL_COLL_SCATTERV)
    return validate_rooted_v(comm, rank, size, c);
  size_t p = (size_t)size;
  if (too_large(c->count, p, c->esize))
    return pccl__error(comm, PCCL_ERR_OVERFLOW, api,
                       "count %zu of %s on %zu ranks exceeds PTRDIFF_MAX bytes",
                       c->count, pccl_dtype_name(c->dtype), p);
  c->send_elems = info->send_blocks ? c->count * p : c->count;
  c->recv_elems = info->recv_blocks ? c->count * p : c->count;
  int at_root = rank == c->root;
  c->use_send = !info->send_root_only || at_root;
  c->use_recv = (!info->recv_root_only || at_root) && !(c->coll == PCCL_COLL_EXSCAN && rank == 0);
  if (c->count == 0) return PCCL_OK;
  pccl_status_t st = PCCL_OK;
  if (c->use_send) st = check_buffer(comm, c, c->sendbuf, "sendbuf");
  if (st == PCCL_OK && c->use_recv) st = check_buffer(comm, c, c->recvbuf, "recvbuf");
  if (st == PCCL_OK) st = check_overlap(comm, rank, c);
  if (st == PCCL_OK) st = check_memory(comm, c);
  return st;
}

/* ---- all-gatherv and reduce-scatterv: blocks of unequal size ---- */

/* The call's block offsets (packed, nranks + 1) and, unless the blocks lie
 * packed, their places: in comm's array, which the schedule cache's key
 * copies. */
static size_t *v_blocks(pccl_comm_t *comm, size_t n) {
  if (n > comm->vblocks_cap) {
    size_t *b = realloc(comm->vblocks, n * sizeof *b);
    if (!b) return NULL;
    comm->vblocks = b;
    comm->vblocks_cap = n;
  }
  return comm->vblocks;
}

static int by_place(const void *a, const void *b) {
  const size_t *x = a, *y = b; /* (place, count) pairs */
  return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Blocks placed apart from the packed layout must not overlap in the
 * buffer they are written to (MPI forbids it too: a byte written twice has
 * no defined value). */
static pccl_status_t v_disjoint(pccl_comm_t *comm, const pccl_call_t *c, int size, const size_t *counts,
                                const size_t *places, const char *buf) {
  size_t *pairs = malloc(2 * (size_t)size * sizeof *pairs);
  if (!pairs) return pccl__error(comm, PCCL_ERR_NO_MEMORY, api_of(c), "out of memory");
  int n = 0;
  for (int i = 0; i < size; i++)
    if (counts[i]) pairs[2 * n] = places[i], pairs[2 * n++ + 1] = counts[i];
  qsort(pairs, (size_t)n, 2 * sizeof *pairs, by_place);
  pccl_status_t st = PCCL_OK;
  for (int i = 1; i < n && st == PCCL_OK; i++)
    if (pairs[2 * i - 2] + pairs[2 * i - 1] > pairs[2 * i])
      st = pccl__error(comm, PCCL_ERR_INVALID_ARGUMENT, api_of(c),
                       "blocks overlap in %s: one at displacement %zu of %zu elements, another "
                       "at %zu", buf, pairs[2 * i - 2], pairs[2 * i - 1], pairs[2 * i]);
  free(pairs);
  return st;
}

/* One side's blocks: boff[0..size] their packed offsets, placed at displs
 * (NULL: at boff); *extent the end of the last nonempty one, *packed
 * whether they lie at boff, *equal whether all counts are equal.
 * PCCL_ERR_OVERFLOW when a sum or an end exceeds PTRDIFF_MAX bytes. */
typedef struct {
  size_t extent;
  int packed, equal;
} v_shape_t;

static pccl_status_t v_layout(pccl_comm_t *comm, const pccl_call_t *c, int size, const size_t *counts,
                              const size_t *displs, size_t *boff, v_shape_t *sh) {
  size_t limit = (size_t)PTRDIFF_MAX / c->esize;
  *sh = (v_shape_t){0, 1, 1};
  boff[0] = 0;
  for (int i = 0; i < size; i++) {
    size_t n = counts[i], at = displs ? displs[i] : boff[i], end;
    if (__builtin_add_overflow(boff[i], n, &boff[i + 1]) || boff[i + 1] > limit ||
        __builtin_add_overflow(at, n, &end) || end > limit)
      return pccl__error(comm, PCCL_ERR_OVERFLOW, api_of(c),
                         "the blocks up to rank %d's (%zu elements at %zu) exceed PTRDIFF_MAX bytes of %s",
                         i, n, at, pccl_dtype_name(c->dtype));
    sh->packed &= at == boff[i];
    sh->equal &= n == counts[0];
    if (n && end > sh->extent) sh->extent = end;
  }
  return PCCL_OK;
}

/* Sets use_send/use_recv from the element counts and checks the buffers in
 * use; `one` is the buffer holding this rank's block alone, which may lie
 * in the other (`all`) only at this rank's place there, `own` elements in
 * (send element i is then recv element i + shift). */
static pccl_status_t v_buffers(pccl_comm_t *comm, pccl_call_t *c, int one_is_send, size_t own) {
  c->use_send = c->send_elems > 0;
  c->use_recv = c->recv_elems > 0;
  pccl_status_t st = PCCL_OK;
  if (c->use_send) st = check_buffer(comm, c, c->sendbuf, "sendbuf");
  if (st == PCCL_OK && c->use_recv) st = check_buffer(comm, c, c->recvbuf, "recvbuf");
  if (st != PCCL_OK) return st;
  const char *all = one_is_send ? "recvbuf" : "sendbuf", *one = one_is_send ? "sendbuf" : "recvbuf";
  uintptr_t a = (uintptr_t)(one_is_send ? c->recvbuf : c->sendbuf);
  uintptr_t o = (uintptr_t)(one_is_send ? c->sendbuf : c->recvbuf);
  size_t a_elems = one_is_send ? c->recv_elems : c->send_elems;
  size_t o_elems = one_is_send ? c->send_elems : c->recv_elems;
  if (c->use_send && c->use_recv && o < a + a_elems * c->esize && a < o + o_elems * c->esize) {
    if (o != a + own * c->esize)
      return pccl__error(comm, PCCL_ERR_INVALID_ARGUMENT, api_of(c),
                         "sendbuf and recvbuf overlap but are not the in-place layout "
                         "(expected %s = %s + %zu elements, this rank's block)", one, all, own);
    c->inplace = 1;
    c->send_in_recv = one_is_send ? (long long)own : -(long long)own;
  }
  return c->use_send || c->use_recv ? check_memory(comm, c) : PCCL_OK;
}

/* A v-collective: counts summed with overflow checks, an all-gatherv's
 * places checked, the buffers as any call's (the one holding every block,
 * and this rank's own block, which in place lies inside it). Equal counts
 * in the packed layout become the all-gather or reduce-scatter they are,
 * with all its algorithms. */
static pccl_status_t validate_v(pccl_comm_t *comm, int rank, int size, pccl_call_t *c) {
  const char *api = api_of(c);
  if (!c->counts)
    return pccl__error(comm, PCCL_ERR_INVALID_ARGUMENT, api, "recvcounts is NULL");
  size_t *b = v_blocks(comm, 2 * (size_t)size + 1);
  if (!b) return pccl__error(comm, PCCL_ERR_NO_MEMORY, api, "out of memory");
  v_shape_t sh;
  pccl_status_t st = v_layout(comm, c, size, c->counts, c->displs, b, &sh);
  if (st != PCCL_OK) return st;
  int gather = c->coll == PCCL_COLL_ALLGATHERV;
  if (sh.packed && sh.equal) { /* which the memo does not keep (counts set) */
    c->coll = gather ? PCCL_COLL_ALLGATHER : PCCL_COLL_REDUCE_SCATTER;
    c->count = c->counts[0];
    return validate(comm, rank, size, c);
  }
  c->count = b[size];
  c->nblocks = (size_t)size + 1;
  if (!sh.packed) {
    memcpy(b + size + 1, c->displs, (size_t)size * sizeof *b);
    c->nblocks += (size_t)size;
    if ((st = v_disjoint(comm, c, size, c->counts, c->displs, "recvbuf")) != PCCL_OK) return st;
  }
  c->blocks = b;
  size_t own = sh.packed ? b[rank] : c->displs[rank], mine = c->counts[rank];
  c->send_elems = gather ? mine : c->count;
  c->recv_elems = gather ? sh.extent : mine;
  return v_buffers(comm, c, gather, own);
}

/* Gatherv and scatterv: the root holds every block (counts and displs are
 * its alone); any other rank only its own, `count` elements. */
static pccl_status_t validate_rooted_v(pccl_comm_t *comm, int rank, int size, pccl_call_t *c) {
  const char *api = api_of(c);
  int gather = c->coll == PCCL_COLL_GATHERV;
  if (c->root < 0 || c->root >= size)
    return pccl__error(comm, PCCL_ERR_INVALID_ARGUMENT, api, "root %d is not a rank of 0..%d",
                       c->root, size - 1);
  size_t own = c->count;
  if (own > (size_t)PTRDIFF_MAX / c->esize)
    return pccl__error(comm, PCCL_ERR_OVERFLOW, api, "count %zu of %s exceeds PTRDIFF_MAX bytes",
                       own, pccl_dtype_name(c->dtype));
  if (rank != c->root) {
    c->send_elems = gather ? own : 0;
    c->recv_elems = gather ? 0 : own;
    return v_buffers(comm, c, gather, 0);
  }
  const char *counts_name = gather ? "recvcounts" : "sendcounts";
  if (!c->counts) return pccl__error(comm, PCCL_ERR_INVALID_ARGUMENT, api, "%s is NULL", counts_name);
  size_t *b = v_blocks(comm, 2 * (size_t)size + 1);
  if (!b) return pccl__error(comm, PCCL_ERR_NO_MEMORY, api, "out of memory");
  v_shape_t sh;
  pccl_status_t st = v_layout(comm, c, size, c->counts, c->displs, b, &sh);
  if (st != PCCL_OK) return st;
  if (c->counts[rank] != own)
    return pccl__error(comm, PCCL_ERR_INVALID_ARGUMENT, api, "%s %zu differs from %s[root] = %zu",
                       gather ? "sendcount" : "recvcount", own, counts_name, c->counts[rank]);
  c->count = b[size];
  c->nblocks = (size_t)size + 1;
  if (!sh.packed) {
    memcpy(b + size + 1, c->displs, (size_t)size * sizeof *b);
    c->nblocks += (size_t)size;
    /* a scatterv may read a place twice; a gatherv must not write one twice */
    if (gather && (st = v_disjoint(comm, c, size, c->counts, c->displs, "recvbuf")) != PCCL_OK)
      return st;
  }
  c->blocks = b;
  c->send_elems = gather ? own : sh.extent;
  c->recv_elems = gather ? sh.extent : own;
  return v_buffers(comm, c, gather, sh.packed ? b[rank] : c->displs[rank]);
}

/* All-to-allv: both sides' blocks, laid out in comm's array as the
 * generator reads them (pccl_coll_args_t.a2a). In place (sendbuf ==
 * recvbuf) the send side is the receive side. */
static pccl_status_t validate_a2av(pccl_comm_t *comm, int rank, int size, pccl_call_t *c) {
  const char *api = api_of(c);
  size_t p = (size_t)size;
  int inplace = c->sendbuf && c->sendbuf == c->recvbuf;
  if (!c->counts) return pccl__error(comm, PCCL_ERR_INVALID_ARGUMENT, api, "recvcounts is NULL");
  if (!inplace && !c->scounts)
    return pccl__error(comm, PCCL_ERR_INVALID_ARGUMENT, api, "sendcounts is NULL");
  size_t *v = v_blocks(comm, 5 * p + 1), *boff = v + 4 * p;
  if (!v) return pccl__error(comm, PCCL_ERR_NO_MEMORY, api, "out of memory");
  /* receive side: rcounts | rdispls, then the send side in front of it */
  size_t *sc = v, *sd = v + p, *rc = v + 2 * p, *rd = v + 3 * p;
  v_shape_t rs, ss;
  pccl_status_t st = v_layout(comm, c, size, c->counts, c->displs, boff, &rs);
  if (st != PCCL_OK) return st;
  memcpy(rc, c->counts, p * sizeof *rc);
  memcpy(rd, c->displs ? c->displs : boff, p * sizeof *rd);
  if (!rs.packed && (st = v_disjoint(comm, c, size, rc, rd, "recvbuf")) != PCCL_OK) return st;
  if (inplace) {
    ss = rs;
    memcpy(sc, rc, 2 * p * sizeof *sc);
  } else {
    if ((st = v_layout(comm, c, size, c->scounts, c->sdispls, boff, &ss)) != PCCL_OK) return st;
    memcpy(sc, c->scounts, p * sizeof *sc);
    memcpy(sd, c->sdispls ? c->sdispls : boff, p * sizeof *sd);
    if (sc[rank] != rc[rank])
      return pccl__error(comm, PCCL_ERR_INVALID_ARGUMENT, api,
                         "sendcounts[%d] = %zu differs from recvcounts[%d] = %zu (this rank's "
                         "block to itself)", rank, sc[rank], rank, rc[rank]);
  }
  size_t sent = 0, received = 0;
  for (size_t i = 0; i < p; i++) sent += sc[i], received += rc[i]; /* bounded by v_layout */
  c->count = sent > received ? sent : received;
  c->blocks = v;
  c->nblocks = 4 * p;
  c->send_elems = ss.extent;
  c->recv_elems = rs.extent;
  c->use_send = c->send_elems > 0 && !inplace;
  c->use_recv = c->recv_elems > 0;
  if (c->use_send && (st = check_buffer(comm, c, c->sendbuf, "sendbuf")) != PCCL_OK) return st;
  if (c->use_recv && (st = check_buffer(comm, c, c->recvbuf, "recvbuf")) != PCCL_OK) return st;
  uintptr_t s0 = (uintptr_t)c->sendbuf, r0 = (uintptr_t)c->recvbuf;
  if (c->use_send && c->use_recv && s0 < r0 + c->recv_elems * c->esize &&
      r0 < s0 + c->send_elems * c->esize)
    return pccl__error(comm, PCCL_ERR_INVALID_ARGUMENT, api,
                       "sendbuf and recvbuf overlap (in place is sendbuf == recvbuf)");
  c->inplace = inplace && c->use_recv;
  if (c->inplace) c->use_send = 1; /* the blocks sent are read from recvbuf */
  return c->use_send || c->use_recv ? check_memory(comm, c) : PCCL_OK;
}

/* The lossy call's own arguments (after validate()). */
static pccl_status_t validate_lossy(pccl_comm_t *comm, const pccl_call_t *c) {
  const char *api = api_of(c);
  const pccl_lossy_t *l = c->lossy;
  if (l == NULL || l->size != sizeof(pccl_lossy_t))
    return pccl__error(comm, PCCL_ERR_INVALID_ARGUMENT, api,
                       l ? "lossy->size is %zu, not sizeof(pccl_lossy_t) = %zu (use PCCL_LOSSY_INIT)"
                         : "lossy is NULL",
                       l ? l->size : 0, sizeof(pccl_lossy_t));
  if (c->dtype != PCCL_FLOAT32 && c->dtype != PCCL_FLOAT64 && c->dtype != PCCL_FLOAT16 &&
      c->dtype != PCCL_BFLOAT16)
    return pccl__error(comm, PCCL_ERR_INVALID_DTYPE, api, "%s: only float types compress",
                       pccl_dtype_name(c->dtype));
  if (infos[c->coll].reduces && c->op == PCCL_PROD)
    return pccl__error(comm, PCCL_ERR_UNSUPPORTED, api,
                       "a product has no additive error bound; use the plain call");
  if (l->codec != PCCL_CODEC_SZP)
    return pccl__error(comm, PCCL_ERR_UNSUPPORTED, api, "codec %s: the collectives run szp only",
                       pccl_codec_name(l->codec));
  if (!(l->abs_bound > 0 && isfinite(l->abs_bound)))
    return pccl__error(comm, PCCL_ERR_INVALID_ARGUMENT, api, "abs_bound %g is not positive and finite",
                       l->abs_bound);
  if (c->device)
    return pccl__error(comm, PCCL_ERR_UNSUPPORTED, api,
                       "compressed collectives on device buffers are not built yet; use the plain call");
  c->lossy->stages = 0; /* what a call that moves nothing reports */
  c->lossy->stage_bound = c->lossy->guaranteed = 0.0;
  return PCCL_OK;
}

/* Splits the user's bound over `stages` compressions, never rounding up
 * (none: the call runs exact). */
static pccl_exec_lossy_t lossy_split(const pccl_call_t *c, uint32_t stages) {
  pccl_lossy_t *l = c->lossy;
  double e = stages ? l->abs_bound / stages : l->abs_bound;
  while (stages && e * stages > l->abs_bound) e = nextafter(e, 0.0);
  l->stages = (int32_t)stages;
  l->stage_bound = e;
  l->guaranteed = e * stages;
  return (pccl_exec_lossy_t){l->codec, c->dtype, e};
}

/* How many ranks' values an AVG result sums: all, or a prefix's. */
static int avg_divisor(pccl_coll_t coll, const pccl_comm_t *comm) {
  if (coll == PCCL_COLL_SCAN) return comm->rank + 1;
  return coll == PCCL_COLL_EXSCAN ? comm->rank : comm->size;
}

static pccl_status_t generate(pccl_comm_t *comm, const pccl_call_t *c, pccl_choice_t choice,
                              pccl_sched_t *out) {
  pccl_sb_t *sb;
  pccl_status_t st = pccl_sb_create(comm->size, comm->rank, c->esize, c->inplace, c->send_in_recv,
                                    PCCL_MAX_MSG_BYTES, &sb);
  if (st != PCCL_OK) return st;
  int a2a = c->coll == PCCL_COLL_ALLTOALLV;
  const size_t *places = c->nblocks > (size_t)comm->size + 1 ? c->blocks + comm->size + 1 : NULL;
  pccl_coll_args_t a = {c->coll,   comm->size,       comm->rank,         c->root,
                        c->count,  c->inplace,       &comm->topo,        comm->intra,
                        choice.k,  a2a ? NULL : c->blocks, a2a ? NULL : places, a2a ? c->blocks : NULL};
  st = choice.algo->generate(sb, &a);
  /* AVG is a sum followed by a division of the result where it lands. */
  if (st == PCCL_OK && c->op == PCCL_AVG && infos[c->coll].reduces && c->use_recv)
    pccl_sb_divide(sb, pccl_rg(PCCL_BUF_RECV, 0, c->recv_elems), avg_divisor(c->coll, comm));
  if (st != PCCL_OK) {
    pccl_sb_destroy(sb);
    return st;
  }
  return pccl_sb_finish(sb, out);
}

static pccl_status_t get_schedule(pccl_comm_t *comm, const pccl_call_t *c, pccl_choice_t choice,
                                  const pccl_sched_t **out) {
  pccl_sched_key_t key = {(int)c->coll, (int)choice.algo->id, choice.k, c->root, c->inplace,
                          c->op == PCCL_AVG && infos[c->coll].reduces, c->count, c->esize,
                          c->blocks, c->nblocks};
  *out = pccl_cache_find(&comm->cache, &key);
  if (*out) return PCCL_OK;
  pccl_sched_t s;
  pccl_status_t st = generate(comm, c, choice, &s);
  if (st != PCCL_OK) return st;
  *out = pccl_cache_insert(&comm->cache, &key, &s);
  return *out ? PCCL_OK : PCCL_ERR_NO_MEMORY;
}

/* Scratch comes from the shared allocator where it can, so peers of the node
 * read the partial results sent from it with memcpy (shared_mem.h). */
static pccl_status_t ensure_tmp(pccl_comm_t *comm, size_t bytes) {
  if (bytes <= comm->tmp_bytes) return PCCL_OK;
  void *p = NULL;
  int shared = pccl__shmem_alloc(bytes, &p) == PCCL_OK;
  if (!shared && posix_memalign(&p, 64, bytes) != 0) return PCCL_ERR_NO_MEMORY;
  pccl__comm_free_tmp(comm);
  comm->tmp = p;
  comm->tmp_bytes = bytes;
  comm->tmp_shared = shared;
  return PCCL_OK;
}

static pccl_status_t place(pccl_comm_t *comm, const pccl_call_t *c, const pccl_sched_t *s,
                           pccl_placement_t *p) {
  const char *api = api_of(c);
  pccl_status_t st = pccl_route_reserve(&comm->route, s->nsteps);
  if (st != PCCL_OK) return pccl__error(comm, st, api, "out of memory for %u requests", s->nsteps);
  if (c->device) {
    st = pccl__device_prepare(comm, s, c->esize, c->dtype, c->op, &p->tmp, &p->dev, &p->tp, &p->tp_ctx);
    return st == PCCL_OK ? st : pccl__error(comm, st, api, "device buffers: %s", pccl__device_error());
  }
  st = ensure_tmp(comm, s->tmp_elems * c->esize);
  if (st != PCCL_OK)
    return pccl__error(comm, st, api, "cannot allocate %zu bytes of scratch", s->tmp_elems * c->esize);
  pccl_route_t *route = c->nonblocking ? &comm->route_nb : &comm->route; /* pccl__call_without_mpi */
  *p = (pccl_placement_t){comm->tmp, &pccl_route_transport, route, {0}};
  return PCCL_OK;
}

/* Sets up the executor for a call's schedule in r (x, where; lossy for a
 * lossy call). */
static pccl_status_t exec_begin(pccl_comm_t *comm, const pccl_call_t *c, const pccl_sched_t *s,
                                pccl_call_run_t *r, pccl_exec_lossy_t *lossy) {
  const char *api = api_of(c);
  pccl_status_t st = place(comm, c, s, &r->where);
  if (st != PCCL_OK) return st;
  r->sched = s;
  st = pccl_exec_init(&r->x, s, (void *)c->sendbuf, c->recvbuf, r->where.tmp, c->esize,
                      pccl_kernel_reduce(c->dtype, c->op), pccl_kernel_divide(c->dtype),
                      r->where.tp, r->where.tp_ctx, &comm->exec_ws);
  if (st != PCCL_OK) return pccl__error(comm, st, api, "out of memory");
  if (c->device && (st = pccl_exec_set_device(&r->x, &r->where.dev)) != PCCL_OK)
    return pccl__error(comm, st, api, "algorithm %s cannot run on device buffers", comm->last_algo);
  if (c->lossy_call) {
    *lossy = lossy_split(c, s->lossy_stages);
    pccl_exec_set_lossy(&r->x, lossy);
  }
  return PCCL_OK;
}

/* After a run ended with st: names what failed (waited: the seconds without
 * progress before a timeout) and leaves the transport clean. */
static pccl_status_t exec_end(pccl_comm_t *comm, const pccl_call_t *c, pccl_call_run_t *r,
                              pccl_status_t st, double waited) {
  const char *api = api_of(c);
  const pccl_sched_t *s = r->sched;
  if (st == PCCL_ERR_TIMEOUT || st == PCCL_ERR_ABORTED) {
    char pending[256];
    uint32_t step = pccl_exec_pending(&r->x, pending, sizeof pending);
    if (st == PCCL_ERR_TIMEOUT)
      pccl__error(comm, st, api,
                  "algorithm %s made no progress for %.1f s at step %u of %u, waiting for %s: a "
                  "peer skipped this collective, died or is stuck; the communicator is now broken",
                  comm->last_algo, waited, step, s->nsteps, pending);
    else
      pccl__error(comm, st, api,
                  "pccl_comm_abort ended algorithm %s at step %u of %u, waiting for %s; the "
                  "communicator is now broken",
                  comm->last_algo, step, s->nsteps, pending);
    pccl_route_reset(&comm->route);
  } else if (st != PCCL_OK) {
    const pccl_step_t *f = &s->steps[r->x.failed_step];
    char mpi_msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (st == PCCL_ERR_MPI) MPI_Error_string(comm->tp.last_mpi_error, mpi_msg, &len);
    pccl__error(comm, st, api, "algorithm %s failed at step %u of %u (peer %d): %s", comm->last_algo,
                r->x.failed_step, s->nsteps, f->arg, st == PCCL_ERR_MPI ? mpi_msg : pccl_status_string(st));
    pccl_route_reset(&comm->route);
  }
  return st;
}

/* The program's hook (pccl_set_wait_hook), published by one pointer to
 * the pair; it is set before collectives run (pccl.h), so the pair is not
 * rewritten under a reader. */
typedef struct {
  void (*fn)(void *);
  void *arg;
} wait_hook_t;
static _Atomic(const wait_hook_t *) wait_hook;

pccl_status_t pccl_set_wait_hook(void (*hook)(void *arg), void *arg) {
  static wait_hook_t slot;
  if (hook) slot = (wait_hook_t){hook, arg};
  atomic_store_explicit(&wait_hook, hook ? &slot : NULL, memory_order_release);
  return PCCL_OK;
}

/* What a blocking call's waits do now and then: move this thread's
 * non-blocking calls, then the program's hook. */
static void while_waiting(void) {
  pccl__request_idle();
  const wait_hook_t *h = atomic_load_explicit(&wait_hook, memory_order_acquire);
  if (h) h->fn(h->arg);
}

static pccl_status_t execute(pccl_comm_t *comm, const pccl_call_t *c, const pccl_sched_t *s) {
  pccl_call_run_t r;
  pccl_exec_lossy_t lossy;
  pccl_status_t st = exec_begin(comm, c, s, &r, &lossy);
  if (st != PCCL_OK) return st;
  pccl_exec_watch_t watch = {comm->timeout, &comm->abort_flag, 0.0, while_waiting};
  st = pccl_exec_run(&r.x, &watch);
  return exec_end(comm, c, &r, st, watch.waited);
}

static size_t reported_bytes(const pccl_call_t *c) {
  /* the blocks, not the gaps (a rank that sees only its own: its own) */
  if (c->blocks || infos[c->coll].own_counts) return c->count * c->esize;
  size_t elems = c->coll == PCCL_COLL_REDUCE_SCATTER ? c->send_elems : c->recv_elems;
  return elems * c->esize;
}

/* A hash of an algorithm's name and k, the same on every rank that runs it. */
static int64_t algo_hash(const char *name) {
  uint64_t h = 1469598103934665603ull;
  for (; *name; name++) h = (h ^ (unsigned char)*name) * 1099511628211ull;
  return (int64_t)(h >> 1);
}

static pccl_status_t allreduce_min(pccl_comm_t *comm, int64_t *v, size_t n);

/* "name" or "name:k"; "none" without an algorithm. */
static void name_choice(pccl_choice_t ch, char *buf, size_t len) {
  if (ch.algo && ch.algo->kset)
    snprintf(buf, len, "%s:%d", ch.algo->name, ch.k);
  else
    snprintf(buf, len, "%s", ch.algo ? ch.algo->name : "none");
}

/* An all-gatherv's counts, as one number every rank that passes the same
 * counts computes alike (FNV-1a over them). */
static int64_t counts_hash(const size_t *counts, int n) {
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; counts && i < n; i++) h = (h ^ counts[i]) * 1099511628211ull;
  return (int64_t)(h >> 1);
}

/* PCCL_CHECK: what this rank is about to run, for pccl__agree. */
static pccl_agree_t agree_fields(const pccl_comm_t *comm, const pccl_call_t *c,
                                 pccl_status_t local, pccl_choice_t choice) {
  const coll_info_t *info = &infos[c->coll];
  char algo[sizeof comm->last_algo];
  name_choice(choice, algo, sizeof algo);
  /* equal counts run as the plain collective: the v-call's own value */
  int v = !info->own_counts && (c->counts || c->coll == PCCL_COLL_ALLGATHERV ||
                                c->coll == PCCL_COLL_REDUCE_SCATTERV);
  int64_t vcoll = infos[c->coll].reduces ? PCCL_COLL_REDUCE_SCATTERV : PCCL_COLL_ALLGATHERV;
  int64_t coll = c->token ? PCCL_AGREE_BARRIER : v ? vcoll : (int64_t)c->coll;
  /* where each rank sees only its own counts there is no count to agree on */
  int64_t count = v ? counts_hash(c->counts, comm->size) : info->own_counts ? 0 : (int64_t)c->count;
  pccl_agree_t a = {.f = {[PCCL_AGREE_COLL] = coll,
                          [PCCL_AGREE_COUNT] = count,
                          [PCCL_AGREE_DTYPE] = c->dtype,
                          [PCCL_AGREE_OP] = info->reduces ? (int64_t)c->op : -1,
                          [PCCL_AGREE_ROOT] = info->rooted ? c->root : 0,
                          [PCCL_AGREE_LOSSY] = c->lossy_call,
                          [PCCL_AGREE_ALGO] = algo_hash(algo),
                          [PCCL_AGREE_STATUS] = local}};
  snprintf(a.algo, sizeof a.algo, "%.*s", (int)sizeof a.algo - 1, algo);
  return a;
}

/* The agreement's outcome as the call returns it: a rank whose own
 * arguments failed keeps its own cause (`own`, its message). */
static pccl_status_t agree_outcome(pccl_comm_t *comm, pccl_status_t st, pccl_status_t local,
                                   const char *own) {
  if (st == PCCL_ERR_MISMATCH && local != PCCL_OK) {
    snprintf(comm->error, sizeof comm->error, "%s", own);
    return local;
  }
  return st;
}

static pccl_status_t agree(pccl_comm_t *comm, const pccl_call_t *c, pccl_status_t local,
                           pccl_choice_t choice) {
  pccl_agree_t a = agree_fields(comm, c, local, choice);
  char own[PCCL_ERROR_LEN];
  snprintf(own, sizeof own, "%s", comm->error); /* this rank's own validation message */
  return agree_outcome(comm, pccl__agree(comm, api_of(c), &a, allreduce_min), local, own);
}

/* Every later call on a broken communicator fails with this cause. */
static pccl_status_t broken(pccl_comm_t *comm, pccl_status_t st) {
  if (st == PCCL_ERR_TIMEOUT || st == PCCL_ERR_ABORTED) {
    comm->broken = st;
    snprintf(comm->broken_why, sizeof comm->broken_why, "%s", comm->error);
  }
  return st;
}

/* ---- bounded scratch (PCCL_MAX_SCRATCH) ---- */

/* One piece of a streamed call: the same collective and algorithm on
 * contiguous buffers, validated like any call, never streamed again. */
typedef struct {
  pccl_comm_t *comm;
  const pccl_call_t *whole;
  pccl_choice_t choice;
} piece_ctx_t;

static pccl_status_t run_piece(void *ctx, const void *send, void *recv, size_t count) {
  piece_ctx_t *x = ctx;
  const pccl_call_t *w = x->whole;
  pccl_call_t c = {.coll = w->coll, .sendbuf = send, .recvbuf = recv, .count = count,
                   .dtype = w->dtype, .op = w->op, .root = w->root, .lossy = w->lossy,
                   .lossy_call = w->lossy_call, .piece = 1};
  pccl_status_t st = validate(x->comm, x->comm->rank, x->comm->size, &c);
  const pccl_sched_t *s = NULL;
  if (st == PCCL_OK && (st = get_schedule(x->comm, &c, x->choice, &s)) != PCCL_OK)
    return pccl__error(x->comm, st, infos[c.coll].api, "building a piece's schedule failed");
  return st == PCCL_OK ? execute(x->comm, &c, s) : st;
}

/* Decides whether the call streams and in pieces of how many elements
 * (*seg, 0: it runs whole). Every rank must decide alike, and schedules'
 * scratch differs by rank, so for calls large enough to matter the ranks
 * agree on the largest need (one 8-byte all-reduce). Smaller calls cannot
 * exceed the limit: no algorithm needs more than PCCL_TMP_FACTOR_MAX times
 * the call's largest buffer in scratch (test_sched checks every one). */
static pccl_status_t scratch_plan(pccl_comm_t *comm, const pccl_call_t *c, const pccl_sched_t *s,
                                  size_t *seg) {
  size_t limit = comm->scratch_limit, es = c->esize;
  size_t largest = (c->send_elems > c->recv_elems ? c->send_elems : c->recv_elems) * es;
  *seg = 0;
  /* own_counts: the ranks' sizes differ, and the scratch is bounded anyway */
  if (c->piece || infos[c->coll].own_counts || largest <= limit / PCCL_TMP_FACTOR_MAX) return PCCL_OK;
  /* minima of negatives: the largest scratch, and whether any rank's
   * buffers are device memory (streaming must be refused on every rank) */
  int64_t need[2] = {-(int64_t)s->tmp_elems, -(int64_t)c->device};
  char algo[sizeof comm->last_algo]; /* the agreement is not the user's call */
  snprintf(algo, sizeof algo, "%s", comm->last_algo);
  pccl_choice_t last = comm->last_choice;
  pccl_status_t st = allreduce_min(comm, need, 2);
  snprintf(comm->last_algo, sizeof comm->last_algo, "%s", algo);
  comm->last_choice = last;
  if (st != PCCL_OK) return st;
  size_t tmp_max = (size_t)-need[0];
  if (tmp_max * es <= limit) return PCCL_OK;
  if (c->blocks)
    return pccl__error(comm, PCCL_ERR_UNSUPPORTED, api_of(c),
                       "its scratch (%zu bytes on some rank) exceeds PCCL_MAX_SCRATCH (%zu), and "
                       "%s is not streamed: raise PCCL_MAX_SCRATCH (an all-gatherv of blocks packed "
                       "in rank order needs none with the ring, PCCL_ALGO=allgatherv:ring)",
                       tmp_max * es, limit, api_of(c));
  if (need[1] && pccl__stream_stage_blocks(c->coll, comm->size) > 0)
    return pccl__error(comm, PCCL_ERR_UNSUPPORTED, api_of(c),
                       "its scratch exceeds PCCL_MAX_SCRATCH, and streaming %s through host staging "
                       "is not built for device buffers (some rank passed them) yet: raise "
                       "PCCL_MAX_SCRATCH", pccl_coll_name(c->coll));
  /* per element of a piece: the scratch the algorithm needs (it grows in
   * proportion) plus staging; 10% and a few blocks spare for rounding */
  double per = (double)tmp_max / (double)c->count +
               (double)pccl__stream_stage_blocks(c->coll, comm->size);
  double room = (double)(limit / es) * 0.9 - 8.0 * comm->size;
  *seg = room / per >= 1.0 ? (size_t)(room / per) : 1;
  if (*seg >= c->count) *seg = 0;
  return PCCL_OK;
}

static pccl_status_t stream(pccl_comm_t *comm, const pccl_call_t *c, pccl_choice_t choice, size_t seg) {
  /* the scratch kept from earlier calls counts too: drop what exceeds a piece's */
  size_t stage = pccl__stream_stage_blocks(c->coll, comm->size) * seg * c->esize;
  if (comm->tmp_bytes + stage > comm->scratch_limit) pccl__comm_free_tmp(comm);
  piece_ctx_t ctx = {comm, c, choice};
  pccl_stream_t s = {c->coll,   comm->rank, comm->size, c->root, c->use_send ? c->sendbuf : NULL,
                     c->use_recv ? c->recvbuf : NULL, c->count, c->esize, seg, run_piece, &ctx};
  pccl_status_t st = pccl__stream(&s);
  if (st == PCCL_ERR_NO_MEMORY && !comm->error[0])
    pccl__error(comm, st, api_of(c), "cannot allocate %zu bytes of staging", stage);
  return st;
}

/* The blocks of a v-collective as the segment takes them (seg.h). */
static void seg_blocks(const pccl_comm_t *comm, const pccl_call_t *c, const size_t *places,
                       pccl_seg_call_t *call) {
  size_t p = (size_t)comm->size;
  switch (c->coll) {
  case PCCL_COLL_ALLGATHERV:
  case PCCL_COLL_REDUCE_SCATTERV:
    call->counts = c->counts, call->places = places;
    for (size_t r = 0; r < p; r++) /* rounds over the largest block */
      call->count = r == 0 || c->counts[r] > call->count ? c->counts[r] : call->count;
    break;
  case PCCL_COLL_GATHERV:
  case PCCL_COLL_SCATTERV: /* the counts are the root's alone */
    if (comm->rank == c->root)
      call->counts = c->counts, call->places = places, call->count = c->counts[c->root];
    break;
  case PCCL_COLL_ALLTOALLV: /* sent | their places | received | theirs (validate_a2av) */
    call->scounts = c->blocks, call->splaces = c->blocks + p;
    call->counts = c->blocks + 2 * p, call->places = c->blocks + 3 * p;
    break;
  default: break;
  }
}

/* Every collective of one rank is a copy (x / 1 = x for AVG): of its one
 * block, from its place in sendbuf (scatterv, all-to-allv) to its place in
 * recvbuf. */
static pccl_status_t one_rank(const pccl_comm_t *comm, const pccl_call_t *c, const size_t *places) {
  if (!c->use_send || !c->use_recv || c->inplace) return PCCL_OK;
  pccl_seg_call_t call = {.count = c->send_elems};
  seg_blocks(comm, c, places, &call);
  size_t from = 0, to = places ? places[0] : 0, n = c->send_elems;
  if (c->coll == PCCL_COLL_SCATTERV) from = places[0], to = 0, n = c->counts[0];
  if (c->coll == PCCL_COLL_ALLTOALLV) from = call.splaces[0], to = call.places[0], n = call.counts[0];
  memcpy((char *)c->recvbuf + to * c->esize, (const char *)c->sendbuf + from * c->esize,
         n * c->esize);
  return PCCL_OK;
}

/* an all-gatherv's blocks land at their places (packed: boff) */
static const size_t *places_of(const pccl_comm_t *comm, const pccl_call_t *c) {
  return c->nblocks > (size_t)comm->size + 1 ? c->blocks + comm->size + 1 : c->blocks;
}

/* Whether the node segment refuses to run c as `choice` says; if so, why
 * (after the algorithm's name). */
static int seg_refuses(const pccl_comm_t *comm, const pccl_call_t *c, pccl_choice_t choice,
                       char *why, size_t len) {
  if (!comm->seg)
    snprintf(why, len, ": no node segment (%s)", comm->seg_why);
  else if (pccl__seg_path(choice.algo->id) != PCCL_SEG_BUFFERS &&
           !pccl_seg_runs_direct(comm->seg, c->coll))
    snprintf(why, len, ": the node's ranks may not read and write each other's memory here "
                       "(cross-memory attach refused); use seg or another algorithm");
  else
    return 0;
  return 1;
}

/* c as the node segment runs it (unless it refuses: PCCL_ERR_UNSUPPORTED,
 * with an error on comm unless quiet). */
static pccl_status_t seg_call(pccl_comm_t *comm, const pccl_call_t *c, pccl_choice_t choice,
                              pccl_seg_call_t *call, int quiet) {
  char why[PCCL_ERROR_LEN / 2];
  if (seg_refuses(comm, c, choice, why, sizeof why))
    return quiet ? PCCL_ERR_UNSUPPORTED
                 : pccl__error(comm, PCCL_ERR_UNSUPPORTED, api_of(c), "algorithm %s%s",
                               choice.algo->name, why);
  *call = (pccl_seg_call_t){.coll = c->coll, .sendbuf = c->sendbuf, .recvbuf = c->recvbuf,
                            .count = c->count, .dtype = c->dtype, .op = c->op, .root = c->root,
                            .inplace = c->inplace, .path = pccl__seg_path(choice.algo->id),
                            .scratch_limit = comm->scratch_limit};
  seg_blocks(comm, c, places_of(comm, c), call);
  return PCCL_OK;
}

/* A failure on the segment: its rounds are out of step (unless in_step),
 * so the communicator breaks. */
static pccl_status_t seg_failed(pccl_comm_t *comm, const pccl_call_t *c, pccl_choice_t choice,
                                pccl_status_t st, const char *why, int in_step) {
  const char *api = api_of(c);
  if (in_step) return pccl__error(comm, st, api, "algorithm %s: %s", choice.algo->name, why);
  pccl__error(comm, st, api, "algorithm %s: %s; the communicator is now broken", choice.algo->name,
              why);
  comm->broken = st;
  snprintf(comm->broken_why, sizeof comm->broken_why, "%s", comm->error);
  return st;
}

/* Runs c, made into `call` (seg_call) for the node segment. */
static pccl_status_t run_seg_call(pccl_comm_t *comm, const pccl_call_t *c, pccl_choice_t choice,
                                  const pccl_seg_call_t *call) {
  pccl_seg_watch_t watch = {comm->timeout, &comm->abort_flag, while_waiting};
  char why[PCCL_ERROR_LEN - 64];
  int in_step;
  pccl_status_t st = pccl_seg_run(comm->seg, call, &watch, why, sizeof why, &in_step);
  return st == PCCL_OK ? st : seg_failed(comm, c, choice, st, why, in_step);
}

/* A call the node segment runs: the whole collective as its one step,
 * without a schedule to fetch or an executor to set up. */
static pccl_status_t run_seg_host(pccl_comm_t *comm, const pccl_call_t *c, pccl_choice_t choice) {
  if (comm->size == 1) return one_rank(comm, c, places_of(comm, c));
  pccl_seg_call_t call;
  pccl_status_t st = seg_call(comm, c, choice, &call, 0);
  return st == PCCL_OK ? run_seg_call(comm, c, choice, &call) : st;
}

/* Where p lies in the host mirror of ranges r; p itself where it lies in
 * none (a buffer the call does not touch). */
static void *mirrored(const void *p, const pccl_device_range_t *r, int n) {
  for (int i = 0; i < n; i++)
    if ((uintptr_t)p >= (uintptr_t)r[i].dev && (uintptr_t)p - (uintptr_t)r[i].dev < r[i].bytes)
      return (char *)r[i].host + ((uintptr_t)p - (uintptr_t)r[i].dev);
  return (void *)p;
}

/* The segment's CPU copies cannot reach device memory, so a call on device
 * buffers runs there on a host mirror of them: selection must not depend
 * on where a rank's buffers lie, since ranks may differ (a rank with no
 * data of its own in a gatherv sees none of its buffers) and every rank
 * must take the same algorithm. In place, one range covers both buffers.
 * A rank that cannot mirror misses the round its peers take, so its
 * communicator breaks as theirs will (at their timeout). */
static pccl_status_t run_seg(pccl_comm_t *comm, const pccl_call_t *c, pccl_choice_t choice) {
  if (!c->device) return run_seg_host(comm, c, choice);
  uintptr_t s = (uintptr_t)c->sendbuf, v = (uintptr_t)c->recvbuf;
  size_t sb = c->use_send ? c->send_elems * c->esize : 0;
  size_t rb = c->use_recv ? c->recv_elems * c->esize : 0;
  pccl_device_range_t r[2];
  int n = 0;
  if (sb && rb && s < v + rb && v < s + sb) {
    uintptr_t lo = s < v ? s : v, hi = s + sb > v + rb ? s + sb : v + rb;
    r[n++] = (pccl_device_range_t){(const void *)lo, hi - lo, 1, 1, NULL};
  } else {
    /* these write every element of recvbuf (checked on a GPU); the others
     * are copied in: a v-call's gaps stay as they were, and the rest have
     * not been run on a GPU without it */
    int whole = c->coll == PCCL_COLL_ALLGATHER || c->coll == PCCL_COLL_ALLREDUCE ||
                c->coll == PCCL_COLL_REDUCE_SCATTER || c->coll == PCCL_COLL_ALLTOALL ||
                c->coll == PCCL_COLL_SCAN;
    if (sb) r[n++] = (pccl_device_range_t){c->sendbuf, sb, 1, 0, NULL};
    if (rb) r[n++] = (pccl_device_range_t){c->recvbuf, rb, !whole, 1, NULL};
  }
  pccl_status_t st = pccl__device_mirror_in(comm, r, n);
  if (st != PCCL_OK)
    return seg_failed(comm, c, choice, st, pccl__device_error(), 0);
  pccl_call_t h = *c;
  h.sendbuf = mirrored(c->sendbuf, r, n), h.recvbuf = mirrored(c->recvbuf, r, n), h.device = 0;
  if ((st = run_seg_host(comm, &h, choice)) != PCCL_OK) return st;
  if ((st = pccl__device_mirror_out(comm, r, n)) != PCCL_OK)
    return pccl__error(comm, st, api_of(c), "device buffers: %s", pccl__device_error());
  return PCCL_OK;
}

/* A repeated call: validation and selection depend only on the call's
 * arguments and on the communicator's configuration, so a plain call on
 * host memory with the arguments of the last one that passed them takes
 * what they derived (a small call's validation and selection cost about
 * as much as moving its data). Only where no device is seen, so that an
 * address cannot change from host to device memory between calls. */
struct pccl_call_memo {
  unsigned gen;
  pccl_call_t call; /* validated */
  size_t count;     /* the call's count as given (a v-call's validation sums the counts) */
  pccl_choice_t choice; /* algo NULL: the collective has none yet */
  /* a v-call's arrays that validation read on this rank (v_read): their
   * contents, since a caller may change them behind the same pointers
   * (counts, then displs), then the blocks derived from them, which
   * call.blocks points to; `arrays` 0 when none was read */
  int arrays;
  size_t *kept, kept_cap;
  /* the call as the node segment runs it (seg_call), prepared, for
   * repeat(); on_seg 0 when the choice is not the segment's, the
   * communicator has one rank, or the call is not a blocking one of the
   * caller's */
  int on_seg;
  pccl_seg_call_t seg;
};

/* One memo per collective, and one for the barrier (an all-reduce of its
 * own byte): a loop that alternates collectives (an all-reduce of a
 * residual, a broadcast of a step size, a barrier before the timer) repeats
 * each. */
#define MEMO_BARRIER PCCL_COLL_COUNT
#define MEMO_SLOTS (PCCL_COLL_COUNT + 1)

static int memo_slot(const pccl_call_t *c) { return c->token ? MEMO_BARRIER : (int)c->coll; }

static struct pccl_call_memo *memo_of(const pccl_comm_t *comm, int slot) {
  return comm->memo ? &comm->memo[slot] : NULL;
}

/* Whether validation reads a v-call's counts and displs on this rank: a
 * gatherv's and scatterv's root, every rank of an all-gatherv and a
 * reduce-scatterv (the all-to-allv's four arrays are not kept). */
static int v_read(const pccl_comm_t *comm, const pccl_call_t *c) {
  switch (c->coll) {
  case PCCL_COLL_GATHERV:
  case PCCL_COLL_SCATTERV: return comm->rank == c->root;
  case PCCL_COLL_ALLGATHERV:
  case PCCL_COLL_REDUCE_SCATTERV: return 1;
  default: return 0;
  }
}

/* Whether counts and displs are the arrays the memo kept, holding what
 * they held then (p elements each; compared, not validated again: a
 * small gatherv's root spent a fifth of its call validating them). */
static int memo_arrays(const struct pccl_call_memo *m, size_t p, const size_t *counts,
                       const size_t *displs) {
  if (!m->arrays) return 1;
  if (counts != m->call.counts || displs != m->call.displs) return 0;
  /* a loop, not memcmp: a few ranks' worth, where a call of it cost more */
  for (size_t i = 0; i < p; i++)
    if (counts[i] != m->kept[i] || (displs && displs[i] != m->kept[p + i])) return 0;
  return 1;
}

static int memo_hit(const pccl_comm_t *comm, pccl_call_t *c, pccl_choice_t *choice) {
  const struct pccl_call_memo *m = memo_of(comm, memo_slot(c));
  if (!m || !m->choice.algo || m->gen != comm->config_gen || c->lossy_call || c->piece) return 0;
  const pccl_call_t *v = &m->call;
  if (v->coll != c->coll || v->api != c->api || v->sendbuf != c->sendbuf ||
      v->recvbuf != c->recvbuf || m->count != c->count || v->dtype != c->dtype ||
      v->op != c->op || v->root != c->root || v->nonblocking != c->nonblocking ||
      v->internal != c->internal || !memo_arrays(m, (size_t)comm->size, c->counts, c->displs))
    return 0;
  *c = *v;
  *choice = m->choice;
  return 1;
}

/* Keeps what validation read of a v-call's arrays and derived from them
 * in m (m->call is c); 0 when out of memory. */
static int memo_keep_arrays(struct pccl_call_memo *m, size_t p, const pccl_call_t *c) {
  size_t need = 2 * p + c->nblocks;
  if (need > m->kept_cap) {
    size_t *k = realloc(m->kept, need * sizeof *k);
    if (!k) return 0;
    m->kept = k, m->kept_cap = need;
  }
  memcpy(m->kept, c->counts, p * sizeof *m->kept);
  if (c->displs) memcpy(m->kept + p, c->displs, p * sizeof *m->kept);
  memcpy(m->kept + 2 * p, c->blocks, c->nblocks * sizeof *m->kept);
  m->call.blocks = m->kept + 2 * p;
  m->arrays = 1;
  return 1;
}

void pccl__memo_free(pccl_comm_t *comm) {
  for (int i = 0; comm->memo && i < MEMO_SLOTS; i++) free(comm->memo[i].kept);
  free(comm->memo);
  comm->memo = NULL;
}

/* `count`: c's as given. */
static void memo_keep(pccl_comm_t *comm, const pccl_call_t *c, size_t count, pccl_choice_t choice) {
  int arrays = v_read(comm, c);
  /* a v-call validated into the collective of equal blocks, an
   * all-to-allv; or a non-blocking v-call whose arrays validation reads,
   * whose blocks must not be replaced under it by a later call's */
  if (c->lossy_call || c->piece || c->device || (c->counts && !arrays && !infos[c->coll].own_counts) ||
      c->coll == PCCL_COLL_ALLTOALLV || (arrays && c->nonblocking) ||
      (c->count == 0 && !infos[c->coll].own_counts) || c->refused || !pccl__device_none())
    return;
  if (!comm->memo && !(comm->memo = calloc(MEMO_SLOTS, sizeof *comm->memo))) return;
  struct pccl_call_memo *m = &comm->memo[memo_slot(c)];
  size_t *kept = m->kept, kept_cap = m->kept_cap;
  *m = (struct pccl_call_memo){.gen = comm->config_gen, .call = *c, .count = count,
                               .kept = kept, .kept_cap = kept_cap};
  if (arrays && !memo_keep_arrays(m, (size_t)comm->size, c)) return;
  m->choice = choice; /* kept: memo_hit takes it from here */
  /* only repeat() runs it: blocking calls of the caller's own */
  if (choice.algo->generate != pccl_gen_seg || comm->size == 1 || c->nonblocking || c->internal)
    return;
  /* a call the segment refuses gets seg_call's error when it runs */
  if (seg_call(comm, &m->call, choice, &m->seg, 1) != PCCL_OK) return;
  pccl_seg_prepare(comm->seg, &m->seg);
  m->on_seg = 1;
}

/* Names the algorithm for pccl_comm_last_algo, only when it changes:
 * formatting costs as much as a small call. */
static void note_choice(pccl_comm_t *comm, pccl_choice_t choice) {
  if (choice.algo == comm->last_choice.algo && choice.k == comm->last_choice.k) return;
  name_choice(choice, comm->last_algo, sizeof comm->last_algo);
  comm->last_choice = choice;
}

/* pccl's own non-blocking calls (PCCL_CHECK's agreement, the scratch
 * vote) run as schedules (begin_aux); a caller's may take the segment where
 * it runs them without waiting. */
/* Whether a validated v-call whose counts every rank sees (an all-gatherv,
 * a reduce-scatterv) has a block of PCCL_SKEW times the mean or more: a
 * ring's every step then waits for that block. */
static int skewed(const pccl_comm_t *comm, const pccl_call_t *c) {
  if ((c->coll != PCCL_COLL_ALLGATHERV && c->coll != PCCL_COLL_REDUCE_SCATTERV) || !c->counts)
    return 0;
  size_t largest = 0, p = (size_t)comm->size;
  for (size_t r = 0; r < p; r++) largest = c->counts[r] > largest ? c->counts[r] : largest;
  return largest / PCCL_SKEW >= (c->count + p - 1) / p; /* c->count: the sum */
}

static unsigned select_flags(const pccl_comm_t *comm, const pccl_call_t *c) {
  int nb = c->nonblocking && comm->size > 1;
  int no_seg = nb && c->internal;
  return (no_seg ? PCCL_SELECT_NO_SEG : nb ? PCCL_SELECT_NB : 0u) |
         (c->internal ? PCCL_SELECT_UNFORCED : 0u) | (skewed(comm, c) ? PCCL_SELECT_SKEWED : 0u);
}

/* Validation and selection (or what the memo kept of them) into *choice;
 * with PCCL_CHECK (`checked`) the ranks then agree on them, which pccl's
 * own agreement call skips. */
static pccl_status_t prepare(pccl_comm_t *comm, pccl_call_t *c, int checked, pccl_choice_t *choice) {
  const char *api = api_of(c);
  pccl_status_t st = PCCL_OK;
  pccl_choice_t chosen = c->chosen; /* the memo's call may have another */
  size_t count = c->count;
  *choice = (pccl_choice_t){NULL, 0};
  if (!memo_hit(comm, c, choice)) {
    st = validate(comm, comm->rank, comm->size, c);
    if (st == PCCL_OK && c->lossy_call) st = validate_lossy(comm, c);
    /* a rank that sees only its own counts selects even when they are 0,
     * so that PCCL_CHECK finds the algorithm its peers run */
    if (st == PCCL_OK && (c->count > 0 || infos[c->coll].own_counts)) {
      *choice = c->lossy_call ? pccl__select_lossy(comm, c->coll, reported_bytes(c))
                              : pccl__select(comm, c->coll, reported_bytes(c), select_flags(comm, c));
      if (!choice->algo)
        st = pccl__error(comm, PCCL_ERR_CONFIG, api, "PCCL_ALGO excludes every algorithm of %s",
                         pccl_coll_name(c->coll));
      else
        memo_keep(comm, c, count, *choice);
    }
  }
  if (chosen.algo && st == PCCL_OK) *choice = chosen;
  if (checked && comm->check) {
    pccl_status_t agreed = agree(comm, c, st, *choice);
    if (agreed != PCCL_OK) return agreed;
  }
  if (st != PCCL_OK || c->count == 0) return st;
  note_choice(comm, *choice);
  return PCCL_OK;
}

static pccl_status_t schedule_of(pccl_comm_t *comm, const pccl_call_t *c, pccl_choice_t choice,
                                 const pccl_sched_t **s) {
  pccl_status_t st = get_schedule(comm, c, choice, s);
  if (st != PCCL_OK)
    return pccl__error(comm, st, api_of(c), "building the %s schedule failed: %s", comm->last_algo,
                       pccl_status_string(st));
  return PCCL_OK;
}

/* Validates, selects and runs a call; with PCCL_CHECK (`checked`) the
 * ranks first agree on it. */
static pccl_status_t run_call(pccl_comm_t *comm, pccl_call_t *c, int checked) {
  pccl_choice_t choice;
  pccl_status_t st = prepare(comm, c, checked, &choice);
  /* on the segment a rank that sees only its own counts takes its round
   * even with none of its own (seg.c: the rounds stay in step) */
  int empty_round = infos[c->coll].own_counts && choice.algo && choice.algo->generate == pccl_gen_seg;
  if (st != PCCL_OK || (c->count == 0 && !empty_round)) return st;
  if (choice.algo->generate == pccl_gen_seg) {
    if (c->lossy_call) lossy_split(c, 0); /* a lossy call the plain way: exact */
    return run_seg(comm, c, choice);
  }
  const pccl_sched_t *s;
  if ((st = schedule_of(comm, c, choice, &s)) != PCCL_OK) return st;
  size_t seg = 0;
  if ((st = scratch_plan(comm, c, s, &seg)) != PCCL_OK) return st;
  return seg ? stream(comm, c, choice, seg) : execute(comm, c, s);
}

static pccl_status_t allreduce_min(pccl_comm_t *comm, int64_t *v, size_t n) {
  pccl_call_t c = {.coll = PCCL_COLL_ALLREDUCE, .sendbuf = v, .recvbuf = v, .count = n,
                   .dtype = PCCL_INT64, .op = PCCL_MIN};
  return run_call(comm, &c, 0);
}

/* ---- the step-by-step form (non-blocking calls, call.h) ---- */

/* Starts one of a non-blocking call's own all-reduces with MIN of n
 * values in r->aux (PCCL_CHECK's agreement, the scratch vote). */
static pccl_status_t begin_aux(pccl_comm_t *comm, pccl_call_run_t *r, size_t n, pccl_phase_t phase) {
  r->aux_call = (pccl_call_t){.coll = PCCL_COLL_ALLREDUCE, .sendbuf = r->aux, .recvbuf = r->aux,
                              .count = n, .dtype = PCCL_INT64, .op = PCCL_MIN, .nonblocking = 1,
                              .internal = 1};
  pccl_choice_t choice;
  const pccl_sched_t *s;
  pccl_status_t st = prepare(comm, &r->aux_call, 0, &choice);
  if (st == PCCL_OK) st = schedule_of(comm, &r->aux_call, choice, &s);
  if (st == PCCL_OK) st = exec_begin(comm, &r->aux_call, s, r, NULL);
  r->phase = phase;
  r->idle_since = 0.0;
  return st;
}

static pccl_status_t begin_main(pccl_comm_t *comm, pccl_call_t *c, pccl_call_run_t *r) {
  note_choice(comm, r->choice); /* an agreement or vote ran since prepare() named it */
  r->phase = PCCL_PHASE_MAIN;
  r->idle_since = 0.0;
  return exec_begin(comm, c, r->main, r, NULL);
}

/* A non-blocking call on the node segment: set up here, moved by
 * advance_seg (on one rank, a copy done at once). */
static pccl_status_t begin_seg(pccl_comm_t *comm, pccl_call_t *c, pccl_call_run_t *r) {
  if (comm->size == 1) return run_seg(comm, c, r->choice);
  pccl_seg_call_t call;
  char why[PCCL_ERROR_LEN - 64];
  pccl_status_t st = seg_call(comm, c, r->choice, &call, 0);
  if (st != PCCL_OK) return st;
  if ((st = pccl_seg_start(comm->seg, &call, &r->seg, why, sizeof why)) != PCCL_OK)
    return pccl__error(comm, st, api_of(c), "algorithm %s: %s", r->choice.algo->name, why);
  note_choice(comm, r->choice);
  r->on_seg = 1;
  r->phase = PCCL_PHASE_MAIN;
  return PCCL_OK;
}

static pccl_status_t advance_seg(pccl_comm_t *comm, pccl_call_t *c, pccl_call_run_t *r) {
  pccl_seg_watch_t watch = {comm->timeout, &comm->abort_flag, NULL};
  char why[PCCL_ERROR_LEN - 64];
  int done;
  pccl_status_t st = pccl_seg_advance(comm->seg, &r->seg, &watch, why, sizeof why, &done);
  if (st != PCCL_OK || done) r->phase = PCCL_PHASE_DONE;
  return st == PCCL_OK ? st : seg_failed(comm, c, r->choice, st, why, 0);
}

/* After validation and selection (and PCCL_CHECK's agreement): the call's
 * schedule, then the scratch vote or the call itself. A non-blocking call
 * is never streamed, but a large one's ranks still vote on the largest
 * scratch, as scratch_plan does, so that a call too large for
 * PCCL_MAX_SCRATCH fails alike everywhere instead of on some ranks. */
static pccl_status_t begin_call(pccl_comm_t *comm, pccl_call_t *c, pccl_call_run_t *r) {
  r->phase = PCCL_PHASE_DONE;
  r->on_seg = 0;
  if (c->count == 0) return PCCL_OK;
  if (r->choice.algo->generate == pccl_gen_seg) return begin_seg(comm, c, r);
  pccl_status_t st = schedule_of(comm, c, r->choice, &r->main);
  if (st != PCCL_OK) return st;
  size_t largest = (c->send_elems > c->recv_elems ? c->send_elems : c->recv_elems) * c->esize;
  if (!infos[c->coll].own_counts && largest > comm->scratch_limit / PCCL_TMP_FACTOR_MAX) {
    r->aux[0] = -(int64_t)r->main->tmp_elems;
    st = begin_aux(comm, r, 1, PCCL_PHASE_VOTE);
  } else {
    st = begin_main(comm, c, r);
  }
  if (st != PCCL_OK) r->phase = PCCL_PHASE_DONE;
  return st;
}

int pccl__call_without_mpi(const pccl_comm_t *comm, const pccl_call_t *c) {
  if (comm->check || c->device) return 0;
  return comm->size == 1 || c->count == 0 ||
         (comm->seg && c->chosen.algo && c->chosen.algo->generate == pccl_gen_seg) ||
         (c->nonblocking && comm->shm_all);
}

pccl_status_t pccl__call_prepost(pccl_comm_t *comm, pccl_call_t *c, pccl_call_run_t *r,
                                 int *begun) {
  *begun = 0;
  if (comm->check || comm->broken != PCCL_OK || comm->size == 1 || !c->chosen.algo ||
      c->chosen.algo->generate != pccl_gen_seg || !comm->seg)
    return PCCL_OK;
  *begun = 1;
  r->phase = PCCL_PHASE_DONE;
  r->idle_since = 0.0;
  pccl_status_t st = prepare(comm, c, 0, &r->choice);
  if (st == PCCL_OK) st = begin_call(comm, c, r);
  if (st != PCCL_OK || !r->on_seg) return broken(comm, st);
  pccl_seg_watch_t watch = {comm->timeout, &comm->abort_flag, NULL};
  char why[PCCL_ERROR_LEN - 64];
  st = pccl_seg_post(comm->seg, &r->seg, &watch, why, sizeof why);
  if (st != PCCL_OK) r->phase = PCCL_PHASE_DONE;
  return st == PCCL_OK ? st : seg_failed(comm, c, r->choice, st, why, 0);
}

int pccl__call_settled(const pccl_call_run_t *r) {
  return r->on_seg && r->phase == PCCL_PHASE_MAIN && pccl_seg_settled(&r->seg);
}

pccl_status_t pccl__call_begin(pccl_comm_t *comm, pccl_call_t *c, pccl_call_run_t *r) {
  r->phase = PCCL_PHASE_DONE;
  r->idle_since = 0.0;
  if (comm->check) r->given = *c;
  pccl_status_t st = prepare(comm, c, 0, &r->choice);
  if (st == PCCL_OK && c->refused != PCCL_OK) /* an issue-time refusal stands */
    st = pccl__error(comm, c->refused, api_of(c), "refused when issued");
  if (comm->check) { /* the agreement, as one more all-reduce that never waits */
    r->local = st;
    snprintf(r->own, sizeof r->own, "%s", comm->error);
    r->agree = agree_fields(comm, c, st, r->choice);
    pccl__agree_values(&r->agree, r->aux);
    st = begin_aux(comm, r, PCCL_AGREE_NVALUES, PCCL_PHASE_CHECK);
    if (st != PCCL_OK) r->phase = PCCL_PHASE_DONE;
  } else if (st == PCCL_OK) {
    st = begin_call(comm, c, r);
  }
  return st == PCCL_OK ? pccl__call_advance(comm, c, r) : broken(comm, st);
}

/* An agreement or vote has ended: the call goes on, or fails alike on
 * every rank. */
static pccl_status_t after_aux(pccl_comm_t *comm, pccl_call_t *c, pccl_call_run_t *r) {
  pccl_phase_t was = r->phase;
  r->phase = PCCL_PHASE_DONE;
  if (was == PCCL_PHASE_CHECK) {
    pccl_status_t st = pccl__agree_verdict(comm, api_of(c), &r->agree, r->aux, PCCL_OK);
    st = agree_outcome(comm, st, r->local, r->own);
    if (st != PCCL_OK || r->local != PCCL_OK) return st != PCCL_OK ? st : r->local;
    /* validated again, as given: a v-call's blocks are in comm->vblocks,
     * which the calls issued during the agreement have since overwritten */
    *c = r->given;
    st = validate(comm, comm->rank, comm->size, c);
    return st != PCCL_OK ? st : begin_call(comm, c, r);
  }
  size_t need = (size_t)-r->aux[0] * c->esize;
  if (need > comm->scratch_limit)
    return pccl__error(comm, PCCL_ERR_UNSUPPORTED, api_of(c),
                       "its scratch (%zu bytes on some rank) exceeds PCCL_MAX_SCRATCH (%zu), and a "
                       "non-blocking call is never streamed: raise PCCL_MAX_SCRATCH or use the "
                       "blocking call", need, comm->scratch_limit);
  pccl_status_t st = begin_main(comm, c, r);
  if (st != PCCL_OK) r->phase = PCCL_PHASE_DONE;
  return st;
}

pccl_status_t pccl__call_advance(pccl_comm_t *comm, pccl_call_t *c, pccl_call_run_t *r) {
  while (r->phase != PCCL_PHASE_DONE) {
    if (r->phase == PCCL_PHASE_MAIN && r->on_seg) return advance_seg(comm, c, r);
    pccl_call_t *now = r->phase == PCCL_PHASE_MAIN ? c : &r->aux_call;
    int progressed = 0;
    double waited = 0.0;
    pccl_status_t st = comm->abort_flag ? PCCL_ERR_ABORTED : pccl_exec_advance(&r->x, &progressed);
    if (st == PCCL_OK && !pccl_exec_done(&r->x)) {
      double t = progressed ? 0.0 : pccl_exec_clock();
      if (progressed || r->idle_since == 0.0) r->idle_since = t;
      if (comm->timeout <= 0 || t - r->idle_since <= comm->timeout) return PCCL_OK;
      st = PCCL_ERR_TIMEOUT;
      waited = t - r->idle_since;
    }
    if (st != PCCL_OK) {
      int checking = r->phase == PCCL_PHASE_CHECK;
      r->phase = PCCL_PHASE_DONE;
      st = exec_end(comm, now, r, st, waited);
      if (checking) st = pccl__agree_verdict(comm, api_of(c), &r->agree, r->aux, st);
      return broken(comm, st);
    }
    if (r->phase == PCCL_PHASE_MAIN) {
      r->phase = PCCL_PHASE_DONE;
      return PCCL_OK;
    }
    if ((st = after_aux(comm, c, r)) != PCCL_OK) return broken(comm, st);
  }
  return PCCL_OK;
}

/* Whether a call may start on comm: live, not broken or aborted. */
static pccl_status_t usable_comm(pccl_comm_t *comm, const char *api) {
  if (!pccl__comm_live(comm))
    return pccl__error(NULL, PCCL_ERR_INVALID_COMM, api,
                       "not a live communicator (NULL, never created or already destroyed)");
  pccl__error_clear(comm);
  if (comm->broken != PCCL_OK)
    return pccl__error(comm, comm->broken, api, "the communicator is broken: %s", comm->broken_why);
  if (comm->abort_flag)
    return broken(comm, pccl__error(comm, PCCL_ERR_ABORTED, api,
                                    "pccl_comm_abort was called; the communicator is now broken"));
  return PCCL_OK;
}

/* A blocking call's short way, taken when it is what run() would do
 * anyway: the repeat of its collective's memo, on the node segment, on a
 * communicator with nothing to do first (no non-blocking call
 * outstanding, no PCCL_CHECK agreement, not broken or aborted). It skips
 * building, validating and copying a 200-byte pccl_call_t: the call layer
 * of an 8-byte all-reduce went from 100.6 to 39.5 ns (pccl-callcost,
 * docs/results/repeat). Returns 0 when the call must take the long way. */
static int repeat(pccl_comm_t *comm, int slot, const char *api, const void *sendbuf,
                  void *recvbuf, size_t count, const size_t *counts, const size_t *displs,
                  pccl_dtype_t dtype, pccl_op_t op, int root, pccl_status_t *st) {
  if (!pccl__comm_live(comm) || comm->nb_head || comm->check || comm->broken != PCCL_OK ||
      atomic_load_explicit(&comm->abort_flag, memory_order_relaxed))
    return 0;
  const struct pccl_call_memo *m = memo_of(comm, slot);
  if (!m || !m->choice.algo || m->gen != comm->config_gen ||
      m->choice.algo->generate != pccl_gen_seg)
    return 0;
  const pccl_call_t *v = &m->call;
  if (v->api != api || v->sendbuf != sendbuf || v->recvbuf != recvbuf || m->count != count ||
      v->dtype != dtype || v->op != op || v->root != root || v->nonblocking || v->internal ||
      !memo_arrays(m, (size_t)comm->size, counts, displs))
    return 0;
  pccl__error_clear(comm);
  note_choice(comm, m->choice);
  *st = broken(comm, m->on_seg ? run_seg_call(comm, v, m->choice, &m->seg)
                               : run_seg(comm, v, m->choice));
  return 1;
}

static pccl_status_t run(pccl_comm_t *comm, pccl_call_t *c) {
  const char *api = api_of(c);
  /* the outstanding non-blocking calls come first: every rank issued them first */
  if (pccl__comm_live(comm) && comm->nb_head) pccl__request_drain(comm);
  pccl_status_t st = usable_comm(comm, api);
  return st == PCCL_OK ? broken(comm, run_call(comm, c, 1)) : st;
}

pccl_status_t pccl_comm_algo_for(pccl_comm_t *comm, pccl_coll_t coll, size_t count,
                                 pccl_dtype_t dtype, int nonblocking, const char **name) {
  const char *api = "pccl_comm_algo_for";
  if (!pccl__comm_live(comm))
    return pccl__error(NULL, PCCL_ERR_INVALID_COMM, api, "not a live communicator");
  if ((unsigned)coll >= PCCL_COLL_COUNT || !name)
    return pccl__error(comm, PCCL_ERR_INVALID_ARGUMENT, api,
                       name ? "unknown collective %d" : "name is NULL", (int)coll);
  if (coll == PCCL_COLL_ALLGATHERV || coll == PCCL_COLL_REDUCE_SCATTERV || infos[coll].own_counts)
    return pccl__error(comm, PCCL_ERR_UNSUPPORTED, api,
                       "%s: a v-collective's algorithm depends on its counts", pccl_coll_name(coll));
  size_t es = pccl_dtype_size(dtype), blocks = count * (size_t)comm->size;
  if (!es) return pccl__error(comm, PCCL_ERR_INVALID_DTYPE, api, "unknown datatype %d", (int)dtype);
  if (too_large(count, (size_t)comm->size, es))
    return pccl__error(comm, PCCL_ERR_OVERFLOW, api,
                       "count %zu of %s on %d ranks exceeds PTRDIFF_MAX bytes", count,
                       pccl_dtype_name(dtype), comm->size);
  pccl_call_t c = {.coll = coll, .count = count, .dtype = dtype, .esize = es,
                   .nonblocking = nonblocking != 0,
                   .send_elems = infos[coll].send_blocks ? blocks : count,
                   .recv_elems = infos[coll].recv_blocks ? blocks : count};
  pccl_choice_t ch = pccl__select(comm, coll, reported_bytes(&c), select_flags(comm, &c));
  if (c.nonblocking && comm->size > 1 && ch.algo && ch.algo->generate == pccl_gen_seg &&
      !pccl__seg_takes_nb(comm, ch, coll)) /* forced: the call would be refused (pccl__call_validate) */
    return pccl__error(comm, PCCL_ERR_UNSUPPORTED, api,
                       "PCCL_ALGO forces %s:%s, which runs this call blocking only",
                       pccl_coll_name(coll), ch.algo->name);
  *name = ch.algo && count > 0 ? ch.algo->name : "none";
  return PCCL_OK;
}

/* The names of the non-blocking calls, for their errors. */
static const char *const iapis[PCCL_COLL_COUNT] = {
    [PCCL_COLL_ALLGATHER] = "pccl_iallgather",   [PCCL_COLL_REDUCE_SCATTER] = "pccl_ireduce_scatter",
    [PCCL_COLL_ALLREDUCE] = "pccl_iallreduce",   [PCCL_COLL_BROADCAST] = "pccl_ibroadcast",
    [PCCL_COLL_REDUCE] = "pccl_ireduce",         [PCCL_COLL_SCATTER] = "pccl_iscatter",
    [PCCL_COLL_GATHER] = "pccl_igather",         [PCCL_COLL_ALLTOALL] = "pccl_ialltoall",
    [PCCL_COLL_SCAN] = "pccl_iscan",             [PCCL_COLL_EXSCAN] = "pccl_iexscan",
    [PCCL_COLL_ALLGATHERV] = "pccl_iallgatherv", [PCCL_COLL_REDUCE_SCATTERV] = "pccl_ireduce_scatterv",
    [PCCL_COLL_GATHERV] = "pccl_igatherv",       [PCCL_COLL_SCATTERV] = "pccl_iscatterv",
    [PCCL_COLL_ALLTOALLV] = "pccl_ialltoallv",
};

/* A pccl_i* call: checked now, as the blocking call would be, then queued
 * behind the communicator's earlier non-blocking calls and started. */
static pccl_status_t post(pccl_comm_t *comm, pccl_call_t *c, pccl_request_t **req) {
  if (!c->api) c->api = iapis[c->coll];
  c->nonblocking = 1;
  const char *api = c->api;
  if (!req)
    return pccl__error(pccl__comm_live(comm) ? comm : NULL, PCCL_ERR_INVALID_ARGUMENT, api,
                       "request is NULL");
  *req = NULL;
  pccl_call_t as_given = *c; /* validation derives fields that the start derives again */
  pccl_status_t st = usable_comm(comm, api);
  if (st != PCCL_OK) return st;
  st = pccl__call_validate(comm, c);
  as_given.chosen = c->chosen; /* later changes of PCCL_ALGO do not apply to it */
  if (st == PCCL_OK) return pccl__request_post(comm, &as_given, req);
  if (comm->check) { /* the peers still learn of it, from the agreement, instead of waiting */
    char own[PCCL_ERROR_LEN];
    snprintf(own, sizeof own, "%s", comm->error);
    as_given.refused = st;
    pccl__request_post(comm, &as_given, NULL);
    snprintf(comm->error, sizeof comm->error, "%s", own);
  }
  return st;
}

pccl_status_t pccl__call_validate(pccl_comm_t *comm, pccl_call_t *c) {
  /* the repeat of a call that passed: what it derived, as prepare() takes
   * it (2 ranks, 8-byte MPI_Ibcast under the preload, callgrind: about 500
   * of 2,900 instructions a call were this validation and selection) */
  pccl_choice_t kept;
  if (memo_hit(comm, c, &kept)) {
    c->chosen = kept;
  } else {
    pccl_status_t st = validate(comm, comm->rank, comm->size, c);
    if (st != PCCL_OK || (c->count == 0 && !infos[c->coll].own_counts)) return st;
    if (c->device)
      return pccl__error(comm, PCCL_ERR_UNSUPPORTED, c->api,
                         "non-blocking calls on device buffers are not built yet; use the blocking "
                         "call");
    c->chosen = pccl__select(comm, c->coll, reported_bytes(c), select_flags(comm, c));
    if (!c->chosen.algo)
      return pccl__error(comm, PCCL_ERR_CONFIG, c->api,
                         "PCCL_ALGO excludes every algorithm of %s", pccl_coll_name(c->coll));
  }
  /* the memo's choice too: it was kept when a call began, unchecked for
   * this (a forced seg that takes no non-blocking call) */
  if (c->chosen.algo->generate == pccl_gen_seg && comm->size > 1 &&
      !pccl__seg_takes_nb(comm, c->chosen, c->coll))
    return pccl__error(comm, PCCL_ERR_UNSUPPORTED, c->api,
                       "PCCL_ALGO forces %s:%s, which runs this call blocking only (the "
                       "segment's non-blocking calls: seg, no v-collective)",
                       pccl_coll_name(c->coll), c->chosen.algo->name);
  return PCCL_OK;
}

/* The request argument of a blocking call: each entry point below is
 * written once for its blocking and its non-blocking form. */
static pccl_request_t *blocking_request;
#define BLOCKING (&blocking_request)

static pccl_status_t issue(pccl_comm_t *comm, pccl_call_t *c, pccl_request_t **req) {
  return req == BLOCKING ? run(comm, c) : post(comm, c, req);
}

pccl_status_t pccl_iallgather(const void *sendbuf, void *recvbuf, size_t count, pccl_dtype_t dtype,
                              pccl_comm_t *comm, pccl_request_t **request) {
  pccl_call_t c = {.coll = PCCL_COLL_ALLGATHER, .sendbuf = sendbuf, .recvbuf = recvbuf,
                   .count = count, .dtype = dtype};
  return issue(comm, &c, request);
}

pccl_status_t pccl_allgather(const void *sendbuf, void *recvbuf, size_t count, pccl_dtype_t dtype,
                             pccl_comm_t *comm) {
  pccl_status_t st;
  if (repeat(comm, PCCL_COLL_ALLGATHER, NULL, sendbuf, recvbuf, count, NULL, NULL, dtype, 0, 0, &st)) return st;
  return pccl_iallgather(sendbuf, recvbuf, count, dtype, comm, BLOCKING);
}

pccl_status_t pccl_ireduce_scatter(const void *sendbuf, void *recvbuf, size_t count,
                                   pccl_dtype_t dtype, pccl_op_t op, pccl_comm_t *comm,
                                   pccl_request_t **request) {
  pccl_call_t c = {.coll = PCCL_COLL_REDUCE_SCATTER, .sendbuf = sendbuf, .recvbuf = recvbuf,
                   .count = count, .dtype = dtype, .op = op};
  return issue(comm, &c, request);
}

pccl_status_t pccl_reduce_scatter(const void *sendbuf, void *recvbuf, size_t count,
                                  pccl_dtype_t dtype, pccl_op_t op, pccl_comm_t *comm) {
  pccl_status_t st;
  if (repeat(comm, PCCL_COLL_REDUCE_SCATTER, NULL, sendbuf, recvbuf, count, NULL, NULL, dtype, op, 0, &st)) return st;
  return pccl_ireduce_scatter(sendbuf, recvbuf, count, dtype, op, comm, BLOCKING);
}

pccl_status_t pccl_iallreduce(const void *sendbuf, void *recvbuf, size_t count, pccl_dtype_t dtype,
                              pccl_op_t op, pccl_comm_t *comm, pccl_request_t **request) {
  pccl_call_t c = {.coll = PCCL_COLL_ALLREDUCE, .sendbuf = sendbuf, .recvbuf = recvbuf,
                   .count = count, .dtype = dtype, .op = op};
  return issue(comm, &c, request);
}

pccl_status_t pccl_allreduce(const void *sendbuf, void *recvbuf, size_t count, pccl_dtype_t dtype,
                             pccl_op_t op, pccl_comm_t *comm) {
  pccl_status_t st;
  if (repeat(comm, PCCL_COLL_ALLREDUCE, NULL, sendbuf, recvbuf, count, NULL, NULL, dtype, op, 0, &st)) return st;
  return pccl_iallreduce(sendbuf, recvbuf, count, dtype, op, comm, BLOCKING);
}

pccl_status_t pccl_iscan(const void *sendbuf, void *recvbuf, size_t count, pccl_dtype_t dtype,
                         pccl_op_t op, pccl_comm_t *comm, pccl_request_t **request) {
  pccl_call_t c = {.coll = PCCL_COLL_SCAN, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count,
                   .dtype = dtype, .op = op};
  return issue(comm, &c, request);
}

pccl_status_t pccl_scan(const void *sendbuf, void *recvbuf, size_t count, pccl_dtype_t dtype,
                        pccl_op_t op, pccl_comm_t *comm) {
  pccl_status_t st;
  if (repeat(comm, PCCL_COLL_SCAN, NULL, sendbuf, recvbuf, count, NULL, NULL, dtype, op, 0, &st)) return st;
  return pccl_iscan(sendbuf, recvbuf, count, dtype, op, comm, BLOCKING);
}

pccl_status_t pccl_iexscan(const void *sendbuf, void *recvbuf, size_t count, pccl_dtype_t dtype,
                           pccl_op_t op, pccl_comm_t *comm, pccl_request_t **request) {
  pccl_call_t c = {.coll = PCCL_COLL_EXSCAN, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count,
                   .dtype = dtype, .op = op};
  return issue(comm, &c, request);
}

pccl_status_t pccl_exscan(const void *sendbuf, void *recvbuf, size_t count, pccl_dtype_t dtype,
                          pccl_op_t op, pccl_comm_t *comm) {
  pccl_status_t st;
  if (repeat(comm, PCCL_COLL_EXSCAN, NULL, sendbuf, recvbuf, count, NULL, NULL, dtype, op, 0, &st)) return st;
  return pccl_iexscan(sendbuf, recvbuf, count, dtype, op, comm, BLOCKING);
}

pccl_status_t pccl_iallgatherv(const void *sendbuf, void *recvbuf, const size_t *recvcounts,
                               const size_t *displs, pccl_dtype_t dtype, pccl_comm_t *comm,
                               pccl_request_t **request) {
  pccl_call_t c = {.coll = PCCL_COLL_ALLGATHERV, .sendbuf = sendbuf, .recvbuf = recvbuf,
                   .counts = recvcounts, .displs = displs, .dtype = dtype};
  return issue(comm, &c, request);
}

pccl_status_t pccl_allgatherv(const void *sendbuf, void *recvbuf, const size_t *recvcounts,
                              const size_t *displs, pccl_dtype_t dtype, pccl_comm_t *comm) {
  pccl_status_t st;
  if (repeat(comm, PCCL_COLL_ALLGATHERV, NULL, sendbuf, recvbuf, 0, recvcounts, displs, dtype, 0, 0,
             &st))
    return st;
  return pccl_iallgatherv(sendbuf, recvbuf, recvcounts, displs, dtype, comm, BLOCKING);
}

pccl_status_t pccl_ireduce_scatterv(const void *sendbuf, void *recvbuf, const size_t *recvcounts,
                                    pccl_dtype_t dtype, pccl_op_t op, pccl_comm_t *comm,
                                    pccl_request_t **request) {
  pccl_call_t c = {.coll = PCCL_COLL_REDUCE_SCATTERV, .sendbuf = sendbuf, .recvbuf = recvbuf,
                   .counts = recvcounts, .dtype = dtype, .op = op};
  return issue(comm, &c, request);
}

pccl_status_t pccl_reduce_scatterv(const void *sendbuf, void *recvbuf, const size_t *recvcounts,
                                   pccl_dtype_t dtype, pccl_op_t op, pccl_comm_t *comm) {
  pccl_status_t st;
  if (repeat(comm, PCCL_COLL_REDUCE_SCATTERV, NULL, sendbuf, recvbuf, 0, recvcounts, NULL, dtype, op,
             0, &st))
    return st;
  return pccl_ireduce_scatterv(sendbuf, recvbuf, recvcounts, dtype, op, comm, BLOCKING);
}

pccl_status_t pccl_igatherv(const void *sendbuf, size_t sendcount, void *recvbuf,
                            const size_t *recvcounts, const size_t *displs, pccl_dtype_t dtype,
                            int root, pccl_comm_t *comm, pccl_request_t **request) {
  pccl_call_t c = {.coll = PCCL_COLL_GATHERV, .sendbuf = sendbuf, .recvbuf = recvbuf,
                   .count = sendcount, .counts = recvcounts, .displs = displs, .dtype = dtype,
                   .root = root};
  return issue(comm, &c, request);
}

pccl_status_t pccl_gatherv(const void *sendbuf, size_t sendcount, void *recvbuf,
                           const size_t *recvcounts, const size_t *displs, pccl_dtype_t dtype,
                           int root, pccl_comm_t *comm) {
  pccl_status_t st;
  if (repeat(comm, PCCL_COLL_GATHERV, NULL, sendbuf, recvbuf, sendcount, recvcounts, displs, dtype,
             0, root, &st))
    return st;
  return pccl_igatherv(sendbuf, sendcount, recvbuf, recvcounts, displs, dtype, root, comm,
                       BLOCKING);
}

pccl_status_t pccl_iscatterv(const void *sendbuf, const size_t *sendcounts, const size_t *displs,
                             void *recvbuf, size_t recvcount, pccl_dtype_t dtype, int root,
                             pccl_comm_t *comm, pccl_request_t **request) {
  pccl_call_t c = {.coll = PCCL_COLL_SCATTERV, .sendbuf = sendbuf, .recvbuf = recvbuf,
                   .count = recvcount, .counts = sendcounts, .displs = displs, .dtype = dtype,
                   .root = root};
  return issue(comm, &c, request);
}

pccl_status_t pccl_scatterv(const void *sendbuf, const size_t *sendcounts, const size_t *displs,
                            void *recvbuf, size_t recvcount, pccl_dtype_t dtype, int root,
                            pccl_comm_t *comm) {
  pccl_status_t st;
  if (repeat(comm, PCCL_COLL_SCATTERV, NULL, sendbuf, recvbuf, recvcount, sendcounts, displs, dtype,
             0, root, &st))
    return st;
  return pccl_iscatterv(sendbuf, sendcounts, displs, recvbuf, recvcount, dtype, root, comm,
                        BLOCKING);
}

pccl_status_t pccl_ialltoallv(const void *sendbuf, const size_t *sendcounts, const size_t *sdispls,
                              void *recvbuf, const size_t *recvcounts, const size_t *rdispls,
                              pccl_dtype_t dtype, pccl_comm_t *comm, pccl_request_t **request) {
  pccl_call_t c = {.coll = PCCL_COLL_ALLTOALLV, .sendbuf = sendbuf, .recvbuf = recvbuf,
                   .counts = recvcounts, .displs = rdispls, .scounts = sendcounts,
                   .sdispls = sdispls, .dtype = dtype};
  return issue(comm, &c, request);
}

pccl_status_t pccl_alltoallv(const void *sendbuf, const size_t *sendcounts, const size_t *sdispls,
                             void *recvbuf, const size_t *recvcounts, const size_t *rdispls,
                             pccl_dtype_t dtype, pccl_comm_t *comm) {
  return pccl_ialltoallv(sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls, dtype, comm,
                         BLOCKING);
}

/* A barrier is an all-reduce of one byte: on one node the segment's, whose
 * latency is below MPI's own barrier (docs/mpi-dropin.md has the numbers),
 * and errors and timeouts come as for any collective. The byte is the
 * communicator's, so that a repeat is the memo's (a blocking one's by
 * repeat(), a non-blocking one's by its validation). The calls that share
 * it never move it from two threads at once: queued non-blocking ones are
 * moved by whichever thread holds the queue (a segment call begun behind
 * another, by the same thread), and a blocking one runs once the queue is
 * empty. What it holds is never read: every rank gives 0. */
static const char barrier_api[] = "pccl_barrier";

static pccl_status_t barrier_issue(pccl_comm_t *comm, pccl_request_t **request) {
  uint8_t none = 0; /* a dead communicator's call only fails */
  uint8_t *token = pccl__comm_live(comm) ? &comm->barrier_token : &none;
  pccl_status_t st;
  if (request == BLOCKING && token != &none &&
      repeat(comm, MEMO_BARRIER, barrier_api, token, token, 1, NULL, NULL, PCCL_UINT8, PCCL_MAX, 0, &st))
    return st;
  pccl_call_t c = {.coll = PCCL_COLL_ALLREDUCE,
                   .api = request == BLOCKING ? barrier_api : "pccl_ibarrier", .sendbuf = token,
                   .recvbuf = token, .count = 1, .dtype = PCCL_UINT8, .op = PCCL_MAX, .token = 1};
  return issue(comm, &c, request);
}

pccl_status_t pccl_ibarrier(pccl_comm_t *comm, pccl_request_t **request) {
  return barrier_issue(comm, request);
}

pccl_status_t pccl_barrier(pccl_comm_t *comm) {
  return barrier_issue(comm, BLOCKING);
}

pccl_status_t pccl_ibroadcast(const void *sendbuf, void *recvbuf, size_t count, pccl_dtype_t dtype,
                              int root, pccl_comm_t *comm, pccl_request_t **request) {
  pccl_call_t c = {.coll = PCCL_COLL_BROADCAST, .sendbuf = sendbuf, .recvbuf = recvbuf,
                   .count = count, .dtype = dtype, .root = root};
  return issue(comm, &c, request);
}

pccl_status_t pccl_broadcast(const void *sendbuf, void *recvbuf, size_t count, pccl_dtype_t dtype,
                             int root, pccl_comm_t *comm) {
  pccl_status_t st;
  if (repeat(comm, PCCL_COLL_BROADCAST, NULL, sendbuf, recvbuf, count, NULL, NULL, dtype, 0, root, &st)) return st;
  return pccl_ibroadcast(sendbuf, recvbuf, count, dtype, root, comm, BLOCKING);
}

pccl_status_t pccl_ireduce(const void *sendbuf, void *recvbuf, size_t count, pccl_dtype_t dtype,
                           pccl_op_t op, int root, pccl_comm_t *comm, pccl_request_t **request) {
  pccl_call_t c = {.coll = PCCL_COLL_REDUCE, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count,
                   .dtype = dtype, .op = op, .root = root};
  return issue(comm, &c, request);
}

pccl_status_t pccl_reduce(const void *sendbuf, void *recvbuf, size_t count, pccl_dtype_t dtype,
                          pccl_op_t op, int root, pccl_comm_t *comm) {
  pccl_status_t st;
  if (repeat(comm, PCCL_COLL_REDUCE, NULL, sendbuf, recvbuf, count, NULL, NULL, dtype, op, root, &st)) return st;
  return pccl_ireduce(sendbuf, recvbuf, count, dtype, op, root, comm, BLOCKING);
}

pccl_status_t pccl_iscatter(const void *sendbuf, void *recvbuf, size_t count, pccl_dtype_t dtype,
                            int root, pccl_comm_t *comm, pccl_request_t **request) {
  pccl_call_t c = {.coll = PCCL_COLL_SCATTER, .sendbuf = sendbuf, .recvbuf = recvbuf,
                   .count = count, .dtype = dtype, .root = root};
  return issue(comm, &c, request);
}

pccl_status_t pccl_scatter(const void *sendbuf, void *recvbuf, size_t count, pccl_dtype_t dtype,
                           int root, pccl_comm_t *comm) {
  pccl_status_t st;
  if (repeat(comm, PCCL_COLL_SCATTER, NULL, sendbuf, recvbuf, count, NULL, NULL, dtype, 0, root, &st)) return st;
  return pccl_iscatter(sendbuf, recvbuf, count, dtype, root, comm, BLOCKING);
}

pccl_status_t pccl_igather(const void *sendbuf, void *recvbuf, size_t count, pccl_dtype_t dtype,
                           int root, pccl_comm_t *comm, pccl_request_t **request) {
  pccl_call_t c = {.coll = PCCL_COLL_GATHER, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count,
                   .dtype = dtype, .root = root};
  return issue(comm, &c, request);
}

pccl_status_t pccl_gather(const void *sendbuf, void *recvbuf, size_t count, pccl_dtype_t dtype,
                          int root, pccl_comm_t *comm) {
  pccl_status_t st;
  if (repeat(comm, PCCL_COLL_GATHER, NULL, sendbuf, recvbuf, count, NULL, NULL, dtype, 0, root, &st)) return st;
  return pccl_igather(sendbuf, recvbuf, count, dtype, root, comm, BLOCKING);
}

pccl_status_t pccl_ialltoall(const void *sendbuf, void *recvbuf, size_t count, pccl_dtype_t dtype,
                             pccl_comm_t *comm, pccl_request_t **request) {
  pccl_call_t c = {.coll = PCCL_COLL_ALLTOALL, .sendbuf = sendbuf, .recvbuf = recvbuf,
                   .count = count, .dtype = dtype};
  return issue(comm, &c, request);
}

pccl_status_t pccl_alltoall(const void *sendbuf, void *recvbuf, size_t count, pccl_dtype_t dtype,
                            pccl_comm_t *comm) {
  pccl_status_t st;
  if (repeat(comm, PCCL_COLL_ALLTOALL, NULL, sendbuf, recvbuf, count, NULL, NULL, dtype, 0, 0, &st)) return st;
  return pccl_ialltoall(sendbuf, recvbuf, count, dtype, comm, BLOCKING);
}

/* ---- compressed collectives ---- */

pccl_status_t pccl_allreduce_lossy(const void *sendbuf, void *recvbuf, size_t count,
                                   pccl_dtype_t dtype, pccl_op_t op, pccl_lossy_t *lossy,
                                   pccl_comm_t *comm) {
  pccl_call_t c = {.coll = PCCL_COLL_ALLREDUCE, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count,
                   .dtype = dtype, .op = op, .lossy = lossy, .lossy_call = 1};
  return run(comm, &c);
}

pccl_status_t pccl_allgather_lossy(const void *sendbuf, void *recvbuf, size_t count,
                                   pccl_dtype_t dtype, pccl_lossy_t *lossy, pccl_comm_t *comm) {
  pccl_call_t c = {.coll = PCCL_COLL_ALLGATHER, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count,
                   .dtype = dtype, .lossy = lossy, .lossy_call = 1};
  return run(comm, &c);
}

pccl_status_t pccl_reduce_scatter_lossy(const void *sendbuf, void *recvbuf, size_t count,
                                        pccl_dtype_t dtype, pccl_op_t op, pccl_lossy_t *lossy,
                                        pccl_comm_t *comm) {
  pccl_call_t c = {.coll = PCCL_COLL_REDUCE_SCATTER, .sendbuf = sendbuf, .recvbuf = recvbuf,
                   .count = count, .dtype = dtype, .op = op, .lossy = lossy, .lossy_call = 1};
  return run(comm, &c);
}

pccl_status_t pccl_scatter_lossy(const void *sendbuf, void *recvbuf, size_t count,
                                 pccl_dtype_t dtype, int root, pccl_lossy_t *lossy,
                                 pccl_comm_t *comm) {
  pccl_call_t c = {.coll = PCCL_COLL_SCATTER, .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count,
                   .dtype = dtype, .root = root, .lossy = lossy, .lossy_call = 1};
  return run(comm, &c);
}

pccl_status_t pccl__coll_check(pccl_coll_t coll, int rank, int size, const void *sendbuf,
                               const void *recvbuf, size_t count, pccl_dtype_t dtype,
                               pccl_op_t op, int root) {
  if ((unsigned)coll >= PCCL_COLL_COUNT)
    return pccl__error(NULL, PCCL_ERR_INVALID_ARGUMENT, "pccl", "unknown collective %d", (int)coll);
  pccl_call_t c = {.coll = coll, .sendbuf = sendbuf, .recvbuf = (void *)recvbuf, .count = count,
                   .dtype = dtype, .op = op, .root = root};
  pccl_status_t st = validate(NULL, rank, size, &c);
  /* its callers (the engine) pack and move buffers on the host */
  if (st == PCCL_OK && c.device)
    st = pccl__error(NULL, PCCL_ERR_UNSUPPORTED, infos[coll].api,
                     "device buffers are not supported here yet (host buffers only)");
  return st;
}
