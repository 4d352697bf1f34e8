/* engine.c - the training engine's API and its thread: settings, submission
 * (checked at once, on the submitting thread), handles, and the cycle loop
 * that takes new requests, coordinates (coordinate.c), runs what is ready
 * (fusion.c) and completes handles. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coll.h"
#include "comm.h"
#include "parse.h"
#include "engine.h"
#include "pccl_mpi.h"

#define CYCLE_MS_DEFAULT 5.0
#define FUSION_DEFAULT (64ll << 20)
#define CACHE_DEFAULT 1024
#define STALL_DEFAULT 60.0
#define CYCLE_MS_MAX 1e4
#define FUSION_MAX (16ll << 30)
#define CACHE_MAX (1 << 20)
#define STALL_MAX 1e6

static pthread_mutex_t handle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t handle_cond = PTHREAD_COND_INITIALIZER;

/* ---- settings ---- */

typedef struct {
  double cycle_ms, stall_s;
  long long fusion, cache;
  const char *timeline;
} settings_t;

/* An empty variable counts as unset, as for every PCCL_* variable. */
static const char *env(const char *name) {
  const char *v = getenv(name);
  return v && *v ? v : NULL;
}

static pccl_status_t from_env(settings_t *s) {
  const char *where = "pccl_engine_create";
  char err[256];
  const char *v;
  pccl_status_t st = PCCL_OK;
  long cache;
  if ((v = env("PCCL_CYCLE_TIME_MS")) && s->cycle_ms < 0)
    st = pccl__parse_seconds("PCCL_CYCLE_TIME_MS", v, CYCLE_MS_MAX, &s->cycle_ms, err, sizeof err);
  if (st == PCCL_OK && (v = env("PCCL_FUSION_THRESHOLD")) && s->fusion < 0)
    st = pccl__parse_bytes("PCCL_FUSION_THRESHOLD", v, FUSION_MAX, &s->fusion, err, sizeof err);
  if (st == PCCL_OK && (v = env("PCCL_CACHE_CAPACITY")) && s->cache < 0 &&
      (st = pccl__parse_int("PCCL_CACHE_CAPACITY", v, 0, CACHE_MAX, &cache, err, sizeof err)) == PCCL_OK)
    s->cache = cache;
  if (st == PCCL_OK && (v = env("PCCL_STALL_CHECK_SECONDS")) && s->stall_s < 0)
    st = pccl__parse_seconds("PCCL_STALL_CHECK_SECONDS", v, STALL_MAX, &s->stall_s, err, sizeof err);
  if (st != PCCL_OK) return pccl__error(NULL, st, where, "%s", err);
  if (!s->timeline) s->timeline = env("PCCL_TIMELINE");
  if (s->cycle_ms < 0) s->cycle_ms = CYCLE_MS_DEFAULT;
  if (s->fusion < 0) s->fusion = FUSION_DEFAULT;
  if (s->cache < 0) s->cache = CACHE_DEFAULT;
  if (s->stall_s < 0) s->stall_s = STALL_DEFAULT;
  return PCCL_OK;
}

static pccl_status_t settings(const pccl_engine_config_t *cfg, settings_t *s) {
  const char *where = "pccl_engine_create";
  *s = (settings_t){-1, -1, -1, -1, NULL};
  if (cfg) {
    if (cfg->size != sizeof(*cfg))
      return pccl__error(NULL, PCCL_ERR_INVALID_ARGUMENT, where,
                         "config->size is %zu, not sizeof(pccl_engine_config_t) = %zu "
                         "(use PCCL_ENGINE_CONFIG_INIT)", cfg->size, sizeof(*cfg));
    /* !(x <= max) also rejects NaN */
    if (!(cfg->cycle_ms <= CYCLE_MS_MAX) || !(cfg->stall_seconds <= STALL_MAX) ||
        cfg->fusion_bytes > FUSION_MAX || cfg->cache_capacity > CACHE_MAX)
      return pccl__error(NULL, PCCL_ERR_INVALID_ARGUMENT, where,
                         "a setting is out of range: cycle_ms <= %g, fusion_bytes <= %lld, "
                         "cache_capacity <= %d, stall_seconds <= %g",
                         CYCLE_MS_MAX, FUSION_MAX, CACHE_MAX, STALL_MAX);
    *s = (settings_t){cfg->cycle_ms, cfg->stall_seconds, cfg->fusion_bytes, cfg->cache_capacity,
                      cfg->timeline};
  }
  return from_env(s);
}

/* ---- the engine's bookkeeping, used by its files ---- */

void pccl_engine_count(pccl_engine_t *e, const pccl_engine_stats_t *d) {
  pthread_mutex_lock(&e->lock);
  pccl_engine_stats_t *s = &e->stats;
  s->cycles += d->cycles;
  s->coordinator_cycles += d->coordinator_cycles;
  s->cache_hits += d->cache_hits;
  s->negotiated += d->negotiated;
  s->coordination_bytes += d->coordination_bytes;
  s->coordination_seconds += d->coordination_seconds;
  s->collectives += d->collectives;
  s->tensors += d->tensors;
  s->fused_tensors += d->fused_tensors;
  s->stall_warnings += d->stall_warnings;
  pthread_mutex_unlock(&e->lock);
}

static void handle_release(pccl_handle_t *h) { /* under handle_lock */
  if (--h->refs == 0) free(h);
}

void pccl_engine_complete(pccl_engine_t *e, pccl_req_t *r, pccl_status_t st, const char *fmt, ...) {
  pthread_mutex_lock(&e->lock); /* counted before the waiter wakes, so stats agree with it */
  pccl_strmap_del(&e->inflight, r->name);
  e->stats.tensors++;
  pthread_mutex_unlock(&e->lock);
  pthread_mutex_lock(&handle_lock);
  pccl_handle_t *h = r->handle;
  h->status = st;
  if (st != PCCL_OK) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(h->error, sizeof h->error, fmt, ap);
    va_end(ap);
  }
  h->done = 1;
  handle_release(h);
  pthread_mutex_unlock(&handle_lock);
  e->unwoken = 1;
  free(r);
}

void pccl_engine_wake(pccl_engine_t *e) {
  if (!e->unwoken) return;
  e->unwoken = 0;
  pthread_mutex_lock(&handle_lock);
  pthread_cond_broadcast(&handle_cond);
  pthread_mutex_unlock(&handle_lock);
}

/* Constant time: the last request takes r's slot (the pending list's
 * order carries no meaning; rank 0 sets the global order). */
void pccl_engine_unpend(pccl_engine_t *e, pccl_req_t *r) {
  pccl_req_t *last = e->pending[--e->npending];
  e->pending[r->slot] = last;
  last->slot = r->slot;
  if (r->announced) pccl_strmap_del(&e->by_name, r->name);
}

/* Grows an array of pointers to hold one more; 0 when out of memory. */
static int grow(void *arrayp, size_t n, size_t *cap) {
  void ***array = arrayp;
  if (n < *cap) return 1;
  size_t c = *cap ? *cap * 2 : 64;
  void **a = realloc(*array, c * sizeof(void *));
  if (!a) return 0;
  *array = a;
  *cap = c;
  return 1;
}

int pccl_engine_push_ready(pccl_engine_t *e, pccl_req_t *r) {
  if (e->nready == e->capready) {
    size_t cap = e->capready;
    if (!grow(&e->ready, e->nready, &cap)) return 0;
    pccl_req_t **b = realloc(e->bucket, cap * sizeof(*b));
    if (b) e->bucket = b;
    uint8_t *u = b ? realloc(e->used, cap) : NULL;
    if (u) e->used = u;
    if (!u) return 0;
    e->capready = cap;
  }
  e->ready[e->nready++] = r;
  return 1;
}

/* ---- the thread ---- */

static void deadline_after(struct timespec *ts, const struct timespec *from, double seconds) {
  *ts = *from;
  long long ns = ts->tv_nsec + (long long)(seconds * 1e9);
  ts->tv_sec += (time_t)(ns / 1000000000ll);
  ts->tv_nsec = (long)(ns % 1000000000ll);
}

/* Waits out the cycle, then takes the queue; returns whether this rank
 * asked to stop. */
static int next_cycle(pccl_engine_t *e, const struct timespec *deadline) {
  pthread_mutex_lock(&e->lock);
  while (!e->stop_requested &&
         pthread_cond_timedwait(&e->wake, &e->lock, deadline) != ETIMEDOUT) {
  }
  int stop = e->stop_requested;
  double now = MPI_Wtime();
  size_t taken = 0;
  for (; taken < e->nqueue; taken++) {
    pccl_req_t *r = e->queue[taken];
    if (!grow(&e->pending, e->npending, &e->cappending)) break; /* the rest wait a cycle */
    r->slot = e->npending;
    e->pending[e->npending++] = r;
    r->t_seen = now;
    if (e->timeline.f) {
      r->tid = pccl_timeline_row(&e->timeline, r->name);
      pccl_timeline_span(&e->timeline, r->tid, "wait", r->t_submit, now);
    }
  }
  if (taken < e->nqueue)
    memmove(e->queue, e->queue + taken, (e->nqueue - taken) * sizeof(*e->queue));
  e->nqueue -= taken;
  pthread_mutex_unlock(&e->lock);
  return stop;
}

/* Ends every request still pending or queued with `st`. */
static void fail_all(pccl_engine_t *e, pccl_status_t st, const char *why) {
  while (e->npending) {
    pccl_req_t *r = e->pending[0];
    pccl_engine_unpend(e, r);
    pccl_engine_complete(e, r, st, "tensor '%s': %s", r->name, why);
  }
  for (;;) {
    pthread_mutex_lock(&e->lock);
    pccl_req_t *r = e->nqueue ? e->queue[--e->nqueue] : NULL;
    pthread_mutex_unlock(&e->lock);
    if (!r) break;
    pccl_engine_complete(e, r, st, "tensor '%s': %s", r->name, why);
  }
  pccl_engine_wake(e);
}

static void *engine_main(void *arg) {
  pccl_engine_t *e = arg;
  char why[PCCL_ERROR_LEN] = "";
  pccl_status_t st = PCCL_OK;
  int stop = 0;
  struct timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &e->ctl_done);
  deadline_after(&deadline, &e->ctl_done, e->cycle_s);
  while (!stop && st == PCCL_OK) {
    int stop_here = next_cycle(e, &deadline);
    double t0 = MPI_Wtime();
    st = pccl_coordinate(e, stop_here, &stop, why, sizeof why);
    /* The next cycle is timed from the end of this one's last collective,
     * which every rank has just left: timed from each rank's own start, the
     * ranks' cycles would drift apart and each would wait for the latest in
     * the next. Ranks of a node sharing the bitvector's segment take one
     * instant for it, however late each was woken. */
    deadline_after(&deadline, &e->ctl_done, e->cycle_s);
    pccl_engine_stats_t d = {.cycles = 1, .coordination_seconds = MPI_Wtime() - t0};
    pccl_engine_count(e, &d);
    pccl_engine_wake(e); /* requests that failed negotiation */
    if (st == PCCL_OK) pccl_fusion_run(e);
    if (e->timeline.f) fflush(e->timeline.f);
  }
  if (st == PCCL_OK) {
    st = PCCL_ERR_ABORTED;
    snprintf(why, sizeof why, "the engine shut down (pccl_engine_destroy) with the request pending");
  } else {
    /* peers may be gone: destroying the engine's communicator must not wait for them */
    pccl_comm_abort(e->comm);
  }
  pthread_mutex_lock(&e->lock);
  e->stopped = 1; /* from here on, submits fail */
  snprintf(e->stop_why, sizeof e->stop_why, "%s", why);
  pthread_mutex_unlock(&e->lock);
  fail_all(e, st, why);
  return NULL;
}

/* ---- create and destroy ---- */

static void engine_free(pccl_engine_t *e) {
  pccl_timeline_close(&e->timeline);
  pccl_coord_destroy(e->coord);
  pccl_rcache_free(&e->cache);
  pccl_bitand_destroy(e->bitand);
  pccl_strmap_free(&e->by_name);
  pccl_strmap_free(&e->inflight);
  pccl_mem_free(e->fusion);
  free(e->bits);
  free(e->at_pos);
  free(e->pending);
  free(e->queue);
  free(e->ready);
  free(e->bucket);
  free(e->used);
  if (e->ctl != MPI_COMM_NULL) MPI_Comm_free(&e->ctl);
  pccl_comm_destroy(e->comm);
  pthread_cond_destroy(&e->wake);
  pthread_mutex_destroy(&e->lock);
  free(e);
}

/* This rank's resources, allocated before the ranks agree that all have them. */
static pccl_status_t allocate(pccl_engine_t *e, const settings_t *s) {
  size_t nw = ((size_t)s->cache + 63) / 64;
  pccl_status_t st = PCCL_OK;
  if (!pccl_strmap_init(&e->inflight, 256) || !pccl_strmap_init(&e->by_name, 256) ||
      !pccl_rcache_init(&e->cache, (int)s->cache) || !(e->bits = calloc(1 + 2 * nw, 8)) ||
      !(e->at_pos = calloc((size_t)s->cache + 1, sizeof(*e->at_pos))) ||
      (s->cache > 0 && !(e->bitand = pccl_bitand_new(1 + 2 * nw))))
    st = PCCL_ERR_NO_MEMORY;
  if (st == PCCL_OK && e->rank == 0) st = pccl_coord_create(e);
  if (st == PCCL_OK && s->fusion > 0) st = pccl_mem_alloc(&e->fusion, (size_t)s->fusion);
  if (st == PCCL_OK) st = pccl_timeline_open(&e->timeline, s->timeline, e->rank);
  return st;
}

/* Every rank must have the same cache capacity and fusion threshold (the
 * bitvector's length and the buckets depend on them) and have allocated
 * what it needs. One allreduce of maxima; negated values give minima. */
static pccl_status_t agree(pccl_engine_t *e, pccl_status_t mine, const settings_t *s) {
  long long v[5] = {mine != PCCL_OK, s->cache, -s->cache, s->fusion, -s->fusion};
  int rc = MPI_Allreduce(MPI_IN_PLACE, v, 5, MPI_LONG_LONG, MPI_MAX, e->ctl);
  const char *where = "pccl_engine_create";
  if (rc != MPI_SUCCESS) return pccl__error(NULL, PCCL_ERR_MPI, where, "MPI_Allreduce failed");
  if (mine != PCCL_OK) return mine; /* its message is set */
  if (v[0]) return pccl__error(NULL, PCCL_ERR_NO_MEMORY, where, "another rank failed to set up its engine");
  if (v[1] != -v[2] || v[3] != -v[4])
    return pccl__error(NULL, PCCL_ERR_INVALID_ARGUMENT, where,
                       "ranks disagree on the engine's settings: cache capacity %lld..%lld, "
                       "fusion threshold %lld..%lld bytes",
                       -v[2], v[1], -v[4], v[3]);
  return PCCL_OK;
}

pccl_status_t pccl_engine_create(pccl_comm_t *comm, const pccl_engine_config_t *config,
                                 pccl_engine_t **out) {
  const char *where = "pccl_engine_create";
  if (!out) return pccl__error(NULL, PCCL_ERR_INVALID_ARGUMENT, where, "engine is NULL");
  *out = NULL;
  if (!pccl__comm_live(comm))
    return pccl__error(NULL, PCCL_ERR_INVALID_COMM, where, "comm is not a live communicator");
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  if (level < MPI_THREAD_SERIALIZED)
    return pccl__error(NULL, PCCL_ERR_UNSUPPORTED, where,
                       "the engine's thread calls MPI, which was initialised below "
                       "MPI_THREAD_SERIALIZED (use MPI_Init_thread)");
  settings_t s;
  pccl_status_t st = settings(config, &s);
  if (st != PCCL_OK) return st;
  pccl_engine_t *e = calloc(1, sizeof(*e));
  if (!e) return pccl__error(NULL, PCCL_ERR_NO_MEMORY, where, "out of memory");
  e->ctl = MPI_COMM_NULL;
  pthread_mutex_init(&e->lock, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&e->wake, &ca);
  pthread_condattr_destroy(&ca);
  e->rank = comm->rank;
  e->size = comm->size;
  e->cycle_s = s.cycle_ms / 1e3;
  e->stall_s = s.stall_s;
  e->fusion_bytes = (size_t)s.fusion;
  e->cache_capacity = (int)s.cache;
  if (MPI_Comm_dup(comm->mpi, &e->ctl) != MPI_SUCCESS) {
    e->ctl = MPI_COMM_NULL;
    engine_free(e);
    return pccl__error(NULL, PCCL_ERR_MPI, where, "MPI_Comm_dup failed");
  }
  st = pccl_comm_create_mpi(comm->mpi, &e->comm);
  if (st == PCCL_OK) e->ctl_timeout = e->comm->timeout;
  if (st == PCCL_OK) st = allocate(e, &s);
  st = agree(e, st, &s);
  if (st == PCCL_OK && e->bitand && pccl_bitand_setup(e, e->bitand) != PCCL_OK)
    st = pccl__error(NULL, PCCL_ERR_MPI, where, "setting up the bitvector's all-reduce failed in MPI");
  if (st == PCCL_OK && pthread_create(&e->thread, NULL, engine_main, e) != 0)
    st = pccl__error(NULL, PCCL_ERR_NO_MEMORY, where, "cannot start the engine's thread");
  if (st != PCCL_OK) {
    engine_free(e);
    return st;
  }
  *out = e;
  return PCCL_OK;
}

pccl_status_t pccl_engine_destroy(pccl_engine_t *e) {
  if (!e) return PCCL_OK;
  pthread_mutex_lock(&e->lock);
  e->stop_requested = 1;
  pthread_cond_signal(&e->wake);
  pthread_mutex_unlock(&e->lock);
  pthread_join(e->thread, NULL);
  engine_free(e);
  return PCCL_OK;
}

/* ---- submission ---- */

static int submittable(pccl_coll_t coll) {
  return coll == PCCL_COLL_ALLREDUCE || coll == PCCL_COLL_ALLGATHER ||
         coll == PCCL_COLL_BROADCAST || coll == PCCL_COLL_REDUCE_SCATTER;
}

/* Checks one request and fills r; messages go to the thread's last error. */
static pccl_status_t check_request(const pccl_engine_t *e, const pccl_engine_request_t *q,
                                   pccl_req_t *r) {
  const char *where = "pccl_engine_submit";
  if (!q) return pccl__error(NULL, PCCL_ERR_INVALID_ARGUMENT, where, "request is NULL");
  if (q->size != sizeof(*q))
    return pccl__error(NULL, PCCL_ERR_INVALID_ARGUMENT, where,
                       "request->size is %zu, not sizeof(pccl_engine_request_t) = %zu "
                       "(use PCCL_ENGINE_REQUEST_INIT)", q->size, sizeof(*q));
  if (!q->name || !q->name[0] || strlen(q->name) > PCCL_ENGINE_NAME_MAX)
    return pccl__error(NULL, PCCL_ERR_INVALID_ARGUMENT, where,
                       q->name ? "the name is empty or longer than %d bytes" : "the name is NULL",
                       PCCL_ENGINE_NAME_MAX);
  if (!submittable(q->coll))
    return pccl__error(NULL, PCCL_ERR_UNSUPPORTED, where,
                       "tensor '%s': %s is not an engine collective (allreduce, allgather, "
                       "broadcast, reduce_scatter)", q->name, pccl_coll_name(q->coll));
  pccl_status_t st = pccl__coll_check(q->coll, e->rank, e->size, q->sendbuf, q->recvbuf, q->count,
                                      q->dtype, q->op, q->root);
  if (st != PCCL_OK) {
    char msg[PCCL_ERROR_LEN];
    snprintf(msg, sizeof msg, "%s", pccl_last_error(NULL));
    return pccl__error(NULL, st, where, "tensor '%s': %s", q->name, msg);
  }
  if (q->ndim < 0 || q->ndim > PCCL_ENGINE_MAX_DIMS || (q->ndim > 0 && !q->shape))
    return pccl__error(NULL, PCCL_ERR_INVALID_ARGUMENT, where,
                       "tensor '%s': ndim %d is not in 0..%d, or shape is NULL", q->name,
                       (int)q->ndim, PCCL_ENGINE_MAX_DIMS);
  memset(r, 0, sizeof(*r));
  unsigned long long product = 1;
  for (int i = 0; i < q->ndim; i++) {
    if (q->shape[i] < 0 || (q->shape[i] && product > ~0ull / (unsigned long long)q->shape[i]))
      return pccl__error(NULL, PCCL_ERR_INVALID_ARGUMENT, where,
                         "tensor '%s': shape[%d] = %lld is negative or overflows", q->name, i,
                         (long long)q->shape[i]);
    product *= (unsigned long long)q->shape[i];
    r->sig.shape[i] = q->shape[i];
  }
  if (q->ndim > 0 && product != q->count)
    return pccl__error(NULL, PCCL_ERR_INVALID_ARGUMENT, where,
                       "tensor '%s': the shape holds %llu elements, count is %zu", q->name, product,
                       q->count);
  int reduces = q->coll == PCCL_COLL_ALLREDUCE || q->coll == PCCL_COLL_REDUCE_SCATTER;
  snprintf(r->name, sizeof r->name, "%s", q->name);
  r->sig.coll = q->coll;
  r->sig.dtype = q->dtype;
  r->sig.op = reduces ? q->op : 0;                                 /* ignored otherwise */
  r->sig.root = q->coll == PCCL_COLL_BROADCAST ? q->root : 0;
  r->sig.count = q->count;
  r->sig.ndim = q->ndim;
  r->send = q->sendbuf;
  r->recv = q->recvbuf;
  return PCCL_OK;
}

static void free_requests(pccl_req_t **rs, int n) {
  for (int i = 0; i < n; i++) {
    if (rs[i]) free(rs[i]->handle);
    free(rs[i]);
  }
  free(rs);
}

/* Queues n checked requests, all or none. */
static pccl_status_t enqueue(pccl_engine_t *e, pccl_req_t **rs, int n) {
  const char *where = "pccl_engine_submit";
  pccl_status_t st = PCCL_OK;
  pthread_mutex_lock(&e->lock);
  int added = 0;
  if (e->stopped)
    st = pccl__error(NULL, PCCL_ERR_ABORTED, where, "the engine has stopped: %s", e->stop_why);
  for (; st == PCCL_OK && added < n; added++) {
    if (pccl_strmap_get(&e->inflight, rs[added]->name))
      st = pccl__error(NULL, PCCL_ERR_INVALID_ARGUMENT, where,
                       "tensor '%s' is already pending on this rank", rs[added]->name);
    else if (!pccl_strmap_put(&e->inflight, rs[added]->name, rs[added]))
      st = pccl__error(NULL, PCCL_ERR_NO_MEMORY, where, "out of memory");
    else
      continue;
    break;
  }
  size_t cap = e->capqueue;
  if (st == PCCL_OK && e->nqueue + (size_t)n > cap) {
    while (cap < e->nqueue + (size_t)n) cap = cap ? cap * 2 : 64;
    pccl_req_t **q = realloc(e->queue, cap * sizeof(*q));
    if (q) e->queue = q, e->capqueue = cap;
    else st = pccl__error(NULL, PCCL_ERR_NO_MEMORY, where, "out of memory");
  }
  if (st != PCCL_OK) {
    while (added-- > 0) pccl_strmap_del(&e->inflight, rs[added]->name);
  } else {
    double now = MPI_Wtime();
    for (int i = 0; i < n; i++) rs[i]->t_submit = now, e->queue[e->nqueue++] = rs[i];
  }
  pthread_mutex_unlock(&e->lock);
  return st;
}

pccl_status_t pccl_engine_submit_group(pccl_engine_t *e, const pccl_engine_request_t *qs, int n,
                                       pccl_handle_t **handles) {
  const char *where = "pccl_engine_submit";
  if (!e || !qs || !handles || n < 1)
    return pccl__error(NULL, PCCL_ERR_INVALID_ARGUMENT, where,
                       "engine, requests or handles is NULL, or n < 1");
  pccl_req_t **rs = calloc((size_t)n, sizeof(*rs));
  if (!rs) return pccl__error(NULL, PCCL_ERR_NO_MEMORY, where, "out of memory");
  pccl_status_t st = PCCL_OK;
  for (int i = 0; i < n && st == PCCL_OK; i++) {
    rs[i] = malloc(sizeof(**rs));
    pccl_handle_t *h = rs[i] ? calloc(1, sizeof(*h)) : NULL;
    if (!h) st = pccl__error(NULL, PCCL_ERR_NO_MEMORY, where, "out of memory");
    else st = check_request(e, &qs[i], rs[i]);
    if (rs[i]) rs[i]->handle = h;
    if (st == PCCL_OK && n > 1) {
      snprintf(rs[i]->sig.group, sizeof rs[i]->sig.group, "%s", qs[0].name);
      rs[i]->sig.group_size = n;
    }
    if (st == PCCL_OK) h->refs = 2;
  }
  /* the handles are taken before the requests are queued: from then on
   * the engine's thread may complete and free a request at any moment */
  for (int i = 0; st == PCCL_OK && i < n; i++) handles[i] = rs[i]->handle;
  if (st == PCCL_OK) st = enqueue(e, rs, n);
  if (st != PCCL_OK) {
    for (int i = 0; i < n; i++) handles[i] = NULL;
    free_requests(rs, n);
    return st;
  }
  free(rs);
  return PCCL_OK;
}

pccl_status_t pccl_engine_submit(pccl_engine_t *e, const pccl_engine_request_t *q,
                                 pccl_handle_t **handle) {
  return pccl_engine_submit_group(e, q, 1, handle);
}

/* ---- handles, stats, warnings ---- */

pccl_status_t pccl_handle_wait(pccl_handle_t *h) {
  if (!h) return pccl__error(NULL, PCCL_ERR_INVALID_ARGUMENT, "pccl_handle_wait", "handle is NULL");
  pthread_mutex_lock(&handle_lock);
  while (!h->done) pthread_cond_wait(&handle_cond, &handle_lock);
  pccl_status_t st = h->status;
  pthread_mutex_unlock(&handle_lock);
  return st;
}

pccl_status_t pccl_handle_test(pccl_handle_t *h, int *done) {
  if (!h || !done)
    return pccl__error(NULL, PCCL_ERR_INVALID_ARGUMENT, "pccl_handle_test", "handle or done is NULL");
  pthread_mutex_lock(&handle_lock);
  *done = h->done;
  pthread_mutex_unlock(&handle_lock);
  return PCCL_OK;
}

const char *pccl_handle_error(const pccl_handle_t *h) {
  if (!h) return "";
  pthread_mutex_lock(&handle_lock);
  const char *msg = h->done && h->status != PCCL_OK ? h->error : "";
  pthread_mutex_unlock(&handle_lock);
  return msg; /* written once, before done: stable from here on */
}

pccl_status_t pccl_handle_free(pccl_handle_t *h) {
  if (!h) return PCCL_OK;
  pthread_mutex_lock(&handle_lock);
  handle_release(h);
  pthread_mutex_unlock(&handle_lock);
  return PCCL_OK;
}

pccl_status_t pccl_engine_stats(pccl_engine_t *e, pccl_engine_stats_t *stats) {
  if (!e || !stats || stats->size != sizeof(*stats))
    return pccl__error(NULL, PCCL_ERR_INVALID_ARGUMENT, "pccl_engine_stats",
                       "engine or stats is NULL, or stats->size is not sizeof(pccl_engine_stats_t)");
  pthread_mutex_lock(&e->lock);
  *stats = e->stats;
  pthread_mutex_unlock(&e->lock);
  stats->size = sizeof(*stats);
  return PCCL_OK;
}

pccl_status_t pccl_engine_last_warning(pccl_engine_t *e, char *buf, size_t len) {
  if (!e || !buf || len == 0)
    return pccl__error(NULL, PCCL_ERR_INVALID_ARGUMENT, "pccl_engine_last_warning",
                       "engine or buf is NULL, or len is 0");
  pthread_mutex_lock(&e->lock);
  snprintf(buf, len, "%s", e->warning);
  pthread_mutex_unlock(&e->lock);
  return PCCL_OK;
}
