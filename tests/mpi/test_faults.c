/* test_faults.c - failures caused on purpose, and the errors pccl must give
 * for them instead of hanging or corrupting memory. Each rank prints what it
 * got and after how long ("rank R: STATUS after S s: message").
 *   test_faults skip      the last rank skips an all-reduce (ring, seg, cma):
 *                         the others get PCCL_ERR_TIMEOUT within the timeout
 *                         (2 s), naming the peers awaited; their next call
 *                         fails at once
 *   test_faults abort     rank 0 is stuck in an all-reduce the others skip;
 *                         a second thread calls pccl_comm_abort after 0.5 s:
 *                         PCCL_ERR_ABORTED, long before the timeout (60 s)
 *   test_faults mismatch  (PCCL_CHECK=1) ranks pass different counts, roots,
 *                         ops, a barrier against the one-byte all-reduce it
 *                         runs as, a scan against an exscan; one rank passes
 *                         a NULL buffer, one a zero
 *                         count: every rank gets an error naming the field
 *                         and the ranks, and the communicator still works
 *   test_faults checkskip (PCCL_CHECK=1) the last rank skips: the agreement
 *                         itself times out
 *   test_faults barrier   pccl_barrier: each rank in turn comes 0.3 s late and
 *                         no other leaves before it comes (under the default
 *                         algorithm and ring); then the last rank skips one:
 *                         the others get PCCL_ERR_TIMEOUT naming pccl_barrier
 *   test_faults alone     pccl_comm_destroy where the communicator broke on
 *                         one rank only (pccl_comm_abort on rank 0): the
 *                         others return at once, not waiting in the node's
 *                         shared window for a rank that left it; a rank 0.5 s
 *                         late to the destroy is waited for; one 4 s late,
 *                         past the 1 s timeout, is not, and does not wait
 *   test_faults dead      the last rank kills itself (SIGKILL) before an
 *                         all-reduce: under `mpirun --enable-recovery` (Open
 *                         MPI) the others get PCCL_ERR_TIMEOUT within the
 *                         timeout (3 s), print "rank R: survived", then end
 *                         the job with MPI_Abort (run_dead_peer.sh) */
#include <signal.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pccl.h"
#include "pccl_mpi.h"

static int rank, size, failures;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void expect(int ok, const char *what) {
  if (ok) return;
  failures++;
  printf("rank %d: FAIL %s\n", rank, what);
}

/* Runs one all-reduce of n floats and reports what it returned. */
static pccl_status_t timed_allreduce(pccl_comm_t *comm, size_t n, double *seconds) {
  float *buf = calloc(n ? n : 1, sizeof(float));
  double t = now();
  pccl_status_t st = pccl_allreduce(buf, buf, n, PCCL_FLOAT32, PCCL_SUM, comm);
  *seconds = now() - t;
  printf("rank %d: %s after %.2f s: %s\n", rank, pccl_status_string(st), *seconds,
         st == PCCL_OK ? "" : pccl_last_error(comm));
  free(buf);
  return st;
}

/* The last rank skips an all-reduce that `algo` runs; the others time out
 * with a message that names what they awaited and `where` (the executor's
 * step, the node segment's round). */
static void skip_one(pccl_comm_t *comm, const char *algo, const char *where) {
  double s;
  char what[96];
  pccl_comm_set_timeout(comm, 2.0);
  expect(pccl_comm_set_algo(comm, PCCL_COLL_ALLREDUCE, algo) == PCCL_OK, "force the algorithm");
  if (rank == size - 1) {
    sleep(4); /* the others give up meanwhile */
    pccl_comm_abort(comm); /* this rank knows the communicator is unusable */
    return;
  }
  pccl_status_t st = timed_allreduce(comm, 100000, &s);
  expect(st == PCCL_ERR_TIMEOUT, "a skipped all-reduce returns PCCL_ERR_TIMEOUT");
  expect(s >= 2.0 && s < 10.0, "it gives up after the 2 s timeout, not much later");
  expect(strstr(pccl_last_error(comm), "waiting for") != NULL, "the message names what it awaited");
  snprintf(what, sizeof what, "%s: the message names the %s", algo, where);
  expect(strstr(pccl_last_error(comm), where) != NULL, what);
  st = timed_allreduce(comm, 10, &s);
  expect(st == PCCL_ERR_TIMEOUT && s < 0.5, "the broken communicator fails at once");
  expect(strstr(pccl_last_error(comm), "broken") != NULL, "saying it is broken");
}

static void test_skip(pccl_comm_t *comm) {
  skip_one(comm, "ring", "step");
  int nnodes = 0;
  pccl_comm_t *seg = NULL;
  if (pccl_comm_nnodes(comm, &nnodes) != PCCL_OK || nnodes != 1) return; /* no segment */
  expect(pccl_comm_create_mpi(MPI_COMM_WORLD, &seg) == PCCL_OK, "a second communicator");
  if (!seg) return;
  skip_one(seg, "seg", "round");
  expect(pccl_comm_destroy(seg) == PCCL_OK, "pccl_comm_destroy");
  pccl_comm_t *cma = NULL; /* the direct form's handshake rounds */
  expect(pccl_comm_create_mpi(MPI_COMM_WORLD, &cma) == PCCL_OK, "a third communicator");
  if (!cma) return;
  skip_one(cma, "cma", "round");
  expect(pccl_comm_destroy(cma) == PCCL_OK, "pccl_comm_destroy");
}

/* Each rank in turn comes `late` seconds late to a barrier: the others wait
 * for it, and it does not wait once there. */
static void barrier_waits(pccl_comm_t *comm, const char *algo) {
  const double late = 0.3;
  char what[128];
  if (algo) expect(pccl_comm_set_algo(comm, PCCL_COLL_ALLREDUCE, algo) == PCCL_OK, "force the algorithm");
  for (int k = 0; k < size; k++) {
    expect(pccl_barrier(comm) == PCCL_OK, "a barrier all ranks call"); /* start together */
    if (rank == k) {
      struct timespec ts = {0, (long)(late * 1e9)};
      nanosleep(&ts, NULL);
    }
    double t = now();
    pccl_status_t st = pccl_barrier(comm);
    double waited = now() - t;
    snprintf(what, sizeof what, "%s barrier with rank %d late: %s after %.3f s", algo ? algo : "default", k,
             pccl_status_string(st), waited);
    expect(st == PCCL_OK, what);
    /* half the delay: a rank may leave the first barrier a scheduler's
     * time slice after another on a loaded machine; a barrier that does
     * not wait returns in microseconds */
    expect(rank == k ? waited < late : waited > late / 2, what);
  }
}

static void test_barrier(pccl_comm_t *comm) {
  expect(pccl_barrier(NULL) == PCCL_ERR_INVALID_COMM, "pccl_barrier(NULL) is PCCL_ERR_INVALID_COMM");
  barrier_waits(comm, NULL);
  barrier_waits(comm, "ring");
  expect(pccl_comm_set_algo(comm, PCCL_COLL_ALLREDUCE, NULL) == PCCL_OK, "back to the default");
  pccl_comm_set_timeout(comm, 2.0);
  /* so that the skipped barrier below is a repeat (the short way) */
  expect(pccl_barrier(comm) == PCCL_OK, "a barrier all ranks call, once more");
  if (rank == size - 1) {
    sleep(4);
    pccl_comm_abort(comm);
    return;
  }
  double t = now();
  pccl_status_t st = pccl_barrier(comm);
  double s = now() - t;
  printf("rank %d: %s after %.2f s: %s\n", rank, pccl_status_string(st), s, pccl_last_error(comm));
  expect(st == PCCL_ERR_TIMEOUT, "a skipped barrier returns PCCL_ERR_TIMEOUT");
  expect(s >= 2.0 && s < 10.0, "it gives up after the 2 s timeout, not much later");
  expect(strstr(pccl_last_error(comm), "pccl_barrier") != NULL, "the message names pccl_barrier");
}

static void *abort_later(void *comm) {
  struct timespec half = {0, 500000000};
  nanosleep(&half, NULL);
  pccl_comm_abort(comm);
  return NULL;
}

static void test_abort(pccl_comm_t *comm) {
  double s;
  pccl_comm_set_timeout(comm, 60.0);
  if (rank != 0) {
    pccl_comm_abort(comm);
    pccl_status_t st = timed_allreduce(comm, 10, &s);
    expect(st == PCCL_ERR_ABORTED && s < 0.5, "an aborted communicator fails at once");
    return;
  }
  pthread_t t;
  pthread_create(&t, NULL, abort_later, comm);
  pccl_status_t st = timed_allreduce(comm, 100000, &s);
  pthread_join(t, NULL);
  expect(st == PCCL_ERR_ABORTED, "pccl_comm_abort ends a stuck all-reduce with PCCL_ERR_ABORTED");
  expect(s >= 0.4 && s < 5.0, "soon after the abort, long before the 60 s timeout");
}

/* One call that must fail everywhere with `want` (at ranks in `culprit`
 * with `culprit_want`), its message naming `word`. */
static void expect_mismatch(pccl_status_t st, pccl_status_t want, const char *word,
                            pccl_comm_t *comm, const char *what) {
  printf("rank %d: %s: %s: %s\n", rank, what, pccl_status_string(st), pccl_last_error(comm));
  char buf[256];
  snprintf(buf, sizeof buf, "%s returns %s", what, pccl_status_string(want));
  expect(st == want, buf);
  snprintf(buf, sizeof buf, "%s names '%s'", what, word);
  expect(strstr(pccl_last_error(comm), word) != NULL, buf);
}

static void test_mismatch(pccl_comm_t *comm) {
  float a[200] = {0}, b[200] = {0};
  pccl_comm_set_timeout(comm, 30.0);
  int last = size - 1;
  char word[32];

  /* counts: the last rank passes one more */
  pccl_status_t st = pccl_allreduce(a, b, rank == last ? 101 : 100, PCCL_FLOAT32, PCCL_SUM, comm);
  snprintf(word, sizeof word, "101 on rank(s) %d", last);
  expect_mismatch(st, PCCL_ERR_MISMATCH, word, comm, "different counts");

  /* roots of a broadcast */
  st = pccl_broadcast(a, a, 100, PCCL_FLOAT32, rank == 0 ? 0 : last, comm);
  expect_mismatch(st, PCCL_ERR_MISMATCH, "root:", comm, "different roots");

  /* ops */
  st = pccl_allreduce(a, b, 100, PCCL_FLOAT32, rank == 0 ? PCCL_MAX : PCCL_SUM, comm);
  expect_mismatch(st, PCCL_ERR_MISMATCH, "op: max on rank(s) 0", comm, "different ops");

  /* a NULL buffer on the last rank: it gets its own error, the others the mismatch */
  st = pccl_allreduce(a, rank == last ? NULL : b, 100, PCCL_FLOAT32, PCCL_SUM, comm);
  if (rank == last) expect_mismatch(st, PCCL_ERR_INVALID_ARGUMENT, "recvbuf is NULL", comm, "NULL buffer");
  else expect_mismatch(st, PCCL_ERR_MISMATCH, "invalid argument on rank(s)", comm, "NULL buffer");

  /* a barrier on rank 0 where the others run the one-byte all-reduce it is
   * made of, and a scan where the others run an exscan */
  unsigned char byte = 0;
  st = rank == 0 ? pccl_barrier(comm) : pccl_allreduce(&byte, &byte, 1, PCCL_UINT8, PCCL_MAX, comm);
  expect_mismatch(st, PCCL_ERR_MISMATCH, "collective: barrier on rank(s) 0", comm,
                  "barrier against all-reduce");
  st = rank == 0 ? pccl_scan(a, b, 100, PCCL_FLOAT32, PCCL_SUM, comm)
                 : pccl_exscan(a, b, 100, PCCL_FLOAT32, PCCL_SUM, comm);
  expect_mismatch(st, PCCL_ERR_MISMATCH, "collective: scan on rank(s) 0", comm,
                  "scan against exscan");

  /* a zero count on rank 0 only: without the check it would return at once
   * and leave the others waiting */
  st = pccl_allreduce(a, b, rank == 0 ? 0 : 100, PCCL_FLOAT32, PCCL_SUM, comm);
  expect_mismatch(st, PCCL_ERR_MISMATCH, "count: 0 on rank(s) 0", comm, "zero count on one rank");

  /* the communicator is not broken: a correct call works and is right */
  for (int i = 0; i < 100; i++) a[i] = (float)(rank + i);
  st = pccl_allreduce(a, b, 100, PCCL_FLOAT32, PCCL_SUM, comm);
  expect(st == PCCL_OK, "a matching all-reduce after the mismatches succeeds");
  for (int i = 0; i < 100; i++)
    if (b[i] != (float)(size * i + size * (size - 1) / 2)) {
      expect(0, "and its result is right");
      break;
    }
}

static void test_checkskip(pccl_comm_t *comm) {
  double s;
  pccl_comm_set_timeout(comm, 2.0);
  if (rank == size - 1) {
    sleep(4);
    pccl_comm_abort(comm);
    return;
  }
  pccl_status_t st = timed_allreduce(comm, 1000, &s);
  expect(st == PCCL_ERR_TIMEOUT && s >= 2.0 && s < 10.0, "the agreement times out in ~2 s");
  expect(strstr(pccl_last_error(comm), "did not call this collective") != NULL,
         "saying some rank did not call the collective");
}

static void test_dead(pccl_comm_t *comm) {
  double s;
  pccl_comm_set_timeout(comm, 3.0);
  if (rank == size - 1) {
    fflush(stdout);
    raise(SIGKILL);
  }
  pccl_status_t st = timed_allreduce(comm, 100000, &s);
  expect(st == PCCL_ERR_TIMEOUT && s >= 3.0 && s < 10.0, "a dead peer gives PCCL_ERR_TIMEOUT in ~3 s");
  if (!failures) printf("rank %d: survived: %s after %.2f s\n", rank, pccl_status_string(st), s);
  fflush(stdout);
  /* MPI_Finalize would wait for the dead rank forever: end the job. Let the
   * other survivors print first. */
  sleep(2);
  MPI_Abort(MPI_COMM_WORLD, failures ? 1 : 0);
}

/* One communicator destroyed by every rank, `late` seconds late on rank
 * `who`, after pccl_comm_abort on rank `aborts` (-1: none); returns how long
 * this rank's pccl_comm_destroy took, and in *beside whether this rank is
 * another of `who`'s node (only those share a window with it). */
static double destroy_after(int aborts, int who, double late, int *beside) {
  pccl_comm_t *c = NULL;
  if (pccl_comm_create_mpi(MPI_COMM_WORLD, &c) != PCCL_OK) {
    expect(0, "pccl_comm_create_mpi");
    return 0.0;
  }
  pccl_comm_set_timeout(c, 1.0);
  int node = -1, late_node = -1;
  pccl_comm_node(c, &node);
  late_node = node;
  MPI_Bcast(&late_node, 1, MPI_INT, who < 0 ? 0 : who, MPI_COMM_WORLD);
  *beside = rank != who && node == late_node;
  float x = 1.0f;
  expect(pccl_allreduce(&x, &x, 1, PCCL_FLOAT32, PCCL_SUM, c) == PCCL_OK, "an all-reduce first");
  if (rank == aborts) pccl_comm_abort(c);
  if (rank == who) nanosleep(&(struct timespec){(time_t)late, (long)((late - (time_t)late) * 1e9)}, NULL);
  double t = now();
  pccl_status_t st = pccl_comm_destroy(c);
  double took = now() - t;
  printf("rank %d: pccl_comm_destroy %s after %.2f s (abort on %d, rank %d %.1f s late)\n", rank,
         pccl_status_string(st), took, aborts, who, late);
  expect(st == PCCL_OK, "pccl_comm_destroy returns PCCL_OK");
  MPI_Barrier(MPI_COMM_WORLD);
  return took;
}

static void test_alone(void) {
  int beside;
  double took = destroy_after(0, -1, 0.0, &beside);
  expect(took < 0.5, "the peers of a rank whose communicator alone broke do not wait for it");
  took = destroy_after(-1, size - 1, 0.5, &beside);
  expect(beside ? took > 0.25 && took < 1.0 : took < 0.5,
         "a rank late to the destroy (within the timeout) is waited for by its node, only");
  took = destroy_after(-1, size - 1, 4.0, &beside);
  expect(beside ? took > 0.9 && took < 3.5 : took < 0.5,
         "a rank later than the timeout is not waited for, and does not wait");
}

int main(int argc, char **argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *mode = argc > 1 ? argv[1] : "";
  pccl_comm_t *comm;
  if (pccl_comm_create_mpi(MPI_COMM_WORLD, &comm) != PCCL_OK) {
    printf("rank %d: FAIL pccl_comm_create_mpi: %s\n", rank, pccl_last_error(NULL));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (!strcmp(mode, "skip")) test_skip(comm);
  else if (!strcmp(mode, "abort")) test_abort(comm);
  else if (!strcmp(mode, "mismatch")) test_mismatch(comm);
  else if (!strcmp(mode, "checkskip")) test_checkskip(comm);
  else if (!strcmp(mode, "dead")) test_dead(comm);
  else if (!strcmp(mode, "barrier")) test_barrier(comm);
  else if (!strcmp(mode, "alone")) test_alone();
  else {
    if (rank == 0) fprintf(stderr, "usage: test_faults skip|abort|mismatch|checkskip|dead|barrier|alone\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  expect(pccl_comm_destroy(comm) == PCCL_OK, "pccl_comm_destroy");
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("test_faults %s: %d failures\n", mode, all);
  MPI_Finalize();
  return all != 0;
}
