/* recdbl.c - recursive doubling all-gather and all-reduce, and the fold that
 * lets every power-of-two algorithm run on any number of ranks.
 *
 * Recursive doubling: in round j (j = 0 .. log2 p - 1) rank v exchanges with
 * v xor 2^j everything it has so far; data doubles each round.
 * Non-powers of two (the fold, as in MPICH): with r = p - 2^floor(log2 p), the
 * first 2r ranks pair up; the even one of each pair hands its part to the odd
 * one and waits; the remaining 2^k ranks run the power-of-two algorithm as
 * "virtual ranks"; at the end each odd rank hands the result back. Virtual
 * ranks keep the original order, so each one's data stays contiguous.
 *
 * Cost (n bytes in total, p a power of two):
 *   all-gather: log2 p alpha + (p-1)/p n beta
 *   all-reduce: log2 p (alpha + n beta + n gamma)
 * plus, when p is not a power of two, 2 alpha + the part size in beta (twice). */
#include "algo.h"

pccl_fold_t pccl_fold(int p, int me) {
  pccl_fold_t f;
  f.p = p;
  f.pof2 = 1;
  while (f.pof2 <= p / 2) f.pof2 *= 2;
  f.r = p - f.pof2;
  if (me < 2 * f.r) {
    f.v = me % 2 ? me / 2 : -1;
    f.partner = me % 2 ? me - 1 : me + 1;
  } else {
    f.v = me - f.r;
    f.partner = -1;
  }
  return f;
}

int pccl_fold_real(const pccl_fold_t *f, int v) { return v < f->r ? 2 * v + 1 : v + f->r; }

/* Boundaries of each virtual rank's part when member i owns block i. */
size_t *pccl_fold_blocks(pccl_sb_t *sb, const pccl_fold_t *f, const size_t *boff) {
  size_t *vb = pccl_sb_scratch(sb, ((size_t)f->pof2 + 1) * sizeof(size_t));
  if (!vb) return NULL;
  for (int v = 0; v < f->pof2; v++) vb[v] = boff[v < f->r ? 2 * v : v + f->r];
  vb[f->pof2] = boff[f->p];
  return vb;
}

static pccl_region_t vrange(pccl_place_t at, const size_t *vb, int lo, int n) {
  return pccl_rg(at.buf, at.off + vb[lo], vb[lo + n] - vb[lo]);
}

void pccl_recdbl_allgather_pow2(pccl_sb_t *sb, const pccl_group_t *g, const pccl_fold_t *f,
                                const size_t *vb, pccl_place_t out) {
  for (int mask = 1; mask < f->pof2; mask <<= 1) {
    int vpeer = f->v ^ mask;
    int peer = pccl_group_rank(g, pccl_fold_real(f, vpeer));
    pccl_sb_send(sb, peer, vrange(out, vb, f->v & ~(mask - 1), mask));
    pccl_sb_recv(sb, peer, vrange(out, vb, vpeer & ~(mask - 1), mask));
  }
}

void pccl_recdbl_allgather(pccl_sb_t *sb, const pccl_group_t *g, const size_t *boff,
                           const pccl_place_t *in, pccl_place_t out) {
  pccl_fold_t f = pccl_fold(g->size, g->me);
  size_t *vb = pccl_fold_blocks(sb, &f, boff);
  if (!vb) return; /* the builder has recorded the failure */
  pccl_region_t mine = pccl_block(out, boff, g->me);
  pccl_region_t from = in ? pccl_rg(in->buf, in->off, mine.len) : mine;
  pccl_region_t all = pccl_rg(out.buf, out.off + boff[0], boff[g->size] - boff[0]);
  if (f.v < 0) {
    int partner = pccl_group_rank(g, f.partner);
    pccl_sb_send(sb, partner, from);
    pccl_sb_recv(sb, partner, all); /* my own block comes back with the rest */
    return;
  }
  if (f.partner >= 0) pccl_sb_recv(sb, pccl_group_rank(g, f.partner), pccl_block(out, boff, f.partner));
  pccl_sb_copy(sb, mine, from);
  pccl_recdbl_allgather_pow2(sb, g, &f, vb, out);
  if (f.partner >= 0) pccl_sb_send(sb, pccl_group_rank(g, f.partner), all);
}

pccl_status_t pccl_gen_allgather_recdbl(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  return pccl_flat_allgather(sb, a, pccl_recdbl_allgather);
}

/* Results are bit-identical on every rank: each pairwise reduction puts the
 * lower virtual rank's operand first on both sides. Out of place, a rank
 * outside the fold sends its input itself in the first round and folds the
 * partner's message straight into the output (no copy of the input first);
 * later rounds, and in place, land the message in TMP first: acc is still
 * being sent to the same peer, and a receive that waited for that send
 * would deadlock the pair. */
pccl_status_t pccl_gen_allreduce_recdbl(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  pccl_fold_t f = pccl_fold(a->nranks, a->rank);
  pccl_region_t in = pccl_rg(PCCL_BUF_SEND, 0, a->count);
  pccl_region_t acc = pccl_rg(PCCL_BUF_RECV, 0, a->count);
  if (f.v < 0) {
    pccl_sb_send(sb, f.partner, in);
    pccl_sb_recv(sb, f.partner, acc);
    return PCCL_OK;
  }
  pccl_region_t got = pccl_rg(PCCL_BUF_TMP, pccl_sb_tmp(sb, a->count), a->count);
  const int direct = f.partner < 0 && !a->inplace && f.pof2 > 1;
  if (f.partner >= 0)
    pccl_sb_recv_reduce(sb, f.partner, acc, got, in, 0);
  else if (!direct)
    pccl_sb_copy(sb, acc, in);
  for (int mask = 1; mask < f.pof2; mask <<= 1) {
    int vpeer = f.v ^ mask;
    int peer = pccl_fold_real(&f, vpeer);
    if (direct && mask == 1) {
      pccl_sb_send(sb, peer, in);
      pccl_sb_recv_reduce(sb, peer, acc, got, in, vpeer > f.v);
      continue;
    }
    pccl_sb_send(sb, peer, acc);
    pccl_sb_recv(sb, peer, got);
    if (vpeer < f.v)
      pccl_sb_reduce(sb, acc, got, acc);
    else
      pccl_sb_reduce(sb, acc, acc, got);
  }
  if (f.partner >= 0) pccl_sb_send(sb, f.partner, acc);
  return PCCL_OK;
}
