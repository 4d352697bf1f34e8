/* classes.c - the simulator's shortcut for schedules that are the same on
 * every node up to a renaming of the nodes.
 *
 * With N nodes of M ranks each, a group of node renamings acts on the ranks
 * (node x, local l) -> (g(x), l), keeping each rank's local index, hence its
 * NIC, and which pairs of ranks share a node. Two groups are tried, each
 * with exactly one element taking node 0 to any node c:
 *   rotation, g_c(x) = (x + c) mod N: rings;
 *   exclusive or, g_c(x) = x ^ c, N a power of two: recursive doubling and
 *     halving, between nodes or over all ranks, and the forms built on them.
 * When rank g_c(r)'s schedule is rank r's with every peer renamed by g_c, the
 * model (every node alike, every NIC alike, the same parameters wherever a
 * level is the same) is invariant under g_c, and every rank of a class
 * {g_c(r)} goes through the same states at the same times. Simulating node
 * 0's M ranks then predicts all N M: a message from rank a to rank b =
 * g_c(b0) is, renamed by g_c's inverse, the message that node 0's rank b0
 * gets at the same moment from g_c^-1(a) (its "virtual sender"), and what b's
 * node's NIC is doing is what node 0's same NIC is doing.
 *
 * The condition is checked, not assumed: rank r's schedule is compared step
 * by step (kind, sizes, dependencies, renamed peers) with those of its images
 * on a spread of nodes (the first ones, the middle, the last, a few in
 * between); the local steps at the end that nothing waits for are compared
 * as a set, since a final shuffle copies the same blocks in another order.
 * A generator that renames differently on a node not sampled would escape
 * the check; pccl_sim_case_t.full turns the shortcut off, and the tests
 * compare both wherever the full simulation runs. */
#include <stdlib.h>
#include <string.h>

#include "sim_graph.h"

static int is_message(int kind) {
  return kind == PCCL_STEP_SEND || kind == PCCL_STEP_RECV || kind == PCCL_STEP_RECV_REDUCE;
}

/* The node g_c takes x to, or (inverse) the node it takes to x. */
static int act(pccl_sim_sym_t sym, int nnodes, int c, int x, int inverse) {
  if (sym == PCCL_SIM_SYM_XOR) return x ^ c;
  return inverse ? (x - c + nnodes) % nnodes : (x + c) % nnodes;
}

static int rename_rank(const pccl_sim_graph_t *g, int c, int r, int inverse) {
  int per = g->ranks_per_node;
  return act((pccl_sim_sym_t)g->sym, g->nranks / per, c, r / per, inverse) * per + r % per;
}

int pccl__sim_class_of(const pccl_sim_graph_t *g, int r) {
  return g->sym ? r % g->ranks_per_node : r;
}

int pccl__sim_virtual_sender(const pccl_sim_graph_t *g, int from, int to) {
  if (!g->sym) return from;
  return rename_rank(g, to / g->ranks_per_node, from, 1);
}

/* A step as the model sees it, peers aside: kind, flags, argument (not for
 * messages), sizes and dependencies. */
typedef struct {
  const pccl_step_t *st;
  const uint32_t *deps;
} sig_t;

static int cmp_sig(const sig_t *a, const sig_t *b) {
  const pccl_step_t *x = a->st, *y = b->st;
  long long d[] = {(long long)x->kind - y->kind,
                   (long long)x->flags - y->flags,
                   is_message(x->kind) ? 0 : (long long)x->arg - y->arg,
                   (long long)x->dst.len - (long long)y->dst.len,
                   (long long)x->src.len - (long long)y->src.len,
                   (long long)x->src2.len - (long long)y->src2.len,
                   (long long)x->ndeps - y->ndeps};
  for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
    if (d[i]) return d[i] < 0 ? -1 : 1;
  for (uint32_t i = 0; i < x->ndeps; i++)
    if (a->deps[i] != b->deps[i]) return a->deps[i] < b->deps[i] ? -1 : 1;
  return 0;
}

static int qsort_sig(const void *a, const void *b) { return cmp_sig(a, b); }

static sig_t sig_of(const pccl_sched_t *s, uint32_t i) {
  sig_t g = {&s->steps[i], s->deps + s->steps[i].dep_off};
  return g;
}

/* Where the schedule's tail begins: the local steps at its end that nothing
 * depends on (a final shuffle's copies). */
static uint32_t tail_of(const pccl_sched_t *s) {
  uint32_t t = s->nsteps;
  while (t > 0 && !is_message(s->steps[t - 1].kind) && s->succ_off[t] == s->succ_off[t - 1]) t--;
  return t;
}

/* Whether the tails [from, n) of a and b hold the same steps in some order.
 * Their order cannot change a prediction: nothing waits for them, and what
 * they leave behind, the time their rank's core is busy, depends on when
 * each became ready and for how long it runs, not on which one ran first
 * when several became ready together. */
static int same_tail(const pccl_sched_t *a, const pccl_sched_t *b, uint32_t from, int *ok) {
  uint32_t n = a->nsteps - from;
  sig_t *x = malloc((n ? n : 1) * sizeof(sig_t)), *y = malloc((n ? n : 1) * sizeof(sig_t));
  if (!x || !y) {
    free(x);
    free(y);
    return 0;
  }
  for (uint32_t i = 0; i < n; i++) {
    x[i] = sig_of(a, from + i);
    y[i] = sig_of(b, from + i);
  }
  qsort(x, n, sizeof(sig_t), qsort_sig);
  qsort(y, n, sizeof(sig_t), qsort_sig);
  *ok = 1;
  for (uint32_t i = 0; i < n && *ok; i++) *ok = cmp_sig(&x[i], &y[i]) == 0;
  free(x);
  free(y);
  return 1;
}

/* Whether `img` is `s` with every peer renamed by g_c, step by step but for
 * the order of the tail. Offsets are not compared: the model reads sizes,
 * not places. Returns -1 when out of memory. */
static int renamed(const pccl_sim_graph_t *g, int c, const pccl_sched_t *s, const pccl_sched_t *img) {
  uint32_t tail = tail_of(s);
  if (s->nsteps != img->nsteps || tail_of(img) != tail) return 0;
  for (uint32_t i = 0; i < tail; i++) {
    const pccl_step_t *a = &s->steps[i], *b = &img->steps[i];
    sig_t x = sig_of(s, i), y = sig_of(img, i);
    if (cmp_sig(&x, &y) != 0) return 0;
    if (is_message(a->kind) && rename_rank(g, c, a->arg, 0) != b->arg) return 0;
  }
  int ok;
  if (!same_tail(s, img, tail, &ok)) return -1;
  return ok;
}

/* The nodes whose ranks are compared with node 0's: up to `max`, distinct,
 * in 1 .. N-1. */
static int sample_nodes(int nnodes, int *out, int max) {
  long long pick[] = {1, 2, 3, nnodes / 3, nnodes / 2 - 1, nnodes / 2, nnodes / 2 + 1,
                      (2LL * nnodes) / 3, (5LL * nnodes) / 7, nnodes - 2, nnodes - 1};
  int n = 0;
  for (size_t i = 0; i < sizeof pick / sizeof pick[0] && n < max; i++) {
    int c = (int)pick[i], dup = 0;
    for (int j = 0; j < n; j++) dup |= out[j] == c;
    if (c >= 1 && c < nnodes && !dup) out[n++] = c;
  }
  return n;
}

pccl_status_t pccl__sim_find_symmetry(pccl_sim_graph_t *g, const pccl_sched_t *rep,
                                      pccl_sim_gen_fn gen, void *ctx) {
  int per = g->ranks_per_node, nnodes = g->nranks / per, nodes[16];
  g->sym = PCCL_SIM_SYM_NONE;
  if (nnodes < 2 || g->nranks % per != 0) return PCCL_OK;
  int nsample = sample_nodes(nnodes, nodes, 16);
  const pccl_sim_sym_t tries[] = {PCCL_SIM_SYM_ROTATE, PCCL_SIM_SYM_XOR};
  for (size_t t = 0; t < sizeof tries / sizeof tries[0]; t++) {
    if (tries[t] == PCCL_SIM_SYM_XOR && (nnodes & (nnodes - 1)) != 0) continue;
    g->sym = tries[t];
    int ok = 1;
    for (int i = 0; ok && i < nsample; i++)
      for (int l = 0; ok && l < per; l++) {
        pccl_sched_t img;
        pccl_status_t st = gen(ctx, rename_rank(g, nodes[i], l, 0), &img);
        if (st != PCCL_OK) {
          g->sym = PCCL_SIM_SYM_NONE;
          return st;
        }
        ok = renamed(g, nodes[i], &rep[l], &img);
        pccl_sched_free(&img);
        if (ok < 0) {
          g->sym = PCCL_SIM_SYM_NONE;
          return PCCL_ERR_NO_MEMORY;
        }
      }
    if (ok) return PCCL_OK;
  }
  g->sym = PCCL_SIM_SYM_NONE;
  return PCCL_OK;
}
