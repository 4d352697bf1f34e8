/* builder.c - builds a schedule from a generator's sequential program and
 * derives each step's dependencies from the regions it touches.
 *
 * Every access (step, buffer, range, read or write) goes to the buffer's
 * hazard map (hazard.c), which names the earlier steps it must follow: a
 * read follows the last writer of each element, a write also the readers
 * since. Reads of SEND are not recorded unless SEND and RECV overlap:
 * nothing else writes SEND. Each step's dependencies are kept sorted, so
 * that two ranks' schedules that differ only in where their blocks lie
 * compare equal (the simulator's rank classes). */
#include "schedule.h"

#include "codec.h"
#include "kernels.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  int32_t peer; /* -1: an empty entry */
  uint32_t sent, received;
} peer_seq_t;

struct pccl_sb {
  int nranks, rank;
  size_t elem_size;
  int aliased;
  long long send_in_recv;
  size_t max_msg_elems;
  pccl_status_t status;

  pccl_step_t *steps;
  uint32_t nsteps;
  size_t steps_cap;
  uint32_t *deps;
  size_t ndeps, deps_cap;
  uint32_t *named; /* per step: 1 + the step whose dependencies name it last */
  size_t named_cap;
  uint32_t adding; /* the step whose dependencies are being added */
  pccl_hazards_t *hazards[PCCL_BUF_COUNT]; /* made on first access */
  /* messages so far to and from each peer met: an open-addressing table,
   * so that a rank's builder costs its own steps, not the job's ranks */
  peer_seq_t *seq;
  uint32_t nseq, seq_cap, seq_bits; /* seq_cap = 2^seq_bits */
  size_t tmp_elems;
  uint32_t *perm;
  size_t nperm, perm_cap;
  size_t *stride;
  size_t nstride, stride_cap;
  void **scratch;
  size_t nscratch;
  pccl_memo_t *memo; /* not owned; NULL: tables go to scratch */
  uint32_t nslots, lossy_stages;
};

/* Message tags stay below the 32767 every MPI guarantees. */
#define PCCL_TAG_SPACE 32767

int pccl_sched_grow(void **v, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return 1;
  size_t ncap = *cap ? *cap * 2 : 64;
  while (ncap < need) ncap *= 2;
  void *nv = realloc(*v, ncap * elem);
  if (!nv) return 0;
  *v = nv;
  *cap = ncap;
  return 1;
}

pccl_status_t pccl_sb_create(int nranks, int rank, size_t elem_size, int aliased,
                             long long send_in_recv, size_t max_msg_bytes, pccl_sb_t **out) {
  *out = NULL;
  if (nranks < 1 || rank < 0 || rank >= nranks || elem_size == 0) return PCCL_ERR_INTERNAL;
  pccl_sb_t *sb = calloc(1, sizeof(*sb));
  if (!sb) return PCCL_ERR_NO_MEMORY;
  sb->nranks = nranks;
  sb->rank = rank;
  sb->elem_size = elem_size;
  sb->aliased = aliased;
  sb->send_in_recv = send_in_recv;
  sb->max_msg_elems = max_msg_bytes / elem_size ? max_msg_bytes / elem_size : 1;
  *out = sb;
  return PCCL_OK;
}

void pccl_sb_destroy(pccl_sb_t *sb) {
  if (!sb) return;
  free(sb->steps);
  free(sb->deps);
  free(sb->named);
  for (int b = 0; b < PCCL_BUF_COUNT; b++) pccl_hazards_destroy(sb->hazards[b]);
  free(sb->seq);
  free(sb->perm);
  free(sb->stride);
  for (size_t i = 0; i < sb->nscratch; i++) free(sb->scratch[i]);
  free(sb->scratch);
  free(sb);
}

int pccl_sb_rank(const pccl_sb_t *sb) { return sb->rank; }
size_t pccl_sb_elem_size(const pccl_sb_t *sb) { return sb->elem_size; }
int pccl_sb_nranks(const pccl_sb_t *sb) { return sb->nranks; }

size_t pccl_sb_tmp(pccl_sb_t *sb, size_t len) {
  size_t off = sb->tmp_elems;
  sb->tmp_elems += len;
  return off;
}

void *pccl_sb_scratch(pccl_sb_t *sb, size_t bytes) {
  void *p = NULL;
  size_t cap = sb->nscratch; /* grown one at a time: few per schedule */
  void **nv = realloc(sb->scratch, (cap + 1) * sizeof(void *));
  if (nv) {
    sb->scratch = nv;
    p = calloc(1, bytes ? bytes : 1);
    if (p) sb->scratch[sb->nscratch++] = p;
  }
  if (!p) sb->status = PCCL_ERR_NO_MEMORY;
  return p;
}

void pccl_sb_set_memo(pccl_sb_t *sb, pccl_memo_t *m) { sb->memo = m; }

void *pccl_sb_shared(pccl_sb_t *sb, const void *key, size_t keylen, size_t bytes, int *fresh) {
  *fresh = 1;
  if (!sb->memo) return pccl_sb_scratch(sb, bytes);
  void *p = pccl_memo_get(sb->memo, key, keylen, bytes, fresh);
  if (!p) sb->status = PCCL_ERR_NO_MEMORY;
  return p;
}

int pccl_sb_is_shared(const pccl_sb_t *sb, const void *p) { return pccl_memo_owns(sb->memo, p); }

/* When SEND and RECV overlap, both are tracked in the coordinates of the
 * one that contains the other. */
static pccl_region_t canonical(const pccl_sb_t *sb, pccl_region_t r) {
  if (!sb->aliased) return r;
  if (sb->send_in_recv >= 0 && r.buf == PCCL_BUF_SEND) {
    r.buf = PCCL_BUF_RECV;
    r.off += (size_t)sb->send_in_recv;
  } else if (sb->send_in_recv < 0 && r.buf == PCCL_BUF_RECV) {
    r.buf = PCCL_BUF_SEND;
    r.off += (size_t)(-sb->send_in_recv);
  }
  return r;
}

/* The hazard maps' callback: adds dep to the dependencies of the step being
 * added, once. */
static void add_dep(void *ctx, uint32_t dep) {
  pccl_sb_t *sb = ctx;
  if (dep == sb->adding || sb->named[dep] == sb->adding + 1) return;
  if (!pccl_sched_grow((void **)&sb->deps, &sb->deps_cap, sb->ndeps + 1, sizeof(uint32_t))) {
    sb->status = PCCL_ERR_NO_MEMORY;
    return;
  }
  sb->named[dep] = sb->adding + 1;
  sb->deps[sb->ndeps++] = dep;
}

/* Records the step's access to r (with stride, nblocks blocks of r.len
 * elements) and adds the dependencies it brings. */
static void track(pccl_sb_t *sb, pccl_region_t r, size_t stride, uint32_t nblocks, int write) {
  r = canonical(sb, r);
  if (r.len == 0 || sb->status != PCCL_OK) return;
  if (r.buf == PCCL_BUF_SEND && !write && !sb->aliased) return; /* nothing writes SEND */
  pccl_hazards_t **h = &sb->hazards[r.buf];
  if (!*h && !(*h = pccl_hazards_create())) {
    sb->status = PCCL_ERR_NO_MEMORY;
    return;
  }
  if (!pccl_hazards_access_blocks(*h, r.off, r.len, stride, nblocks, sb->adding, write, add_dep, sb))
    sb->status = PCCL_ERR_NO_MEMORY;
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

static void add_step(pccl_sb_t *sb, pccl_step_t st) {
  if (sb->status != PCCL_OK) return;
  if (sb->nsteps == UINT32_MAX ||
      !pccl_sched_grow((void **)&sb->steps, &sb->steps_cap, (size_t)sb->nsteps + 1, sizeof(pccl_step_t)) ||
      !pccl_sched_grow((void **)&sb->named, &sb->named_cap, (size_t)sb->nsteps + 1, sizeof(uint32_t))) {
    sb->status = PCCL_ERR_NO_MEMORY;
    return;
  }
  uint32_t id = sb->nsteps, nb = 1;
  size_t dst_stride = 0, src_stride = 0;
  if (st.kind == PCCL_STEP_COPY && st.arg > 1) {
    nb = (uint32_t)st.arg;
    dst_stride = sb->stride[2 * (size_t)st.tag];
    src_stride = sb->stride[2 * (size_t)st.tag + 1];
  }
  sb->named[id] = 0;
  sb->adding = id;
  st.dep_off = sb->ndeps;
  /* Reads first, then writes: a write hides the earlier writers of its
   * range, which the step's own reads of it must still follow. A fused
   * receive writes its staging region (src), a permutation its src too. */
  int src_written = st.kind == PCCL_STEP_RECV_REDUCE || st.kind == PCCL_STEP_PERMUTE;
  if (!src_written) track(sb, st.src, src_stride, nb, 0);
  track(sb, st.src2, 0, 1, 0);
  if (st.kind == PCCL_STEP_DIVIDE || st.kind == PCCL_STEP_PERMUTE) track(sb, st.dst, 0, 1, 0);
  if (src_written) track(sb, st.src, src_stride, nb, 1);
  track(sb, st.dst, dst_stride, nb, 1);
  if (sb->status != PCCL_OK) return;
  st.ndeps = (uint32_t)(sb->ndeps - st.dep_off);
  if (st.ndeps > 1) qsort(sb->deps + st.dep_off, st.ndeps, sizeof(uint32_t), cmp_u32); /* deps may still be NULL */
  sb->steps[sb->nsteps++] = st;
}

static pccl_step_t step_of(pccl_step_kind_t kind) {
  pccl_step_t st;
  memset(&st, 0, sizeof(st));
  st.kind = (uint16_t)kind;
  return st;
}

/* The entry at which peer's message counts live in t (2^bits entries):
 * its own, or the empty one where it goes. The slot is the product's top
 * bits (Fibonacci hashing): its low bits depend on the peer's low bits
 * alone, and peers a power of two apart (one rank a node) would collide. */
static peer_seq_t *probe(peer_seq_t *t, uint32_t bits, int peer) {
  uint32_t mask = (1u << bits) - 1, i = ((uint32_t)peer * 2654435761u) >> (32 - bits);
  while (t[i].peer != peer && t[i].peer != -1) i = (i + 1) & mask;
  return &t[i];
}

/* peer's message counts, made (zero) on its first message; NULL when out
 * of memory. The table is kept at most half full. */
static peer_seq_t *peer_seq(pccl_sb_t *sb, int peer) {
  if (2 * ((size_t)sb->nseq + 1) > sb->seq_cap) {
    uint32_t bits = sb->seq_cap ? sb->seq_bits + 1 : 4;
    if (bits > 30) return NULL; /* 2^29 peers met: beyond any job */
    uint32_t cap = 1u << bits;
    peer_seq_t *t = malloc((size_t)cap * sizeof(*t));
    if (!t) return NULL;
    for (uint32_t i = 0; i < cap; i++) t[i].peer = -1;
    for (uint32_t i = 0; i < sb->seq_cap; i++)
      if (sb->seq[i].peer != -1) *probe(t, bits, sb->seq[i].peer) = sb->seq[i];
    free(sb->seq);
    sb->seq = t;
    sb->seq_cap = cap;
    sb->seq_bits = bits;
  }
  peer_seq_t *e = probe(sb->seq, sb->seq_bits, peer);
  if (e->peer == -1) {
    *e = (peer_seq_t){peer, 0, 0};
    sb->nseq++;
  }
  return e;
}

/* Sends and receives longer than the largest message become several; a
 * fused receive-reduce is split alike in all its regions. */
static void message(pccl_sb_t *sb, pccl_step_t proto, int peer) {
  if (sb->status != PCCL_OK) return; /* the first error stands; tags no longer matter */
  if (peer < 0 || peer >= sb->nranks || peer == sb->rank) {
    sb->status = PCCL_ERR_INTERNAL;
    return;
  }
  size_t len = proto.kind == PCCL_STEP_SEND ? proto.src.len : proto.dst.len;
  if (len == 0) return; /* nothing to move: no step, no tag */
  peer_seq_t *ps = peer_seq(sb, peer);
  if (!ps) {
    sb->status = PCCL_ERR_NO_MEMORY;
    return;
  }
  uint32_t *seq = proto.kind == PCCL_STEP_SEND ? &ps->sent : &ps->received;
  if ((proto.flags & PCCL_STEP_VARLEN) && len > sb->max_msg_elems) {
    sb->status = PCCL_ERR_UNSUPPORTED; /* a stream cannot be cut: the generator chunks */
    return;
  }
  for (size_t done = 0; done < len; done += sb->max_msg_elems) {
    pccl_step_t st = proto;
    size_t n = len - done < sb->max_msg_elems ? len - done : sb->max_msg_elems;
    pccl_region_t *parts[] = {&st.dst, &st.src, &st.src2};
    for (int i = 0; i < 3; i++)
      if (parts[i]->len) *parts[i] = pccl_rg((pccl_buf_t)parts[i]->buf, parts[i]->off + done, n);
    st.arg = peer;
    st.tag = (int32_t)((*seq)++ % PCCL_TAG_SPACE);
    add_step(sb, st);
  }
}

void pccl_sb_send(pccl_sb_t *sb, int peer, pccl_region_t src) {
  pccl_step_t st = step_of(PCCL_STEP_SEND);
  st.src = src;
  message(sb, st, peer);
}

void pccl_sb_recv(pccl_sb_t *sb, int peer, pccl_region_t dst) {
  pccl_step_t st = step_of(PCCL_STEP_RECV);
  st.dst = dst;
  message(sb, st, peer);
}

void pccl_sb_recv_reduce(pccl_sb_t *sb, int peer, pccl_region_t dst, pccl_region_t staging,
                         pccl_region_t local, int msg_second) {
  if (dst.len == 0) return;
  if (staging.len != dst.len || local.len != dst.len) {
    sb->status = PCCL_ERR_INTERNAL;
    return;
  }
  pccl_step_t st = step_of(PCCL_STEP_RECV_REDUCE);
  st.flags = msg_second ? PCCL_STEP_MSG_SECOND : 0;
  st.dst = dst;
  st.src = staging;
  st.src2 = local;
  message(sb, st, peer);
}

void pccl_sb_reduce(pccl_sb_t *sb, pccl_region_t dst, pccl_region_t a, pccl_region_t b) {
  if (dst.len == 0) return;
  if (a.len != dst.len || b.len != dst.len) {
    sb->status = PCCL_ERR_INTERNAL;
    return;
  }
  pccl_step_t st = step_of(PCCL_STEP_REDUCE);
  st.dst = dst;
  st.src = a;
  st.src2 = b;
  add_step(sb, st);
}

void pccl_sb_copy(pccl_sb_t *sb, pccl_region_t dst, pccl_region_t src) {
  if (dst.len == 0) return;
  if (src.len != dst.len) {
    sb->status = PCCL_ERR_INTERNAL;
    return;
  }
  pccl_region_t cd = canonical(sb, dst), cs = canonical(sb, src);
  if (cd.buf == cs.buf && cd.off == cs.off) return; /* in place already */
  pccl_step_t st = step_of(PCCL_STEP_COPY);
  st.dst = dst;
  st.src = src;
  add_step(sb, st);
}

void pccl_sb_copy_blocks(pccl_sb_t *sb, pccl_region_t dst, size_t dst_stride, pccl_region_t src,
                         size_t src_stride, uint32_t nblocks) {
  if (sb->status != PCCL_OK || dst.len == 0 || nblocks == 0) return;
  if (src.len != dst.len || (nblocks > 1 && (dst_stride < dst.len || src_stride < src.len)) ||
      nblocks > INT32_MAX) {
    sb->status = PCCL_ERR_INTERNAL;
    return;
  }
  if (nblocks == 1 || (dst_stride == dst.len && src_stride == src.len)) { /* one run */
    pccl_sb_copy(sb, pccl_rg((pccl_buf_t)dst.buf, dst.off, dst.len * nblocks),
                 pccl_rg((pccl_buf_t)src.buf, src.off, src.len * nblocks));
    return;
  }
  if (sb->nstride / 2 > INT32_MAX ||
      !pccl_sched_grow((void **)&sb->stride, &sb->stride_cap, sb->nstride + 2, sizeof(size_t))) {
    sb->status = PCCL_ERR_NO_MEMORY;
    return;
  }
  pccl_step_t st = step_of(PCCL_STEP_COPY);
  st.dst = dst;
  st.src = src;
  st.arg = (int32_t)nblocks;
  st.tag = (int32_t)(sb->nstride / 2);
  sb->stride[sb->nstride++] = dst_stride;
  sb->stride[sb->nstride++] = src_stride;
  add_step(sb, st);
}

void pccl_sb_divide(pccl_sb_t *sb, pccl_region_t dst, int divisor) {
  if (dst.len == 0 || divisor == 1) return;
  pccl_step_t st = step_of(PCCL_STEP_DIVIDE);
  st.dst = dst;
  st.arg = divisor;
  add_step(sb, st);
}

void pccl_sb_node(pccl_sb_t *sb, pccl_coll_t coll, pccl_region_t dst, pccl_region_t src) {
  pccl_step_t st = step_of(PCCL_STEP_NODE);
  st.arg = (int32_t)coll;
  st.dst = dst;
  st.src = src;
  add_step(sb, st);
}

void pccl_sb_permute(pccl_sb_t *sb, pccl_region_t dst, pccl_region_t scratch, uint32_t nblocks,
                     const uint32_t *src_of) {
  if (sb->status != PCCL_OK || nblocks < 2) return;
  if (dst.len % nblocks || scratch.len != dst.len / nblocks) {
    sb->status = PCCL_ERR_INTERNAL;
    return;
  }
  size_t need = sb->nperm + 1 + (size_t)nblocks + nblocks / 2;
  if (sb->nperm > INT32_MAX || !pccl_sched_grow((void **)&sb->perm, &sb->perm_cap, need, sizeof(uint32_t))) {
    sb->status = PCCL_ERR_NO_MEMORY;
    return;
  }
  size_t words = pccl_perm_cycles(src_of, nblocks, sb->perm + sb->nperm + 1);
  if (words == SIZE_MAX) {
    sb->status = PCCL_ERR_NO_MEMORY;
    return;
  }
  if (words == 0) return; /* already in order */
  pccl_step_t st = step_of(PCCL_STEP_PERMUTE);
  st.dst = dst;
  st.src = scratch;
  st.arg = (int32_t)nblocks;
  st.tag = (int32_t)sb->nperm;
  sb->perm[sb->nperm] = (uint32_t)words;
  sb->nperm += 1 + words;
  add_step(sb, st);
}

void pccl_sb_lossy_stages(pccl_sb_t *sb, uint32_t stages) { sb->lossy_stages = stages; }

size_t pccl_sb_slot_elems(const pccl_sb_t *sb, size_t count) {
  size_t bytes = pccl__codec_slot_bytes(count, sb->elem_size);
  return bytes / sb->elem_size + (bytes % sb->elem_size != 0);
}

static pccl_slot_t new_slot(pccl_sb_t *sb, size_t count) {
  size_t cap = pccl_sb_slot_elems(sb, count);
  pccl_slot_t slot = {sb->nslots++, pccl_rg(PCCL_BUF_TMP, pccl_sb_tmp(sb, cap), cap), count};
  return slot;
}

pccl_slot_t pccl_sb_compress(pccl_sb_t *sb, pccl_region_t src) {
  pccl_slot_t slot = new_slot(sb, src.len);
  pccl_step_t st = step_of(PCCL_STEP_COMPRESS);
  st.dst = slot.at;
  st.src = src;
  st.slot = slot.id;
  add_step(sb, st);
  return slot;
}

void pccl_sb_decompress(pccl_sb_t *sb, pccl_region_t dst, pccl_slot_t slot) {
  if (dst.len != slot.count) {
    sb->status = PCCL_ERR_INTERNAL;
    return;
  }
  pccl_step_t st = step_of(PCCL_STEP_DECOMPRESS);
  st.dst = dst;
  st.src = slot.at;
  st.slot = slot.id;
  add_step(sb, st);
}

void pccl_sb_send_slot(pccl_sb_t *sb, int peer, pccl_slot_t slot) {
  pccl_step_t st = step_of(PCCL_STEP_SEND);
  st.flags = PCCL_STEP_VARLEN;
  st.src = slot.at;
  st.slot = slot.id;
  message(sb, st, peer);
}

pccl_slot_t pccl_sb_recv_slot(pccl_sb_t *sb, int peer, size_t count) {
  pccl_slot_t slot = new_slot(sb, count);
  pccl_step_t st = step_of(PCCL_STEP_RECV);
  st.flags = PCCL_STEP_VARLEN;
  st.dst = slot.at;
  st.slot = slot.id;
  message(sb, st, peer);
  return slot;
}

/* Builds the successor lists the executor walks when a step completes. */
static pccl_status_t build_successors(pccl_sched_t *s) {
  s->succ_off = calloc((size_t)s->nsteps + 1, sizeof(size_t));
  size_t total = 0;
  for (uint32_t i = 0; i < s->nsteps; i++) total += s->steps[i].ndeps;
  s->succ = malloc((total ? total : 1) * sizeof(uint32_t));
  if (!s->succ_off || !s->succ) return PCCL_ERR_NO_MEMORY;
  for (uint32_t i = 0; i < s->nsteps; i++)
    for (uint32_t d = 0; d < s->steps[i].ndeps; d++) s->succ_off[s->deps[s->steps[i].dep_off + d] + 1]++;
  for (uint32_t i = 0; i < s->nsteps; i++) s->succ_off[i + 1] += s->succ_off[i];
  size_t *fill = calloc((size_t)s->nsteps + 1, sizeof(size_t));
  if (!fill) return PCCL_ERR_NO_MEMORY;
  for (uint32_t i = 0; i < s->nsteps; i++)
    for (uint32_t d = 0; d < s->steps[i].ndeps; d++) {
      uint32_t p = s->deps[s->steps[i].dep_off + d];
      s->succ[s->succ_off[p] + fill[p]++] = i;
    }
  free(fill);
  return PCCL_OK;
}

pccl_status_t pccl_sb_finish(pccl_sb_t *sb, pccl_sched_t *out) {
  memset(out, 0, sizeof(*out));
  pccl_status_t st = sb->status;
  if (st == PCCL_OK) {
    out->steps = sb->steps;
    out->nsteps = sb->nsteps;
    out->deps = sb->deps;
    out->tmp_elems = sb->tmp_elems;
    out->perm = sb->perm;
    out->nperm = sb->nperm;
    out->stride = sb->stride;
    sb->stride = NULL;
    out->nslots = sb->nslots;
    out->lossy_stages = sb->lossy_stages;
    sb->perm = NULL;
    sb->steps = NULL;
    sb->deps = NULL;
    st = build_successors(out);
    if (st != PCCL_OK) pccl_sched_free(out);
  }
  pccl_sb_destroy(sb);
  return st;
}

void pccl_sched_free(pccl_sched_t *s) {
  if (!s) return;
  free(s->steps);
  free(s->deps);
  free(s->succ);
  free(s->succ_off);
  free(s->perm);
  free(s->stride);
  memset(s, 0, sizeof(*s));
}
