/* engine.h - the training engine's private state, shared by its files:
 * engine.c (API, thread, cycle), coordinate.c (bitvector and negotiation),
 * respcache.c (response cache), fusion.c (buckets and execution),
 * timeline.c, strmap.c and wire.c (helpers). */
#ifndef PCCL_ENGINE_H
#define PCCL_ENGINE_H

#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "errmsg.h"
#include "pccl.h"

#define PCCL_NAME_BYTES (PCCL_ENGINE_NAME_MAX + 1)

/* ---- a string -> pointer map (strmap.c) ---- */
typedef struct pccl_strmap_node pccl_strmap_node_t;
typedef struct {
  pccl_strmap_node_t **slots;
  size_t nslots, count;
} pccl_strmap_t;

int pccl_strmap_init(pccl_strmap_t *m, size_t expected);
void pccl_strmap_free(pccl_strmap_t *m);
void *pccl_strmap_get(const pccl_strmap_t *m, const char *key);
/* Adds or replaces; 0 when out of memory. */
int pccl_strmap_put(pccl_strmap_t *m, const char *key, void *value);
void pccl_strmap_del(pccl_strmap_t *m, const char *key);
/* Calls fn on every entry; fn must not change the map. */
void pccl_strmap_each(const pccl_strmap_t *m, void (*fn)(const char *key, void *value, void *ctx),
                      void *ctx);

/* ---- what every rank must agree on for one name ---- */
typedef struct {
  int32_t coll, dtype, op, root;
  uint64_t count;
  int32_t ndim;
  int32_t group_size;           /* 0: not in a group */
  int64_t shape[PCCL_ENGINE_MAX_DIMS];
  char group[PCCL_NAME_BYTES]; /* the group's first member's name; read only in a group */
} pccl_sig_t;

int pccl_sig_equal(const pccl_sig_t *a, const pccl_sig_t *b);
/* "allreduce float32 sum count 6 shape [2,3]" and the like. */
void pccl_sig_describe(const pccl_sig_t *s, char *buf, size_t len);

/* ---- byte streams for the negotiation messages (wire.c) ---- */
typedef struct {
  uint8_t *data;
  size_t len, cap;
  int failed; /* out of memory */
} pccl_wbuf_t;

typedef struct {
  const uint8_t *data;
  size_t len, pos;
  int failed; /* read past the end */
} pccl_rbuf_t;

void pccl_w_u32(pccl_wbuf_t *w, uint32_t v);
void pccl_w_str(pccl_wbuf_t *w, const char *s);
void pccl_w_sig(pccl_wbuf_t *w, const pccl_sig_t *s);
uint32_t pccl_r_u32(pccl_rbuf_t *r);
void pccl_r_str(pccl_rbuf_t *r, char *out, size_t cap);
void pccl_r_sig(pccl_rbuf_t *r, pccl_sig_t *s);

/* ---- requests and handles ---- */
/* Handles outlive their engine (until pccl_handle_free), so their state is
 * guarded by one process-wide lock (engine.c), not the engine's. */
struct pccl_handle {
  int refs; /* the user's and the engine's */
  int done;
  pccl_status_t status;
  char error[PCCL_ERROR_LEN];
};

/* What every cycle reads comes first, beside the name's first bytes: a
 * cycle looks at every pending request, and after a cycle's sleep each
 * cache line it touches is a miss. */
typedef struct {
  int announced;                    /* sent to rank 0, awaiting its answer (by_name has it) */
  uint32_t tid;                     /* the timeline's row */
  double t_hit;                     /* first cycle it was a cache hit; 0: not yet */
  size_t slot;                      /* index in the engine's pending list */
  char name[PCCL_NAME_BYTES];
  pccl_sig_t sig;
  const void *send;
  void *recv;
  pccl_handle_t *handle;
  double t_submit, t_seen;           /* seconds (MPI_Wtime) */
} pccl_req_t;

/* ---- the response cache (respcache.c) ----
 * Identical on every rank: entries enter in the order rank 0's answers
 * list them and leave by eviction decisions every rank makes on the same
 * data, so a position names the same tensor on every rank. */
typedef struct { /* a hit reads used, live and the signature's first fields: one cache line */
  uint64_t used; /* last use, for least-recently-used eviction */
  int live;
  pccl_sig_t sig;
  char name[PCCL_NAME_BYTES];
} pccl_rentry_t;

typedef struct {
  pccl_rentry_t *entries;
  int capacity;
  uint64_t clock;
  pccl_strmap_t index; /* name -> position + 1 */
} pccl_rcache_t;

int pccl_rcache_init(pccl_rcache_t *c, int capacity);
void pccl_rcache_free(pccl_rcache_t *c);
int pccl_rcache_find(const pccl_rcache_t *c, const char *name); /* -1: absent */
/* Inserts, evicting the least recently used entry when full; the position. */
int pccl_rcache_insert(pccl_rcache_t *c, const char *name, const pccl_sig_t *sig);
void pccl_rcache_evict(pccl_rcache_t *c, int pos);
void pccl_rcache_touch(pccl_rcache_t *c, int pos);

/* ---- Chrome-trace timeline (timeline.c) ---- */
typedef struct {
  FILE *f;
  double t0;
  uint32_t next_tid;
  pccl_strmap_t tids; /* name -> row + 1 */
  int first;
} pccl_timeline_t;

pccl_status_t pccl_timeline_open(pccl_timeline_t *t, const char *pattern, int rank);
uint32_t pccl_timeline_row(pccl_timeline_t *t, const char *name);
void pccl_timeline_span(pccl_timeline_t *t, uint32_t row, const char *phase, double start,
                        double end);
void pccl_timeline_close(pccl_timeline_t *t);

/* ---- the bitvector's AND-allreduce (bitand.c) ---- */

typedef struct pccl_bitand pccl_bitand_t;

/* Local: vectors of `words` words; NULL when out of memory. */
pccl_bitand_t *pccl_bitand_new(size_t words);
/* Collective over e->ctl, once every rank has its pccl_bitand_new: finds
 * the node's ranks and maps their shared segment. Fails only when MPI does. */
pccl_status_t pccl_bitand_setup(pccl_engine_t *e, pccl_bitand_t *b);
/* Local; leaves nothing behind even when peers are gone. */
void pccl_bitand_destroy(pccl_bitand_t *b);
/* ANDs every rank's `bits` in place: MPI_SUCCESS, an MPI error code, or
 * PCCL_CTL_TIMEOUT. *done (CLOCK_MONOTONIC) is when the answer was ready:
 * one instant for all ranks of a node, whenever each of them woke. */
int pccl_bitand_run(const pccl_engine_t *e, pccl_bitand_t *b, uint64_t *bits, struct timespec *done);

/* Waits for a control collective started with return code rc (coordinate.c):
 * a few polls, then naps. MPI_SUCCESS, MPI's error code, or PCCL_CTL_TIMEOUT
 * when it made no progress for the engine's PCCL_TIMEOUT. */
#define PCCL_CTL_TIMEOUT (-1) /* beside MPI's codes, which are >= 0 */
int pccl_ctl_wait(const pccl_engine_t *e, int rc, MPI_Request *req);

/* ---- the coordinator's table (coordinate.c) ---- */
typedef struct pccl_coord pccl_coord_t;

/* ---- the engine ---- */
struct pccl_engine {
  pccl_comm_t *comm; /* the engine's own communicator, used by its thread only */
  MPI_Comm ctl;      /* control messages */
  int rank, size;
  double cycle_s, stall_s;
  double ctl_timeout; /* PCCL_TIMEOUT of the engine's communicator; 0: none */
  size_t fusion_bytes;
  int cache_capacity;

  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t wake; /* the thread waits here between cycles (CLOCK_MONOTONIC) */
  /* under lock */
  pccl_req_t **queue;
  size_t nqueue, capqueue;
  pccl_strmap_t inflight; /* names submitted and not completed */
  int stop_requested;     /* pccl_engine_destroy on this rank */
  int stopped;            /* the thread has ended; submits fail */
  char stop_why[PCCL_ERROR_LEN];
  pccl_engine_stats_t stats;
  char warning[PCCL_ERROR_LEN];

  /* the engine thread's own */
  pccl_req_t **pending;
  size_t npending, cappending;
  pccl_strmap_t by_name; /* announced name -> request, for rank 0's answers */
  pccl_req_t **ready;    /* this cycle's, in the global order */
  size_t nready, capready;
  pccl_req_t **bucket;   /* fusion's scratch, capready entries */
  uint8_t *used;
  pccl_rcache_t cache;
  pccl_coord_t *coord; /* rank 0 only */
  uint64_t *bits;      /* the bitvector */
  pccl_req_t **at_pos; /* this cycle's request at each cache position it hit */
  pccl_bitand_t *bitand; /* the bitvector's all-reduce, when the cache is on */
  struct timespec ctl_done; /* when this cycle's last control collective ended (CLOCK_MONOTONIC) */
  void *fusion;        /* fusion_bytes from pccl_mem_alloc */
  pccl_timeline_t timeline;
  int unwoken; /* requests completed since waiters were last woken */
};

/* One coordination cycle (coordinate.c): decides which pending requests
 * are ready on every rank, appends them to e->ready in the global order,
 * completes the ones that failed negotiation. *stop becomes 1 when any
 * rank asked to stop. Returns an error only when the control plane
 * failed (MPI), with the detail in why. */
pccl_status_t pccl_coordinate(pccl_engine_t *e, int stop_here, int *stop, char *why, size_t len);
pccl_status_t pccl_coord_create(pccl_engine_t *e);
void pccl_coord_destroy(pccl_coord_t *c);

/* Runs e->ready: fused buckets and single requests (fusion.c). */
void pccl_fusion_run(pccl_engine_t *e);

/* Completes a request: records status and message, releases the name and
 * frees the request (engine.c). Waiters wake at the next pccl_engine_wake:
 * one wake-up per batch of completions, not one per request. */
void pccl_engine_complete(pccl_engine_t *e, pccl_req_t *r, pccl_status_t st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void pccl_engine_wake(pccl_engine_t *e);

/* Removes r from the pending list and name index (engine.c). */
void pccl_engine_unpend(pccl_engine_t *e, pccl_req_t *r);

/* Appends r to e->ready; 0 when out of memory. */
int pccl_engine_push_ready(pccl_engine_t *e, pccl_req_t *r);

/* Adds to the stats under the lock. */
void pccl_engine_count(pccl_engine_t *e, const pccl_engine_stats_t *delta);

#endif /* PCCL_ENGINE_H */
