/* sim_graph.h - the simulator's compact form of every rank's schedule: one
 * small record per step (what it costs, whom it talks to, how many
 * dependencies are still open), successor lists, and each send's matching
 * receive. Built by graph.c, consumed by engine.c; private to src/sim/. */
#ifndef PCCL_SIM_GRAPH_H
#define PCCL_SIM_GRAPH_H

#include <stdint.h>

#include "sim.h"

#define PCCL_SIM_NIL UINT32_MAX /* no step */

/* step flags; HOSTED: a send has had its turn on the host's shared cores
 * (profile key host_cores) */
enum { PCCL_SIM_POSTED = 1, PCCL_SIM_ARRIVED = 2, PCCL_SIM_DONE = 4, PCCL_SIM_HOSTED = 8 };

typedef struct {
  uint64_t bytes;   /* message bytes, or bytes a local step copies / reduces */
  int32_t rank;     /* the rank whose step this is */
  int32_t peer;     /* SEND: destination; RECV, RECV_REDUCE: source */
  uint32_t pending; /* dependencies not complete yet */
  uint32_t match;   /* SEND: the receive it feeds (global step index) */
  uint32_t next;    /* link in a wait queue of the engine */
  uint8_t kind;     /* pccl_step_kind_t */
  uint8_t flags;    /* PCCL_SIM_* */
} pccl_sim_step_t;

/* The node renamings a graph's schedules are invariant under (classes.c). */
typedef enum { PCCL_SIM_SYM_NONE = 0, PCCL_SIM_SYM_ROTATE, PCCL_SIM_SYM_XOR } pccl_sim_sym_t;

typedef struct {
  int nranks, ranks_per_node;
  int sym; /* pccl_sim_sym_t; not NONE: only node 0's ranks are in the graph,
            * one per class, and a message's peer is still the real rank */
  pccl_sim_step_t *step; /* all ranks' steps (node 0's only with sym), rank 0's first */
  uint32_t nsteps;
  uint32_t *succ_off; /* successors of step i: succ[succ_off[i] .. succ_off[i+1]) */
  uint32_t *succ;     /* global step indices */
  size_t nmessages;
} pccl_sim_graph_t;

/* Rank r's schedule, generated as the library would (graph.c). */
typedef pccl_status_t (*pccl_sim_gen_fn)(void *ctx, int r, pccl_sched_t *out);

/* Sets g->sym to a renaming of nodes that takes the schedules of node 0's
 * ranks (rep[0 .. ranks_per_node)) to those of every sampled node, or to
 * NONE; fails only when generating a schedule does. */
pccl_status_t pccl__sim_find_symmetry(pccl_sim_graph_t *g, const pccl_sched_t *rep,
                                      pccl_sim_gen_fn gen, void *ctx);
/* The rank of the graph whose states rank r shares: r itself without sym. */
int pccl__sim_class_of(const pccl_sim_graph_t *g, int r);
/* The rank that, renamed along with `to` onto its class's rank, sends what
 * `from` sends to `to`: `from` itself without sym. */
int pccl__sim_virtual_sender(const pccl_sim_graph_t *g, int from, int to);

/* Generates each rank's schedule for c with parameter k, converting and
 * freeing each at once; or, unless c->full, node 0's only where the
 * schedules allow classes and the whole job's would hold more than
 * `full_max_steps` steps (0: whenever they allow classes). On failure `msg`
 * says why and g is empty; *over is set when the failure is c->max_steps
 * passed (PCCL_ERR_UNSUPPORTED). */
pccl_status_t pccl__sim_graph_build(const pccl_sim_case_t *c, int k, size_t full_max_steps,
                                    pccl_sim_graph_t *g, int *over, char *msg, size_t msglen);
/* Pairs every send with its receive (sets match and nmessages);
 * PCCL_ERR_INTERNAL, with the pair of ranks in `msg`, when they do not pair. */
pccl_status_t pccl__sim_graph_match(pccl_sim_graph_t *g, char *msg, size_t msglen);
void pccl__sim_graph_free(pccl_sim_graph_t *g);

/* Runs the graph of case c on profile p; *seconds is when the last step
 * completes. Consumes the graph's pending counts and flags. */
pccl_status_t pccl__sim_engine_run(const pccl_profile_t *p, pccl_sim_graph_t *g,
                                   const pccl_sim_case_t *c, double *seconds, char *msg,
                                   size_t msglen);

#endif /* PCCL_SIM_GRAPH_H */
