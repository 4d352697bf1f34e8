/* pairwise.c - pairwise-exchange all-to-all.
 *
 * In step s (1 .. p-1) rank me sends its block for me+s and receives the
 * block from me-s, so every pair exchanges once and no rank receives from
 * two senders in one step. Any p. In place, received blocks land in scratch
 * and are copied over the send buffer after every block has been sent.
 *
 * Cost (n bytes per block): (p-1) (alpha + n beta). */
#include "algo.h"

pccl_status_t pccl_gen_alltoall_pairwise(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  int p = a->nranks, me = a->rank;
  size_t c = a->count;
  pccl_place_t in = {PCCL_BUF_SEND, 0}, out = {PCCL_BUF_RECV, 0};
  size_t *boff = pccl_blocks_equal(sb, p, c);
  if (!boff) return PCCL_ERR_NO_MEMORY;
  pccl_place_t land = out;
  if (a->inplace) land = (pccl_place_t){PCCL_BUF_TMP, pccl_sb_tmp(sb, (size_t)p * c)};
  pccl_sb_copy(sb, pccl_block(out, boff, me), pccl_block(in, boff, me));
  for (int s = 1; s < p; s++) {
    int to = (me + s) % p, from = (me - s + p) % p;
    pccl_sb_send(sb, to, pccl_block(in, boff, to));
    pccl_sb_recv(sb, from, pccl_block(land, boff, from));
  }
  if (a->inplace)
    for (int b = 0; b < p; b++)
      if (b != me) pccl_sb_copy(sb, pccl_block(out, boff, b), pccl_block(land, boff, b));
  return PCCL_OK;
}
