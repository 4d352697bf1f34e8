/* pairwise.c - pairwise-exchange all-to-all and all-to-allv.
 *
 * In step s (1 .. p-1) rank me sends its block for me+s and receives the
 * block from me-s, so every pair exchanges once and no rank receives from
 * two senders in one step. Any p. In place, the all-to-all's received
 * blocks land in scratch and are copied over the send buffer after every
 * block has been sent; the all-to-allv's in-place form swaps each block
 * with its peer through a bounded piece of scratch instead (below).
 *
 * Cost (n bytes per block): (p-1) (alpha + n beta). */
#include "algo.h"

pccl_status_t pccl_gen_alltoall_pairwise(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  int p = a->nranks, me = a->rank;
  size_t c = a->count;
  pccl_place_t in = {PCCL_BUF_SEND, 0}, out = {PCCL_BUF_RECV, 0};
  const size_t *boff = pccl_blocks_equal(sb, p, c);
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

/* The in-place all-to-allv's scratch: each block is swapped with its peer
 * piece by piece through this much TMP, so the scratch stays bounded
 * whatever the blocks' sizes (the swap's two sides hold blocks of one size,
 * so both cut them alike). */
#define PCCL_A2AV_PIECE_BYTES ((size_t)64 << 10)

/* Swaps the n elements at RECV off with rank peer's block: every piece is
 * sent, its partner received into scratch, then copied over the piece. */
static void swap_block(pccl_sb_t *sb, int peer, size_t off, size_t n, pccl_region_t scratch) {
  for (size_t done = 0; done < n; done += scratch.len) {
    size_t m = n - done < scratch.len ? n - done : scratch.len;
    pccl_region_t piece = pccl_rg(PCCL_BUF_RECV, off + done, m), tmp = pccl_rg(PCCL_BUF_TMP, scratch.off, m);
    pccl_sb_send(sb, peer, piece);
    pccl_sb_recv(sb, peer, tmp);
    pccl_sb_copy(sb, piece, tmp);
  }
}

pccl_status_t pccl_gen_alltoallv_pairwise(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  int p = a->nranks, me = a->rank;
  const size_t *v = a->a2a; /* scounts | sdispls | rcounts | rdispls */
  if (!v) { /* blocks of count, packed (as the simulator asks) */
    size_t *eq = pccl_sb_scratch(sb, 4 * (size_t)p * sizeof *eq);
    if (!eq) return PCCL_ERR_NO_MEMORY;
    for (int i = 0; i < p; i++)
      eq[i] = eq[2 * p + i] = a->count, eq[p + i] = eq[3 * p + i] = (size_t)i * a->count;
    v = eq;
  }
  const size_t *sc = v, *sd = v + p, *rc = v + 2 * p, *rd = v + 3 * p;
  if (a->inplace) {
    size_t largest = 0, piece = PCCL_A2AV_PIECE_BYTES / pccl_sb_elem_size(sb);
    for (int j = 0; j < p; j++)
      if (j != me && rc[j] > largest) largest = rc[j];
    pccl_region_t scratch = pccl_rg(PCCL_BUF_TMP, 0, largest < piece ? largest : piece);
    if (scratch.len) scratch.off = pccl_sb_tmp(sb, scratch.len);
    /* Each receive into the scratch waits for the copy out of it, which
     * waits for the piece's send to complete, which a rendezvous transport
     * completes only once the peer receives it: so the peers go in rank
     * order, and every rank takes its pairs in one global order (the
     * lower rank first), which cannot close a cycle of waits. */
    for (int peer = 0; peer < p; peer++)
      if (peer != me) swap_block(sb, peer, rd[peer], rc[peer], scratch);
    return PCCL_OK;
  }
  pccl_sb_copy(sb, pccl_rg(PCCL_BUF_RECV, rd[me], rc[me]), pccl_rg(PCCL_BUF_SEND, sd[me], sc[me]));
  for (int s = 1; s < p; s++) {
    int to = (me + s) % p, from = (me - s + p) % p;
    pccl_sb_send(sb, to, pccl_rg(PCCL_BUF_SEND, sd[to], sc[to]));
    pccl_sb_recv(sb, from, pccl_rg(PCCL_BUF_RECV, rd[from], rc[from]));
  }
  return PCCL_OK;
}
