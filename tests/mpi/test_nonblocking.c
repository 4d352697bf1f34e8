/* test_nonblocking.c - the pccl_i* calls over MPI. Every collective is
 * issued at once with the others still outstanding (counts 0 to 70,000
 * elements, uneven counts with zeros for the v-calls), completed in an
 * order other than the issue order (waitall backwards, a test loop, a
 * blocking call in between), and every byte of every receive buffer is
 * checked against a reference computed here in plain C (uint32 sums wrap
 * around). Then progress across communicators (a rank waiting on one
 * while its peer waits on another, and a blocking call while a peer waits
 * on a non-blocking one), and the errors: bad arguments are returned at
 * once with no request, a forced seg runs small all-reduces and refuses
 * large ones, a forced cma is refused, a communicator with
 * outstanding calls cannot be destroyed, NULL requests.
 * Under a small PCCL_MAX_SCRATCH every rank must report the same status
 * for each call (all succeed with correct results, or all refuse). With
 * --threads, two threads per rank, each on a communicator of its own,
 * issue, wait for and check calls at once (the progress list is shared;
 * run under ThreadSanitizer by make test-tsan).
 *   mpiexec -n N test_nonblocking [--small-scratch | --threads | --errors] */
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pccl.h"

#define FILL 0xA5A5A5A5u
#define NCALLS 16

static int g_rank, g_size, g_failed, g_passed, g_refused;
static pccl_comm_t *g_comm; /* the batches' communicator, for messages */

static void expect(int ok, const char *what) {
  if (ok) {
    g_passed++;
    return;
  }
  if (++g_failed < 20) printf("rank %d: FAIL %s\n", g_rank, what);
}

/* Rank r's element i of input `salt`: every rank can compute it. */
static uint32_t val(int r, size_t i, uint32_t salt) {
  uint32_t x = (uint32_t)r * 2654435761u + (uint32_t)i * 40503u + salt * 97u + 1u;
  return x ^ (x >> 15);
}

/* A v-call's count for rank r (zeros on some ranks, one rank larger). */
static size_t vcount(int r, size_t n) {
  if (n == 0) return 0;
  return (size_t)(r % 3 == 1 ? 0 : r == g_size - 1 ? n + 5 : n / (size_t)(r + 1));
}

/* The reduce-scatterv's counts: vcount's in reverse rank order, so that
 * its layout differs from the all-gatherv's issued just before it. */
static size_t rcount(int r, size_t n) { return vcount(g_size - 1 - r, n); }

static size_t rprefix(size_t n, int upto) {
  size_t s = 0;
  for (int r = 0; r < upto; r++) s += rcount(r, n);
  return s;
}

static uint32_t *alloc_or_die(size_t n) {
  uint32_t *p = calloc(n ? n : 1, sizeof *p);
  if (!p) MPI_Abort(MPI_COMM_WORLD, 2);
  return p;
}

static uint32_t *alloc_fill(size_t n) {
  uint32_t *p = alloc_or_die(n);
  for (size_t i = 0; i < n; i++) p[i] = FILL;
  return p;
}

static uint32_t *alloc_input(size_t n, int r, uint32_t salt) {
  uint32_t *p = alloc_or_die(n);
  for (size_t i = 0; i < n; i++) p[i] = val(r, i, salt);
  return p;
}

static uint32_t sum_upto(int below, size_t i, uint32_t salt) { /* ranks 0..below-1 */
  uint32_t s = 0;
  for (int r = 0; r < below; r++) s += val(r, i, salt);
  return s;
}

static size_t prefix(size_t n, int upto) { /* vcount(0) + ... + vcount(upto - 1) */
  size_t s = 0;
  for (int r = 0; r < upto; r++) s += vcount(r, n);
  return s;
}

/* One batch: every collective's buffers, issued, completed, checked. */
typedef struct {
  uint32_t *send[NCALLS], *recv[NCALLS];
  size_t *counts[NCALLS], *counts2[NCALLS];
  pccl_request_t *req[NCALLS];
  pccl_status_t st[NCALLS];
} batch_t;

enum { AR, RS, AG, BC, RD, SC, GA, A2A, SCAN, EXSCAN, AGV, RSV, GAV, SCV, A2AV, BAR };
static const char *names[NCALLS] = {"iallreduce", "ireduce_scatter", "iallgather", "ibroadcast",
                                    "ireduce",    "iscatter",        "igather",    "ialltoall",
                                    "iscan",      "iexscan",         "iallgatherv", "ireduce_scatterv",
                                    "igatherv",   "iscatterv",       "ialltoallv", "ibarrier"};

static void issue(batch_t *b, size_t n, pccl_comm_t *comm) {
  int p = g_size, me = g_rank, root = (int)(n % (size_t)p);
  size_t pn = n * (size_t)p;
  memset(b, 0, sizeof *b);
  g_comm = comm;
  b->send[AR] = alloc_input(n, me, 1), b->recv[AR] = alloc_fill(n);
  b->st[AR] = pccl_iallreduce(b->send[AR], b->recv[AR], n, PCCL_UINT32, PCCL_SUM, comm, &b->req[AR]);
  b->send[RS] = alloc_input(pn, me, 2), b->recv[RS] = alloc_fill(n);
  b->st[RS] = pccl_ireduce_scatter(b->send[RS], b->recv[RS], n, PCCL_UINT32, PCCL_SUM, comm, &b->req[RS]);
  b->send[AG] = alloc_input(n, me, 3), b->recv[AG] = alloc_fill(pn);
  b->st[AG] = pccl_iallgather(b->send[AG], b->recv[AG], n, PCCL_UINT32, comm, &b->req[AG]);
  b->recv[BC] = me == root ? alloc_input(n, root, 4) : alloc_fill(n);
  b->st[BC] = pccl_ibroadcast(b->recv[BC], b->recv[BC], n, PCCL_UINT32, root, comm, &b->req[BC]);
  b->send[RD] = alloc_input(n, me, 5), b->recv[RD] = alloc_fill(n);
  b->st[RD] = pccl_ireduce(b->send[RD], b->recv[RD], n, PCCL_UINT32, PCCL_MAX, root, comm, &b->req[RD]);
  b->send[SC] = alloc_input(pn, root, 6), b->recv[SC] = alloc_fill(n);
  b->st[SC] = pccl_iscatter(b->send[SC], b->recv[SC], n, PCCL_UINT32, root, comm, &b->req[SC]);
  b->send[GA] = alloc_input(n, me, 7), b->recv[GA] = alloc_fill(pn);
  b->st[GA] = pccl_igather(b->send[GA], b->recv[GA], n, PCCL_UINT32, root, comm, &b->req[GA]);
  b->send[A2A] = alloc_input(pn, me, 8), b->recv[A2A] = alloc_fill(pn);
  b->st[A2A] = pccl_ialltoall(b->send[A2A], b->recv[A2A], n, PCCL_UINT32, comm, &b->req[A2A]);
  b->send[SCAN] = alloc_input(n, me, 9), b->recv[SCAN] = alloc_fill(n);
  b->st[SCAN] = pccl_iscan(b->send[SCAN], b->recv[SCAN], n, PCCL_UINT32, PCCL_SUM, comm, &b->req[SCAN]);
  b->send[EXSCAN] = alloc_input(n, me, 10), b->recv[EXSCAN] = alloc_fill(n);
  b->st[EXSCAN] = pccl_iexscan(b->send[EXSCAN], b->recv[EXSCAN], n, PCCL_UINT32, PCCL_SUM, comm,
                               &b->req[EXSCAN]);
  /* the v-calls: counts per rank from vcount, packed */
  size_t total = prefix(n, p);
  size_t *vc = malloc((size_t)p * sizeof *vc);
  for (int r = 0; r < p; r++) vc[r] = vcount(r, n);
  b->counts[AGV] = vc;
  b->send[AGV] = alloc_input(vc[me], me, 11), b->recv[AGV] = alloc_fill(total);
  b->st[AGV] = pccl_iallgatherv(b->send[AGV], b->recv[AGV], vc, NULL, PCCL_UINT32, comm, &b->req[AGV]);
  size_t *rc_counts = malloc((size_t)p * sizeof *rc_counts);
  for (int r = 0; r < p; r++) rc_counts[r] = rcount(r, n);
  b->counts2[RSV] = rc_counts;
  b->send[RSV] = alloc_input(total, me, 12), b->recv[RSV] = alloc_fill(rc_counts[me]);
  b->st[RSV] = pccl_ireduce_scatterv(b->send[RSV], b->recv[RSV], rc_counts, PCCL_UINT32, PCCL_SUM,
                                     comm, &b->req[RSV]);
  b->send[GAV] = alloc_input(vc[me], me, 13), b->recv[GAV] = alloc_fill(total);
  b->st[GAV] = pccl_igatherv(b->send[GAV], vc[me], b->recv[GAV], vc, NULL, PCCL_UINT32, root, comm,
                             &b->req[GAV]);
  b->send[SCV] = alloc_input(total, root, 14), b->recv[SCV] = alloc_fill(vc[me]);
  b->st[SCV] = pccl_iscatterv(b->send[SCV], vc, NULL, b->recv[SCV], vc[me], PCCL_UINT32, root, comm,
                              &b->req[SCV]);
  /* all-to-allv: rank i sends rank j (i + j) % 3 * n / 2 elements */
  size_t *sc = malloc((size_t)p * sizeof *sc), *rc = malloc((size_t)p * sizeof *rc);
  size_t stot = 0, rtot = 0;
  for (int r = 0; r < p; r++) {
    sc[r] = (size_t)((me + r) % 3) * n / 2;
    rc[r] = (size_t)((r + me) % 3) * n / 2;
    stot += sc[r], rtot += rc[r];
  }
  b->counts[A2AV] = sc, b->counts2[A2AV] = rc;
  b->send[A2AV] = alloc_input(stot, me, 15), b->recv[A2AV] = alloc_fill(rtot);
  b->st[A2AV] = pccl_ialltoallv(b->send[A2AV], sc, NULL, b->recv[A2AV], rc, NULL, PCCL_UINT32, comm,
                                &b->req[A2AV]);
  b->st[BAR] = pccl_ibarrier(comm, &b->req[BAR]);
  for (int k = 0; k < NCALLS; k++) {
    char what[96];
    snprintf(what, sizeof what, "%s of %zu issues", names[k], n);
    expect(b->st[k] == PCCL_OK && b->req[k] != NULL, what);
  }
}

/* Checks one call's receive buffer against the reference. */
static int check_call(const batch_t *b, int k, size_t n) {
  int p = g_size, me = g_rank, root = (int)(n % (size_t)p);
  const uint32_t *o = b->recv[k];
  size_t bad = 0;
  switch (k) {
  case AR:
    for (size_t i = 0; i < n; i++) bad += o[i] != sum_upto(p, i, 1);
    break;
  case RS:
    for (size_t i = 0; i < n; i++) bad += o[i] != sum_upto(p, (size_t)me * n + i, 2);
    break;
  case AG:
    for (size_t i = 0; i < n * (size_t)p; i++) bad += o[i] != val((int)(i / n), i % n, 3);
    break;
  case BC:
    for (size_t i = 0; i < n; i++) bad += o[i] != val(root, i, 4);
    break;
  case RD:
    for (size_t i = 0; i < n; i++) {
      uint32_t m = 0;
      for (int r = 0; r < p; r++) m = val(r, i, 5) > m ? val(r, i, 5) : m;
      bad += o[i] != (me == root ? m : FILL);
    }
    break;
  case SC:
    for (size_t i = 0; i < n; i++) bad += o[i] != val(root, (size_t)me * n + i, 6);
    break;
  case GA:
    for (size_t i = 0; i < n * (size_t)p; i++)
      bad += o[i] != (me == root ? val((int)(i / n), i % n, 7) : FILL);
    break;
  case A2A:
    for (size_t i = 0; i < n * (size_t)p; i++)
      bad += o[i] != val((int)(i / n), (size_t)me * n + i % n, 8);
    break;
  case SCAN:
    for (size_t i = 0; i < n; i++) bad += o[i] != sum_upto(me + 1, i, 9);
    break;
  case EXSCAN:
    for (size_t i = 0; i < n; i++) bad += o[i] != (me == 0 ? FILL : sum_upto(me, i, 10));
    break;
  case AGV:
  case GAV:
    for (int r = 0; r < p; r++)
      for (size_t i = 0; i < vcount(r, n); i++) {
        uint32_t want = k == GAV && me != root ? FILL : val(r, i, k == AGV ? 11 : 13);
        bad += o[prefix(n, r) + i] != want;
      }
    break;
  case RSV:
    for (size_t i = 0; i < rcount(me, n); i++) bad += o[i] != sum_upto(p, rprefix(n, me) + i, 12);
    break;
  case SCV:
    for (size_t i = 0; i < vcount(me, n); i++) bad += o[i] != val(root, prefix(n, me) + i, 14);
    break;
  case A2AV: {
    size_t at = 0;
    for (int r = 0; r < p; r++) {
      size_t cnt = (size_t)((r + me) % 3) * n / 2, off = 0; /* where rank r's block for me starts */
      for (int j = 0; j < me; j++) off += (size_t)((r + j) % 3) * n / 2;
      for (size_t i = 0; i < cnt; i++) bad += o[at + i] != val(r, off + i, 15);
      at += cnt;
    }
    break;
  }
  default:
    break;
  }
  return bad == 0;
}

static void check_batch(batch_t *b, size_t n, const char *how) {
  for (int k = 0; k < NCALLS; k++) {
    char what[128];
    snprintf(what, sizeof what, "%s of %zu completes (%s): status %d, %s", names[k], n, how,
             (int)b->st[k], b->st[k] == PCCL_OK ? "" : pccl_last_error(g_comm));
    expect(b->st[k] == PCCL_OK && b->req[k] == NULL, what);
    snprintf(what, sizeof what, "%s of %zu: result (%s)", names[k], n, how);
    if (b->st[k] == PCCL_OK) expect(check_call(b, k, n), what);
    free(b->send[k]), free(b->recv[k]), free(b->counts[k]), free(b->counts2[k]);
  }
}

/* Completes backwards, with pccl_wait. */
static void wait_backwards(batch_t *b) {
  for (int k = NCALLS - 1; k >= 0; k--) b->st[k] = pccl_wait(&b->req[k]);
}

/* Completes by testing each in turn until all are done. */
static void test_loop(batch_t *b) {
  for (int left = NCALLS; left > 0;) {
    left = 0;
    for (int k = 0; k < NCALLS; k++) {
      if (!b->req[k]) continue;
      int done = 0;
      b->st[k] = pccl_test(&b->req[k], &done);
      left += !done;
    }
  }
}

/* A blocking call in the middle: it runs after the outstanding ones. */
static void blocking_between(batch_t *b, pccl_comm_t *comm) {
  uint32_t one = (uint32_t)g_rank + 1, all = 0;
  expect(pccl_allreduce(&one, &all, 1, PCCL_UINT32, PCCL_SUM, comm) == PCCL_OK &&
             all == (uint32_t)(g_size * (g_size + 1) / 2),
         "blocking all-reduce among outstanding calls");
  expect(pccl_waitall(NCALLS, b->req) == PCCL_OK, "waitall after a blocking call");
  for (int k = 0; k < NCALLS; k++) b->st[k] = b->req[k] ? PCCL_ERR_INTERNAL : PCCL_OK;
}

static void batches(pccl_comm_t *comm) {
  static const size_t sizes[] = {0, 1, 33, 5000, 70000};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
    batch_t b;
    issue(&b, sizes[s], comm);
    wait_backwards(&b);
    check_batch(&b, sizes[s], "waited backwards");
    issue(&b, sizes[s], comm);
    test_loop(&b);
    check_batch(&b, sizes[s], "tested");
    issue(&b, sizes[s], comm);
    blocking_between(&b, comm);
    check_batch(&b, sizes[s], "blocking call between");
  }
}

/* Each rank waits first on a call that its neighbour waits on last. */
static void cross_comms(pccl_comm_t *world, pccl_comm_t *other) {
  size_t n = 70000;
  uint32_t *a = alloc_input(n, g_rank, 20), *b = alloc_input(n, g_rank, 21);
  uint32_t *ra = alloc_fill(n), *rb = alloc_fill(n);
  pccl_request_t *qa, *qb;
  expect(pccl_iallreduce(a, ra, n, PCCL_UINT32, PCCL_SUM, world, &qa) == PCCL_OK, "cross: issue a");
  expect(pccl_iallreduce(b, rb, n, PCCL_UINT32, PCCL_SUM, other, &qb) == PCCL_OK, "cross: issue b");
  int odd = g_rank % 2;
  expect(pccl_wait(odd ? &qa : &qb) == PCCL_OK, "cross: first wait");
  expect(pccl_wait(odd ? &qb : &qa) == PCCL_OK, "cross: second wait");
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) bad += ra[i] != sum_upto(g_size, i, 20) || rb[i] != sum_upto(g_size, i, 21);
  expect(bad == 0, "cross: results");
  /* rank 0 enters a blocking call on world while the others wait on
   * `other`: rank 0's wait inside it must move `other` along */
  expect(pccl_ibroadcast(b, rb, n, PCCL_UINT32, 0, other, &qb) == PCCL_OK, "cross: issue bcast");
  uint32_t one = 1, all = 0;
  if (g_rank == 0) {
    expect(pccl_allreduce(&one, &all, 1, PCCL_UINT32, PCCL_SUM, world) == PCCL_OK, "cross: blocking");
    expect(pccl_wait(&qb) == PCCL_OK, "cross: bcast after blocking");
  } else {
    expect(pccl_wait(&qb) == PCCL_OK, "cross: bcast before blocking");
    expect(pccl_allreduce(&one, &all, 1, PCCL_UINT32, PCCL_SUM, world) == PCCL_OK, "cross: blocking");
  }
  bad = all != (uint32_t)g_size;
  for (size_t i = 0; i < n; i++) bad += rb[i] != val(0, i, 21);
  expect(bad == 0, "cross: blocking call and bcast results");
  free(a), free(b), free(ra), free(rb);
}

/* A forced seg runs non-blocking all-reduces of 16 B and of 128 KiB (two
 * kinds of round on any rank count) where the communicator has a node
 * segment (its ranks share one node and PCCL_SEG is not 0), and refuses a
 * v-collective; the direct path (cma) is refused at any size. */
static void forced_seg(pccl_comm_t *world) {
  enum { BIG = 32768 };
  uint32_t *x = malloc(BIG * sizeof *x), *y = malloc(BIG * sizeof *y);
  pccl_request_t *q = NULL;
  for (int i = 0; i < BIG; i++) x[i] = (uint32_t)(g_rank + 1) * 0x9E3779B9u + (uint32_t)i;
  /* the segment is there when the default runs a small blocking call on it */
  expect(pccl_allreduce(x, y, 4, PCCL_UINT32, PCCL_SUM, world) == PCCL_OK, "blocking all-reduce");
  int has_seg = !strcmp(pccl_comm_last_algo(world), "seg");
  const char *name = NULL;
  expect(pccl_comm_algo_for(world, PCCL_COLL_ALLREDUCE, 4, PCCL_UINT32, 1, &name) == PCCL_OK &&
             (strcmp(name, "seg") == 0) == has_seg,
         "algo_for: a small non-blocking all-reduce on the segment where there is one");
  size_t len = strlen(name);
  expect(pccl_iallreduce(x, y, 4, PCCL_UINT32, PCCL_SUM, world, &q) == PCCL_OK &&
             pccl_wait(&q) == PCCL_OK && !strncmp(pccl_comm_last_algo(world), name, len) &&
             strchr(":", pccl_comm_last_algo(world)[len]) /* the end or ":k" */,
         "algo_for: the algorithm the call ran (its k aside)");
  expect(pccl_comm_algo_for(world, PCCL_COLL_ALLREDUCE, 4, PCCL_UINT32, 1, NULL) ==
                 PCCL_ERR_INVALID_ARGUMENT &&
             pccl_comm_algo_for(world, (pccl_coll_t)99, 4, PCCL_UINT32, 1, &name) ==
                 PCCL_ERR_INVALID_ARGUMENT &&
             pccl_comm_algo_for(world, PCCL_COLL_ALLREDUCE, 4, (pccl_dtype_t)99, 1, &name) ==
                 PCCL_ERR_INVALID_DTYPE &&
             pccl_comm_algo_for(world, PCCL_COLL_ALLGATHERV, 4, PCCL_UINT32, 1, &name) ==
                 PCCL_ERR_UNSUPPORTED &&
             pccl_comm_algo_for(world, PCCL_COLL_ALLGATHER, SIZE_MAX / 2, PCCL_UINT32, 0, &name) ==
                 PCCL_ERR_OVERFLOW &&
             pccl_comm_algo_for(NULL, PCCL_COLL_ALLREDUCE, 4, PCCL_UINT32, 0, &name) ==
                 PCCL_ERR_INVALID_COMM,
         "algo_for: bad arguments");
  expect(pccl_comm_set_algo(world, PCCL_COLL_ALLREDUCE, "seg") == PCCL_OK, "force seg");
  pccl_status_t st = pccl_iallreduce(x, y, 4, PCCL_UINT32, PCCL_SUM, world, &q);
  if (!has_seg) {
    expect(st == PCCL_ERR_UNSUPPORTED && !q, "forced seg without a segment refused");
  } else {
    int bad = st != PCCL_OK || pccl_wait(&q) != PCCL_OK;
    bad += pccl_iallreduce(x, y + 4, BIG - 4, PCCL_UINT32, PCCL_SUM, world, &q) != PCCL_OK ||
           pccl_wait(&q) != PCCL_OK;
    /* element i: the sum over r of (r + 1) K + j, wrapping, j = i for the
     * first call, i - 4 for the second */
    for (int i = 0; i < BIG; i++) {
      uint32_t want = 0, j = (uint32_t)(i < 4 ? i : i - 4);
      for (int r = 0; r < g_size; r++) want += (uint32_t)(r + 1) * 0x9E3779B9u + j;
      bad += y[i] != want;
    }
    expect(bad == 0, "forced seg: non-blocking all-reduces of 16 B and 128 KiB");
    size_t counts[64], displs[64];
    for (int r = 0; r < g_size && r < 64; r++) /* uneven: equal counts run as the all-gather */
      counts[r] = (size_t)r + 1, displs[r] = (size_t)r * ((size_t)r + 1) / 2;
    expect(pccl_comm_set_algo(world, PCCL_COLL_ALLGATHERV, "seg") == PCCL_OK &&
               pccl_iallgatherv(x, y, counts, displs, PCCL_UINT32, world, &q) == PCCL_ERR_UNSUPPORTED &&
               !q && strstr(pccl_last_error(world), "blocking only") &&
               pccl_comm_set_algo(world, PCCL_COLL_ALLGATHERV, NULL) == PCCL_OK,
           "forced seg: a non-blocking all-gatherv refused");
  }
  expect(pccl_comm_set_algo(world, PCCL_COLL_ALLREDUCE, "cma") == PCCL_OK, "force cma");
  expect(pccl_iallreduce(x, y, 4, PCCL_UINT32, PCCL_SUM, world, &q) == PCCL_ERR_UNSUPPORTED && !q,
         "forced cma refused");
  expect(pccl_comm_set_algo(world, PCCL_COLL_ALLREDUCE, NULL) == PCCL_OK, "unforce");
  free(x), free(y);
}

/* Calls whose rounds are taken again: every rank but the last issues an
 * in-place reduce (root 0), all-reduce and scan, and an in-place
 * all-reduce of 64 KiB (the segment's split form: a slice reduced by each
 * rank, then shared), the one numbered `head` first, and rank 0 tests that
 * one while the last rank, held back by a barrier, has not issued yet. On
 * the node segment rank 0's round then reduces the parts it finds and
 * returns unfinished; the result overwrites the input as it goes, so taking
 * the round again must not read the input over. */
static void taken_again(pccl_comm_t *world, int head) {
  enum { N = 100, BIG = 16384, CALLS = 4 };
  size_t n[CALLS] = {N, N, N, BIG};
  uint32_t *v[CALLS];
  pccl_request_t *q[CALLS] = {NULL};
  int last = g_rank == g_size - 1;
  for (int k = 0; k < CALLS; k++) {
    v[k] = malloc(n[k] * sizeof *v[k]);
    for (size_t i = 0; i < n[k]; i++) v[k][i] = val(g_rank, i, 40u + (uint32_t)k);
  }
  MPI_Comm early;
  MPI_Comm_split(MPI_COMM_WORLD, last, g_rank, &early);
  for (int pass = 0; pass < 2; pass++) {
    for (int j = 0; j < CALLS && pass == (last ? 1 : 0); j++) {
      int k = (head + j) % CALLS;
      pccl_status_t st =
          k == 0   ? pccl_ireduce(v[0], v[0], N, PCCL_UINT32, PCCL_SUM, 0, world, &q[0])
          : k == 2 ? pccl_iscan(v[2], v[2], N, PCCL_UINT32, PCCL_SUM, world, &q[2])
                   : pccl_iallreduce(v[k], v[k], n[k], PCCL_UINT32, PCCL_SUM, world, &q[k]);
      expect(st == PCCL_OK, "taken again: issued");
    }
    if (pass == 0 && !last) {
      MPI_Barrier(early); /* every early part is out */
      int done = 0;
      for (int t = 0; t < 10 && g_rank == 0; t++)
        expect(pccl_test(&q[head], &done) == PCCL_OK && !done, "taken again: not done early");
    }
    if (pass == 0) MPI_Barrier(MPI_COMM_WORLD);
  }
  expect(pccl_waitall(CALLS, q) == PCCL_OK, "taken again: waited");
  int bad = 0;
  for (int k = 0; k < CALLS; k++)
    for (size_t i = 0; i < n[k]; i++) {
      uint32_t want = 0; /* the sum over ranks; a scan's over ranks 0..g_rank */
      for (int r = 0; r < g_size && (k != 2 || r <= g_rank); r++) want += val(r, i, 40u + (uint32_t)k);
      bad += (k != 0 || g_rank == 0) && v[k][i] != want;
    }
  expect(bad == 0, "taken again: results");
  for (int k = 0; k < CALLS; k++) free(v[k]);
  MPI_Comm_free(&early);
}

static void errors(pccl_comm_t *world, pccl_comm_t *other) {
  uint32_t x[4] = {0}, y[4] = {0};
  pccl_request_t *q = (pccl_request_t *)x; /* must be set to NULL on failure */
  expect(pccl_iallreduce(x, y, 4, PCCL_UINT32, PCCL_SUM, world, NULL) == PCCL_ERR_INVALID_ARGUMENT,
         "NULL request");
  expect(pccl_iallreduce(NULL, y, 4, PCCL_UINT32, PCCL_SUM, world, &q) == PCCL_ERR_INVALID_ARGUMENT &&
             !q && strstr(pccl_last_error(world), "pccl_iallreduce"),
         "NULL sendbuf: at once, named, no request");
  expect(pccl_iallgather(x, y, 1, (pccl_dtype_t)99, world, &q) == PCCL_ERR_INVALID_DTYPE && !q,
         "unknown dtype");
  expect(pccl_ibroadcast(x, y, 1, PCCL_UINT32, g_size, world, &q) == PCCL_ERR_INVALID_ARGUMENT && !q,
         "root out of range");
  expect(pccl_ibarrier(NULL, &q) == PCCL_ERR_INVALID_COMM && !q, "NULL communicator");
  expect(pccl_iallgather(x, y, SIZE_MAX / 2, PCCL_UINT32, world, &q) == PCCL_ERR_OVERFLOW && !q,
         "huge count: overflow");
  expect(pccl_iallreduce(x, y, 4, PCCL_FLOAT32, PCCL_BXOR, world, &q) == PCCL_ERR_INVALID_OP && !q,
         "an op the type has not");
  expect(pccl_wait(NULL) == PCCL_ERR_INVALID_ARGUMENT, "pccl_wait(NULL)");
  int done = 0;
  expect(pccl_test(&q, &done) == PCCL_OK && done, "test of a NULL request: done");
  expect(pccl_wait(&q) == PCCL_OK, "wait of a NULL request");
  expect(pccl_test(&q, NULL) == PCCL_ERR_INVALID_ARGUMENT, "test with NULL done");
  expect(pccl_waitall(-1, NULL) == PCCL_ERR_INVALID_ARGUMENT, "waitall of -1");
  if (g_size > 1) forced_seg(world);
  /* a communicator with an outstanding call stays */
  if (g_size == 1) return; /* a call of one rank completes as it is issued */
  /* rank 0 issues first and tries while the others are held back */
  x[0] = (uint32_t)g_rank;
  if (g_rank != 0) MPI_Barrier(MPI_COMM_WORLD);
  expect(pccl_iallreduce(x, y, 1, PCCL_UINT32, PCCL_SUM, other, &q) == PCCL_OK, "issue on other");
  if (g_rank == 0) {
    expect(pccl_comm_destroy(other) == PCCL_ERR_INVALID_ARGUMENT &&
               strstr(pccl_last_error(other), "outstanding"),
           "destroy with an outstanding call");
    MPI_Barrier(MPI_COMM_WORLD);
  }
  expect(pccl_wait(&q) == PCCL_OK && y[0] == (uint32_t)(g_size * (g_size - 1) / 2), "then it completes");
  const char *check = getenv("PCCL_CHECK");
  if (check && strcmp(check, "1") == 0) { /* rank 0's bad call: the others hear of it */
    pccl_status_t st = pccl_iallreduce(g_rank ? x : NULL, y, 4, PCCL_UINT32, PCCL_SUM, world, &q);
    if (g_rank == 0) {
      expect(st == PCCL_ERR_INVALID_ARGUMENT && !q, "check: the bad call fails at once");
    } else {
      pccl_status_t w = st == PCCL_OK ? pccl_wait(&q) : st;
      char what[700];
      snprintf(what, sizeof what, "check: the others get a mismatch naming rank 0 (%d %d: %s)", (int)st,
               (int)w, pccl_last_error(world));
      expect(w == PCCL_ERR_MISMATCH && strstr(pccl_last_error(world), "rank(s) 0"), what);
    }
    /* rank 0's part of it moves along in its next pccl call */
    expect(pccl_barrier(world) == PCCL_OK, "check: a barrier after");
  }
}

/* Two all-gathervs of different layouts, rank 0 issuing both while the
 * others are held back: the first one's start (and, with PCCL_CHECK, its
 * agreement) is under way when the second is checked. */
static void back_to_back_v(pccl_comm_t *comm) {
  size_t n = 700, total = prefix(n, g_size);
  size_t *c1 = malloc((size_t)g_size * sizeof *c1), *c2 = malloc((size_t)g_size * sizeof *c2);
  for (int r = 0; r < g_size; r++) c1[r] = vcount(r, n), c2[r] = rcount(r, n);
  uint32_t *in1 = alloc_input(c1[g_rank], g_rank, 40), *in2 = alloc_input(c2[g_rank], g_rank, 41);
  uint32_t *out1 = alloc_fill(total), *out2 = alloc_fill(total);
  pccl_request_t *q[2] = {NULL, NULL};
  if (g_rank != 0) MPI_Barrier(MPI_COMM_WORLD);
  expect(pccl_iallgatherv(in1, out1, c1, NULL, PCCL_UINT32, comm, &q[0]) == PCCL_OK &&
             pccl_iallgatherv(in2, out2, c2, NULL, PCCL_UINT32, comm, &q[1]) == PCCL_OK,
         "back to back: issue");
  if (g_rank == 0) MPI_Barrier(MPI_COMM_WORLD);
  expect(pccl_waitall(2, q) == PCCL_OK, "back to back: complete");
  size_t bad = 0;
  for (int r = 0; r < g_size; r++) {
    for (size_t i = 0; i < c1[r]; i++) bad += out1[prefix(n, r) + i] != val(r, i, 40);
    for (size_t i = 0; i < c2[r]; i++) bad += out2[rprefix(n, r) + i] != val(r, i, 41);
  }
  expect(bad == 0, "back to back: both results");
  free(c1), free(c2), free(in1), free(in2), free(out1), free(out2);
}

/* Barriers share the communicator's one byte (coll.c): several outstanding
 * at once (on the segment the later ones begin behind the first), then a
 * blocking one; each rank in turn comes late, and no other may leave the
 * blocking barrier before half that delay. Then all-reduces alternate with
 * barriers, each a repeat of its own memo: every all-reduce's sum is
 * checked. */
static void barriers_together(pccl_comm_t *comm) {
  const double late = 0.04;
  enum { OUT = 3 };
  for (int k = 0; k < g_size; k++) {
    pccl_request_t *q[OUT] = {NULL, NULL, NULL};
    expect(pccl_barrier(comm) == PCCL_OK, "barriers together: start together");
    if (g_rank == k) {
      double until = MPI_Wtime() + late;
      while (MPI_Wtime() < until) continue;
    }
    double t = MPI_Wtime();
    int issued = 1;
    for (int i = 0; i < OUT; i++) issued &= pccl_ibarrier(comm, &q[i]) == PCCL_OK;
    expect(issued, "barriers together: issue three");
    expect(pccl_barrier(comm) == PCCL_OK, "barriers together: the blocking one behind them");
    double waited = MPI_Wtime() - t;
    expect(pccl_waitall(OUT, q) == PCCL_OK, "barriers together: complete the three");
    expect(g_rank == k || waited > late / 2, "barriers together: the late rank was waited for");
  }
  for (int i = 0; i < 6; i++) {
    int64_t mine = g_rank + i, sum = -1, want = (int64_t)g_size * (g_size - 1) / 2 + (int64_t)g_size * i;
    expect(pccl_allreduce(&mine, &sum, 1, PCCL_INT64, PCCL_SUM, comm) == PCCL_OK && sum == want,
           "barriers together: the all-reduce between barriers");
    expect(pccl_barrier(comm) == PCCL_OK, "barriers together: the barrier between all-reduces");
  }
}

/* Under a small PCCL_MAX_SCRATCH large calls vote; each call's status
 * must then be the same on every rank. */
static void same_status_everywhere(void) {
  size_t sizes[] = {5000, 70000};
  for (int s = 0; s < 2; s++) {
    pccl_comm_t *comm;
    expect(pccl_comm_create_world(&comm) == PCCL_OK, "world");
    batch_t b;
    issue(&b, sizes[s], comm);
    wait_backwards(&b);
    int st[NCALLS], lo[NCALLS], hi[NCALLS];
    for (int k = 0; k < NCALLS; k++) st[k] = (int)b.st[k];
    MPI_Allreduce(st, lo, NCALLS, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(st, hi, NCALLS, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    for (int k = 0; k < NCALLS; k++) {
      char what[96];
      snprintf(what, sizeof what, "%s of %zu: one status on every rank (%d..%d)", names[k], sizes[s],
               lo[k], hi[k]);
      expect(lo[k] == hi[k] && (st[k] == PCCL_OK || st[k] == PCCL_ERR_UNSUPPORTED), what);
      g_refused += st[k] == PCCL_ERR_UNSUPPORTED;
      if (st[k] == PCCL_OK) {
        snprintf(what, sizeof what, "%s of %zu: result under a small scratch", names[k], sizes[s]);
        expect(check_call(&b, k, sizes[s]), what);
      }
      free(b.send[k]), free(b.recv[k]), free(b.counts[k]), free(b.counts2[k]);
    }
    expect(pccl_comm_destroy(comm) == PCCL_OK, "destroy");
  }
}

/* One thread's share of --threads: rounds of three outstanding
 * all-reduces and a blocking one, on its own communicator. */
typedef struct {
  pccl_comm_t *comm;
  uint32_t salt;
  int failed;
} worker_t;

static void *worker(void *arg) {
  worker_t *w = arg;
  size_t n = 3000;
  uint32_t *in = alloc_input(3 * n, g_rank, w->salt), *out = alloc_fill(3 * n);
  for (int round = 0; round < 40; round++) {
    pccl_request_t *q[3];
    for (int k = 0; k < 3; k++)
      w->failed += pccl_iallreduce(in + k * n, out + k * n, n, PCCL_UINT32, PCCL_SUM, w->comm,
                                   &q[k]) != PCCL_OK;
    uint32_t one = 1, all = 0;
    w->failed += pccl_allreduce(&one, &all, 1, PCCL_UINT32, PCCL_SUM, w->comm) != PCCL_OK ||
                 all != (uint32_t)g_size;
    w->failed += pccl_waitall(3, q) != PCCL_OK;
    for (size_t i = 0; i < 3 * n; i++) w->failed += out[i] != sum_upto(g_size, i, w->salt);
  }
  free(in), free(out);
  return NULL;
}

static void threads(void) {
  pccl_comm_t *world;
  worker_t w[2];
  pthread_t t[2];
  int *all = malloc((size_t)g_size * sizeof *all);
  for (int r = 0; r < g_size; r++) all[r] = r;
  expect(pccl_comm_create_world(&world) == PCCL_OK, "threads: world");
  for (int i = 0; i < 2; i++) {
    w[i] = (worker_t){NULL, 30u + (uint32_t)i, 0};
    expect(pccl_comm_create_group(world, g_size, all, &w[i].comm) == PCCL_OK, "threads: comm");
  }
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, &w[i]);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  /* destroyed once both are done: freeing a communicator calls MPI, whose
   * progress the other thread's calls would share */
  for (int i = 0; i < 2; i++) {
    expect(w[i].failed == 0, "threads: every call and result");
    expect(pccl_comm_destroy(w[i].comm) == PCCL_OK, "threads: destroy");
  }
  expect(pccl_comm_destroy(world) == PCCL_OK, "threads: destroy world");
  free(all);
}

static void destroy(pccl_comm_t *comm, const char *name) {
  char what[600];
  pccl_status_t st = pccl_comm_destroy(comm);
  snprintf(what, sizeof what, "destroy %s: %s", name, st == PCCL_OK ? "" : pccl_last_error(comm));
  expect(st == PCCL_OK, what);
}

/* pccl_request_finished: 0 while a peer has not issued the call (rank 1
 * issues only after rank 0's message, which rank 0 sends after asking),
 * 1 once a later call on the communicator has completed (calls finish in
 * order), and it completes nothing: pccl_wait still returns the request's
 * status, and the results are checked against a plain sum. */
static void finished_query(pccl_comm_t *comm) {
  enum { N = 64 };
  uint32_t in[N], out[N], later_in = 1, later_out = 0;
  for (size_t i = 0; i < N; i++) in[i] = val(g_rank, i, 77), out[i] = FILL;
  expect(pccl_request_finished(NULL) == 0, "pccl_request_finished(NULL) is 0");
  pccl_request_t *req = NULL, *later = NULL;
  int token = 0;
  if (g_rank == 1) MPI_Recv(&token, 1, MPI_INT, 0, 41, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  expect(pccl_iallreduce(in, out, N, PCCL_UINT32, PCCL_SUM, comm, &req) == PCCL_OK,
         "pccl_iallreduce for pccl_request_finished");
  if (g_rank == 0 && g_size > 1) {
    expect(pccl_request_finished(req) == 0, "not finished before a peer issued the call");
    MPI_Send(&token, 1, MPI_INT, 1, 41, MPI_COMM_WORLD);
  }
  expect(pccl_iallreduce(&later_in, &later_out, 1, PCCL_UINT32, PCCL_SUM, comm, &later) == PCCL_OK &&
             pccl_wait(&later) == PCCL_OK && later_out == (uint32_t)g_size,
         "a later call completed");
  expect(pccl_request_finished(req) == 1, "finished once a later call completed");
  expect(req != NULL && pccl_wait(&req) == PCCL_OK && req == NULL,
         "pccl_wait completes a finished request");
  int right = 1;
  for (size_t i = 0; i < N; i++) {
    uint32_t sum = 0;
    for (int r = 0; r < g_size; r++) sum += val(r, i, 77);
    right &= out[i] == sum;
  }
  expect(right, "the finished call's results");
}

typedef struct {
  pccl_comm_t *comm;
  pccl_request_t *req;
  int failed;
} mover_t;

static void *mover(void *arg) {
  mover_t *m = arg;
  while (!pccl_request_finished(m->req)) m->failed += pccl_comm_progress(m->comm) != PCCL_OK;
  return NULL;
}

/* pccl_comm_progress: rank 0 issues an all-reduce of several rounds (512
 * KB) and leaves it to a thread of its own that calls nothing else, while
 * its first thread waits in pthread_join; the others wait for it. Where the
 * call would make MPI calls (a communicator across nodes or without shared
 * memory, or PCCL_CHECK) without MPI_THREAD_MULTIPLE, it refuses, and rank
 * 0 waits as usual. */
static void progress_thread(pccl_comm_t *comm, int provided) {
  expect(pccl_comm_progress(NULL) == PCCL_ERR_INVALID_COMM, "pccl_comm_progress(NULL)");
  expect(pccl_comm_progress(comm) == PCCL_OK, "pccl_comm_progress with no call outstanding");
  size_t n = 128 * 1024;
  const char *check = getenv("PCCL_CHECK"), *algo = NULL;
  expect(pccl_comm_algo_for(comm, PCCL_COLL_ALLREDUCE, n, PCCL_UINT32, 1, &algo) == PCCL_OK,
         "pccl_comm_algo_for the moved call");
  int nnodes = 0;
  pccl_comm_nnodes(comm, &nnodes);
  int in_node = nnodes == 1 && strstr(pccl_comm_transport(comm), "shm in node");
  int movable = provided == MPI_THREAD_MULTIPLE || g_size == 1 ||
                (!(check && strcmp(check, "1") == 0) && ((algo && strcmp(algo, "seg") == 0) || in_node));
  uint32_t *in = alloc_input(n, g_rank, 91), *out = alloc_fill(n);
  mover_t m = {comm, NULL, 0};
  expect(pccl_iallreduce(in, out, n, PCCL_UINT32, PCCL_SUM, comm, &m.req) == PCCL_OK,
         "pccl_iallreduce for pccl_comm_progress");
  if (!movable) {
    expect(pccl_comm_progress(comm) == PCCL_ERR_UNSUPPORTED &&
               strstr(pccl_last_error(NULL), "MPI_THREAD_MULTIPLE"),
           "pccl_comm_progress refuses a call that makes MPI calls");
  } else if (g_rank == 0) {
    pthread_t t;
    pthread_create(&t, NULL, mover, &m);
    pthread_join(t, NULL);
    expect(m.failed == 0, "pccl_comm_progress from another thread");
  }
  expect(pccl_wait(&m.req) == PCCL_OK, "the call moved by another thread completes");
  int right = 1;
  for (size_t i = 0; i < n; i++) right &= out[i] == sum_upto(g_size, i, 91);
  expect(right, "the results of the call moved by another thread");
  free(in), free(out);
}

int main(int argc, char **argv) {
  int provided = MPI_THREAD_SINGLE;
  int threaded = argc > 1 && strcmp(argv[1], "--threads") == 0;
  MPI_Init_thread(&argc, &argv, threaded ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  if (threaded && provided < MPI_THREAD_MULTIPLE) {
    if (g_rank == 0) printf("test_nonblocking: skipped, MPI gives no MPI_THREAD_MULTIPLE\n");
    MPI_Finalize();
    return 77;
  }
  if (threaded) {
    threads();
  } else if (argc > 1 && strcmp(argv[1], "--small-scratch") == 0) {
    same_status_everywhere();
  } else {
    pccl_comm_t *world, *other;
    int *all = malloc((size_t)g_size * sizeof *all);
    for (int r = 0; r < g_size; r++) all[r] = r;
    if (pccl_comm_create_world(&world) != PCCL_OK ||
        pccl_comm_create_group(world, g_size, all, &other) != PCCL_OK) {
      printf("rank %d: cannot create the communicators\n", g_rank);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (argc < 2 || strcmp(argv[1], "--errors") != 0) { /* --errors: those alone */
      batches(world);
      back_to_back_v(world);
      barriers_together(world);
      cross_comms(world, other);
      if (g_size > 2) taken_again(world, 0), taken_again(world, 3);
      finished_query(world);
      progress_thread(world, provided);
    }
    errors(world, other);
    destroy(other, "other");
    destroy(world, "world");
    free(all);
  }
  int failed = 0;
  MPI_Allreduce(&g_failed, &failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (g_rank == 0)
    printf("test_nonblocking: %d checks passed on rank 0, %d failed in all (%d calls refused for "
           "their scratch)\n", g_passed, failed, g_refused);
  MPI_Finalize();
  return failed ? 1 : 0;
}
