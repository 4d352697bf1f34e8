/* rechalv.c - recursive halving reduce-scatter.
 *
 * Among 2^k (virtual) ranks: in round j, rank v and v xor 2^(k-1-j) split the
 * range they are both responsible for; each sends the half the other keeps
 * and adds what it receives into the half it keeps. After k rounds each
 * virtual rank holds its own part, fully reduced. Any p: the fold of recdbl.c
 * (the even rank of each of the first r pairs sends its whole vector to the
 * odd one first, and gets its block back at the end).
 *
 * Cost (n bytes in total, p a power of two):
 *   log2 p alpha + (p-1)/p n (beta + gamma)
 * plus, when p is not a power of two, alpha + n (beta + gamma) before and
 * alpha + n/p beta after. */
#include "algo.h"

size_t pccl_rechalv_reduce_scatter_pow2(pccl_sb_t *sb, const pccl_group_t *g,
                                        const pccl_fold_t *f, const size_t *vb, pccl_place_t in) {
  size_t n = vb[f->pof2] - vb[0];
  size_t acc_off = pccl_sb_tmp(sb, n);
  pccl_place_t acc = {PCCL_BUF_TMP, acc_off - vb[0]};
  if (f->pof2 == 1) {
    pccl_sb_copy(sb, pccl_rg(PCCL_BUF_TMP, acc_off, n), pccl_rg(in.buf, in.off + vb[0], n));
    return acc_off - vb[0];
  }
  size_t got_off = pccl_sb_tmp(sb, n);
  pccl_place_t src = in;
  int lo = 0;
  for (int half = f->pof2 / 2; half >= 1; half /= 2) {
    int vpeer = f->v ^ half;
    int keep = (f->v & half) ? lo + half : lo, give = (f->v & half) ? lo : lo + half;
    pccl_region_t kept = pccl_rg(src.buf, src.off + vb[keep], vb[keep + half] - vb[keep]);
    pccl_region_t given = pccl_rg(src.buf, src.off + vb[give], vb[give + half] - vb[give]);
    pccl_region_t got = pccl_rg(PCCL_BUF_TMP, got_off, kept.len);
    int peer = pccl_group_rank(g, pccl_fold_real(f, vpeer));
    pccl_sb_send(sb, peer, given);
    pccl_sb_recv_reduce(sb, peer, pccl_rg(PCCL_BUF_TMP, acc.off + vb[keep], kept.len), got, kept, 1);
    src = acc;
    lo = keep;
  }
  return acc.off;
}

void pccl_rechalv_reduce_scatter(pccl_sb_t *sb, const pccl_group_t *g, const size_t *boff,
                                 pccl_place_t in, pccl_place_t out) {
  pccl_fold_t f = pccl_fold(g->size, g->me);
  size_t *vb = pccl_fold_blocks(sb, &f, boff);
  if (!vb) return; /* the builder has recorded the failure */
  size_t n = boff[g->size] - boff[0];
  pccl_region_t result = pccl_rg(out.buf, out.off, boff[g->me + 1] - boff[g->me]);
  pccl_region_t all = pccl_rg(in.buf, in.off + boff[0], n);
  if (f.v < 0) {
    int partner = pccl_group_rank(g, f.partner);
    pccl_sb_send(sb, partner, all);
    pccl_sb_recv(sb, partner, result);
    return;
  }
  pccl_place_t src = in;
  if (f.partner >= 0) {
    /* `got` mirrors the layout of `in` from boff[0] on. */
    size_t got = pccl_sb_tmp(sb, n);
    pccl_region_t staged = pccl_rg(PCCL_BUF_TMP, got, n);
    pccl_sb_recv_reduce(sb, pccl_group_rank(g, f.partner), staged, staged, all, 0);
    src = (pccl_place_t){PCCL_BUF_TMP, got - boff[0]};
  }
  pccl_place_t acc = {PCCL_BUF_TMP, pccl_rechalv_reduce_scatter_pow2(sb, g, &f, vb, src)};
  if (f.partner >= 0)
    pccl_sb_send(sb, pccl_group_rank(g, f.partner), pccl_block(acc, boff, f.partner));
  pccl_sb_copy(sb, result, pccl_block(acc, boff, g->me));
}

pccl_status_t pccl_gen_rs_rechalv(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  return pccl_flat_reduce_scatter(sb, a, pccl_rechalv_reduce_scatter);
}
