/* hier.c - two-level (hierarchical) all-gather, reduce-scatter and all-reduce,
 * after the PCCL paper, composed from the group building blocks of the other
 * family files; no flat algorithm is written again here.
 *
 * All-gather on N nodes: (1) the ranks with the same local index form one
 * sub-group per index, one member per node, and all-gather between nodes, all
 * sub-groups at once (every rank of a node talks off-node, so every NIC of a
 * real node carries traffic); (2) each node all-gathers what its ranks
 * collected; (3) a local shuffle puts the blocks in rank order.
 * Reduce-scatter runs the mirror image: a local shuffle groups the blocks by
 * local index, the node reduce-scatters so each rank holds its index's blocks
 * summed over the node, and the sub-groups reduce-scatter between nodes.
 * All-reduce is the reduce-scatter followed by the all-gather. When the nodes
 * are of one size (so that all share one staging order) it does without
 * either shuffle: which slice of the vector a rank reduces is the
 * algorithm's choice, so each rank takes the slice at its block's place in
 * staging order, and the staging vector is the user's buffer itself.
 * k-ring (PICCL) is the same composition over groups of k consecutive ranks
 * in place of the nodes, ring at both levels. The leader variants (HAN's
 * layout, further down) are the other two-level design: one rank per node
 * talks between nodes, for the sizes where messages cost more than bytes.
 *
 * Nodes of unequal size: local index v of a node with m ranks is served by
 * its rank v mod m, so every sub-group still has one member per node; a
 * member that stands in for a missing index contributes an empty block. The
 * staging vector of a node is ordered by serving rank, then index, then node,
 * so what each rank hands the node step is contiguous.
 *
 * Cost (N nodes of M ranks, n bytes in total, ring inside the node):
 *   the between-node algorithm on n/M bytes over N members, plus
 *   (M-1) alpha + (M-1)/M n beta inside the node, plus n of local copying. */
#include "algo.h"

/* A run of the shuffle between rank order and a staging order: n blocks
 * of len elements, the first at `at` in rank order and each next one `step`
 * further on; in staging order they follow one another. */
typedef struct {
  size_t at, len, step;
  uint32_t n;
} run_t;

typedef struct {
  const pccl_topo_t *t;
  int k; /* the between-node algorithm's parameter */
  const size_t *boff; /* the collective's blocks, one per rank */
  int node, local, nlocal, maxlocal;
  int uniform; /* every node has maxlocal ranks */
  const size_t *seg; /* seg[v]: where index v's blocks start in the staging vector */
  const size_t *rb;  /* rb[r]: where the part of local rank r starts; rb[nlocal] = total */
  const run_t *runs; /* the shuffle between rank and staging order */
  size_t nruns;
} layout_t;

/* The layout's tables depend on the topology, the blocks and the node's size
 * only, so the ranks of one simulated call share them (pccl_sb_shared) when
 * those live as long (`lives`); otherwise each rank makes its own. */
static void *table(pccl_sb_t *sb, int lives, const uint64_t *key, size_t keylen, size_t bytes,
                   int *fresh) {
  if (lives) return pccl_sb_shared(sb, key, keylen, bytes, fresh);
  *fresh = 1;
  return pccl_sb_scratch(sb, bytes);
}

static int node_size(const pccl_topo_t *t, int n) { return t->node_off[n + 1] - t->node_off[n]; }
static int rank_at(const pccl_topo_t *t, int n, int l) { return t->members[t->node_off[n] + l]; }
static size_t blen(const size_t *boff, int x) { return boff[x + 1] - boff[x]; }

static int local_index(const pccl_topo_t *t, int node, int rank) {
  int l = 0;
  while (rank_at(t, node, l) != rank) l++;
  return l;
}

/* Elements of index v's blocks, over the nodes that have an index v. */
static size_t segment_len(const layout_t *L, int v) {
  size_t len = 0;
  for (int n = 0; n < L->t->nnodes; n++)
    if (v < node_size(L->t, n)) len += blen(L->boff, rank_at(L->t, n, v));
  return len;
}

static int nranks_of(const pccl_topo_t *t) { return t->node_off[t->nnodes]; }

/* The runs that copy blocks order[0 .. p) (ranks, in staging order) between
 * the two orders: a run of blocks of one length, evenly spaced on both
 * sides (one local index's blocks, node after node, on nodes of one size),
 * is one step, so the shuffle takes steps in proportion to the ranks of a
 * node, not of the job. */
static size_t make_runs(const size_t *boff, const int *order, int p, run_t *runs) {
  size_t n = 0;
  for (int i = 0, j; i < p; i = j) {
    size_t len = blen(boff, order[i]);
    long long step = i + 1 < p ? (long long)boff[order[i + 1]] - (long long)boff[order[i]] : 0;
    for (j = i + 1; j < p && blen(boff, order[j]) == len &&
                    (long long)boff[order[j]] - (long long)boff[order[j - 1]] == step;
         j++) {
    }
    if (j - i > 1 && step < (long long)len) j = i + 1; /* not apart: one block */
    runs[n++] = (run_t){boff[order[i]], len, (size_t)step, (uint32_t)(j - i)};
  }
  return n;
}

/* The largest node's size, and whether every node has it. */
static const int *node_sizes(pccl_sb_t *sb, const pccl_topo_t *t, int lives) {
  static const char tag;
  uint64_t key[2] = {(uintptr_t)&tag, (uintptr_t)t->node_off};
  int fresh;
  int *s = table(sb, lives, key, sizeof key, 2 * sizeof(int), &fresh);
  if (s && fresh) {
    for (int n = 0; n < t->nnodes; n++)
      if (node_size(t, n) > s[0]) s[0] = node_size(t, n);
    s[1] = 1;
    for (int n = 0; n < t->nnodes; n++) s[1] &= node_size(t, n) == s[0];
  }
  return s;
}

/* seg, rb and the runs in one table: seg[maxlocal], rb[nlocal + 1], the
 * number of runs, then the runs. */
static int fill_layout(pccl_sb_t *sb, layout_t *L, size_t *m) {
  const pccl_topo_t *t = L->t;
  size_t *seg = m, *rb = m + L->maxlocal, *nruns = rb + L->nlocal + 1;
  int *order = pccl_sb_scratch(sb, (size_t)nranks_of(t) * sizeof(int));
  if (!order) return 0;
  size_t at = L->boff[0];
  int i = 0;
  for (int r = 0; r < L->nlocal; r++) {
    rb[r] = at;
    for (int v = r; v < L->maxlocal; v += L->nlocal) {
      seg[v] = at;
      at += segment_len(L, v);
      for (int n = 0; n < t->nnodes; n++)
        if (v < node_size(t, n)) order[i++] = rank_at(t, n, v);
    }
  }
  rb[L->nlocal] = at;
  *nruns = make_runs(L->boff, order, nranks_of(t), (run_t *)(nruns + 1));
  return 1;
}

/* `lives`: t's arrays outlive the builder (the call's topology, or a
 * shared table). */
static int make_layout(pccl_sb_t *sb, const pccl_topo_t *t, int lives, int rank, int k,
                       const size_t *boff, layout_t *L) {
  static const char tag;
  L->t = t;
  L->k = k;
  L->boff = boff;
  L->node = t->node_of[rank];
  L->nlocal = node_size(t, L->node);
  L->local = local_index(t, L->node, rank);
  lives = lives && pccl_sb_is_shared(sb, boff);
  const int *sizes = node_sizes(sb, t, lives);
  if (!sizes) return 0;
  L->maxlocal = sizes[0];
  L->uniform = sizes[1];
  size_t words = (size_t)L->maxlocal + (size_t)L->nlocal + 2;
  size_t bytes = words * sizeof(size_t) + (size_t)nranks_of(t) * sizeof(run_t);
  uint64_t key[4] = {(uintptr_t)&tag, (uintptr_t)t->node_off, (uintptr_t)boff, (uint64_t)L->nlocal};
  int fresh;
  size_t *m = table(sb, lives, key, sizeof key, bytes, &fresh);
  if (!m || (fresh && !fill_layout(sb, L, m))) return 0;
  L->seg = m;
  L->rb = m + L->maxlocal;
  L->nruns = m[words - 1];
  L->runs = (const run_t *)(m + words);
  return 1;
}

/* The between-node sub-group of index v (this rank's node is member
 * L->node) and its blocks inside the staging vector: the same on every node
 * but for the member, so shared with the layout. */
static int inter_group(pccl_sb_t *sb, const layout_t *L, int v, pccl_group_t *g,
                       const size_t **gboff) {
  static const char tag;
  const pccl_topo_t *t = L->t;
  uint64_t key[3] = {(uintptr_t)&tag, (uintptr_t)L->seg, (uint64_t)v};
  int N = t->nnodes, fresh;
  size_t *b = table(sb, pccl_sb_is_shared(sb, L->seg), key, sizeof key,
                    ((size_t)N + 1) * sizeof(size_t) + (size_t)N * sizeof(int), &fresh);
  if (!b) return 0;
  int *ranks = (int *)(b + N + 1);
  if (fresh) {
    b[0] = L->seg[v];
    for (int n = 0; n < N; n++) {
      int m = node_size(t, n);
      ranks[n] = rank_at(t, n, v % m);
      b[n + 1] = b[n] + (v < m ? blen(L->boff, rank_at(t, n, v)) : 0);
    }
  }
  *g = (pccl_group_t){N, L->node, ranks, L->k};
  *gboff = b;
  return 1;
}

static pccl_group_t node_group(const layout_t *L) {
  pccl_group_t g = {L->nlocal, L->local, L->t->members + L->t->node_off[L->node], 2};
  return g;
}

/* Copies between rank order (at `ranked`) and a staging order (at
 * `staged`, from element `first` on) along the runs. */
static void shuffle(pccl_sb_t *sb, const run_t *runs, size_t nruns, size_t first,
                    pccl_place_t ranked, pccl_place_t staged, int to_ranked) {
  size_t pos = first;
  for (size_t i = 0; i < nruns; i++) {
    const run_t *u = &runs[i];
    pccl_region_t r = pccl_rg(ranked.buf, ranked.off + u->at, u->len);
    pccl_region_t s = pccl_rg(staged.buf, staged.off + pos, u->len);
    if (to_ranked)
      pccl_sb_copy_blocks(sb, r, u->step, s, u->len, u->n);
    else
      pccl_sb_copy_blocks(sb, s, u->len, r, u->step, u->n);
    pos += (size_t)u->n * u->len;
  }
}

/* Where this rank's block sits in staging order (boff[0] based): its place
 * in its index's sub-group. 0 when out of memory (recorded by the builder). */
static size_t staged_offset(pccl_sb_t *sb, const layout_t *L) {
  pccl_group_t g;
  const size_t *gboff;
  return inter_group(sb, L, L->local, &g, &gboff) ? gboff[L->node] : 0;
}

/* With `staged`, out is already in staging order: it is the staging vector,
 * and this rank's block is in place there (in is NULL). */
static void hier_allgather(pccl_sb_t *sb, const layout_t *L, const pccl_place_t *in,
                           pccl_place_t out, pccl_group_ag_fn inter, pccl_group_ag_fn intra,
                           int staged) {
  const pccl_topo_t *t = L->t;
  int me = rank_at(t, L->node, L->local);
  size_t total = L->rb[L->nlocal] - L->boff[0];
  pccl_place_t stage = staged ? out : (pccl_place_t){PCCL_BUF_TMP, pccl_sb_tmp(sb, total) - L->boff[0]};
  pccl_place_t here = {out.buf, out.off + L->boff[me]};
  const pccl_place_t *own = staged ? NULL : in ? in : &here;
  for (int v = L->local; v < L->maxlocal; v += L->nlocal) {
    pccl_group_t g;
    const size_t *gboff;
    if (!inter_group(sb, L, v, &g, &gboff)) return;
    /* Only index `local` is this rank's own; it stands in for the others. */
    inter(sb, &g, gboff, v == L->local ? own : NULL, stage);
  }
  pccl_group_t node = node_group(L);
  intra(sb, &node, L->rb, NULL, stage);
  if (!staged) shuffle(sb, L->runs, L->nruns, L->boff[0], out, stage, 1);
}

/* With `staged`, in is already in staging order and serves as the staging
 * vector (read only). */
static void hier_reduce_scatter(pccl_sb_t *sb, const layout_t *L, pccl_place_t in,
                                pccl_place_t out, pccl_group_rs_fn inter, pccl_group_rs_fn intra,
                                int staged) {
  size_t total = L->rb[L->nlocal] - L->boff[0];
  pccl_place_t stage = in;
  if (!staged) {
    stage = (pccl_place_t){PCCL_BUF_TMP, pccl_sb_tmp(sb, total) - L->boff[0]};
    shuffle(sb, L->runs, L->nruns, L->boff[0], in, stage, 0);
  }
  size_t part = L->rb[L->local + 1] - L->rb[L->local];
  size_t acc = pccl_sb_tmp(sb, part);
  pccl_group_t node = node_group(L);
  intra(sb, &node, L->rb, stage, (pccl_place_t){PCCL_BUF_TMP, acc});
  pccl_place_t mine = {PCCL_BUF_TMP, acc - L->rb[L->local]}; /* staging offsets map here */
  for (int v = L->local; v < L->maxlocal; v += L->nlocal) {
    pccl_group_t g;
    const size_t *gboff;
    if (!inter_group(sb, L, v, &g, &gboff)) return;
    inter(sb, &g, gboff, mine, out); /* empty result where v is not this rank's index */
  }
}

static pccl_group_ag_fn intra_ag(const pccl_coll_args_t *a) {
  return a->intra == PCCL_INTRA_RECURSIVE ? pccl_recmul_allgather : pccl_ring_allgather;
}

static pccl_group_rs_fn intra_rs(const pccl_coll_args_t *a) {
  return a->intra == PCCL_INTRA_RECURSIVE ? pccl_recmul_reduce_scatter : pccl_ring_reduce_scatter;
}

/* The collective's generators over topology t (the nodes, or k-ring's
 * groups), between-node algorithms inter_*, in-node ones intra_*. */
typedef struct {
  const pccl_topo_t *t;
  pccl_group_ag_fn inter_ag, intra_ag;
  pccl_group_rs_fn inter_rs, intra_rs;
  int k; /* the between-node algorithm's radix */
} plan_t;

/* Whether t's arrays outlive the builder: the call's own topology, or
 * k-ring's groups from a shared table. */
static int topo_lives(pccl_sb_t *sb, const pccl_coll_args_t *a, const pccl_topo_t *t) {
  return t == a->topo || pccl_sb_is_shared(sb, t->node_off);
}

static pccl_status_t gen_allgather(pccl_sb_t *sb, const pccl_coll_args_t *a, const plan_t *P) {
  const size_t *boff = pccl_blocks_equal(sb, a->nranks, a->count);
  layout_t L;
  if (!P->t) return PCCL_ERR_INTERNAL;
  if (!boff || !make_layout(sb, P->t, topo_lives(sb, a, P->t), a->rank, P->k, boff, &L))
    return PCCL_ERR_NO_MEMORY;
  pccl_place_t in = {PCCL_BUF_SEND, 0}, out = {PCCL_BUF_RECV, 0};
  hier_allgather(sb, &L, &in, out, P->inter_ag, P->intra_ag, 0);
  return PCCL_OK;
}

static pccl_status_t gen_reduce_scatter(pccl_sb_t *sb, const pccl_coll_args_t *a, const plan_t *P) {
  const size_t *boff = pccl_blocks_equal(sb, a->nranks, a->count);
  layout_t L;
  if (!P->t) return PCCL_ERR_INTERNAL;
  if (!boff || !make_layout(sb, P->t, topo_lives(sb, a, P->t), a->rank, P->k, boff, &L))
    return PCCL_ERR_NO_MEMORY;
  pccl_place_t in = {PCCL_BUF_SEND, 0}, out = {PCCL_BUF_RECV, 0};
  hier_reduce_scatter(sb, &L, in, out, P->inter_rs, P->intra_rs, 0);
  return PCCL_OK;
}

/* The all-reduce of elements [first, first + count) of the vector. */
static pccl_status_t allreduce_range(pccl_sb_t *sb, const pccl_coll_args_t *a, const plan_t *P,
                                     size_t first, size_t count) {
  const size_t *boff = pccl_blocks_split_at(sb, a->nranks, first, count);
  layout_t L;
  if (!P->t) return PCCL_ERR_INTERNAL;
  if (!boff || !make_layout(sb, P->t, topo_lives(sb, a, P->t), a->rank, P->k, boff, &L))
    return PCCL_ERR_NO_MEMORY;
  int staged = L.uniform; /* every node's staging order is the same */
  pccl_place_t in = {PCCL_BUF_SEND, 0}, out = {PCCL_BUF_RECV, 0};
  pccl_place_t mine = {PCCL_BUF_RECV, staged ? staged_offset(sb, &L) : boff[a->rank]};
  hier_reduce_scatter(sb, &L, in, mine, P->inter_rs, P->intra_rs, staged);
  hier_allgather(sb, &L, NULL, out, P->inter_ag, P->intra_ag, staged);
  return PCCL_OK;
}

static pccl_status_t gen_allreduce(pccl_sb_t *sb, const pccl_coll_args_t *a, const plan_t *P) {
  return allreduce_range(sb, a, P, 0, a->count);
}

/* The pipelined two-level all-reduce: the vector cut into a->k chunks (at
 * least one element a rank each), each through the all-reduce above on its
 * own. The chunks share no memory, so the schedule has no edge between
 * them and the executor runs them side by side: one chunk's in-node steps
 * overlap another's exchange between nodes, and every rank has a message
 * of each chunk in flight where one whole-vector step would leave the link
 * idle between rounds. */
static pccl_status_t gen_allreduce_pipe(pccl_sb_t *sb, const pccl_coll_args_t *a,
                                        const plan_t *P) {
  size_t per_rank = a->count / (size_t)a->nranks;
  int chunks = a->k < 1 ? 1 : a->k;
  if ((size_t)chunks > per_rank) chunks = per_rank > 0 ? (int)per_rank : 1;
  const size_t *cut = pccl_blocks_split(sb, chunks, a->count);
  if (!cut) return PCCL_ERR_NO_MEMORY;
  for (int c = 0; c < chunks; c++) {
    pccl_status_t st = allreduce_range(sb, a, P, cut[c], cut[c + 1] - cut[c]);
    if (st != PCCL_OK) return st;
  }
  return PCCL_OK;
}

/* The nodes as they are, the given between-node algorithms, PCCL_HIER_INTRA inside. */
static plan_t nodes(const pccl_coll_args_t *a, pccl_group_ag_fn inter_ag, pccl_group_rs_fn inter_rs) {
  plan_t P = {a->topo, inter_ag, intra_ag(a), inter_rs, intra_rs(a), a->k};
  return P;
}

pccl_status_t pccl_gen_allgather_hier_ring(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  plan_t P = nodes(a, pccl_ring_allgather, NULL);
  return gen_allgather(sb, a, &P);
}

pccl_status_t pccl_gen_allgather_hier_recmul(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  plan_t P = nodes(a, pccl_recmul_allgather, NULL);
  return gen_allgather(sb, a, &P);
}

pccl_status_t pccl_gen_allgather_hier_bruck(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  plan_t P = nodes(a, pccl_bruck_allgather, NULL);
  return gen_allgather(sb, a, &P);
}

pccl_status_t pccl_gen_rs_hier_ring(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  plan_t P = nodes(a, NULL, pccl_ring_reduce_scatter);
  return gen_reduce_scatter(sb, a, &P);
}

pccl_status_t pccl_gen_rs_hier_recmul(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  plan_t P = nodes(a, NULL, pccl_recmul_reduce_scatter);
  return gen_reduce_scatter(sb, a, &P);
}

pccl_status_t pccl_gen_allreduce_hier_ring(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  plan_t P = nodes(a, pccl_ring_allgather, pccl_ring_reduce_scatter);
  return gen_allreduce(sb, a, &P);
}

pccl_status_t pccl_gen_allreduce_hier_recmul(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  plan_t P = nodes(a, pccl_recmul_allgather, pccl_recmul_reduce_scatter);
  return gen_allreduce(sb, a, &P);
}

pccl_status_t pccl_gen_allreduce_hier_ring_pipe(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  plan_t P = nodes(a, pccl_ring_allgather, pccl_ring_reduce_scatter);
  P.k = 2; /* a->k is the number of chunks, not a radix */
  return gen_allreduce_pipe(sb, a, &P);
}

pccl_status_t pccl_gen_allreduce_hier_rec_pipe(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  plan_t P = nodes(a, pccl_recmul_allgather, pccl_recmul_reduce_scatter);
  P.k = 2; /* a->k is the number of chunks: recursive doubling between nodes */
  return gen_allreduce_pipe(sb, a, &P);
}

/* One leader per node. Below a few KiB per rank the cost of a message, not
 * of a byte, dominates; there, having every rank of a node talk off-node
 * multiplies the messages each NIC (and, on a host with fewer cores than
 * ranks, each core) must handle. These variants, the layout of Open MPI's
 * HAN and of the classic SMP-aware collectives, let only each node's first
 * rank (its leader) talk between nodes, with the node's whole part:
 *   all-gather: binomial gather to the leader, recursive multiplying
 *     (radix k) all-gather between leaders, binomial broadcast of the whole
 *     vector in the node;
 *   reduce-scatter: binomial reduce of the whole vector to the leader,
 *     recursive multiplying reduce-scatter between leaders, binomial
 *     scatter in the node.
 * The staging order is node-major (t->members), which is rank order, with
 * no shuffle, when each node holds consecutive ranks in order.
 *
 * Cost (N nodes of M ranks, n bytes in total, L = ceil(log2 M)):
 *   the between-node algorithm on n bytes over N members, plus, inside the
 *   node, 2 L alpha + L n beta (+ L n gamma) for the broadcast (reduce) of
 *   the whole vector and (M-1)/M (n/N) beta for the gather (scatter) of the
 *   node's part: cheap in messages, dear in bytes once n is large. */
typedef struct {
  int node, local;
  const size_t *off;  /* off[i]: where position i of node-major order starts; off[p]: the end */
  const size_t *noff; /* noff[n]: where node n's part starts (the leaders' blocks) */
  pccl_group_t in_node, leaders;
  int ranked; /* node-major order is rank order */
  const run_t *runs; /* the shuffle between rank and node-major order */
  size_t nruns;
} leader_t;

/* Its tables, the same on every rank, in one: off[p + 1], noff[N + 1],
 * ranked, the number of runs, the runs (p at most), the leaders (N). */
static int make_leader(pccl_sb_t *sb, const pccl_coll_args_t *a, const size_t *boff,
                       leader_t *L) {
  static const char tag;
  const pccl_topo_t *t = a->topo;
  int p = nranks_of(t), N = t->nnodes, fresh;
  size_t words = (size_t)p + (size_t)N + 4;
  uint64_t key[3] = {(uintptr_t)&tag, (uintptr_t)t->node_off, (uintptr_t)boff};
  size_t *m = table(sb, pccl_sb_is_shared(sb, boff), key, sizeof key,
                    words * sizeof(size_t) + (size_t)p * sizeof(run_t) + (size_t)N * sizeof(int),
                    &fresh);
  if (!m) return 0;
  size_t *off = m, *noff = m + p + 1, *ranked = noff + N + 1, *nruns = ranked + 1;
  run_t *runs = (run_t *)(m + words);
  int *lead = (int *)(runs + p);
  if (fresh) {
    *ranked = 1;
    off[0] = boff[0];
    for (int i = 0; i < p; i++) {
      off[i + 1] = off[i] + blen(boff, t->members[i]);
      *ranked &= t->members[i] == i;
    }
    for (int n = 0; n <= N; n++) noff[n] = off[t->node_off[n]];
    for (int n = 0; n < N; n++) lead[n] = rank_at(t, n, 0);
    *nruns = *ranked ? 0 : make_runs(boff, t->members, p, runs);
  }
  *L = (leader_t){.off = off, .noff = noff, .ranked = (int)*ranked, .runs = runs, .nruns = *nruns};
  L->node = t->node_of[a->rank];
  L->local = local_index(t, L->node, a->rank);
  L->in_node = (pccl_group_t){node_size(t, L->node), L->local, t->members + t->node_off[L->node], 2};
  L->leaders = (pccl_group_t){N, L->node, lead, a->k};
  return 1;
}

static void leader_allgather(pccl_sb_t *sb, const pccl_topo_t *t, const leader_t *L,
                             const size_t *boff, pccl_place_t in, pccl_place_t out) {
  int p = nranks_of(t);
  size_t total = L->off[p] - boff[0];
  pccl_place_t stage = L->ranked ? out : (pccl_place_t){PCCL_BUF_TMP, pccl_sb_tmp(sb, total) - boff[0]};
  pccl_binomial_gather(sb, &L->in_node, L->off + t->node_off[L->node], &in, stage);
  if (L->local == 0) pccl_recmul_allgather(sb, &L->leaders, L->noff, NULL, stage);
  pccl_binomial_bcast(sb, &L->in_node, NULL, pccl_rg(stage.buf, stage.off + boff[0], total));
  if (!L->ranked) shuffle(sb, L->runs, L->nruns, boff[0], out, stage, 1);
}

static void leader_reduce_scatter(pccl_sb_t *sb, const pccl_topo_t *t, const leader_t *L,
                                  const size_t *boff, pccl_place_t in, pccl_place_t out, int rank) {
  int p = nranks_of(t);
  size_t total = L->off[p] - boff[0];
  const size_t *nodeoff = L->off + t->node_off[L->node]; /* this node's blocks */
  size_t part = L->noff[L->node + 1] - L->noff[L->node];
  pccl_region_t whole = pccl_rg(in.buf, in.off + boff[0], total);
  pccl_place_t mine = {PCCL_BUF_TMP, 0}; /* the node's part, reduced (the leader's) */
  if (L->local != 0) {
    pccl_binomial_reduce(sb, &L->in_node, whole, pccl_rg(PCCL_BUF_TMP, 0, 0));
  } else {
    pccl_place_t sum = {PCCL_BUF_TMP, pccl_sb_tmp(sb, total) - boff[0]}; /* rank order */
    pccl_binomial_reduce(sb, &L->in_node, whole, pccl_rg(PCCL_BUF_TMP, sum.off + boff[0], total));
    if (!L->ranked) {
      pccl_place_t staged = {PCCL_BUF_TMP, pccl_sb_tmp(sb, total) - boff[0]};
      shuffle(sb, L->runs, L->nruns, boff[0], sum, staged, 0);
      sum = staged;
    }
    mine.off = pccl_sb_tmp(sb, part) - nodeoff[0];
    pccl_recmul_reduce_scatter(sb, &L->leaders, L->noff, sum,
                               (pccl_place_t){PCCL_BUF_TMP, mine.off + nodeoff[0]});
  }
  pccl_binomial_scatter(sb, &L->in_node, nodeoff, mine, pccl_rg(out.buf, out.off, blen(boff, rank)));
}

static pccl_status_t gen_leader(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  const size_t *boff = pccl_blocks_equal(sb, a->nranks, a->count);
  leader_t L;
  if (!a->topo) return PCCL_ERR_INTERNAL;
  if (!boff || !make_leader(sb, a, boff, &L)) return PCCL_ERR_NO_MEMORY;
  pccl_place_t in = {PCCL_BUF_SEND, 0}, out = {PCCL_BUF_RECV, 0};
  if (a->coll == PCCL_COLL_ALLGATHER)
    leader_allgather(sb, a->topo, &L, boff, in, out);
  else
    leader_reduce_scatter(sb, a->topo, &L, boff, in, out, a->rank);
  return PCCL_OK;
}

/* All-reduce, one leader per node: binomial reduce of the whole vector to
 * the leader, recursive multiplying (radix k) all-reduce between leaders,
 * binomial broadcast in the node. Between nodes only log_k N rounds of
 * N ranks, where the two-level all-reduce makes 2 log2 N rounds of every
 * rank: the form for vectors small enough that messages, not bytes, cost.
 * Cost: 2 ceil(log2 M) (alpha + n beta) + n gamma log2 M in the node, plus
 * log_k N (alpha + (k-1) n beta + (k-1) n gamma) between nodes. */
/* Between the leaders, `rab` set: Rabenseifner's form (recursive
 * multiplying reduce-scatter of N near-equal parts, then all-gather), which
 * moves 2 (N-1)/N of the vector where the whole-vector exchange moves it
 * log_k N times; else the recursive multiplying all-reduce. */
static pccl_status_t gen_leader_allreduce(pccl_sb_t *sb, const pccl_coll_args_t *a, int rab) {
  static const char tag;
  const pccl_topo_t *t = a->topo;
  if (!t) return PCCL_ERR_INTERNAL;
  int N = t->nnodes, fresh;
  uint64_t key[2] = {(uintptr_t)&tag, (uintptr_t)t->node_off};
  int *lead = table(sb, 1, key, sizeof key, (size_t)N * sizeof(int), &fresh);
  if (!lead) return PCCL_ERR_NO_MEMORY;
  if (fresh)
    for (int n = 0; n < N; n++) lead[n] = rank_at(t, n, 0);
  int node = t->node_of[a->rank], local = local_index(t, node, a->rank);
  pccl_group_t in_node = {node_size(t, node), local, t->members + t->node_off[node], 2};
  pccl_group_t leaders = {N, node, lead, a->k};
  pccl_region_t out = pccl_rg(PCCL_BUF_RECV, 0, a->count);
  pccl_region_t in = a->inplace ? out : pccl_rg(PCCL_BUF_SEND, 0, a->count);
  if (in_node.size > 1) {
    pccl_binomial_reduce(sb, &in_node, in, out);
    in = out;
  }
  if (local == 0 && rab) {
    const size_t *parts = pccl_blocks_split(sb, N, a->count);
    if (!parts) return PCCL_ERR_NO_MEMORY;
    pccl_place_t vec = {PCCL_BUF_RECV, 0};
    pccl_recmul_reduce_scatter(sb, &leaders, parts, (pccl_place_t){in.buf, in.off},
                               (pccl_place_t){PCCL_BUF_RECV, parts[node]});
    pccl_recmul_allgather(sb, &leaders, parts, NULL, vec);
  } else if (local == 0) {
    pccl_recmul_allreduce(sb, &leaders, in, out);
  }
  if (in_node.size > 1) pccl_binomial_bcast(sb, &in_node, NULL, out);
  return PCCL_OK;
}

pccl_status_t pccl_gen_allreduce_hier_leader(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  return gen_leader_allreduce(sb, a, 0);
}

pccl_status_t pccl_gen_allreduce_hier_leader_rab(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  return gen_leader_allreduce(sb, a, 1);
}

pccl_status_t pccl_gen_allgather_hier_leader(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  return gen_leader(sb, a);
}

pccl_status_t pccl_gen_rs_hier_leader(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  return gen_leader(sb, a);
}

/* k-ring (PICCL): groups of k consecutive ranks play the nodes; ring between
 * the groups (p/k - 1 rounds), then ring inside each (k - 1 rounds of p/k
 * blocks, one message each thanks to the staging order). A short last group
 * is handled as an uneven node. */
typedef pccl_status_t (*plan_gen_fn)(pccl_sb_t *, const pccl_coll_args_t *, const plan_t *);

static pccl_status_t kring(pccl_sb_t *sb, const pccl_coll_args_t *a, plan_gen_fn gen) {
  pccl_topo_t t;
  pccl_status_t st = pccl_topo_groups(sb, a->nranks, a->k < 1 ? 1 : a->k, &t);
  plan_t P = {&t, pccl_ring_allgather, pccl_ring_allgather, pccl_ring_reduce_scatter,
              pccl_ring_reduce_scatter, 2};
  return st == PCCL_OK ? gen(sb, a, &P) : st;
}

pccl_status_t pccl_gen_allgather_kring(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  return kring(sb, a, gen_allgather);
}

pccl_status_t pccl_gen_rs_kring(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  return kring(sb, a, gen_reduce_scatter);
}

pccl_status_t pccl_gen_allreduce_kring(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  return kring(sb, a, gen_allreduce);
}
