/* ring.c - ring all-gather, reduce-scatter and all-reduce.
 *
 * Members form a ring (me sends to me+1, receives from me-1). All-gather: in
 * step s each member forwards the block it received in step s-1, so after p-1
 * steps every member holds all p blocks. Reduce-scatter: the same pattern,
 * but each received partial sum is added to the member's own copy of that
 * block before it is forwarded; block me completes at member me in the last
 * step. Works for any p and any block sizes (blocks may be empty).
 * All-reduce: reduce-scatter over p near-equal pieces of the vector, then
 * all-gather of the pieces.
 *
 * Cost (alpha-beta-gamma, n bytes in total, blocks n/p):
 *   all-gather, reduce-scatter: (p-1) alpha + (p-1)/p n beta (+ (p-1)/p n gamma)
 *   all-reduce: 2 (p-1) alpha + 2 (p-1)/p n beta + (p-1)/p n gamma
 *
 * A round whose blocks are all empty sends nothing; runs of them are jumped
 * over (pccl_ring_gaps), so that a rank's schedule costs its steps to build, not
 * p rounds: an all-reduce of 32 elements on 32,768 ranks has 128 steps a
 * rank. */
#include "algo.h"

const pccl_ring_gaps_t *pccl_ring_gaps(pccl_sb_t *sb, const size_t *boff, int p) {
  static const char tag;
  uint64_t key[3] = {(uintptr_t)&tag, (uintptr_t)boff, (uint64_t)p};
  size_t bytes = sizeof(pccl_ring_gaps_t) + (size_t)p * sizeof(uint32_t);
  int fresh = 1;
  pccl_ring_gaps_t *g = pccl_sb_is_shared(sb, boff) ? pccl_sb_shared(sb, key, sizeof key, bytes, &fresh)
                                                    : pccl_sb_scratch(sb, bytes);
  if (!g || !fresh) return g;
  int last = -1; /* a block that is not empty */
  g->largest = 0;
  for (int b = 0; b < p; b++) {
    size_t len = boff[b + 1] - boff[b];
    if (len) last = b;
    if (len > g->largest) g->largest = len;
  }
  uint32_t empty = 0;
  for (int j = 1; j <= p; j++) {
    int b = last < 0 ? j - 1 : (last + j) % p;
    empty = last >= 0 && boff[b + 1] > boff[b] ? 0 : empty + 1;
    g->run[b] = empty;
  }
  return g;
}

void pccl_ring_allgather(pccl_sb_t *sb, const pccl_group_t *g, const size_t *boff,
                         const pccl_place_t *in, pccl_place_t out) {
  int p = g->size, me = g->me;
  pccl_ring_t ring = pccl_ring_of(g);
  pccl_region_t mine = pccl_block(out, boff, me);
  pccl_region_t from_in = mine;
  if (in) {
    from_in = pccl_rg(in->buf, in->off, mine.len);
    pccl_sb_copy(sb, mine, from_in);
  }
  const pccl_ring_gaps_t *gaps = pccl_ring_gaps(sb, boff, p);
  if (!gaps) return; /* the builder's status says why */
  for (int s = 0; s < p - 1; s++) {
    int sent = (me - s + p) % p, got = (me - s - 1 + p) % p;
    if (gaps->run[sent] >= 2) { /* rounds s .. s + run - 2 move empty blocks only */
      s += (int)gaps->run[sent] - 2;
      continue;
    }
    /* The first send reads the input directly, not waiting for the copy. */
    pccl_sb_send(sb, ring.right, s == 0 ? from_in : pccl_block(out, boff, sent));
    pccl_sb_recv(sb, ring.left, pccl_block(out, boff, got));
  }
}

void pccl_ring_reduce_scatter(pccl_sb_t *sb, const pccl_group_t *g, const size_t *boff,
                              pccl_place_t in, pccl_place_t out) {
  int p = g->size, me = g->me;
  pccl_region_t result = pccl_rg(out.buf, out.off, boff[me + 1] - boff[me]);
  if (p == 1) {
    pccl_sb_copy(sb, result, pccl_block(in, boff, me));
    return;
  }
  pccl_ring_t ring = pccl_ring_of(g);
  const pccl_ring_gaps_t *gaps = pccl_ring_gaps(sb, boff, p);
  if (!gaps) return;
  /* Two receive buffers, so a receive can be posted while the previous
   * partial sum is still being sent. */
  size_t tmp[2] = {pccl_sb_tmp(sb, gaps->largest), pccl_sb_tmp(sb, gaps->largest)};
  pccl_sb_send(sb, ring.right, pccl_block(in, boff, (me + p - 1) % p));
  for (int s = 0; s < p - 1; s++) {
    int b = (me - s - 2 + 2 * p) % p;
    if (gaps->run[b] >= 1) { /* rounds s .. s + run - 1 reduce empty blocks only */
      s += (int)gaps->run[b] - 1;
      continue;
    }
    pccl_region_t mine = pccl_block(in, boff, b);
    pccl_region_t partial = pccl_rg(PCCL_BUF_TMP, tmp[s % 2], mine.len);
    if (s < p - 2) {
      pccl_sb_recv_reduce(sb, ring.left, partial, partial, mine, 0);
      pccl_sb_send(sb, ring.right, partial);
    } else {
      pccl_sb_recv_reduce(sb, ring.left, result, partial, mine, 0);
    }
  }
}

pccl_status_t pccl_gen_allgather_ring(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  return pccl_flat_allgather(sb, a, pccl_ring_allgather);
}

pccl_status_t pccl_gen_rs_ring(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  return pccl_flat_reduce_scatter(sb, a, pccl_ring_reduce_scatter);
}

pccl_status_t pccl_gen_allreduce_ring(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  pccl_group_t g = pccl_group_all(a);
  const size_t *boff = pccl_blocks_split(sb, a->nranks, a->count);
  if (!boff) return PCCL_ERR_NO_MEMORY;
  pccl_place_t in = {PCCL_BUF_SEND, 0}, out = {PCCL_BUF_RECV, 0};
  pccl_place_t mine = {PCCL_BUF_RECV, boff[a->rank]};
  pccl_ring_reduce_scatter(sb, &g, boff, in, mine);
  pccl_ring_allgather(sb, &g, boff, NULL, out);
  return PCCL_OK;
}
