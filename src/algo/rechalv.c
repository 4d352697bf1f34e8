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
    pccl_sb_recv(sb, peer, got);
    pccl_sb_reduce(sb, pccl_rg(PCCL_BUF_TMP, acc.off + vb[keep], kept.len), kept, got);
    src = acc;
    lo = keep;
  }
  return acc.off;
}

pccl_status_t pccl_gen_rs_rechalv(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  pccl_group_t g = pccl_group_all(a);
  pccl_fold_t f = pccl_fold(a->nranks, a->rank);
  size_t *boff = pccl_blocks_equal(sb, a->nranks, a->count);
  size_t *vb = boff ? pccl_fold_blocks(sb, &f, boff) : NULL;
  if (!vb) return PCCL_ERR_NO_MEMORY;
  size_t n = boff[a->nranks];
  pccl_region_t out = pccl_rg(PCCL_BUF_RECV, 0, a->count);
  pccl_region_t all = pccl_rg(PCCL_BUF_SEND, 0, n);
  if (f.v < 0) {
    pccl_sb_send(sb, f.partner, all);
    pccl_sb_recv(sb, f.partner, out);
    return PCCL_OK;
  }
  pccl_place_t src = {PCCL_BUF_SEND, 0};
  if (f.partner >= 0) {
    pccl_region_t got = pccl_rg(PCCL_BUF_TMP, pccl_sb_tmp(sb, n), n);
    pccl_sb_recv(sb, f.partner, got);
    pccl_sb_reduce(sb, got, got, all);
    src = (pccl_place_t){PCCL_BUF_TMP, got.off};
  }
  pccl_place_t acc = {PCCL_BUF_TMP, pccl_rechalv_reduce_scatter_pow2(sb, &g, &f, vb, src)};
  if (f.partner >= 0) pccl_sb_send(sb, f.partner, pccl_block(acc, boff, f.partner));
  pccl_sb_copy(sb, out, pccl_block(acc, boff, a->rank));
  return PCCL_OK;
}
