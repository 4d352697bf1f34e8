/* rabenseifner.c - Rabenseifner's all-reduce, radix k: recursive multiplying
 * reduce-scatter of the vector into P = k^r near-equal parts, then recursive
 * multiplying all-gather of the parts (recmul.c); k = 2 is the classic
 * halving-then-doubling. Any p through the fold of recmul.c (the extra ranks
 * hand in their whole vector and get the result back). Each part is reduced
 * by one rank only, so all ranks get identical bits.
 *
 * Cost (n bytes, p = k^r):
 *   2 r alpha + 2 (p-1)/p n beta + (p-1)/p n gamma
 * plus 2 alpha + 2 n beta + n gamma per extra rank of a group when p is not
 * a power of k. */
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
  size_t *vb = pccl_blocks_split(sb, f.P, a->count);
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
