/* binomial.c - binomial-tree broadcast, reduce, scatter and gather.
 *
 * The building blocks run on a group whose member 0 is the root; member i
 * (its relative rank) with lowest set bit m has parent i - m and children
 * i + m' for each power of two m' < m (the root: every power of two below p)
 * that is < p; the subtree of i spans members [i, i + min(m, p - i)). Any p.
 * Scatter and gather move whole subtrees, blocks in member order, through a
 * scratch vector. The collectives with root r run them on the communicator
 * rotated by r, and rotate the root's vector once.
 *
 * Cost (n bytes per member's block, L = ceil(log2 p)):
 *   broadcast: L (alpha + n beta)          reduce: L (alpha + n beta + n gamma)
 *   scatter, gather: L alpha + (p-1) n beta */
#include "algo.h"

typedef struct {
  const pccl_group_t *g;
  int p, rel;
  int mask;    /* lowest set bit of rel; for the root the power of two >= p */
  int subtree; /* members in this member's subtree, itself included */
} tree_t;

static tree_t tree_of(const pccl_group_t *g) {
  tree_t t = {g, g->size, g->me, 1, 0};
  if (t.rel == 0)
    while (t.mask < t.p) t.mask *= 2;
  else
    t.mask = t.rel & -t.rel;
  t.subtree = t.mask < t.p - t.rel ? t.mask : t.p - t.rel;
  return t;
}

static int member(const tree_t *t, int rel) { return pccl_group_rank(t->g, rel); }
static int parent(const tree_t *t) { return member(t, t->rel - t->mask); }

static int child_span(const tree_t *t, int m) {
  return m < t->p - t->rel - m ? m : t->p - t->rel - m;
}

/* Blocks [first, first+n) of the vector at `at`. */
static pccl_region_t span(pccl_place_t at, const size_t *boff, int first, int n) {
  return pccl_rg(at.buf, at.off + boff[first], boff[first + n] - boff[first]);
}

void pccl_binomial_bcast(pccl_sb_t *sb, const pccl_group_t *g, const pccl_region_t *src,
                         pccl_region_t data) {
  tree_t t = tree_of(g);
  pccl_region_t from = data;
  if (t.rel != 0) {
    pccl_sb_recv(sb, parent(&t), data);
  } else if (src) {
    from = *src; /* children need not wait for the copy */
    pccl_sb_copy(sb, data, from);
  }
  for (int m = t.mask / 2; m >= 1; m /= 2)
    if (t.rel + m < t.p) pccl_sb_send(sb, member(&t, t.rel + m), from);
}

void pccl_binomial_reduce(pccl_sb_t *sb, const pccl_group_t *g, pccl_region_t in,
                          pccl_region_t out) {
  tree_t t = tree_of(g);
  size_t c = in.len;
  pccl_region_t cur = in;
  pccl_region_t acc = t.rel == 0 ? out : pccl_rg(PCCL_BUF_TMP, 0, 0);
  pccl_region_t got = pccl_rg(PCCL_BUF_TMP, 0, 0);
  for (int m = 1; m < t.mask && t.rel + m < t.p; m *= 2) {
    if (got.len == 0) {
      got = pccl_rg(PCCL_BUF_TMP, pccl_sb_tmp(sb, c), c);
      if (t.rel != 0) acc = pccl_rg(PCCL_BUF_TMP, pccl_sb_tmp(sb, c), c);
    }
    pccl_sb_recv_reduce(sb, member(&t, t.rel + m), acc, got, cur, 1);
    cur = acc;
  }
  if (t.rel != 0)
    pccl_sb_send(sb, parent(&t), cur);
  else
    pccl_sb_copy(sb, acc, cur); /* only when p == 1 */
}

void pccl_binomial_scatter(pccl_sb_t *sb, const pccl_group_t *g, const size_t *boff,
                           pccl_place_t in, pccl_region_t out) {
  tree_t t = tree_of(g);
  pccl_place_t src = in;
  if (t.rel != 0 && t.subtree == 1) {
    pccl_sb_recv(sb, parent(&t), out); /* a leaf: straight to the output */
    return;
  }
  if (t.rel != 0) {
    size_t len = boff[t.rel + t.subtree] - boff[t.rel];
    src = (pccl_place_t){PCCL_BUF_TMP, pccl_sb_tmp(sb, len) - boff[t.rel]};
    pccl_sb_recv(sb, parent(&t), span(src, boff, t.rel, t.subtree));
  }
  for (int m = t.mask / 2; m >= 1; m /= 2)
    if (t.rel + m < t.p)
      pccl_sb_send(sb, member(&t, t.rel + m), span(src, boff, t.rel + m, child_span(&t, m)));
  pccl_sb_copy(sb, out, span(src, boff, t.rel, 1));
}

void pccl_binomial_gather(pccl_sb_t *sb, const pccl_group_t *g, const size_t *boff,
                          const pccl_place_t *in, pccl_place_t out) {
  tree_t t = tree_of(g);
  size_t len = boff[t.rel + 1] - boff[t.rel];
  pccl_region_t own = in ? pccl_rg(in->buf, in->off, len) : span(out, boff, t.rel, 1);
  if (t.rel != 0 && t.subtree == 1) {
    pccl_sb_send(sb, parent(&t), own); /* a leaf sends its own block */
    return;
  }
  pccl_place_t buf = out;
  if (t.rel != 0) {
    size_t sub = boff[t.rel + t.subtree] - boff[t.rel];
    buf = (pccl_place_t){PCCL_BUF_TMP, pccl_sb_tmp(sb, sub) - boff[t.rel]};
  }
  pccl_sb_copy(sb, span(buf, boff, t.rel, 1), own);
  for (int m = 1; m < t.mask && t.rel + m < t.p; m *= 2)
    pccl_sb_recv(sb, member(&t, t.rel + m), span(buf, boff, t.rel + m, child_span(&t, m)));
  if (t.rel != 0) pccl_sb_send(sb, parent(&t), span(buf, boff, t.rel, t.subtree));
}

/* ---- the collectives: the communicator rotated so that root is member 0 */

int pccl_group_rooted(pccl_sb_t *sb, const pccl_coll_args_t *a, pccl_group_t *g) {
  int *ranks = pccl_sb_scratch(sb, (size_t)a->nranks * sizeof(int));
  if (!ranks) return 0;
  for (int i = 0; i < a->nranks; i++) ranks[i] = (i + a->root) % a->nranks;
  *g = (pccl_group_t){a->nranks, (a->rank - a->root + a->nranks) % a->nranks, ranks, 2};
  return 1;
}

/* Copies between the root's vector in rank order (`ranked`) and in member
 * order (`rel`): blocks root .. p-1 come first there. */
static void rotate(pccl_sb_t *sb, const pccl_coll_args_t *a, pccl_place_t ranked, pccl_place_t rel,
                   int to_ranked) {
  size_t c = a->count, tail = (size_t)(a->nranks - a->root) * c, head = (size_t)a->root * c;
  pccl_region_t r[2] = {pccl_rg(ranked.buf, ranked.off + head, tail), pccl_rg(ranked.buf, ranked.off, head)};
  pccl_region_t m[2] = {pccl_rg(rel.buf, rel.off, tail), pccl_rg(rel.buf, rel.off + tail, head)};
  for (int i = 0; i < 2; i++)
    if (to_ranked)
      pccl_sb_copy(sb, r[i], m[i]);
    else
      pccl_sb_copy(sb, m[i], r[i]);
}

pccl_status_t pccl_gen_bcast_binomial(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  pccl_group_t g;
  if (!pccl_group_rooted(sb, a, &g)) return PCCL_ERR_NO_MEMORY;
  pccl_region_t src = pccl_rg(PCCL_BUF_SEND, 0, a->count);
  pccl_binomial_bcast(sb, &g, g.me == 0 ? &src : NULL, pccl_rg(PCCL_BUF_RECV, 0, a->count));
  return PCCL_OK;
}

pccl_status_t pccl_gen_reduce_binomial(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  pccl_group_t g;
  if (!pccl_group_rooted(sb, a, &g)) return PCCL_ERR_NO_MEMORY;
  pccl_binomial_reduce(sb, &g, pccl_rg(PCCL_BUF_SEND, 0, a->count),
                       pccl_rg(PCCL_BUF_RECV, 0, a->count));
  return PCCL_OK;
}

pccl_status_t pccl_gen_scatter_binomial(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  pccl_group_t g;
  const size_t *boff = pccl_blocks_equal(sb, a->nranks, a->count);
  if (!boff || !pccl_group_rooted(sb, a, &g)) return PCCL_ERR_NO_MEMORY;
  pccl_place_t src = {PCCL_BUF_SEND, 0};
  if (g.me == 0 && a->root != 0) {
    src = (pccl_place_t){PCCL_BUF_TMP, pccl_sb_tmp(sb, boff[a->nranks])};
    rotate(sb, a, (pccl_place_t){PCCL_BUF_SEND, 0}, src, 0);
  }
  pccl_binomial_scatter(sb, &g, boff, src, pccl_rg(PCCL_BUF_RECV, 0, a->count));
  return PCCL_OK;
}

pccl_status_t pccl_gen_gather_binomial(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  pccl_group_t g;
  const size_t *boff = pccl_blocks_equal(sb, a->nranks, a->count);
  if (!boff || !pccl_group_rooted(sb, a, &g)) return PCCL_ERR_NO_MEMORY;
  pccl_place_t in = {PCCL_BUF_SEND, 0}, out = {PCCL_BUF_RECV, 0};
  int direct = g.me != 0 || a->root == 0; /* member order is rank order */
  if (!direct) out = (pccl_place_t){PCCL_BUF_TMP, pccl_sb_tmp(sb, boff[a->nranks])};
  pccl_binomial_gather(sb, &g, boff, &in, out);
  if (!direct) rotate(sb, a, (pccl_place_t){PCCL_BUF_RECV, 0}, out, 1);
  return PCCL_OK;
}
