/* rabenseifner.c - Rabenseifner's all-reduce: recursive-halving
 * reduce-scatter of the vector into 2^k near-equal parts, then
 * recursive-doubling all-gather of the parts. Any p through the fold of
 * recdbl.c (the extra ranks hand in their whole vector and get the result
 * back). Each part is reduced by one rank only, so all ranks get identical
 * bits.
 *
 * Cost (n bytes, p a power of two):
 *   2 log2 p alpha + 2 (p-1)/p n beta + (p-1)/p n gamma
 * plus 2 alpha + 2 n beta + n gamma when p is not a power of two. */
#include "algo.h"

pccl_status_t pccl_gen_allreduce_rabenseifner(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  pccl_group_t g = pccl_group_all(a);
  pccl_fold_t f = pccl_fold(a->nranks, a->rank);
  pccl_region_t in = pccl_rg(PCCL_BUF_SEND, 0, a->count);
  pccl_region_t all = pccl_rg(PCCL_BUF_RECV, 0, a->count);
  if (f.v < 0) {
    pccl_sb_send(sb, f.partner, in);
    pccl_sb_recv(sb, f.partner, all);
    return PCCL_OK;
  }
  size_t *vb = pccl_blocks_split(sb, f.pof2, a->count);
  if (!vb) return PCCL_ERR_NO_MEMORY;
  pccl_place_t src = {PCCL_BUF_SEND, 0}, out = {PCCL_BUF_RECV, 0};
  if (f.partner >= 0) {
    pccl_region_t got = pccl_rg(PCCL_BUF_TMP, pccl_sb_tmp(sb, a->count), a->count);
    pccl_sb_recv_reduce(sb, f.partner, got, got, in, 0);
    src = (pccl_place_t){PCCL_BUF_TMP, got.off};
  }
  pccl_place_t acc = {PCCL_BUF_TMP, pccl_rechalv_reduce_scatter_pow2(sb, &g, &f, vb, src)};
  pccl_sb_copy(sb, pccl_block(out, vb, f.v), pccl_block(acc, vb, f.v));
  pccl_recdbl_allgather_pow2(sb, &g, &f, vb, out);
  if (f.partner >= 0) pccl_sb_send(sb, f.partner, all);
  return PCCL_OK;
}
