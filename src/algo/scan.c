/* scan.c - prefix reductions: scan (ranks 0..r into rank r) and exscan
 * (ranks 0..r-1; rank 0's result is left alone).
 *
 * recdbl: recursive doubling after Hillis and Steele. In round j (d = 2^j)
 * rank r sends its running partial, the reduction over ranks (r - 2d, r]
 * clipped at 0, to r + d, and folds in the one r - d sends it; after
 * ceil(log2 p) rounds the partial is r's prefix. exscan keeps the prefix of
 * the ranks below r beside it, which every received partial joins too. The
 * received partial always covers lower ranks, so it is the left operand.
 * Each round receives into scratch and reduces afterwards: a fused receive
 * would have to wait for this round's send of the same vector to finish,
 * which with rendezvous messages chains every rank to the one above it.
 * Any p; ceil(log2 p) (alpha + n beta + n gamma), a second n gamma for exscan.
 *
 * chain: rank r receives the prefix of ranks below it from r - 1 piece by
 * piece, folds in its own and passes each piece on to r + 1 at once, so the
 * pieces flow down the ranks as through a pipeline:
 * (p - 2 + pieces) (alpha + n/pieces (beta + gamma)), each rank sending the
 * vector once. For large vectors, where recdbl's log2 p whole vectors cost
 * more than the pipeline's fill. */
#include "algo.h"

/* Pieces of the chain's pipeline: small enough that the fill is short,
 * large enough that a piece's handshake is paid for. */
#define CHAIN_PIECE_BYTES ((size_t)128 << 10)

static pccl_region_t tmp_vec(pccl_sb_t *sb, size_t n) {
  return pccl_rg(PCCL_BUF_TMP, pccl_sb_tmp(sb, n), n);
}

static pccl_status_t scan_recdbl(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  int p = a->nranks, r = a->rank;
  size_t n = a->count;
  pccl_region_t x = pccl_rg(PCCL_BUF_RECV, 0, n), got[2];
  pccl_sb_copy(sb, x, pccl_rg(PCCL_BUF_SEND, 0, n));
  if (p > 1 && r > 0) got[0] = tmp_vec(sb, n), got[1] = r > 1 ? tmp_vec(sb, n) : got[0];
  for (int d = 1, j = 0; d < p; d *= 2, j ^= 1) {
    if (r + d < p) pccl_sb_send(sb, r + d, x);
    if (r - d < 0) continue;
    pccl_sb_recv(sb, r - d, got[j]);
    pccl_sb_reduce(sb, x, got[j], x);
  }
  return PCCL_OK;
}

static pccl_status_t exscan_recdbl(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  int p = a->nranks, r = a->rank;
  size_t n = a->count;
  pccl_region_t x = pccl_rg(PCCL_BUF_RECV, 0, n); /* ranks below r; nothing yet */
  pccl_region_t y = pccl_rg(PCCL_BUF_SEND, 0, n); /* the partial r sends */
  pccl_region_t got[2], partial = {0};
  int have = 0;
  if (r > 0) got[0] = tmp_vec(sb, n), got[1] = r > 1 ? tmp_vec(sb, n) : got[0];
  for (int d = 1, j = 0; d < p; d *= 2, j ^= 1) {
    if (r + d < p) pccl_sb_send(sb, r + d, y);
    if (r - d < 0) continue;
    pccl_sb_recv(sb, r - d, got[j]);
    /* the partial first: in place, x is y's memory until x is written */
    if (r + 2 * d < p) {
      if (partial.len == 0) partial = tmp_vec(sb, n);
      pccl_sb_reduce(sb, partial, got[j], y);
      y = partial;
    }
    if (have)
      pccl_sb_reduce(sb, x, got[j], x);
    else
      pccl_sb_copy(sb, x, got[j]);
    have = 1;
  }
  return PCCL_OK;
}

pccl_status_t pccl_gen_scan_recdbl(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  return a->coll == PCCL_COLL_SCAN ? scan_recdbl(sb, a) : exscan_recdbl(sb, a);
}

/* One piece of the chain: elements [o, o + m). */
static void chain_piece(pccl_sb_t *sb, const pccl_coll_args_t *a, pccl_region_t staging,
                        pccl_region_t partial, size_t o, size_t m) {
  int p = a->nranks, r = a->rank, last = r == p - 1;
  pccl_region_t in = pccl_rg(PCCL_BUF_SEND, o, m), out = pccl_rg(PCCL_BUF_RECV, o, m);
  pccl_region_t got = pccl_rg(PCCL_BUF_TMP, staging.off + o, m);
  if (a->coll == PCCL_COLL_SCAN) {
    if (r == 0) {
      pccl_sb_copy(sb, out, in);
      if (!last) pccl_sb_send(sb, r + 1, in);
      return;
    }
    pccl_sb_recv_reduce(sb, r - 1, out, got, in, 0);
    if (!last) pccl_sb_send(sb, r + 1, out);
    return;
  }
  if (r == 0) {
    if (!last) pccl_sb_send(sb, r + 1, in);
    return;
  }
  if (last || !a->inplace) got = out; /* no input to keep, or it lies elsewhere */
  pccl_sb_recv(sb, r - 1, got);
  if (!last) {
    pccl_region_t sum = pccl_rg(PCCL_BUF_TMP, partial.off + o, m);
    pccl_sb_reduce(sb, sum, got, in);
    pccl_sb_send(sb, r + 1, sum);
  }
  pccl_sb_copy(sb, out, got);
}

pccl_status_t pccl_gen_scan_chain(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  size_t n = a->count, piece = CHAIN_PIECE_BYTES / pccl_sb_elem_size(sb);
  if (piece == 0) piece = 1;
  pccl_region_t staging = {0}, partial = {0};
  int middle = a->rank > 0 && a->rank < a->nranks - 1;
  if (a->coll == PCCL_COLL_SCAN ? a->rank > 0 : middle && a->inplace) staging = tmp_vec(sb, n);
  if (a->coll == PCCL_COLL_EXSCAN && middle) partial = tmp_vec(sb, n);
  for (size_t o = 0; o < n; o += piece)
    chain_piece(sb, a, staging, partial, o, n - o < piece ? n - o : piece);
  return PCCL_OK;
}
