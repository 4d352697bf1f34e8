/* rabenseifner.c - Rabenseifner's reductions, which split the vector so
 * that every rank reduces a part of it.
 *
 * All-reduce, radix k: recursive multiplying
 * reduce-scatter of the vector into P = k^r near-equal parts, then recursive
 * multiplying all-gather of the parts (recmul.c); k = 2 is the classic
 * halving-then-doubling. Any p through the fold of recmul.c (the extra ranks
 * hand in their whole vector and get the result back). Each part is reduced
 * by one rank only, so all ranks get identical bits.
 *
 * Cost (n bytes, p = k^r):
 *   2 r alpha + 2 (p-1)/p n beta + (p-1)/p n gamma
 * plus 2 alpha + 2 n beta + n gamma per extra rank of a group when p is not
 * a power of k.
 *
 * Reduce ("rsgather"): a ring reduce-scatter of p near-equal parts, then a
 * binomial gather of the parts at the root. Where the binomial tree's root
 * reduces the whole vector itself, here each rank reduces 1/p of it and the
 * root then only copies the others' parts (the ring, not recursive halving:
 * it reduces straight into the result, without scratch and a copy; cf. the
 * 2-rank all-reduce rule in select.c). Cost:
 *   (p-1 + ceil(log2 p)) alpha + 2 (p-1)/p n beta + (p-1)/p n gamma */
#include "algo.h"

pccl_status_t pccl_gen_allreduce_rabenseifner(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  pccl_group_t g = pccl_group_all(a);
  pccl_fold_t f = pccl_fold(a->nranks, a->k, a->rank);
  pccl_region_t in = pccl_rg(PCCL_BUF_SEND, 0, a->count);
  pccl_region_t all = pccl_rg(PCCL_BUF_RECV, 0, a->count);
  int leader = pccl_fold_real(&f, f.group);
  if (f.v < 0) {
    pccl_sb_send(sb, leader, in);
    pccl_sb_recv(sb, leader, all);
    return PCCL_OK;
  }
  const size_t *vb = pccl_blocks_split(sb, f.P, a->count);
  if (!vb) return PCCL_ERR_NO_MEMORY;
  pccl_place_t src = {PCCL_BUF_SEND, 0}, out = {PCCL_BUF_RECV, 0};
  size_t folded = pccl_sb_tmp(sb, a->count);
  if (pccl_fold_in(sb, &g, &f, pccl_rg(PCCL_BUF_TMP, folded, a->count), in) > 0)
    src = (pccl_place_t){PCCL_BUF_TMP, folded};
  pccl_place_t acc = {PCCL_BUF_TMP, pccl_recmul_reduce_scatter_core(sb, &g, &f, vb, src)};
  pccl_sb_copy(sb, pccl_block(out, vb, f.v), pccl_block(acc, vb, f.v));
  pccl_recmul_allgather_core(sb, &g, &f, vb, out);
  for (int m = pccl_fold_first(&f, f.group); m < leader; m++) pccl_sb_send(sb, m, all);
  return PCCL_OK;
}

pccl_status_t pccl_gen_reduce_rsgather(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  pccl_group_t g;
  const size_t *boff = pccl_blocks_split(sb, a->nranks, a->count);
  if (!boff || !pccl_group_rooted(sb, a, &g)) return PCCL_ERR_NO_MEMORY;
  pccl_place_t in = {PCCL_BUF_SEND, 0}, out = {PCCL_BUF_RECV, 0};
  /* The root reduces its part (block 0) straight into the result; the
   * others into scratch, from where the gather takes it. */
  pccl_place_t part = out;
  if (g.me != 0) part = (pccl_place_t){PCCL_BUF_TMP, pccl_sb_tmp(sb, boff[g.me + 1] - boff[g.me])};
  pccl_ring_reduce_scatter(sb, &g, boff, in, part);
  pccl_binomial_gather(sb, &g, boff, g.me == 0 ? NULL : &part, out);
  return PCCL_OK;
}
