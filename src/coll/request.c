/* request.c - non-blocking collectives: each communicator runs its
 * pccl_i* calls one after another in the order they were issued (every
 * rank issues them in the same order, so the n-th call meets the n-th call
 * everywhere), the first one advanced step by step by whatever pccl call the
 * thread makes next: pccl_test, pccl_wait, a blocking collective waiting
 * for its peers, or another pccl_i* call.
 *
 * Progress is per thread, not per communicator: a thread that waits for one
 * call also moves along every other call it issued, on any communicator,
 * since a peer may be waiting on any of them. Another thread's calls are
 * left alone: a communicator is used by one thread at a time. A progress
 * thread of the caller's (the MPI drop-in's) moves one communicator's calls
 * with pccl_comm_progress while no other thread uses it. */
#include <sched.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"

struct pccl_request {
  pccl_comm_t *comm;
  struct pccl_request *next; /* the communicator's queue */
  pccl_call_t call;
  pccl_call_run_t run;
  int started;
  _Atomic int done; /* set by whichever thread moved the call to its end */
  pccl_status_t early; /* begun early behind another (prepost), with this error */
  int orphan; /* no caller holds it (pccl__request_post with req NULL) */
  pccl_status_t status;
  char error[PCCL_ERROR_LEN]; /* why it failed, for pccl_wait's caller */
};

/* Whether q's call has ended: another thread may be moving the
 * communicator's calls along (nb_busy) and end it. */
static int is_done(const pccl_request_t *q) {
  return atomic_load_explicit(&q->done, memory_order_acquire);
}

/* One freed request kept for the next call: a program that issues and
 * waits in a loop reuses it, where malloc and free of a block this size
 * (past glibc's per-thread cache) took the slower bins every call. */
static _Atomic(pccl_request_t *) spare;

/* A request with every field zero but the error text, which is written
 * before it is read. */
static pccl_request_t *request_new(void) {
  pccl_request_t *q = atomic_exchange_explicit(&spare, NULL, memory_order_acquire);
  if (!q && !(q = malloc(sizeof *q))) return NULL;
  memset(q, 0, offsetof(pccl_request_t, error));
  q->error[0] = '\0';
  return q;
}

/* Under AddressSanitizer a freed request goes back to malloc at once, so
 * that a use after free is reported instead of hidden in the spare. */
#if defined(__SANITIZE_ADDRESS__)
enum { KEEP_SPARE = 0 };
#else
enum { KEEP_SPARE = 1 };
#endif

static void request_free(pccl_request_t *q) {
  free(KEEP_SPARE ? atomic_exchange_explicit(&spare, q, memory_order_acq_rel) : q);
}

/* Communicators with queued calls, linked through nb_next. */
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static pccl_comm_t *pending;
static _Atomic int npending;
/* Set while this thread moves calls along: a blocking call inside that
 * (PCCL_CHECK's agreement) must not start over from its idle hook. */
static _Thread_local int progressing;

/* How many polls without progress between yields of the core, as the
 * blocking executor does (ranks may share cores). */
#define YIELD_EVERY 64
/* The most communicators one sweep moves along. */
#define SWEEP_MAX 64

/* Puts comm on the list (first = 1: its queue was empty) and makes the
 * calling thread its owner; other threads read both under the lock. */
static void list_add(pccl_comm_t *comm, int first) {
  pthread_t self = pthread_self();
  if (!first && pthread_equal(comm->nb_owner, self)) return; /* written by this thread only */
  pthread_mutex_lock(&pending_lock);
  comm->nb_owner = self;
  if (first) {
    comm->nb_next = pending;
    pending = comm;
    atomic_fetch_add_explicit(&npending, 1, memory_order_relaxed);
  }
  pthread_mutex_unlock(&pending_lock);
}

static void list_remove(pccl_comm_t *comm) {
  pthread_mutex_lock(&pending_lock);
  for (pccl_comm_t **p = &pending; *p; p = &(*p)->nb_next)
    if (*p == comm) {
      *p = comm->nb_next;
      atomic_fetch_sub_explicit(&npending, 1, memory_order_relaxed);
      break;
    }
  pthread_mutex_unlock(&pending_lock);
}

/* The head call has ended with st: off the queue, its outcome kept. */
static void finish(pccl_comm_t *comm, pccl_request_t *q, pccl_status_t st) {
  q->status = st;
  if (st != PCCL_OK && !q->error[0]) /* an early failure kept its own */
    snprintf(q->error, sizeof q->error, "%s", pccl_last_error(comm));
  atomic_store_explicit(&q->done, 1, memory_order_release);
  comm->nb_head = q->next;
  if (q->orphan) request_free(q);
  if (!comm->nb_head) {
    comm->nb_tail = NULL;
    list_remove(comm);
  }
}

/* The calls queued behind a call on the node segment that has numbered all
 * its rounds begin at once, if they run on the segment too: each publishes
 * its part, so that a call of one round needs none of this rank's later
 * calls, while this rank may be in one that moves nothing (an MPI call the
 * drop-in leaves to MPI, communicator creation). They finish in order. */
static void prepost(pccl_comm_t *comm) {
  for (pccl_request_t *q = comm->nb_head; q && q->next; q = q->next) {
    if (!q->started || !pccl__call_settled(&q->run)) return;
    pccl_request_t *n = q->next;
    if (n->started) continue;
    int begun = 0;
    pccl_status_t st = pccl__call_prepost(comm, &n->call, &n->run, &begun);
    if (!begun) return;
    n->started = 1;
    n->early = st;
    if (st != PCCL_OK) {
      snprintf(n->error, sizeof n->error, "%s", pccl_last_error(comm));
      return;
    }
  }
}

/* Starts or advances comm's calls in order until one is still running.
 * The caller holds comm->nb_busy. */
static void progress_comm(pccl_comm_t *comm) {
  pccl_request_t *q;
  while ((q = comm->nb_head) != NULL) {
    pccl_status_t st;
    char user_error[PCCL_ERROR_LEN]; /* an orphan's failure is not the caller's last error */
    if (q->orphan) snprintf(user_error, sizeof user_error, "%s", comm->error);
    if (!q->started) {
      q->started = 1;
      pccl__error_clear(comm);
      if (comm->broken != PCCL_OK)
        st = pccl__error(comm, comm->broken, q->call.api, "the communicator is broken: %s",
                         comm->broken_why);
      else
        st = pccl__call_begin(comm, &q->call, &q->run);
    } else {
      st = q->early != PCCL_OK ? q->early : pccl__call_advance(comm, &q->call, &q->run);
    }
    if (q->orphan) snprintf(comm->error, sizeof comm->error, "%s", user_error);
    if (st == PCCL_OK && q->run.phase != PCCL_PHASE_DONE) {
      prepost(comm);
      return;
    }
    finish(comm, q, st);
  }
}

/* Moves along every call this thread issued, once (and `first`'s comm,
 * whoever issued them). */
static void sweep(pccl_comm_t *first) {
  pccl_comm_t *mine[SWEEP_MAX];
  int n = 0;
  pthread_t self = pthread_self();
  /* nb_busy: one thread at a time moves a communicator's calls (a request
   * may be waited for by another thread than the one that issued it) */
  if (first && !atomic_exchange(&first->nb_busy, 1)) mine[n++] = first;
  if (!first || atomic_load_explicit(&npending, memory_order_relaxed) > 1) {
    pthread_mutex_lock(&pending_lock);
    for (pccl_comm_t *c = pending; c && n < SWEEP_MAX; c = c->nb_next)
      if (c != first && pthread_equal(c->nb_owner, self) && !atomic_exchange(&c->nb_busy, 1))
        mine[n++] = c;
    pthread_mutex_unlock(&pending_lock);
  }
  int was = progressing;
  progressing = 1;
  for (int i = 0; i < n; i++) {
    progress_comm(mine[i]);
    atomic_store(&mine[i]->nb_busy, 0);
  }
  progressing = was;
}

void pccl__request_idle(void) {
  if (!progressing && atomic_load_explicit(&npending, memory_order_relaxed) > 0) sweep(NULL);
}

/* comm->nb_close: the caller's calls must have been waited for; pccl's
 * own (PCCL_CHECK's agreements of calls that failed) are finished here,
 * as the peers finish theirs in their pccl_comm_destroy. */
static pccl_status_t close_comm(pccl_comm_t *comm) {
  for (pccl_request_t *q = comm->nb_head; q; q = q->next)
    if (!q->orphan) return PCCL_ERR_INVALID_ARGUMENT;
  pccl__request_drain(comm);
  /* off the list now; a sweep that took it before still holds nb_busy */
  while (atomic_exchange(&comm->nb_busy, 1)) sched_yield();
  return PCCL_OK;
}

pccl_status_t pccl__request_post(pccl_comm_t *comm, const pccl_call_t *c, pccl_request_t **req) {
  pccl_request_t *q = request_new();
  if (!q) return pccl__error(comm, PCCL_ERR_NO_MEMORY, c->api, "out of memory for a request");
  q->comm = comm;
  q->call = *c;
  comm->nb_close = close_comm;
  int first = comm->nb_tail == NULL;
  if (first)
    comm->nb_head = q;
  else
    comm->nb_tail->next = q;
  comm->nb_tail = q;
  list_add(comm, first);
  q->orphan = req == NULL;
  if (req) *req = q;
  sweep(comm); /* its first messages leave now, so they overlap what the caller does next */
  return PCCL_OK;
}

pccl_status_t pccl__request_drain(pccl_comm_t *comm) {
  for (unsigned idle = 1; comm->nb_head; idle++) {
    sweep(comm);
    if (idle % YIELD_EVERY == 0) sched_yield();
  }
  return PCCL_OK;
}

/* Hands a finished request's outcome to the caller and frees it; a
 * failure's message becomes the last error (unless `quiet`), on the
 * communicator while it lives. */
static pccl_status_t complete(pccl_request_t **req, int quiet) {
  pccl_request_t *q = *req;
  pccl_status_t st = q->status;
  if (st != PCCL_OK && !quiet)
    snprintf(pccl__comm_live(q->comm) ? q->comm->error : pccl__thread_error(), PCCL_ERROR_LEN,
             "%s", q->error);
  request_free(q);
  *req = NULL;
  return st;
}

pccl_status_t pccl_test(pccl_request_t **request, int *done) {
  if (!request || !done)
    return pccl__error(NULL, PCCL_ERR_INVALID_ARGUMENT, "pccl_test",
                       request ? "done is NULL" : "request is NULL");
  *done = 1;
  if (!*request || is_done(*request)) { /* a NULL one completed earlier: like MPI_REQUEST_NULL */
    pccl__request_idle();
    return *request ? complete(request, 0) : PCCL_OK;
  }
  list_add((*request)->comm, 0); /* the testing thread moves its communicator on */
  sweep((*request)->comm);
  *done = is_done(*request);
  return *done ? complete(request, 0) : PCCL_OK;
}

static pccl_status_t wait_one(pccl_request_t **request, int quiet) {
  pccl_request_t *q = *request;
  if (!q) return PCCL_OK;
  if (!is_done(q)) list_add(q->comm, 0); /* the waiting thread moves its communicator on */
  for (unsigned idle = 1; !is_done(q); idle++) {
    sweep(q->comm);
    if (idle % YIELD_EVERY == 0) sched_yield();
  }
  return complete(request, quiet);
}

pccl_status_t pccl_comm_progress(pccl_comm_t *comm) {
  if (!pccl__comm_live(comm))
    return pccl__error(NULL, PCCL_ERR_INVALID_COMM, "pccl_comm_progress", "not a live communicator");
  /* the refusal's message is the calling thread's (pccl_last_error(NULL)):
   * the communicator's belongs to the thread that uses it */
  for (const pccl_request_t *q = comm->nb_head; q; q = q->next) {
    if (q->call.device)
      return pccl__error(NULL, PCCL_ERR_UNSUPPORTED, "pccl_comm_progress",
                         "a call on device buffers is moved by the thread that issued it");
    if (!comm->mpi_threads && !pccl__call_without_mpi(comm, &q->call))
      return pccl__error(NULL, PCCL_ERR_UNSUPPORTED, "pccl_comm_progress",
                         "a call not on the node segment, or under PCCL_CHECK, makes MPI calls as "
                         "it moves, and MPI was not initialised with MPI_THREAD_MULTIPLE");
  }
  /* not sweep(comm), which would also move the calling thread's own
   * communicators; nb_owner stays, so the issuing thread's sweeps still
   * move this one */
  if (!comm->nb_head || atomic_exchange(&comm->nb_busy, 1)) return PCCL_OK;
  int was = progressing;
  progressing = 1;
  progress_comm(comm);
  progressing = was;
  atomic_store(&comm->nb_busy, 0);
  return PCCL_OK;
}

int pccl_request_finished(const pccl_request_t *request) { return request && is_done(request); }

pccl_status_t pccl_wait(pccl_request_t **request) {
  if (!request) return pccl__error(NULL, PCCL_ERR_INVALID_ARGUMENT, "pccl_wait", "request is NULL");
  return wait_one(request, 0);
}

pccl_status_t pccl_waitall(int n, pccl_request_t **requests) {
  if (n < 0 || (n > 0 && !requests))
    return pccl__error(NULL, PCCL_ERR_INVALID_ARGUMENT, "pccl_waitall",
                       n < 0 ? "n is negative" : "requests is NULL");
  pccl_status_t first = PCCL_OK;
  pccl_comm_t *failed = NULL;
  char why[PCCL_ERROR_LEN] = "";
  for (int i = 0; i < n; i++) {
    pccl_comm_t *comm = requests[i] ? requests[i]->comm : NULL;
    pccl_status_t st = wait_one(&requests[i], first != PCCL_OK);
    if (first == PCCL_OK && st != PCCL_OK) {
      first = st;
      failed = comm;
      snprintf(why, sizeof why, "%s", pccl_last_error(comm));
    }
  }
  if (first != PCCL_OK) /* later calls may have failed meanwhile: the first one's message */
    snprintf(pccl__comm_live(failed) ? failed->error : pccl__thread_error(), PCCL_ERROR_LEN, "%s",
             why);
  return first;
}
