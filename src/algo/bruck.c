/* bruck.c - Bruck's all-gather.
 *
 * Each rank keeps the blocks in rotated order (slot j holds the block of rank
 * me+j) in a scratch vector. In round k (distance d = 2^k) it sends its first
 * min(d, p-d) slots to rank me-d and receives as many from rank me+d into
 * slots d onwards. After ceil(log2 p) rounds all p slots are full, for any p;
 * a final rotation puts the blocks in rank order. Blocks may differ in size:
 * the slots of a rotated vector are then found by prefix sums.
 *
 * Cost (n bytes in total): ceil(log2 p) alpha + (p-1)/p n beta, plus the
 * local copies of the rotation (2 n). */
#include "algo.h"

/* Start of slot j in member x's rotated vector (slot j holds block x+j). */
static size_t slot_start(const size_t *boff, int p, int x, int j) {
  if (x + j <= p) return boff[x + j] - boff[x];
  return (boff[p] - boff[x]) + (boff[x + j - p] - boff[0]); /* wraps past member p-1 */
}

void pccl_bruck_allgather(pccl_sb_t *sb, const pccl_group_t *g, const size_t *boff,
                          const pccl_place_t *in, pccl_place_t out) {
  int p = g->size, me = g->me;
  size_t total = boff[p] - boff[0];
  size_t t = pccl_sb_tmp(sb, total);
  pccl_region_t mine = pccl_block(out, boff, me);
  pccl_region_t from = in ? pccl_rg(in->buf, in->off, mine.len) : mine;
  pccl_sb_copy(sb, pccl_rg(PCCL_BUF_TMP, t, mine.len), from);
  for (int d = 1; d < p; d *= 2) {
    int nb = d < p - d ? d : p - d, to = (me - d + p) % p;
    /* My first nb slots become slots d.. of member me-d: the same blocks. */
    pccl_sb_send(sb, pccl_group_rank(g, to), pccl_rg(PCCL_BUF_TMP, t, slot_start(boff, p, me, nb)));
    size_t lo = slot_start(boff, p, me, d), hi = slot_start(boff, p, me, d + nb);
    pccl_sb_recv(sb, pccl_group_rank(g, (me + d) % p), pccl_rg(PCCL_BUF_TMP, t + lo, hi - lo));
  }
  size_t head = boff[p] - boff[me]; /* slots 0 .. p-me-1 are members me .. p-1 */
  pccl_sb_copy(sb, pccl_rg(out.buf, out.off + boff[me], head), pccl_rg(PCCL_BUF_TMP, t, head));
  pccl_sb_copy(sb, pccl_rg(out.buf, out.off + boff[0], boff[me] - boff[0]),
               pccl_rg(PCCL_BUF_TMP, t + head, boff[me] - boff[0]));
}

pccl_status_t pccl_gen_allgather_bruck(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  return pccl_flat_allgather(sb, a, pccl_bruck_allgather);
}
