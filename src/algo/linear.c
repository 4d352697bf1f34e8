/* linear.c - gatherv and scatterv straight between the root and each rank.
 *
 * MPI gives a gatherv's and a scatterv's counts to the root only: the other
 * ranks know their own block and nothing of their peers', so no rank but
 * the root could forward a subtree's blocks as a tree does. Every block
 * therefore moves in one message between its rank and the root, all of
 * them at once (the builder sees they are independent).
 *
 * Cost at the root (n_i elements from rank i): (p-1) alpha + sum n_i beta. */
#include "algo.h"

/* The root's blocks: packed offsets and places (NULL boff: blocks of
 * count each, packed, as the simulator asks). */
static int root_blocks(pccl_sb_t *sb, const pccl_coll_args_t *a, const size_t **boff,
                       const size_t **at) {
  *boff = a->boff ? a->boff : pccl_blocks_equal(sb, a->nranks, a->count);
  *at = a->displs ? a->displs : *boff;
  return *boff != NULL;
}

pccl_status_t pccl_gen_gatherv_linear(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  int me = a->rank;
  if (me != a->root) { /* count: this rank's block */
    pccl_sb_send(sb, a->root, pccl_rg(PCCL_BUF_SEND, 0, a->count));
    return PCCL_OK;
  }
  const size_t *boff, *at;
  if (!root_blocks(sb, a, &boff, &at)) return PCCL_ERR_NO_MEMORY;
  if (!a->inplace)
    pccl_sb_copy(sb, pccl_rg(PCCL_BUF_RECV, at[me], boff[me + 1] - boff[me]),
                 pccl_rg(PCCL_BUF_SEND, 0, boff[me + 1] - boff[me]));
  for (int r = 0; r < a->nranks; r++)
    if (r != me) pccl_sb_recv(sb, r, pccl_rg(PCCL_BUF_RECV, at[r], boff[r + 1] - boff[r]));
  return PCCL_OK;
}

pccl_status_t pccl_gen_scatterv_linear(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  int me = a->rank;
  if (me != a->root) {
    pccl_sb_recv(sb, a->root, pccl_rg(PCCL_BUF_RECV, 0, a->count));
    return PCCL_OK;
  }
  const size_t *boff, *at;
  if (!root_blocks(sb, a, &boff, &at)) return PCCL_ERR_NO_MEMORY;
  for (int r = 0; r < a->nranks; r++)
    if (r != me) pccl_sb_send(sb, r, pccl_rg(PCCL_BUF_SEND, at[r], boff[r + 1] - boff[r]));
  if (!a->inplace)
    pccl_sb_copy(sb, pccl_rg(PCCL_BUF_RECV, 0, boff[me + 1] - boff[me]),
                 pccl_rg(PCCL_BUF_SEND, at[me], boff[me + 1] - boff[me]));
  return PCCL_OK;
}
