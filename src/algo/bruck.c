/* bruck.c - Bruck's all-gather.
 *
 * Each rank keeps the blocks in rotated order (slot j holds the block of rank
 * me+j) in a scratch vector. In round k (distance d = 2^k) it sends its first
 * min(d, p-d) slots to rank me-d and receives as many from rank me+d into
 * slots d onwards. After ceil(log2 p) rounds all p slots are full, for any p;
 * a final rotation puts the blocks in rank order.
 *
 * Cost (n bytes in total): ceil(log2 p) alpha + (p-1)/p n beta, plus the
 * local copies of the rotation (2 n). */
#include "algo.h"

pccl_status_t pccl_gen_allgather_bruck(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  int p = a->nranks, me = a->rank;
  size_t c = a->count;
  size_t t = pccl_sb_tmp(sb, (size_t)p * c);
  pccl_sb_copy(sb, pccl_rg(PCCL_BUF_TMP, t, c), pccl_rg(PCCL_BUF_SEND, 0, c));
  for (int d = 1; d < p; d *= 2) {
    size_t nb = (size_t)(d < p - d ? d : p - d);
    pccl_sb_send(sb, (me - d + p) % p, pccl_rg(PCCL_BUF_TMP, t, nb * c));
    pccl_sb_recv(sb, (me + d) % p, pccl_rg(PCCL_BUF_TMP, t + (size_t)d * c, nb * c));
  }
  size_t head = (size_t)(p - me) * c; /* slots 0 .. p-me-1 are ranks me .. p-1 */
  pccl_sb_copy(sb, pccl_rg(PCCL_BUF_RECV, (size_t)me * c, head), pccl_rg(PCCL_BUF_TMP, t, head));
  pccl_sb_copy(sb, pccl_rg(PCCL_BUF_RECV, 0, (size_t)me * c),
               pccl_rg(PCCL_BUF_TMP, t + head, (size_t)me * c));
  return PCCL_OK;
}
