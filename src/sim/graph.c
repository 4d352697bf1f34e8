/* graph.c - builds the simulator's graph: every rank's schedule generated as
 * the library generates it (src/coll/coll.c), converted at once into compact
 * steps and freed, then each send paired with its receive. Where the
 * schedules are alike on every node up to a renaming of the nodes, only node
 * 0's ranks are generated and simulated (classes.c).
 *
 * Step bytes: a message's region, a local step's destination, a compression's
 * source (its destination is the slot). A compressed stream (a VARLEN send or
 * receive) is sent at its run-time length, which the schedule does not know:
 * its region is the slot, sized by the builder for the worst case of the
 * slot's element count n (pccl_sb_slot_elems). Since that size grows strictly
 * with n, n is recovered exactly by bisection on pccl_sb_slot_elems, and the
 * stream is ceil(n x elem_size / ratio) bytes.
 *
 * Pairing follows MPI's ordering rule and ignores tags (they wrap): the n-th
 * send from a to b feeds the n-th receive at b whose peer is a, in step
 * order. Sends and receives are sorted stably by sender and then by receiver
 * (counting sorts, linear in messages plus ranks; with classes, a send's
 * receiver is its peer's class and its sender the virtual one), which puts
 * both lists in (receiver, sender, order) order; walking them side by side
 * pairs them, and the first place they differ names the pair of ranks whose
 * counts disagree. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_graph.h"

#define PCCL_SIM_MAX_MSG_BYTES ((size_t)1 << 30) /* as coll.c's PCCL_MAX_MSG_BYTES */

typedef struct {
  pccl_sim_graph_t *g;
  size_t step_cap, off_cap, succ_cap, nsucc;
  const pccl_sb_t *sizer;       /* a builder of the case's element size: slot sizes */
  double ratio;                 /* the case's compression ratio, >= 1 */
  size_t last_cap, last_count;  /* the last slot size resolved, and its count */
} builder_t;

static void say(char *msg, size_t len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, len, fmt, ap);
  va_end(ap);
}

static int reserve(void **v, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return 1;
  size_t ncap = *cap ? *cap : 1024;
  while (ncap < need) ncap += ncap / 2;
  void *nv = realloc(*v, ncap * elem);
  if (!nv) return 0;
  *v = nv;
  *cap = ncap;
  return 1;
}

static int is_receive(int kind) { return kind == PCCL_STEP_RECV || kind == PCCL_STEP_RECV_REDUCE; }

/* The element count whose slot is `cap` elements; SIZE_MAX if none is. */
static size_t slot_count(builder_t *b, size_t cap) {
  if (cap == b->last_cap) return b->last_count;
  size_t lo = 0, hi = cap; /* a slot is larger than its count: the answer is <= cap */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (pccl_sb_slot_elems(b->sizer, mid) < cap)
      lo = mid + 1;
    else
      hi = mid;
  }
  size_t count = pccl_sb_slot_elems(b->sizer, lo) == cap ? lo : SIZE_MAX;
  b->last_cap = cap;
  b->last_count = count;
  return count;
}

/* What a step moves or works on, in bytes; UINT64_MAX for a slot whose size
 * matches no element count. */
static uint64_t step_bytes(builder_t *b, const pccl_step_t *st, size_t elem_size) {
  size_t elems = st->kind == PCCL_STEP_SEND || st->kind == PCCL_STEP_COMPRESS ? st->src.len
                                                                               : st->dst.len;
  if (st->kind == PCCL_STEP_NODE) elems = st->src.len + st->dst.len; /* copied in, then out */
  if (st->kind == PCCL_STEP_COPY && st->arg > 1) elems *= (size_t)st->arg; /* blocks */
  if (!(st->flags & PCCL_STEP_VARLEN)) return (uint64_t)elems * elem_size;
  size_t count = slot_count(b, elems);
  if (count == SIZE_MAX) return UINT64_MAX;
  return (uint64_t)ceil((double)count * (double)elem_size / b->ratio);
}

/* Appends rank r's schedule to the graph. */
static pccl_status_t append_rank(builder_t *b, const pccl_sched_t *s, int r, size_t elem_size) {
  pccl_sim_graph_t *g = b->g;
  size_t base = g->nsteps, n = s->nsteps, edges = s->succ_off[n];
  if (base + n >= PCCL_SIM_NIL || b->nsucc + edges > UINT32_MAX) return PCCL_ERR_UNSUPPORTED;
  if (!reserve((void **)&g->step, &b->step_cap, base + n, sizeof(*g->step)) ||
      !reserve((void **)&g->succ_off, &b->off_cap, base + n + 1, sizeof(*g->succ_off)) ||
      !reserve((void **)&g->succ, &b->succ_cap, b->nsucc + edges, sizeof(*g->succ)))
    return PCCL_ERR_NO_MEMORY;
  for (size_t i = 0; i < n; i++) {
    const pccl_step_t *st = &s->steps[i];
    int message = st->kind == PCCL_STEP_SEND || is_receive(st->kind);
    uint64_t bytes = step_bytes(b, st, elem_size);
    if (bytes == UINT64_MAX) return PCCL_ERR_INTERNAL;
    g->step[base + i] = (pccl_sim_step_t){.bytes = bytes,
                                          .rank = r,
                                          .peer = message ? st->arg : -1,
                                          .pending = st->ndeps,
                                          .match = PCCL_SIM_NIL,
                                          .next = PCCL_SIM_NIL,
                                          .kind = (uint8_t)st->kind};
    g->succ_off[base + i] = (uint32_t)(b->nsucc + s->succ_off[i]);
  }
  for (size_t e = 0; e < edges; e++) g->succ[b->nsucc + e] = (uint32_t)(base + s->succ[e]);
  b->nsucc += edges;
  g->nsteps = (uint32_t)(base + n);
  g->succ_off[g->nsteps] = (uint32_t)b->nsucc;
  return PCCL_OK;
}

typedef struct {
  const pccl_sim_case_t *c;
  int k;
  const pccl_topo_t *topo;
  size_t full_max_steps; /* see pccl__sim_graph_build */
  int *over;             /* set when c->max_steps is passed */
  pccl_memo_t *memo;     /* tables every rank's generator computes alike */
} gen_ctx_t;

/* Rank r's schedule, as coll.c's generate() builds it (a pccl_sim_gen_fn). */
static pccl_status_t generate(void *ctx, int r, pccl_sched_t *out) {
  const gen_ctx_t *x = ctx;
  const pccl_sim_case_t *c = x->c;
  pccl_sb_t *sb;
  pccl_status_t st =
      pccl_sb_create(c->nranks, r, c->elem_size, 0, 0, PCCL_SIM_MAX_MSG_BYTES, &sb);
  if (st != PCCL_OK) return st;
  pccl_sb_set_memo(sb, x->memo);
  pccl_coll_args_t a = {.coll = c->coll, .nranks = c->nranks, .rank = r, .root = 0,
                        .count = c->count, .inplace = 0, .topo = x->topo,
                        .intra = PCCL_INTRA_RING, .k = x->k};
  st = c->algo->generate(sb, &a);
  if (st != PCCL_OK) {
    pccl_sb_destroy(sb);
    return st;
  }
  return pccl_sb_finish(sb, out);
}

static pccl_status_t make_topo(int nranks, int per_node, pccl_topo_t *t) {
  int *node = malloc((size_t)nranks * sizeof(int)), *local = malloc((size_t)nranks * sizeof(int));
  pccl_status_t st = PCCL_ERR_NO_MEMORY;
  if (node && local) {
    for (int r = 0; r < nranks; r++) {
      node[r] = r / per_node;
      local[r] = r % per_node;
    }
    st = pccl_topo_create(nranks, node, local, t);
  }
  free(node);
  free(local);
  return st;
}

/* ---- pairing -------------------------------------------------------------- */

/* The two ends of a message step as the pairing sees them: a receive is
 * at its rank, from its peer; a send is at its peer's class, from the
 * virtual sender (classes.c; the send's own rank and peer in a full graph). */
static int receiver(const pccl_sim_graph_t *g, const pccl_sim_step_t *s) {
  return s->kind == PCCL_STEP_SEND ? pccl__sim_class_of(g, s->peer) : s->rank;
}

static int sender(const pccl_sim_graph_t *g, const pccl_sim_step_t *s) {
  return s->kind == PCCL_STEP_SEND ? pccl__sim_virtual_sender(g, s->rank, s->peer) : s->peer;
}

/* Stable counting sort of step indices by receiver (by_sender 0) or sender (1). */
static void sort_by(const pccl_sim_graph_t *g, const uint32_t *in, uint32_t *out, size_t n,
                    int by_sender, size_t *count) {
  memset(count, 0, ((size_t)g->nranks + 1) * sizeof(size_t));
  for (size_t i = 0; i < n; i++) {
    const pccl_sim_step_t *s = &g->step[in[i]];
    count[(by_sender ? sender(g, s) : receiver(g, s)) + 1]++;
  }
  for (int r = 0; r < g->nranks; r++) count[r + 1] += count[r];
  for (size_t i = 0; i < n; i++) {
    const pccl_sim_step_t *s = &g->step[in[i]];
    out[count[by_sender ? sender(g, s) : receiver(g, s)]++] = in[i];
  }
}

/* Walks sends and receives, both in (receiver, sender, order) order. */
static pccl_status_t pair(pccl_sim_graph_t *g, const uint32_t *snd, size_t ns, const uint32_t *rcv,
                          size_t nr, char *msg, size_t len) {
  size_t i = 0;
  for (; i < ns && i < nr; i++) {
    pccl_sim_step_t *s = &g->step[snd[i]];
    const pccl_sim_step_t *r = &g->step[rcv[i]];
    if (receiver(g, s) != r->rank || sender(g, s) != r->peer) break;
    if (s->bytes != r->bytes) {
      say(msg, len, "rank %d sends %llu bytes to rank %d, which receives %llu there", (int)s->rank,
          (unsigned long long)s->bytes, (int)s->peer, (unsigned long long)r->bytes);
      return PCCL_ERR_INTERNAL;
    }
    s->match = rcv[i];
  }
  if (i == ns && i == nr) return PCCL_OK;
  const pccl_sim_step_t *s = i < ns ? &g->step[snd[i]] : NULL;
  const pccl_sim_step_t *r = i < nr ? &g->step[rcv[i]] : NULL;
  int send_extra = !r || (s && (receiver(g, s) < r->rank ||
                                (receiver(g, s) == r->rank && sender(g, s) < r->peer)));
  if (send_extra)
    say(msg, len, "rank %d sends more messages to rank %d than that rank receives from it",
        (int)s->rank, (int)s->peer);
  else
    say(msg, len, "rank %d posts more receives from rank %d than that rank sends to it",
        (int)r->rank, (int)r->peer);
  return PCCL_ERR_INTERNAL;
}

pccl_status_t pccl__sim_graph_match(pccl_sim_graph_t *g, char *msg, size_t len) {
  size_t ns = 0, nr = 0;
  for (uint32_t i = 0; i < g->nsteps; i++) {
    const pccl_sim_step_t *s = &g->step[i];
    if (s->kind != PCCL_STEP_SEND && !is_receive(s->kind)) continue;
    if (s->peer < 0 || s->peer >= g->nranks || s->peer == s->rank) {
      say(msg, len, "rank %d step %u names peer %d", (int)s->rank, i, (int)s->peer);
      return PCCL_ERR_INTERNAL;
    }
    if (s->kind == PCCL_STEP_SEND)
      ns++;
    else
      nr++;
  }
  uint32_t *snd = malloc((ns + 1) * sizeof(uint32_t)), *snd_sorted = malloc((ns + 1) * sizeof(uint32_t));
  uint32_t *rcv = malloc((nr + 1) * sizeof(uint32_t)), *tmp = malloc((nr + 1) * sizeof(uint32_t));
  size_t *count = malloc(((size_t)g->nranks + 1) * sizeof(size_t));
  pccl_status_t st = PCCL_ERR_NO_MEMORY;
  if (snd && snd_sorted && rcv && tmp && count) {
    size_t a = 0, b = 0;
    for (uint32_t i = 0; i < g->nsteps; i++) {
      if (g->step[i].kind == PCCL_STEP_SEND) snd[a++] = i;
      if (is_receive(g->step[i].kind)) rcv[b++] = i;
    }
    sort_by(g, snd, snd_sorted, ns, 1, count);
    sort_by(g, snd_sorted, snd, ns, 0, count);
    sort_by(g, rcv, tmp, nr, 1, count);
    sort_by(g, tmp, rcv, nr, 0, count);
    st = pair(g, snd, ns, rcv, nr, msg, len);
    g->nmessages = ns;
  }
  free(snd);
  free(snd_sorted);
  free(rcv);
  free(tmp);
  free(count);
  if (st == PCCL_ERR_NO_MEMORY) say(msg, len, "out of memory pairing %zu messages", ns);
  return st;
}

/* ---- building -------------------------------------------------------------- */

void pccl__sim_graph_free(pccl_sim_graph_t *g) {
  if (!g) return;
  free(g->step);
  free(g->succ_off);
  free(g->succ);
  memset(g, 0, sizeof(*g));
}

static pccl_status_t generate_failed(const gen_ctx_t *x, int r, pccl_status_t st, char *msg,
                                     size_t len) {
  say(msg, len, "%s %s: generating rank %d's schedule: %s", pccl_coll_name(x->c->coll),
      x->c->algo->name, r, pccl_status_string(st));
  return st;
}

static pccl_status_t append_failed(int r, pccl_status_t st, char *msg, size_t len) {
  if (st == PCCL_ERR_UNSUPPORTED)
    say(msg, len, "more than 2^32 - 2 steps or dependencies");
  else if (st == PCCL_ERR_INTERNAL)
    say(msg, len, "rank %d's schedule has a compressed slot no element count fits", r);
  else
    say(msg, len, "out of memory at rank %d's schedule", r);
  return st;
}

/* Whether the graph, rank r's steps just added, holds more than the case's
 * max_steps (see pccl_sim_case_t); says so in msg. */
static int over_max_steps(const gen_ctx_t *x, const builder_t *b, int r, char *msg, size_t len) {
  if (!x->c->max_steps || b->g->nsteps <= x->c->max_steps) return 0;
  *x->over = 1;
  say(msg, len, "more than %zu steps to simulate (past them at rank %d of %d)", x->c->max_steps, r,
      x->c->nranks);
  return 1;
}

/* Every rank's schedule, each converted and freed at once. */
static pccl_status_t add_all_ranks(gen_ctx_t *x, builder_t *b, char *msg, size_t len) {
  const pccl_sim_case_t *c = x->c;
  for (int r = 0; r < c->nranks; r++) {
    if (c->progress && r % 1024 == 0) c->progress(c->progress_ctx, "generating", (size_t)r, (size_t)c->nranks);
    pccl_sched_t s;
    pccl_status_t st = generate(x, r, &s);
    if (st != PCCL_OK) return generate_failed(x, r, st, msg, len);
    st = append_rank(b, &s, r, x->c->elem_size);
    pccl_sched_free(&s);
    if (st != PCCL_OK) return append_failed(r, st, msg, len);
    if (over_max_steps(x, b, r, msg, len)) return PCCL_ERR_UNSUPPORTED;
  }
  return PCCL_OK;
}

/* Node 0's ranks only, when the schedules are alike on every node up to a
 * renaming (classes.c); otherwise leaves the graph empty and g->sym NONE. */
static pccl_status_t add_classes(gen_ctx_t *x, builder_t *b, char *msg, size_t len) {
  pccl_sim_graph_t *g = b->g;
  int per = g->ranks_per_node;
  if (per > g->nranks / 2) return PCCL_OK; /* one node: nothing to save */
  pccl_sched_t *rep = calloc((size_t)per, sizeof(*rep));
  if (!rep) return append_failed(0, PCCL_ERR_NO_MEMORY, msg, len);
  pccl_status_t st = PCCL_OK;
  int r = 0;
  for (; r < per && st == PCCL_OK; r++) st = generate(x, r, &rep[r]);
  if (st != PCCL_OK) r--; /* the one that failed holds nothing */
  size_t whole = 0; /* the whole job's steps: node 0's, once per node */
  for (int i = 0; i < r; i++) whole += rep[i].nsteps;
  whole *= (size_t)(g->nranks / per);
  /* Classes are also tried for a job past the case's max_steps, which would
   * otherwise not be simulated at all. */
  if (st == PCCL_OK && (whole > x->full_max_steps || (x->c->max_steps && whole > x->c->max_steps)))
    st = pccl__sim_find_symmetry(g, rep, generate, x);
  if (st != PCCL_OK) generate_failed(x, 0, st, msg, len);
  /* Not alike on every node and past max_steps by node 0's count: left out
   * now rather than after generating ranks up to the limit, which at
   * thousands of ranks costs more than the rest of a tuning run. Exact when
   * every node holds as many steps as node 0; otherwise an estimate (a node
   * 0 with more steps than the rest leaves out a job that would just fit;
   * one with fewer, and the job is still counted as it is generated). */
  if (st == PCCL_OK && !g->sym && x->c->max_steps && whole > x->c->max_steps) {
    *x->over = 1;
    say(msg, len, "more than %zu steps to simulate (node 0's ranks hold %zu, times %d nodes)",
        x->c->max_steps, whole / (size_t)(g->nranks / per), g->nranks / per);
    st = PCCL_ERR_UNSUPPORTED;
  }
  for (int i = 0; i < r && st == PCCL_OK && g->sym; i++) {
    st = append_rank(b, &rep[i], i, x->c->elem_size);
    if (st != PCCL_OK) append_failed(i, st, msg, len);
    else if (over_max_steps(x, b, i, msg, len)) st = PCCL_ERR_UNSUPPORTED;
  }
  for (int i = 0; i < r; i++) pccl_sched_free(&rep[i]);
  free(rep);
  return st;
}

pccl_status_t pccl__sim_graph_build(const pccl_sim_case_t *c, int k, size_t full_max_steps,
                                    pccl_sim_graph_t *g, int *over, char *msg, size_t len) {
  memset(g, 0, sizeof(*g));
  *over = 0;
  g->nranks = c->nranks;
  g->ranks_per_node = c->ranks_per_node;
  pccl_topo_t topo;
  pccl_status_t st = make_topo(c->nranks, c->ranks_per_node, &topo);
  if (st != PCCL_OK) {
    say(msg, len, "cannot lay out %d ranks, %d per node", c->nranks, c->ranks_per_node);
    return st;
  }
  pccl_sb_t *sizer = NULL;
  st = pccl_sb_create(1, 0, c->elem_size, 0, 0, PCCL_SIM_MAX_MSG_BYTES, &sizer);
  if (st != PCCL_OK) {
    pccl_topo_free(&topo);
    say(msg, len, "out of memory");
    return st;
  }
  builder_t b = {.g = g, .sizer = sizer, .ratio = c->ratio > 0 ? c->ratio : 1.0,
                 .last_cap = SIZE_MAX, .last_count = SIZE_MAX};
  gen_ctx_t x = {c, k, &topo, full_max_steps, over, pccl_memo_create()};
  if (!x.memo) {
    st = PCCL_ERR_NO_MEMORY;
    say(msg, len, "out of memory");
  }
  if (st == PCCL_OK && !c->full) st = add_classes(&x, &b, msg, len);
  if (st == PCCL_OK && !g->sym) st = add_all_ranks(&x, &b, msg, len);
  pccl_memo_destroy(x.memo);
  pccl_sb_destroy(sizer);
  pccl_topo_free(&topo);
  if (st != PCCL_OK) pccl__sim_graph_free(g);
  return st;
}
