/* binomial.c - binomial-tree broadcast, reduce, scatter and gather.
 *
 * Ranks are numbered relative to the root (rel = rank - root mod p). Rank rel
 * with lowest set bit m has parent rel - m and children rel + m' for each
 * power of two m' < m (the root: every power of two below p) that is < p;
 * the subtree of rel spans relative ranks [rel, rel + min(m, p - rel)). Any p.
 * Scatter and gather move whole subtrees, in relative order, through a
 * scratch vector; a root other than 0 rotates once.
 *
 * Cost (n bytes per rank's block, L = ceil(log2 p)):
 *   broadcast: L (alpha + n beta)          reduce: L (alpha + n beta + n gamma)
 *   scatter, gather: L alpha + (p-1) n beta */
#include "algo.h"

typedef struct {
  int p, rel, root;
  int mask;    /* lowest set bit of rel; for the root the power of two >= p */
  int subtree; /* ranks in this rank's subtree, itself included */
} tree_t;

static tree_t tree_of(const pccl_coll_args_t *a) {
  tree_t t;
  t.p = a->nranks;
  t.root = a->root;
  t.rel = (a->rank - a->root + a->nranks) % a->nranks;
  if (t.rel == 0) {
    t.mask = 1;
    while (t.mask < t.p) t.mask *= 2;
  } else {
    t.mask = t.rel & -t.rel;
  }
  t.subtree = t.mask < t.p - t.rel ? t.mask : t.p - t.rel;
  return t;
}

static int abs_rank(const tree_t *t, int rel) { return (rel + t->root) % t->p; }

/* Blocks of relative ranks [first, first+n) of a subtree vector at `at`. */
static pccl_region_t span(pccl_place_t at, size_t c, int first, int n) {
  return pccl_rg(at.buf, at.off + (size_t)first * c, (size_t)n * c);
}

static int child_span(const tree_t *t, int m) {
  return m < t->p - t->rel - m ? m : t->p - t->rel - m;
}

pccl_status_t pccl_gen_bcast_binomial(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  tree_t t = tree_of(a);
  pccl_region_t data = pccl_rg(PCCL_BUF_RECV, 0, a->count), src = data;
  if (t.rel == 0) {
    src = pccl_rg(PCCL_BUF_SEND, 0, a->count); /* children need not wait for the copy */
    pccl_sb_copy(sb, data, src);
  } else {
    pccl_sb_recv(sb, abs_rank(&t, t.rel - t.mask), data);
  }
  for (int m = t.mask / 2; m >= 1; m /= 2)
    if (t.rel + m < t.p) pccl_sb_send(sb, abs_rank(&t, t.rel + m), src);
  return PCCL_OK;
}

pccl_status_t pccl_gen_reduce_binomial(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  tree_t t = tree_of(a);
  size_t c = a->count;
  pccl_region_t cur = pccl_rg(PCCL_BUF_SEND, 0, c);
  pccl_region_t acc = t.rel == 0 ? pccl_rg(PCCL_BUF_RECV, 0, c) : pccl_rg(PCCL_BUF_TMP, 0, 0);
  pccl_region_t got = pccl_rg(PCCL_BUF_TMP, 0, 0);
  for (int m = 1; m < t.mask && t.rel + m < t.p; m *= 2) {
    if (got.len == 0) {
      got = pccl_rg(PCCL_BUF_TMP, pccl_sb_tmp(sb, c), c);
      if (t.rel != 0) acc = pccl_rg(PCCL_BUF_TMP, pccl_sb_tmp(sb, c), c);
    }
    pccl_sb_recv_reduce(sb, abs_rank(&t, t.rel + m), acc, got, cur, 1);
    cur = acc;
  }
  if (t.rel != 0)
    pccl_sb_send(sb, abs_rank(&t, t.rel - t.mask), cur);
  else
    pccl_sb_copy(sb, acc, cur); /* only when p == 1 */
  return PCCL_OK;
}

pccl_status_t pccl_gen_scatter_binomial(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  tree_t t = tree_of(a);
  size_t c = a->count;
  pccl_region_t out = pccl_rg(PCCL_BUF_RECV, 0, c);
  pccl_place_t src = {PCCL_BUF_SEND, 0};
  if (t.rel == 0 && t.root != 0) {
    size_t tail = (size_t)(t.p - t.root) * c, head = (size_t)t.root * c;
    src = (pccl_place_t){PCCL_BUF_TMP, pccl_sb_tmp(sb, (size_t)t.p * c)};
    pccl_sb_copy(sb, pccl_rg(PCCL_BUF_TMP, src.off, tail), pccl_rg(PCCL_BUF_SEND, head, tail));
    pccl_sb_copy(sb, pccl_rg(PCCL_BUF_TMP, src.off + tail, head), pccl_rg(PCCL_BUF_SEND, 0, head));
  } else if (t.rel != 0 && t.subtree == 1) {
    pccl_sb_recv(sb, abs_rank(&t, t.rel - t.mask), out); /* a leaf: straight to the output */
    return PCCL_OK;
  } else if (t.rel != 0) {
    src = (pccl_place_t){PCCL_BUF_TMP, pccl_sb_tmp(sb, (size_t)t.subtree * c)};
    pccl_sb_recv(sb, abs_rank(&t, t.rel - t.mask), span(src, c, 0, t.subtree));
  }
  for (int m = t.mask / 2; m >= 1; m /= 2)
    if (t.rel + m < t.p) pccl_sb_send(sb, abs_rank(&t, t.rel + m), span(src, c, m, child_span(&t, m)));
  pccl_sb_copy(sb, out, span(src, c, 0, 1));
  return PCCL_OK;
}

pccl_status_t pccl_gen_gather_binomial(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  tree_t t = tree_of(a);
  size_t c = a->count;
  pccl_region_t in = pccl_rg(PCCL_BUF_SEND, 0, c);
  if (t.rel != 0 && t.subtree == 1) {
    pccl_sb_send(sb, abs_rank(&t, t.rel - t.mask), in); /* a leaf sends its own block */
    return PCCL_OK;
  }
  int direct = t.rel == 0 && t.root == 0; /* relative order is rank order */
  pccl_place_t buf = {PCCL_BUF_RECV, 0};
  if (!direct) buf = (pccl_place_t){PCCL_BUF_TMP, pccl_sb_tmp(sb, (size_t)t.subtree * c)};
  pccl_sb_copy(sb, span(buf, c, 0, 1), in);
  for (int m = 1; m < t.mask && t.rel + m < t.p; m *= 2)
    pccl_sb_recv(sb, abs_rank(&t, t.rel + m), span(buf, c, m, child_span(&t, m)));
  if (t.rel != 0) {
    pccl_sb_send(sb, abs_rank(&t, t.rel - t.mask), span(buf, c, 0, t.subtree));
  } else if (!direct) {
    size_t tail = (size_t)(t.p - t.root) * c, head = (size_t)t.root * c;
    pccl_sb_copy(sb, pccl_rg(PCCL_BUF_RECV, head, tail), pccl_rg(PCCL_BUF_TMP, buf.off, tail));
    pccl_sb_copy(sb, pccl_rg(PCCL_BUF_RECV, 0, head), pccl_rg(PCCL_BUF_TMP, buf.off + tail, head));
  }
  return PCCL_OK;
}
