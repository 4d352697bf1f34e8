/* sim.c - pccl_sim_run: checks the request, builds the graph of every rank's
 * schedule (graph.c), pairs its messages and simulates it (engine.c), and
 * times generation apart from the rest. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "sim_graph.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static pccl_status_t fail(pccl_sim_result_t *out, pccl_status_t st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(out->message, sizeof out->message, fmt, ap);
  va_end(ap);
  return st;
}

/* The k the generator gets: the caller's, or the algorithm's default. */
static pccl_status_t check_case(const pccl_sim_case_t *c, pccl_sim_result_t *out, int *k) {
  if (c->nranks < 1 || c->ranks_per_node < 1)
    return fail(out, PCCL_ERR_INVALID_ARGUMENT, "nranks %d and ranks_per_node %d must be >= 1",
                c->nranks, c->ranks_per_node);
  if (!c->algo || c->algo->coll != c->coll || !c->algo->generate)
    return fail(out, PCCL_ERR_INVALID_ARGUMENT, "no algorithm for %s", pccl_coll_name(c->coll));
  if (c->elem_size == 0) return fail(out, PCCL_ERR_INVALID_ARGUMENT, "element size 0");
  if (c->ratio != 0 && !(c->ratio >= 1 && isfinite(c->ratio)))
    return fail(out, PCCL_ERR_INVALID_ARGUMENT,
                "compression ratio %g: must be finite and at least 1 (0: 1)", c->ratio);
  if (c->k < 0 || (c->k > 0 && !c->algo->kset && c->k != c->algo->k))
    return fail(out, PCCL_ERR_INVALID_ARGUMENT, "%s %s does not take k = %d",
                pccl_coll_name(c->coll), c->algo->name, c->k);
  if (c->count > (size_t)PTRDIFF_MAX / c->elem_size / (size_t)c->nranks)
    return fail(out, PCCL_ERR_OVERFLOW, "count x nranks x element size exceeds PTRDIFF_MAX");
  *k = c->k > 0 ? c->k : c->algo->k;
  return PCCL_OK;
}

/* Simulating one rank per class gives the full simulation's times exactly
 * where no transfer ever waits for a slot. Where one may (a device or node
 * radix), the full simulation lets transfers that queue at the same moment
 * go in the order of their ranks' numbers, which is not the same on every
 * node, so the two may differ (docs/simulator.md gives measured cases);
 * so may they with a duplex factor, which a class's one NIC cannot judge
 * (it stands for the other nodes' NICs too), and on a shared host, whose
 * cores every node's messages take turns on. There classes are taken only
 * for jobs too large to simulate whole in reasonable time and memory (2^24
 * steps; docs/simulator.md: 10.2 M steps took 34 s and 486 MiB). */
static size_t full_max_steps(const pccl_profile_t *p) {
  int exact = p->device_radix == 0 && p->node_radix == 0 && !(p->duplex > 1) && p->host_cores == 0;
  return exact ? 0 : (size_t)1 << 24;
}

pccl_status_t pccl_sim_run(const pccl_profile_t *p, const pccl_sim_case_t *c,
                           pccl_sim_result_t *out) {
  if (!out) return PCCL_ERR_INVALID_ARGUMENT;
  memset(out, 0, sizeof(*out));
  if (!p || !c) return fail(out, PCCL_ERR_INVALID_ARGUMENT, "NULL profile or case");
  pccl_status_t st = pccl_profile_check(p, out->message, sizeof out->message);
  int k = 0;
  if (st == PCCL_OK) st = check_case(c, out, &k);
  if (st != PCCL_OK) return st;

  pccl_sim_graph_t g;
  double t0 = now();
  st = pccl__sim_graph_build(c, k, full_max_steps(p), &g, &out->over_max_steps, out->message,
                             sizeof out->message);
  double t1 = now();
  out->gen_wall = t1 - t0;
  if (st != PCCL_OK) return st;
  size_t copies = g.sym ? (size_t)(c->nranks / c->ranks_per_node) : 1; /* ranks per class */
  out->classes = g.sym ? c->ranks_per_node : 0;
  out->nsteps = g.nsteps * copies;
  st = pccl__sim_graph_match(&g, out->message, sizeof out->message);
  out->nmessages = g.nmessages * copies;
  if (st == PCCL_OK)
    st = pccl__sim_engine_run(p, &g, c, &out->seconds, out->message, sizeof out->message);
  out->sim_wall = now() - t1;
  pccl__sim_graph_free(&g);
  return st;
}
