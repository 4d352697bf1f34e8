/* zcoll.c - compressed (lossy) collectives, after gZCCL: the data crosses
 * the network as error-bounded streams (COMPRESS / DECOMPRESS steps, slots
 * sent with their run-time length). Only pccl_*_lossy calls run them.
 *
 * Every rank ends with bit-identical results: wherever two ranks combine the
 * same two values, both combine the decoded forms, in rank order.
 *
 * Lossy stages: each generator records, with pccl_sb_lossy_stages, how many
 * compressions can feed one element of the result in the worst case; the
 * caller divides the user's bound by it, so the final error stays within
 * the bound (for sum, average, min and max; errors of decoded operands add
 * at most). e is the per-compression bound below.
 *
 * zrecdbl all-reduce: recursive doubling on the whole vector, compressing it
 * once per round (log2 p compressions, gZCCL's ReDoub). p not a power of two:
 * of the first 2r ranks (r = p - 2^floor(log2 p)), even ones hand their data
 * to the odd one above and get the result back at the end. Each round both
 * partners replace their vector by its decoded form before adding, so they
 * add the same two values. Error: 2(P-1) e for P = 2^floor(log2 p), plus
 * P + 1 when r > 0. Cost: log2 p (alpha + n' beta) + (log2 p)(c + 2d + gamma)
 * with n' the compressed size, c / d compression / decompression of n.
 *
 * zring all-reduce: ring reduce-scatter compressing each partial sum before it
 * moves (p-1 compressions of n/p), then a ring all-gather that compresses
 * each block once at its owner and forwards the stream as is (p-1
 * decompressions). Error: p e.
 * zring all-gather: the all-gather half (error e); zring reduce-scatter: the
 * reduce-scatter half (error (p-1) e).
 * zbinomial scatter: the root compresses each destination's block on its own
 * and sends every block of a subtree down the binomial tree as its own
 * stream, so no block needs locating in a concatenation; the root copies its
 * own block exactly. Error: e.
 *
 * Every vector is compressed in chunks of PCCL_ZCHUNK elements, each its own
 * slot and message: a chunk travels while the next is compressed, the
 * receiver decodes a chunk while the next arrives, and no stream exceeds a
 * message. Chunks do not change the stage counts (they hold other elements). */
#include "algo.h"

#define PCCL_ZCHUNK ((size_t)1 << 18)

/* Slots of a region cut into chunks: chunk c covers elements
 * [c * PCCL_ZCHUNK, ...) of it. */
typedef struct {
  pccl_slot_t *s;
  size_t n;
} zslots_t;

/* An empty region has no chunk: nothing is compressed or sent for it (both
 * sides know its length), so a ring's empty rounds emit no steps. */
static size_t nchunks(size_t len) { return (len + PCCL_ZCHUNK - 1) / PCCL_ZCHUNK; }

static size_t chunk_len(size_t len, size_t c) {
  size_t off = c * PCCL_ZCHUNK;
  return len - off < PCCL_ZCHUNK ? len - off : PCCL_ZCHUNK;
}

static pccl_region_t chunk(pccl_region_t r, size_t c) {
  return pccl_rg((pccl_buf_t)r.buf, r.off + c * PCCL_ZCHUNK, chunk_len(r.len, c));
}

static zslots_t zslots(pccl_sb_t *sb, size_t len) {
  zslots_t z = {NULL, nchunks(len)};
  if (z.n == 0) return z;
  z.s = pccl_sb_scratch(sb, z.n * sizeof(pccl_slot_t));
  if (!z.s) z.n = 0; /* the builder fails the schedule */
  return z;
}

static zslots_t zcompress(pccl_sb_t *sb, pccl_region_t src) {
  zslots_t z = zslots(sb, src.len);
  for (size_t c = 0; c < z.n; c++) z.s[c] = pccl_sb_compress(sb, chunk(src, c));
  return z;
}

static void zsend(pccl_sb_t *sb, int peer, zslots_t z) {
  for (size_t c = 0; c < z.n; c++) pccl_sb_send_slot(sb, peer, z.s[c]);
}

static zslots_t zrecv(pccl_sb_t *sb, int peer, size_t len) {
  zslots_t z = zslots(sb, len);
  for (size_t c = 0; c < z.n; c++) z.s[c] = pccl_sb_recv_slot(sb, peer, chunk_len(len, c));
  return z;
}

static void zdecompress(pccl_sb_t *sb, pccl_region_t dst, zslots_t z) {
  for (size_t c = 0; c < z.n; c++) pccl_sb_decompress(sb, chunk(dst, c), z.s[c]);
}

/* Ring reduce-scatter over compressed partial sums: block me of `in`,
 * reduced over the group, lands at `result`. */
static void zring_reduce_scatter(pccl_sb_t *sb, const pccl_group_t *g, const size_t *boff,
                                 pccl_place_t in, pccl_region_t result) {
  int p = g->size, me = g->me;
  if (p == 1) {
    pccl_sb_copy(sb, result, pccl_block(in, boff, me));
    return;
  }
  pccl_ring_t ring = pccl_ring_of(g);
  const pccl_ring_gaps_t *gaps = pccl_ring_gaps(sb, boff, p);
  if (!gaps) return; /* the builder's status says why */
  size_t tmp[2] = {pccl_sb_tmp(sb, gaps->largest), pccl_sb_tmp(sb, gaps->largest)};
  zsend(sb, ring.right, zcompress(sb, pccl_block(in, boff, (me + p - 1) % p)));
  for (int s = 0; s < p - 1; s++) {
    int b = (me - s - 2 + 2 * p) % p;
    if (gaps->run[b] >= 1) { /* rounds s .. s + run - 1 reduce empty blocks only */
      s += (int)gaps->run[b] - 1;
      continue;
    }
    pccl_region_t mine = pccl_block(in, boff, b);
    pccl_region_t got = pccl_rg(PCCL_BUF_TMP, tmp[s % 2], mine.len);
    zslots_t in_slots = zrecv(sb, ring.left, mine.len);
    pccl_region_t partial = s < p - 2 ? got : result;
    for (size_t c = 0; c < in_slots.n; c++) { /* chunk by chunk, so each moves on at once */
      pccl_sb_decompress(sb, chunk(got, c), in_slots.s[c]);
      pccl_sb_reduce(sb, chunk(partial, c), chunk(got, c), chunk(mine, c));
      if (s < p - 2) pccl_sb_send_slot(sb, ring.right, pccl_sb_compress(sb, chunk(partial, c)));
    }
  }
  pccl_sb_lossy_stages(sb, (uint32_t)(p - 1));
}

/* Ring all-gather of compressed blocks: `mine` (this member's block) is
 * compressed once and replaced by its decoded form, so every member holds
 * the same values; streams are forwarded without recompression. */
static void zring_allgather(pccl_sb_t *sb, const pccl_group_t *g, const size_t *boff,
                            pccl_region_t mine, pccl_place_t out) {
  int p = g->size, me = g->me;
  pccl_ring_t ring = pccl_ring_of(g);
  const pccl_ring_gaps_t *gaps = pccl_ring_gaps(sb, boff, p);
  if (!gaps) return;
  zslots_t fwd = zcompress(sb, mine);
  zdecompress(sb, pccl_block(out, boff, me), fwd);
  for (int s = 0; s < p - 1; s++) {
    int b = (me - s - 1 + p) % p, sent = (b + 1) % p;
    if (gaps->run[sent] >= 2) { /* rounds s .. s + run - 2 move empty blocks only */
      s += (int)gaps->run[sent] - 2;
      fwd = (zslots_t){NULL, 0}; /* the last of them received an empty block */
      continue;
    }
    zsend(sb, ring.right, fwd);
    fwd = zrecv(sb, ring.left, boff[b + 1] - boff[b]);
    zdecompress(sb, pccl_block(out, boff, b), fwd);
  }
  pccl_sb_lossy_stages(sb, 1);
}

pccl_status_t pccl_gen_allgather_zring(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  pccl_group_t g = pccl_group_all(a);
  const size_t *boff = pccl_blocks_equal(sb, a->nranks, a->count);
  if (!boff) return PCCL_ERR_NO_MEMORY;
  zring_allgather(sb, &g, boff, pccl_rg(PCCL_BUF_SEND, 0, a->count), (pccl_place_t){PCCL_BUF_RECV, 0});
  return PCCL_OK;
}

pccl_status_t pccl_gen_rs_zring(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  pccl_group_t g = pccl_group_all(a);
  const size_t *boff = pccl_blocks_equal(sb, a->nranks, a->count);
  if (!boff) return PCCL_ERR_NO_MEMORY;
  zring_reduce_scatter(sb, &g, boff, (pccl_place_t){PCCL_BUF_SEND, 0},
                       pccl_rg(PCCL_BUF_RECV, 0, a->count));
  return PCCL_OK;
}

pccl_status_t pccl_gen_allreduce_zring(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  pccl_group_t g = pccl_group_all(a);
  const size_t *boff = pccl_blocks_split(sb, a->nranks, a->count);
  if (!boff) return PCCL_ERR_NO_MEMORY;
  pccl_region_t mine = pccl_block((pccl_place_t){PCCL_BUF_RECV, 0}, boff, a->rank);
  zring_reduce_scatter(sb, &g, boff, (pccl_place_t){PCCL_BUF_SEND, 0}, mine);
  if (a->nranks == 1) return PCCL_OK;
  zring_allgather(sb, &g, boff, mine, (pccl_place_t){PCCL_BUF_RECV, 0});
  pccl_sb_lossy_stages(sb, (uint32_t)a->nranks);
  return PCCL_OK;
}

/* acc = L(acc) op L(peer's acc), operands in rank order, chunk by chunk. */
static void zexchange(pccl_sb_t *sb, int me, int peer, pccl_region_t acc, pccl_region_t tmp) {
  zslots_t own = zcompress(sb, acc);
  zsend(sb, peer, own);
  zslots_t in = zrecv(sb, peer, acc.len);
  for (size_t c = 0; c < own.n; c++) {
    pccl_region_t a = chunk(acc, c), t = chunk(tmp, c);
    pccl_sb_decompress(sb, a, own.s[c]);
    pccl_sb_decompress(sb, t, in.s[c]);
    if (peer < me)
      pccl_sb_reduce(sb, a, t, a);
    else
      pccl_sb_reduce(sb, a, a, t);
  }
}

/* Ranks that do not fit a power of two pair up with their neighbour by the
 * radix-2 fold of recmul.c (the one recursive doubling uses too): the fold's
 * other member hands its vector to the leader and gets the result back. */
pccl_status_t pccl_gen_allreduce_zrecdbl(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  pccl_fold_t f = pccl_fold(a->nranks, 2, a->rank);
  int leader = pccl_fold_real(&f, f.group), folded = f.P < a->nranks;
  pccl_region_t acc = pccl_rg(PCCL_BUF_RECV, 0, a->count);
  pccl_region_t tmp = pccl_rg(PCCL_BUF_TMP, pccl_sb_tmp(sb, a->count), a->count);
  pccl_sb_copy(sb, acc, pccl_rg(PCCL_BUF_SEND, 0, a->count));
  if (f.v < 0) {
    zsend(sb, leader, zcompress(sb, acc));
    zdecompress(sb, acc, zrecv(sb, leader, a->count));
  } else {
    for (int m = pccl_fold_first(&f, f.group); m < a->rank; m++) {
      zdecompress(sb, tmp, zrecv(sb, m, a->count));
      pccl_sb_reduce(sb, acc, tmp, acc);
    }
    for (int d = 1; d < f.P; d *= 2) zexchange(sb, a->rank, pccl_fold_real(&f, f.v ^ d), acc, tmp);
    if (folded) { /* every rank ends with the decoded form the folded ranks get */
      zslots_t fin = zcompress(sb, acc);
      zdecompress(sb, acc, fin);
      for (int m = pccl_fold_first(&f, f.group); m < a->rank; m++) zsend(sb, m, fin);
    }
  }
  pccl_sb_lossy_stages(sb, (uint32_t)(2 * (f.P - 1) + (folded ? f.P + 1 : 0)));
  return PCCL_OK;
}

/* Binomial tree as in binomial.c: relative rank rel, lowest set bit mask. */
pccl_status_t pccl_gen_scatter_zbinomial(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  int p = a->nranks, rel = (a->rank - a->root + p) % p, mask = 1;
  size_t c = a->count;
  if (rel == 0)
    while (mask < p) mask *= 2;
  else
    mask = rel & -rel;
  int span = mask < p - rel ? mask : p - rel;
  zslots_t *slots = pccl_sb_scratch(sb, (size_t)span * sizeof(zslots_t));
  if (!slots) return PCCL_ERR_NO_MEMORY;
  pccl_region_t out = pccl_rg(PCCL_BUF_RECV, 0, c);
  if (rel > 0) /* my subtree's blocks: relative ranks rel .. rel+span-1 */
    for (int i = 0; i < span; i++) slots[i] = zrecv(sb, (rel - mask + a->root) % p, c);
  for (int m = mask / 2; m >= 1; m /= 2)
    for (int i = m; i < 2 * m && i < span; i++) {
      if (rel == 0) /* the root compresses in the order it sends */
        slots[i] = zcompress(sb, pccl_rg(PCCL_BUF_SEND, (size_t)((i + a->root) % p) * c, c));
      zsend(sb, (rel + m + a->root) % p, slots[i]);
    }
  if (rel == 0)
    pccl_sb_copy(sb, out, pccl_rg(PCCL_BUF_SEND, (size_t)a->root * c, c));
  else
    zdecompress(sb, out, slots[0]);
  pccl_sb_lossy_stages(sb, 1);
  return PCCL_OK;
}
