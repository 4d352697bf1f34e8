/* progress.c - the drop-in's progress thread: moves pccl's outstanding
 * non-blocking calls along while the program is away from pccl.
 *
 * pccl's calls move only inside pccl calls. A rank that issued a call of
 * several rounds and then sits in an MPI call the drop-in does not take
 * (communicator creation, one-sided synchronisation, file I/O, a loop of
 * MPI_Iprobe) or computes would leave its peers waiting in MPI_Wait; a valid
 * MPI program could hang. So once the program has a generalized request
 * outstanding, a thread wakes every PCCL_MPI_PROGRESS microseconds and, if
 * no thread of the program has been inside pccl since its last look, moves
 * the calls along for a few polls (pccl_comm_progress).
 *
 * pccl's communicators are used by one thread at a time, so the thread and
 * the program's threads exclude each other at the door (the gate): a
 * program thread entering pccl counts itself in `users` and waits while the
 * thread is inside; the thread goes in only while `users` counts nobody.
 * Each side writes its flag and then reads the other's, both sequentially
 * consistent, so at least one of them sees the other (Dekker). The program
 * pays this only once the thread exists, or from the start under
 * MPI_THREAD_MULTIPLE, where another thread may be inside when it starts.
 *
 * The thread makes no MPI call of its own, and pccl_comm_progress refuses a
 * communicator whose calls would make one unless MPI is multi-threaded;
 * such calls stay with the program's own calls, as before. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>

#include "interpose.h"

long pccl_ip_progress_us = 1000;

/* users: program threads inside pccl in the low bits, and above them how
 * many times one has left, which tells the thread whether the program has
 * moved its calls itself since the last look. */
#define INSIDE_BITS 16
#define INSIDE_MASK ((1u << INSIDE_BITS) - 1)
#define LEFT (1u << INSIDE_BITS)
static atomic_uint users;
static atomic_int helping; /* the thread is inside pccl */
static atomic_int counting; /* program threads count themselves in */
static _Thread_local int counted __attribute__((tls_model("initial-exec")));

/* Polls in one visit. While the program moves its calls itself, the
 * thread looks half as often each time, down to every BUSY_MAX periods
 * (each look takes a core from the program: at every 1 ms, an 8-byte
 * MPI_Iallreduce in a loop on 2 ranks took 0.06-0.1 us longer); while no
 * call is outstanding, every IDLE_NS. */
#define VISIT_POLLS 64
#define BUSY_MAX 32
#define IDLE_NS 100000000L

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv; /* on CLOCK_MONOTONIC, made with the thread */
static pthread_t thread;
static int started, stopping; /* under mu */
static atomic_int idle; /* the thread sleeps IDLE_NS: a new request wakes it */

void pccl_ip_gate_count_all(void) { atomic_store(&counting, 1); }

void pccl_ip_gate_enter(void) {
  if (!atomic_load_explicit(&counting, memory_order_relaxed)) return;
  counted = 1;
  atomic_fetch_add(&users, 1);
  while (atomic_load(&helping)) sched_yield();
}

void pccl_ip_gate_leave(void) {
  if (!counted) return;
  counted = 0;
  atomic_fetch_add_explicit(&users, LEFT - 1, memory_order_release);
}

/* One visit: polls until nothing the thread may move is left, the program
 * comes in, or VISIT_POLLS have passed. Returns whether the first poll
 * found a call it may move. */
static int visit(void) {
  int any = 0;
  for (int poll = 0; poll < VISIT_POLLS; poll++) {
    atomic_store(&helping, 1);
    if (atomic_load(&users) & INSIDE_MASK) {
      atomic_store_explicit(&helping, 0, memory_order_release);
      return 1;
    }
    int left = pccl_ip_nudge();
    atomic_store_explicit(&helping, 0, memory_order_release);
    if (!left) return any;
    any = 1;
  }
  return 1;
}

static void deadline(struct timespec *t, long ns) {
  clock_gettime(CLOCK_MONOTONIC, t);
  t->tv_nsec += ns % 1000000000L;
  t->tv_sec += ns / 1000000000L + t->tv_nsec / 1000000000L;
  t->tv_nsec %= 1000000000L;
}

static void *run(void *arg) {
  (void)arg;
  pccl_ip_inside_for_good();
  unsigned seen = atomic_load(&users) >> INSIDE_BITS;
  long period = pccl_ip_progress_us * 1000L, sleep = period;
  pthread_mutex_lock(&mu);
  while (!stopping) {
    struct timespec t;
    deadline(&t, sleep);
    pthread_cond_timedwait(&cv, &mu, &t); /* woken early: a request after idling, or the end */
    if (stopping) break;
    pthread_mutex_unlock(&mu);
    if (sleep == IDLE_NS) sleep = period;
    unsigned u = atomic_load(&users), left = u >> INSIDE_BITS;
    long busy = sleep < period * BUSY_MAX / 2 ? 2 * sleep : period * BUSY_MAX;
    /* idle, then pending: against pccl_ip_progress_start's outstanding, then
     * idle (Dekker again), so a request is either seen here or wakes us */
    atomic_store(&idle, 1);
    if (!pccl_ip_pending()) {
      sleep = IDLE_NS;
      seen = atomic_load(&users) >> INSIDE_BITS;
      pthread_mutex_lock(&mu);
      continue;
    }
    atomic_store_explicit(&idle, 0, memory_order_relaxed);
    if (left != seen || (u & INSIDE_MASK)) { /* the program is at it */
      sleep = busy;
    } else {
      sleep = visit() ? period : busy; /* none it may move: as if busy */
    }
    seen = atomic_load(&users) >> INSIDE_BITS;
    pthread_mutex_lock(&mu);
  }
  pthread_mutex_unlock(&mu);
  return NULL;
}

void pccl_ip_progress_start(void) {
  if (pccl_ip_progress_us <= 0) return;
  static atomic_int once;
  if (atomic_load_explicit(&once, memory_order_relaxed)) {
    /* at most once a look (a loop of short calls pays no futex a call) */
    if (atomic_load(&idle) && atomic_exchange_explicit(&idle, 0, memory_order_relaxed)) {
      pthread_mutex_lock(&mu);
      pthread_cond_signal(&cv);
      pthread_mutex_unlock(&mu);
    }
    return;
  }
  pthread_mutex_lock(&mu);
  if (!started && !stopping) {
    /* counted from now on: the caller is outside pccl, and without
     * MPI_THREAD_MULTIPLE no other thread is in an MPI call */
    atomic_store(&counting, 1);
    /* the program's signals stay with the program's threads */
    sigset_t all, old;
    sigfillset(&all);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    if (pthread_cond_init(&cv, &ca) == 0) {
      pthread_sigmask(SIG_SETMASK, &all, &old);
      started = pthread_create(&thread, NULL, run, NULL) == 0;
      pthread_sigmask(SIG_SETMASK, &old, NULL);
      if (!started) pthread_cond_destroy(&cv);
    }
    pthread_condattr_destroy(&ca);
    atomic_store(&once, 1); /* tried: a thread that cannot start leaves things as they were */
  }
  pthread_mutex_unlock(&mu);
}

void pccl_ip_progress_stop(void) {
  pthread_mutex_lock(&mu);
  stopping = 1;
  int join = started;
  if (join) pthread_cond_signal(&cv);
  pthread_mutex_unlock(&mu);
  if (join) pthread_join(thread, NULL);
}
