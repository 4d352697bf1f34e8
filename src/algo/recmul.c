/* recmul.c - recursive multiplying (radix k) all-gather, reduce-scatter and
 * all-reduce, and the fold that runs them on any number of ranks. k = 2 is
 * recursive doubling (all-gather, all-reduce) and recursive halving
 * (reduce-scatter); the "recdbl" and "rechalv" rows of the table are these
 * generators with k fixed at 2.
 *
 * Among P = k^n virtual ranks, write v in base k. All-gather: in round j
 * (j = 0 .. n-1, distance d = k^j) v exchanges everything it has so far (the
 * d virtual ranks that share its digits above j) with the k-1 ranks that
 * differ from it in digit j only; data grows k-fold each round.
 * Reduce-scatter mirrors it, digit n-1 first: the k ranks of a round split
 * the range they share into k pieces, each keeps the piece of its digit and
 * adds the k-1 copies of it the others send. All-reduce (whole vector): every
 * round exchanges the whole vector and reduces the k copies in digit order,
 * so every rank gets the same bits.
 *
 * Any p (the fold): P = the largest power of k not above p; the p ranks form
 * P groups of consecutive ranks, sizes differing by one (larger first), each
 * at most k. The last rank of a group leads it as virtual rank "group": the
 * others hand it their part first and get the result back at the end.
 * Virtual ranks keep the rank order, so each one's data stays contiguous.
 * With k = 2 this pairs the first 2(p-P) ranks, as MPICH does.
 *
 * Cost (n bytes in total, p = k^r):
 *   all-gather, reduce-scatter: r alpha + (p-1)/p n beta (+ (p-1)/p n gamma),
 *     with the k-1 messages of a round in flight together
 *   all-reduce: r (alpha + (k-1) n beta + (k-1) n gamma)
 * plus, when p is not a power of k, 2 alpha + a group's part (all-gather) or
 * the whole vector (reduce-scatter, all-reduce) in beta, twice. */
#include "algo.h"

static int radix(const pccl_group_t *g) { return g->k < 2 ? 2 : g->k; }

pccl_fold_t pccl_fold(int p, int k, int me) {
  pccl_fold_t f;
  f.p = p;
  f.k = k < 2 ? 2 : k;
  f.P = 1;
  f.rounds = 0;
  while ((long long)f.P * f.k <= p) {
    f.P *= f.k;
    f.rounds++;
  }
  f.q = p / f.P;
  f.rem = p % f.P;
  /* The first rem groups hold q+1 ranks: they end at rank rem(q+1). */
  int big = f.rem * (f.q + 1);
  f.group = me < big ? me / (f.q + 1) : f.rem + (me - big) / f.q;
  f.v = me == pccl_fold_real(&f, f.group) ? f.group : -1;
  return f;
}

int pccl_fold_first(const pccl_fold_t *f, int v) {
  return v * f->q + (v < f->rem ? v : f->rem);
}

int pccl_fold_real(const pccl_fold_t *f, int v) { return pccl_fold_first(f, v + 1) - 1; }

/* The same on every rank for the same blocks: shared where boff is (a
 * memo's table, see pccl_sb_shared), else the rank's own scratch. */
const size_t *pccl_fold_blocks(pccl_sb_t *sb, const pccl_fold_t *f, const size_t *boff) {
  static const char tag;
  uint64_t key[5] = {(uintptr_t)&tag, (uintptr_t)boff, (uint64_t)f->P, (uint64_t)f->q,
                     (uint64_t)f->rem};
  size_t bytes = ((size_t)f->P + 1) * sizeof(size_t);
  int fresh = 1;
  size_t *vb = pccl_sb_is_shared(sb, boff) ? pccl_sb_shared(sb, key, sizeof key, bytes, &fresh)
                                           : pccl_sb_scratch(sb, bytes);
  if (vb && fresh)
    for (int v = 0; v <= f->P; v++) vb[v] = boff[pccl_fold_first(f, v)];
  return vb;
}

/* Virtual ranks lo .. lo+n-1 of the vector at `at`. */
static pccl_region_t vrange(pccl_place_t at, const size_t *vb, int lo, int n) {
  return pccl_rg(at.buf, at.off + vb[lo], vb[lo + n] - vb[lo]);
}

static int vpeer_rank(const pccl_group_t *g, const pccl_fold_t *f, int vp) {
  return pccl_group_rank(g, pccl_fold_real(f, vp));
}

void pccl_recmul_allgather_core(pccl_sb_t *sb, const pccl_group_t *g, const pccl_fold_t *f,
                                const size_t *vb, pccl_place_t out) {
  for (int d = 1; d < f->P; d *= f->k) {
    int digit = (f->v / d) % f->k, lo = f->v - f->v % d;
    for (int i = 0; i < f->k; i++) {
      if (i == digit) continue;
      int peer = vpeer_rank(g, f, f->v + (i - digit) * d);
      pccl_sb_send(sb, peer, vrange(out, vb, lo, d));
      pccl_sb_recv(sb, peer, vrange(out, vb, lo + (i - digit) * d, d));
    }
  }
}

void pccl_recmul_allgather(pccl_sb_t *sb, const pccl_group_t *g, const size_t *boff,
                           const pccl_place_t *in, pccl_place_t out) {
  pccl_fold_t f = pccl_fold(g->size, radix(g), g->me);
  const size_t *vb = pccl_fold_blocks(sb, &f, boff);
  if (!vb) return; /* the builder has recorded the failure */
  pccl_region_t mine = pccl_block(out, boff, g->me);
  pccl_region_t from = in ? pccl_rg(in->buf, in->off, mine.len) : mine;
  pccl_region_t all = pccl_rg(out.buf, out.off + boff[0], boff[g->size] - boff[0]);
  int first = pccl_fold_first(&f, f.group), leader = pccl_fold_real(&f, f.group);
  if (f.v < 0) {
    pccl_sb_send(sb, pccl_group_rank(g, leader), from);
    pccl_sb_recv(sb, pccl_group_rank(g, leader), all); /* my own block comes back too */
    return;
  }
  for (int m = first; m < leader; m++)
    pccl_sb_recv(sb, pccl_group_rank(g, m), pccl_block(out, boff, m));
  pccl_sb_copy(sb, mine, from);
  pccl_recmul_allgather_core(sb, g, &f, vb, out);
  for (int m = first; m < leader; m++) pccl_sb_send(sb, pccl_group_rank(g, m), all);
}

/* Receives one vector from each of peers[0 .. n) (n >= 1) and folds them into dst:
 * dst = local op m0 (or m0 op local with `msg_first`), then dst = dst op m_i.
 * The first is fused; the others land in staging regions (n-1 of dst's
 * length from `staging` on) so all their receives are posted at once. */
static void fold_messages(pccl_sb_t *sb, const int *peers, int n, pccl_region_t dst,
                          pccl_region_t local, size_t staging, int msg_first) {
  pccl_region_t got[n];
  for (int i = 1; i < n; i++) {
    got[i] = pccl_rg(PCCL_BUF_TMP, staging + (size_t)(i - 1) * dst.len, dst.len);
    pccl_sb_recv(sb, peers[i], got[i]);
  }
  pccl_region_t first = pccl_rg(PCCL_BUF_TMP, staging + (size_t)(n > 1 ? n - 1 : 0) * dst.len,
                                dst.len);
  pccl_sb_recv_reduce(sb, peers[0], dst, first, local, !msg_first);
  for (int i = 1; i < n; i++) pccl_sb_reduce(sb, dst, dst, got[i]);
}

/* The members of this rank's group other than the leader, as ranks. */
static int extras(const pccl_group_t *g, const pccl_fold_t *f, int *peers) {
  int first = pccl_fold_first(f, f->group), leader = pccl_fold_real(f, f->group);
  for (int m = first; m < leader; m++) peers[m - first] = pccl_group_rank(g, m);
  return leader - first;
}

int pccl_fold_in(pccl_sb_t *sb, const pccl_group_t *g, const pccl_fold_t *f, pccl_region_t dst,
                 pccl_region_t local) {
  int peers[f->k];
  int ne = extras(g, f, peers);
  if (ne > 0) fold_messages(sb, peers, ne, dst, local, pccl_sb_tmp(sb, dst.len * (size_t)ne), 1);
  return ne;
}

size_t pccl_recmul_reduce_scatter_core(pccl_sb_t *sb, const pccl_group_t *g,
                                       const pccl_fold_t *f, const size_t *vb, pccl_place_t in) {
  size_t n = vb[f->P] - vb[0];
  size_t acc_off = pccl_sb_tmp(sb, n);
  pccl_place_t acc = {PCCL_BUF_TMP, acc_off - vb[0]};
  if (f->P == 1) {
    pccl_sb_copy(sb, pccl_rg(PCCL_BUF_TMP, acc_off, n), pccl_rg(in.buf, in.off + vb[0], n));
    return acc.off;
  }
  /* Staging for the k-1 pieces of a round; the first round's are the largest. */
  size_t largest = 0;
  for (int i = 0; i < f->k; i++) {
    size_t len = vrange(in, vb, i * (f->P / f->k), f->P / f->k).len;
    if (len > largest) largest = len;
  }
  size_t staging = pccl_sb_tmp(sb, largest * (size_t)(f->k - 1));
  pccl_place_t src = in;
  int peers[f->k];
  for (int d = f->P / f->k; d >= 1; d /= f->k) {
    int digit = (f->v / d) % f->k, lo = f->v - f->v % (d * f->k), keep = lo + digit * d;
    int np = 0;
    for (int i = 0; i < f->k; i++) {
      if (i == digit) continue;
      peers[np] = vpeer_rank(g, f, f->v + (i - digit) * d);
      pccl_sb_send(sb, peers[np++], vrange(src, vb, lo + i * d, d));
    }
    fold_messages(sb, peers, np, vrange(acc, vb, keep, d), vrange(src, vb, keep, d), staging, 0);
    src = acc;
  }
  return acc.off;
}

void pccl_recmul_reduce_scatter(pccl_sb_t *sb, const pccl_group_t *g, const size_t *boff,
                                pccl_place_t in, pccl_place_t out) {
  pccl_fold_t f = pccl_fold(g->size, radix(g), g->me);
  const size_t *vb = pccl_fold_blocks(sb, &f, boff);
  if (!vb) return; /* the builder has recorded the failure */
  size_t n = boff[g->size] - boff[0];
  pccl_region_t result = pccl_rg(out.buf, out.off, boff[g->me + 1] - boff[g->me]);
  pccl_region_t all = pccl_rg(in.buf, in.off + boff[0], n);
  int leader = pccl_group_rank(g, pccl_fold_real(&f, f.group));
  if (f.v < 0) {
    pccl_sb_send(sb, leader, all);
    pccl_sb_recv(sb, leader, result);
    return;
  }
  /* `folded` mirrors the layout of `in` from boff[0] on. */
  size_t folded = pccl_sb_tmp(sb, n);
  pccl_place_t src = in;
  if (pccl_fold_in(sb, g, &f, pccl_rg(PCCL_BUF_TMP, folded, n), all) > 0)
    src = (pccl_place_t){PCCL_BUF_TMP, folded - boff[0]};
  pccl_place_t acc = {PCCL_BUF_TMP, pccl_recmul_reduce_scatter_core(sb, g, &f, vb, src)};
  for (int m = pccl_fold_first(&f, f.group); m < g->me; m++)
    pccl_sb_send(sb, pccl_group_rank(g, m), pccl_block(acc, boff, m));
  pccl_sb_copy(sb, result, pccl_block(acc, boff, g->me));
}

/* One all-reduce round: acc = the k operands of the round reduced in digit
 * order, mine being operand `digit`; `aliased` when mine is acc's memory.
 * Staging holds k vectors: the k-1 messages and a partial result, needed
 * when mine is acc and comes third or later. Fused only when mine is not
 * acc: a receive into acc would otherwise wait for acc's own sends to the
 * same peers, and the pair would deadlock on large messages. */
static void allreduce_round(pccl_sb_t *sb, const int *peer, int k, int digit, pccl_region_t mine,
                            pccl_region_t acc, int aliased, size_t staging) {
  pccl_region_t op[k];
  for (int i = 0; i < k; i++) {
    if (i == digit) {
      op[i] = mine;
      continue;
    }
    op[i] = pccl_rg(PCCL_BUF_TMP, staging + (size_t)(i < digit ? i : i - 1) * acc.len, acc.len);
    pccl_sb_send(sb, peer[i], mine);
  }
  int fuse = !aliased && digit <= 1;
  for (int i = 0; i < k; i++)
    if (i != digit && !(fuse && i == 1 - digit)) pccl_sb_recv(sb, peer[i], op[i]);
  pccl_region_t part = acc;
  if (aliased && digit >= 2) part = pccl_rg(PCCL_BUF_TMP, staging + (size_t)(k - 1) * acc.len, acc.len);
  if (fuse)
    pccl_sb_recv_reduce(sb, peer[1 - digit], part, op[1 - digit], mine, digit == 0);
  else
    pccl_sb_reduce(sb, part, op[0], op[1]);
  for (int i = 2; i < k; i++) {
    pccl_sb_reduce(sb, i == digit ? acc : part, part, op[i]);
    if (i == digit) part = acc;
  }
}

void pccl_recmul_allreduce(pccl_sb_t *sb, const pccl_group_t *g, pccl_region_t in,
                           pccl_region_t acc) {
  pccl_fold_t f = pccl_fold(g->size, g->k, g->me);
  int leader = pccl_group_rank(g, pccl_fold_real(&f, f.group));
  if (f.v < 0) {
    pccl_sb_send(sb, leader, in);
    pccl_sb_recv(sb, leader, acc);
    return;
  }
  int same = in.buf == acc.buf && in.off == acc.off;
  pccl_region_t mine = in;
  if (pccl_fold_in(sb, g, &f, acc, in) > 0)
    mine = acc;
  else if (f.P == 1 && !same)
    pccl_sb_copy(sb, acc, in);
  size_t staging = pccl_sb_tmp(sb, acc.len * (size_t)f.k);
  int peer[f.k];
  for (int d = 1; d < f.P; d *= f.k) {
    int digit = (f.v / d) % f.k;
    for (int i = 0; i < f.k; i++) peer[i] = vpeer_rank(g, &f, f.v + (i - digit) * d);
    allreduce_round(sb, peer, f.k, digit, mine, acc, mine.buf == acc.buf && mine.off == acc.off,
                    staging);
    mine = acc;
  }
  for (int m = pccl_fold_first(&f, f.group); m < g->me; m++)
    pccl_sb_send(sb, pccl_group_rank(g, m), acc);
}

pccl_status_t pccl_gen_allgather_recmul(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  return pccl_flat_allgather(sb, a, pccl_recmul_allgather);
}

pccl_status_t pccl_gen_rs_recmul(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  return pccl_flat_reduce_scatter(sb, a, pccl_recmul_reduce_scatter);
}

pccl_status_t pccl_gen_allreduce_recmul(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  pccl_group_t g = pccl_group_all(a);
  pccl_region_t acc = pccl_rg(PCCL_BUF_RECV, 0, a->count);
  pccl_recmul_allreduce(sb, &g, a->inplace ? acc : pccl_rg(PCCL_BUF_SEND, 0, a->count), acc);
  return PCCL_OK;
}

/* ---- permuted recursive multiplying all-gather ----------------------------
 * Distance halving (PICCL): round r talks to the k-1 ranks that differ in
 * digit n-r, most significant first, so the largest messages go to the
 * nearest ranks. Each rank keeps what it has at the front of its buffer and
 * appends what arrives, so every message is one contiguous range; slot s of
 * the buffer then holds the virtual rank whose top digits are this rank's
 * shifted by the base-k digits of s. One in-place cycle permutation of the
 * blocks (kernels/permute.c) puts them in rank order at the end. */

/* The virtual ranks in the slots of virtual rank v's buffer, slot after
 * slot: slot s holds v with each base-k digit j of s (least significant
 * first) added, mod k, to v's digit in round j's place (most significant
 * first). Counting s up as a base-k counter changes one place per slot
 * amortized, so all P slots cost O(P), not O(P log P) divisions: at 32 k
 * ranks, the per-slot form took most of the simulator's generation time. */
typedef struct {
  int k, rounds, u;
  int s[32], cur[32], top[32]; /* s's digits, v's shifted digits, their place */
} slot_walk_t;

static slot_walk_t slot_walk(const pccl_fold_t *f, int v) {
  slot_walk_t w = {f->k, f->rounds, v, {0}, {0}, {0}};
  int top = f->P / f->k;
  for (int j = 0; j < f->rounds; j++, top /= f->k) {
    w.top[j] = top;
    w.cur[j] = (v / top) % f->k;
  }
  return w;
}

static void slot_next(slot_walk_t *w) {
  for (int j = 0; j < w->rounds; j++) {
    int was = w->cur[j];
    w->cur[j] = was + 1 == w->k ? 0 : was + 1;
    w->u += (w->cur[j] - was) * w->top[j];
    if (++w->s[j] < w->k) return;
    w->s[j] = 0; /* carry into the next digit */
  }
}

static int group_size(const pccl_fold_t *f, int v) {
  return pccl_fold_first(f, v + 1) - pccl_fold_first(f, v);
}

pccl_status_t pccl_gen_allgather_precmul(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  pccl_group_t g = pccl_group_all(a);
  pccl_fold_t f = pccl_fold(a->nranks, a->k, a->rank);
  size_t c = a->count;
  pccl_region_t in = pccl_rg(PCCL_BUF_SEND, 0, c);
  pccl_region_t all = pccl_rg(PCCL_BUF_RECV, 0, c * (size_t)a->nranks);
  int first = pccl_fold_first(&f, f.group), leader = pccl_fold_real(&f, f.group);
  if (f.v < 0) {
    pccl_sb_send(sb, leader, in);
    pccl_sb_recv(sb, leader, all);
    return PCCL_OK;
  }
  size_t *at = pccl_sb_scratch(sb, ((size_t)f.P + 1) * sizeof(size_t)); /* slot starts, in blocks */
  uint32_t *src_of = pccl_sb_scratch(sb, (size_t)a->nranks * sizeof(uint32_t));
  if (!at || !src_of) return PCCL_ERR_NO_MEMORY;
  at[0] = 0;
  slot_walk_t w = slot_walk(&f, f.v);
  for (int s = 0; s < f.P; s++, slot_next(&w)) {
    int u = w.u;
    for (int b = 0; b < group_size(&f, u); b++) src_of[pccl_fold_first(&f, u) + b] = (uint32_t)(at[s] + (size_t)b);
    at[s + 1] = at[s] + (size_t)group_size(&f, u);
  }
  /* Slot 0: my group's blocks. */
  for (int m = first; m < leader; m++)
    pccl_sb_recv(sb, m, pccl_rg(PCCL_BUF_RECV, (size_t)(m - first) * c, c));
  pccl_sb_copy(sb, pccl_rg(PCCL_BUF_RECV, (size_t)(leader - first) * c, c), in);
  int held = 1; /* slots filled */
  for (int d = f.P / f.k; d >= 1; d /= f.k, held *= f.k) {
    int digit = (f.v / d) % f.k;
    for (int i = 1; i < f.k; i++) {
      int peer = vpeer_rank(&g, &f, f.v + (((digit + i) % f.k) - digit) * d);
      pccl_sb_send(sb, peer, pccl_rg(PCCL_BUF_RECV, 0, at[held] * c));
      pccl_sb_recv(sb, peer, pccl_rg(PCCL_BUF_RECV, at[i * held] * c, (at[(i + 1) * held] - at[i * held]) * c));
    }
  }
  pccl_sb_permute(sb, all, pccl_rg(PCCL_BUF_TMP, pccl_sb_tmp(sb, c), c), (uint32_t)a->nranks, src_of);
  for (int m = first; m < leader; m++) pccl_sb_send(sb, m, all);
  return PCCL_OK;
}
