/* engine.c - the discrete-event simulation of a graph (sim_graph.h) on a
 * machine profile; the model is described in docs/simulator.md.
 *
 * A step becomes ready when its last dependency completes. Each rank's CPU
 * is a serial resource, granted in the order requests are made (requests are
 * made in time order, so first come first served): a send's o_s, a receive's
 * o_r (plus m*gamma for a fused receive-reduce), a copy or permutation
 * (bytes*copy), a reduction or division (bytes*gamma), a compression
 * (uncompressed bytes*compress) or decompression (bytes*decompress). Of the
 * steps one completion makes ready, sends and receives ask first and local
 * steps after them, in step order within each group, as the executor starts
 * messages before local work (src/exec/exec.c). A send of m bytes
 * from a to b on level l: a takes a send slot (device radix), spends o_s on
 * its CPU, then the message is injected once (1) a's previous injection on l
 * is at least max(g, m_prev*G) behind, (2) between nodes, a's NIC has an
 * outgoing and b's NIC an incoming slot (node radix), (3) b has a receive
 * slot (device radix). It then holds those slots for its wire time m*G; the
 * send step completes when the last byte has left, and the message arrives L
 * later. Where every node is emulated on one host (host_cores), a message
 * first waits for a turn of host_message on one of the host's cores, which
 * every rank's messages share (the kernel's work for a message on an
 * emulated link, the switch to the rank that takes it). The receive step
 * starts once it is posted (ready) and the message
 * has arrived, and completes after its CPU time. A transfer that finds a slot
 * taken waits in that slot's FIFO queue holding nothing but its send slot;
 * the slots it waits for are held only by transfers on the wire, which always
 * finish, so the model adds no deadlock of its own.
 *
 * With classes (classes.c) the graph holds node 0's ranks only; a message
 * to another node's rank waits on, and takes, the receive slots of that
 * rank's class and the NIC of its class's node, which by the symmetry are in
 * the same state.
 *
 * A send that finds its gap not over reschedules itself for the gap's end;
 * k sends of one rank waiting so cost O(k^2) events. The device radix bounds
 * k where a profile sets it; a profile without one, simulating a compressed
 * algorithm's many small chunks, pays for it.
 *
 * Events are kept in a binary heap ordered by (time, creation order):
 * O(M log M) for M steps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_graph.h"

enum { EV_INJECT, EV_WIRE_DONE, EV_ARRIVE, EV_DONE };

typedef struct {
  double t;
  uint64_t order;
  uint32_t step, type;
} event_t;

typedef struct {
  uint32_t head, tail;
} queue_t;

typedef struct {
  double cpu_free;                        /* when the CPU is next free */
  double inject_free[PCCL_LEVEL_COUNT];   /* earliest next injection per level */
  int sends, recvs;                       /* transfers in flight (device radix) */
  queue_t send_wait, recv_wait;
} rank_state_t;

typedef struct {
  int out, in; /* transfers in flight through this NIC */
  queue_t out_wait, in_wait;
} nic_state_t;

typedef struct {
  const pccl_profile_t *p;
  pccl_sim_graph_t *g;
  rank_state_t *rank;
  nic_state_t *nic;
  double *host_free; /* per core of a shared host (host_cores): when next free */
  event_t *heap;
  size_t nheap, heap_cap;
  uint64_t order;
  uint32_t ndone;
  double end;
  int oom;
} engine_t;

/* ---- event heap ------------------------------------------------------------ */

static int earlier(const event_t *a, const event_t *b) {
  return a->t < b->t || (a->t == b->t && a->order < b->order);
}

static void push(engine_t *e, double t, uint32_t step, uint32_t type) {
  if (e->nheap == e->heap_cap) {
    size_t cap = e->heap_cap ? 2 * e->heap_cap : 1024;
    event_t *h = realloc(e->heap, cap * sizeof(*h));
    if (!h) {
      e->oom = 1;
      return;
    }
    e->heap = h;
    e->heap_cap = cap;
  }
  event_t ev = {t, e->order++, step, type};
  size_t i = e->nheap++;
  while (i > 0 && earlier(&ev, &e->heap[(i - 1) / 2])) {
    e->heap[i] = e->heap[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  e->heap[i] = ev;
}

static int pop(engine_t *e, event_t *out) {
  if (e->nheap == 0) return 0;
  *out = e->heap[0];
  event_t last = e->heap[--e->nheap];
  size_t i = 0, n = e->nheap;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && earlier(&e->heap[c + 1], &e->heap[c])) c++;
    if (!earlier(&e->heap[c], &last)) break;
    e->heap[i] = e->heap[c];
    i = c;
  }
  if (n > 0) e->heap[i] = last;
  return 1;
}

/* ---- wait queues (linked through the steps) ------------------------------- */

static void enqueue(engine_t *e, queue_t *q, uint32_t i) {
  e->g->step[i].next = PCCL_SIM_NIL;
  if (q->head == PCCL_SIM_NIL)
    q->head = i;
  else
    e->g->step[q->tail].next = i;
  q->tail = i;
}

static uint32_t dequeue(engine_t *e, queue_t *q) {
  uint32_t i = q->head;
  if (i != PCCL_SIM_NIL) q->head = e->g->step[i].next;
  return i;
}

static int room(int in_flight, int limit) { return limit == 0 || in_flight < limit; }

/* ---- the machine ------------------------------------------------------------ */

static int level_of(const engine_t *e, int a, int b) {
  int per = e->g->ranks_per_node;
  return a / per == b / per ? PCCL_LEVEL_INTRA : PCCL_LEVEL_INTER;
}

/* With classes, the state of rank r and of its NIC are its class's. */
static rank_state_t *state_of(const engine_t *e, int r) {
  return &e->rank[pccl__sim_class_of(e->g, r)];
}

static nic_state_t *nic_of(const engine_t *e, int r) {
  int per = e->g->ranks_per_node, nics = e->p->nics_per_node;
  r = pccl__sim_class_of(e->g, r);
  return &e->nic[(size_t)(r / per) * (size_t)nics + (size_t)(r % per % nics)];
}

/* Runs `dur` seconds of work on rank r's CPU from t on; returns its end. */
static double cpu(engine_t *e, int r, double t, double dur) {
  rank_state_t *rs = &e->rank[r];
  double start = t > rs->cpu_free ? t : rs->cpu_free;
  rs->cpu_free = start + dur;
  return rs->cpu_free;
}

/* The turn of a message on the shared host's cores: the
 * earliest free core from t on takes host_message; returns when it starts. */
static double host_turn(engine_t *e, double t) {
  double *core = &e->host_free[0];
  for (int c = 1; c < e->p->host_cores; c++)
    if (e->host_free[c] < *core) core = &e->host_free[c];
  double start = t > *core ? t : *core;
  *core = start + e->p->host_message;
  return start;
}

static void ready(engine_t *e, uint32_t i, double t);

static int is_message(const pccl_sim_step_t *s) {
  return s->kind == PCCL_STEP_SEND || s->kind == PCCL_STEP_RECV ||
         s->kind == PCCL_STEP_RECV_REDUCE;
}

/* Messages first, then local steps (each successor appears once: the
 * builder keeps dependency lists free of repeats). */
static void complete(engine_t *e, uint32_t i, double t) {
  const pccl_sim_graph_t *g = e->g;
  g->step[i].flags |= PCCL_SIM_DONE;
  e->ndone++;
  if (t > e->end) e->end = t;
  for (uint32_t s = g->succ_off[i]; s < g->succ_off[i + 1]; s++) {
    pccl_sim_step_t *n = &g->step[g->succ[s]];
    if (--n->pending == 0 && is_message(n)) ready(e, g->succ[s], t);
  }
  for (uint32_t s = g->succ_off[i]; s < g->succ_off[i + 1]; s++) {
    const pccl_sim_step_t *n = &g->step[g->succ[s]];
    if (n->pending == 0 && !is_message(n)) ready(e, g->succ[s], t);
  }
}

static void start_send(engine_t *e, uint32_t i, double t) {
  const pccl_sim_step_t *s = &e->g->step[i];
  e->rank[s->rank].sends++;
  double o_s = e->p->level[level_of(e, s->rank, s->peer)].o_s;
  push(e, cpu(e, s->rank, t, o_s), i, EV_INJECT);
}

/* Puts send i on the wire at t if its gap and slots allow, else makes it wait. */
static void inject(engine_t *e, uint32_t i, double t) {
  pccl_sim_step_t *s = &e->g->step[i];
  int lvl = level_of(e, s->rank, s->peer), nr = e->p->node_radix;
  rank_state_t *from = &e->rank[s->rank], *to = state_of(e, s->peer);
  if (t < from->inject_free[lvl]) {
    push(e, from->inject_free[lvl], i, EV_INJECT);
    return;
  }
  if (e->host_free && !(s->flags & PCCL_SIM_HOSTED)) {
    s->flags |= PCCL_SIM_HOSTED;
    double start = host_turn(e, t);
    if (start > t) {
      push(e, start, i, EV_INJECT);
      return;
    }
  }
  nic_state_t *out = NULL, *in = NULL;
  queue_t *wait = NULL;
  if (lvl == PCCL_LEVEL_INTER) {
    out = nic_of(e, s->rank);
    in = nic_of(e, s->peer);
    if (!room(out->out, nr))
      wait = &out->out_wait;
    else if (!room(in->in, nr))
      wait = &in->in_wait;
  }
  if (!wait && !room(to->recvs, e->p->device_radix)) wait = &to->recv_wait;
  if (wait) {
    enqueue(e, wait, i);
    return;
  }
  const pccl_loggp_t *lv = &e->p->level[lvl];
  double G = lv->G;
  if (out) {
    /* the link already busy the other way at either end: the profile's
     * duplex factor (its rate holds for the whole transfer) */
    if (e->p->duplex > 1 && (out->in > 0 || in->out > 0)) G *= e->p->duplex;
    out->out++;
    in->in++;
  }
  to->recvs++;
  double wire = (double)s->bytes * G;
  from->inject_free[lvl] = t + (lv->g > wire ? lv->g : wire);
  push(e, t + wire, i, EV_WIRE_DONE);
}

/* Offers freed slots to the transfers queued for them, first come first. */
static void drain(engine_t *e, queue_t *q, const int *in_flight, int limit, double t) {
  while (room(*in_flight, limit) && q->head != PCCL_SIM_NIL) inject(e, dequeue(e, q), t);
}

static void wire_done(engine_t *e, uint32_t i, double t) {
  const pccl_sim_step_t *s = &e->g->step[i];
  int dr = e->p->device_radix, nr = e->p->node_radix;
  rank_state_t *from = &e->rank[s->rank], *to = state_of(e, s->peer);
  from->sends--;
  to->recvs--;
  while (room(from->sends, dr) && from->send_wait.head != PCCL_SIM_NIL)
    start_send(e, dequeue(e, &from->send_wait), t);
  drain(e, &to->recv_wait, &to->recvs, dr, t);
  if (level_of(e, s->rank, s->peer) == PCCL_LEVEL_INTER) {
    nic_state_t *out = nic_of(e, s->rank), *in = nic_of(e, s->peer);
    out->out--;
    in->in--;
    drain(e, &out->out_wait, &out->out, nr, t);
    drain(e, &in->in_wait, &in->in, nr, t);
  }
  push(e, t + e->p->level[level_of(e, s->rank, s->peer)].L, s->match, EV_ARRIVE);
  complete(e, i, t);
}

/* Receive j has both its message and its turn: it costs o_r (and the
 * reduction of a fused receive-reduce) on the receiver's CPU. */
static void receive(engine_t *e, uint32_t j, double t) {
  const pccl_sim_step_t *s = &e->g->step[j];
  double dur = e->p->level[level_of(e, s->rank, s->peer)].o_r;
  if (s->kind == PCCL_STEP_RECV_REDUCE) dur += (double)s->bytes * e->p->gamma;
  push(e, cpu(e, s->rank, t, dur), j, EV_DONE);
}

static void ready(engine_t *e, uint32_t i, double t) {
  pccl_sim_step_t *s = &e->g->step[i];
  switch (s->kind) {
  case PCCL_STEP_SEND:
    if (room(e->rank[s->rank].sends, e->p->device_radix))
      start_send(e, i, t);
    else
      enqueue(e, &e->rank[s->rank].send_wait, i);
    break;
  case PCCL_STEP_RECV:
  case PCCL_STEP_RECV_REDUCE:
    s->flags |= PCCL_SIM_POSTED;
    if (s->flags & PCCL_SIM_ARRIVED) receive(e, i, t);
    break;
  case PCCL_STEP_REDUCE:
  case PCCL_STEP_DIVIDE:
    push(e, cpu(e, s->rank, t, (double)s->bytes * e->p->gamma), i, EV_DONE);
    break;
  case PCCL_STEP_COMPRESS:
    push(e, cpu(e, s->rank, t, (double)s->bytes * e->p->compress), i, EV_DONE);
    break;
  case PCCL_STEP_DECOMPRESS:
    push(e, cpu(e, s->rank, t, (double)s->bytes * e->p->decompress), i, EV_DONE);
    break;
  case PCCL_STEP_NODE:
    /* a whole collective on the node's segment: one flag's trip between
     * cores, then the bytes this rank copies in and out. The ranks start
     * it together (it is the only step of its schedule), so no wait for
     * the slowest is modelled. */
    push(e, cpu(e, s->rank, t, e->p->level[PCCL_LEVEL_INTRA].L + (double)s->bytes * e->p->copy),
         i, EV_DONE);
    break;
  default: /* COPY, PERMUTE: moving bytes inside the rank */
    push(e, cpu(e, s->rank, t, (double)s->bytes * e->p->copy), i, EV_DONE);
    break;
  }
}

static void dispatch(engine_t *e, const event_t *ev) {
  pccl_sim_step_t *s = &e->g->step[ev->step];
  switch (ev->type) {
  case EV_INJECT: inject(e, ev->step, ev->t); break;
  case EV_WIRE_DONE: wire_done(e, ev->step, ev->t); break;
  case EV_ARRIVE:
    s->flags |= PCCL_SIM_ARRIVED;
    if (s->flags & PCCL_SIM_POSTED) receive(e, ev->step, ev->t);
    break;
  default: complete(e, ev->step, ev->t); break; /* EV_DONE */
  }
}

/* ---- running --------------------------------------------------------------- */

static void describe_stuck(const pccl_sim_graph_t *g, char *msg, size_t len) {
  static const char *const kinds[] = {"send",        "recv",    "reduce",   "copy",      "divide",
                                      "recv-reduce", "permute", "compress", "decompress"};
  uint32_t i = 0, first = 0;
  while (i < g->nsteps && (g->step[i].flags & PCCL_SIM_DONE)) i++;
  const pccl_sim_step_t *s = &g->step[i];
  while (first < i && g->step[first].rank != s->rank) first++;
  snprintf(msg, len, "deadlock: rank %d's step %u (%s, peer %d) never completes", (int)s->rank,
           i - first, s->kind < sizeof kinds / sizeof kinds[0] ? kinds[s->kind] : "?", (int)s->peer);
}

static pccl_status_t init_engine(engine_t *e, const pccl_profile_t *p, pccl_sim_graph_t *g) {
  memset(e, 0, sizeof(*e));
  e->p = p;
  e->g = g;
  size_t nnodes = (size_t)(g->nranks + g->ranks_per_node - 1) / (size_t)g->ranks_per_node;
  e->rank = calloc((size_t)g->nranks, sizeof(*e->rank));
  e->nic = calloc(nnodes * (size_t)p->nics_per_node, sizeof(*e->nic));
  if (!e->rank || !e->nic) return PCCL_ERR_NO_MEMORY;
  if (p->host_cores > 0 && p->host_message > 0) {
    e->host_free = calloc((size_t)p->host_cores, sizeof(*e->host_free));
    if (!e->host_free) return PCCL_ERR_NO_MEMORY;
  }
  queue_t empty = {PCCL_SIM_NIL, PCCL_SIM_NIL};
  for (int r = 0; r < g->nranks; r++) e->rank[r].send_wait = e->rank[r].recv_wait = empty;
  for (size_t n = 0; n < nnodes * (size_t)p->nics_per_node; n++)
    e->nic[n].out_wait = e->nic[n].in_wait = empty;
  return PCCL_OK;
}

pccl_status_t pccl__sim_engine_run(const pccl_profile_t *p, pccl_sim_graph_t *g,
                                   const pccl_sim_case_t *c, double *seconds, char *msg,
                                   size_t len) {
  engine_t e;
  pccl_status_t st = init_engine(&e, p, g);
  if (st == PCCL_OK) {
    for (int local = 0; local < 2; local++) /* messages first, as in complete() */
      for (uint32_t i = 0; i < g->nsteps; i++)
        if (g->step[i].pending == 0 && is_message(&g->step[i]) == !local) ready(&e, i, 0.0);
    event_t ev;
    for (uint64_t n = 1; !e.oom && pop(&e, &ev); n++) {
      dispatch(&e, &ev);
      if (c->progress && n % (1u << 22) == 0)
        c->progress(c->progress_ctx, "simulating", e.ndone, g->nsteps);
    }
  }
  if (st != PCCL_OK || e.oom) {
    snprintf(msg, len, "out of memory simulating %u steps", g->nsteps);
    st = PCCL_ERR_NO_MEMORY;
  } else if (e.ndone < g->nsteps) {
    describe_stuck(g, msg, len);
    st = PCCL_ERR_INTERNAL;
  }
  *seconds = e.end;
  free(e.rank);
  free(e.nic);
  free(e.host_free);
  free(e.heap);
  return st;
}
