/* test_engine - the training engine under mpiexec: named requests submitted
 * in a different order on every rank, checked against references computed
 * here from the inputs alone; the cache's promise (no negotiation once every
 * name is cached), fusion, groups, eviction, and the errors: ranks that
 * disagree, a rank that never submits (stall warning), shutdown with
 * requests pending, bad arguments and settings.
 *
 *   test_engine MODE    MODE: results | errors | mismatch | stall | shutdown |
 *                             settings | dead | timeline FILE */
#define _DEFAULT_SOURCE /* setenv, usleep */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>

#include "pccl.h"

static int g_rank, g_size, g_fail;

#define CHECK(cond, ...)                                             \
  do {                                                               \
    if (!(cond)) {                                                   \
      fprintf(stderr, "rank %d: %s:%d: ", g_rank, __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                                  \
      fprintf(stderr, "\n");                                         \
      g_fail = 1;                                                    \
    }                                                                \
  } while (0)

/* ---- tensors and their references ---- */

typedef struct {
  const char *name;
  pccl_coll_t coll;
  pccl_dtype_t dtype;
  pccl_op_t op;
  size_t count; /* per rank, as the blocking call counts it */
  void *send, *recv;
  pccl_handle_t *h;
} tensor_t;

/* Input element i of `rank` for tensor t in iteration it: small integers,
 * so float sums are exact and int8 sums wrap. */
static int64_t input(int t, int it, int rank, size_t i) {
  return (int64_t)((t * 31 + it * 17 + rank * 7 + (long)i * 13) % 61) - 20;
}

static void put(pccl_dtype_t dt, void *buf, size_t i, int64_t v) {
  switch (dt) {
    case PCCL_INT8: ((int8_t *)buf)[i] = (int8_t)(uint8_t)(uint64_t)v; break;
    case PCCL_INT32: ((int32_t *)buf)[i] = (int32_t)(uint32_t)(uint64_t)v; break;
    case PCCL_UINT64: ((uint64_t *)buf)[i] = (uint64_t)v; break;
    case PCCL_FLOAT32: ((float *)buf)[i] = (float)v; break;
    case PCCL_FLOAT64: ((double *)buf)[i] = (double)v; break;
    default: abort();
  }
}

/* The reduced value of element i over all ranks, as the op defines it on
 * the type (wrapping sums, unsigned order for uint64). */
static void reduced(const tensor_t *x, int t, int it, size_t i, void *out, size_t at) {
  int64_t acc = input(t, it, 0, i);
  for (int r = 1; r < g_size; r++) {
    int64_t v = input(t, it, r, i);
    if (x->op == PCCL_SUM || x->op == PCCL_AVG) acc += v;
    else if (x->dtype == PCCL_UINT64) {
      uint64_t a = (uint64_t)acc, b = (uint64_t)v;
      acc = (int64_t)(x->op == PCCL_MIN ? (b < a ? b : a) : (b > a ? b : a));
    } else
      acc = x->op == PCCL_MIN ? (v < acc ? v : acc) : (v > acc ? v : acc);
  }
  if (x->op != PCCL_AVG) return put(x->dtype, out, at, acc);
  if (x->dtype == PCCL_FLOAT64) ((double *)out)[at] = (double)acc / g_size;
  else if (x->dtype == PCCL_FLOAT32) ((float *)out)[at] = (float)acc / (float)g_size;
  else if (x->dtype == PCCL_INT32) ((int32_t *)out)[at] = (int32_t)(uint32_t)(uint64_t)acc / g_size;
  else abort();
}

static size_t send_elems(const tensor_t *x) {
  return x->coll == PCCL_COLL_REDUCE_SCATTER ? x->count * (size_t)g_size : x->count;
}
static size_t recv_elems(const tensor_t *x) {
  return x->coll == PCCL_COLL_ALLGATHER ? x->count * (size_t)g_size : x->count;
}

static void fill(tensor_t *x, int t, int it) {
  size_t es = pccl_dtype_size(x->dtype);
  for (size_t i = 0; i < send_elems(x); i++) put(x->dtype, x->send, i, input(t, it, g_rank, i));
  memset(x->recv, 0xA5, recv_elems(x) * es); /* stale results show */
}

static void verify(const tensor_t *x, int t, int it) {
  size_t es = pccl_dtype_size(x->dtype), n = recv_elems(x);
  uint8_t *want = malloc(n * es + 1);
  int root = g_size - 1;
  for (size_t i = 0; i < n; i++) {
    switch (x->coll) {
      case PCCL_COLL_ALLREDUCE: reduced(x, t, it, i, want, i); break;
      case PCCL_COLL_REDUCE_SCATTER: reduced(x, t, it, (size_t)g_rank * x->count + i, want, i); break;
      case PCCL_COLL_ALLGATHER: put(x->dtype, want, i, input(t, it, (int)(i / x->count), i % x->count)); break;
      case PCCL_COLL_BROADCAST: put(x->dtype, want, i, input(t, it, root, i)); break;
      default: abort();
    }
  }
  for (size_t i = 0; i < n; i++)
    if (memcmp((uint8_t *)x->recv + i * es, want + i * es, es) != 0) {
      CHECK(0, "iteration %d: tensor '%s' element %zu of %zu is wrong", it, x->name, i, n);
      break;
    }
  free(want);
}

static tensor_t g_tensors[] = {
    {"grad/a", PCCL_COLL_ALLREDUCE, PCCL_FLOAT32, PCCL_SUM, 1000, 0, 0, 0},
    {"grad/b", PCCL_COLL_ALLREDUCE, PCCL_FLOAT32, PCCL_SUM, 17, 0, 0, 0},
    {"grad/c", PCCL_COLL_ALLREDUCE, PCCL_FLOAT64, PCCL_AVG, 300, 0, 0, 0},
    {"grad/d", PCCL_COLL_ALLREDUCE, PCCL_INT8, PCCL_SUM, 999, 0, 0, 0},
    {"grad/e", PCCL_COLL_ALLREDUCE, PCCL_INT32, PCCL_MAX, 50, 0, 0, 0},
    {"grad/f", PCCL_COLL_ALLREDUCE, PCCL_UINT64, PCCL_MIN, 33, 0, 0, 0},
    {"grad/g", PCCL_COLL_ALLREDUCE, PCCL_INT32, PCCL_AVG, 20, 0, 0, 0},
    {"gather/a", PCCL_COLL_ALLGATHER, PCCL_FLOAT32, PCCL_SUM, 100, 0, 0, 0},
    {"gather/b", PCCL_COLL_ALLGATHER, PCCL_FLOAT32, PCCL_SUM, 7, 0, 0, 0},
    {"shard/a", PCCL_COLL_REDUCE_SCATTER, PCCL_FLOAT32, PCCL_SUM, 64, 0, 0, 0},
    {"shard/b", PCCL_COLL_REDUCE_SCATTER, PCCL_FLOAT32, PCCL_SUM, 5, 0, 0, 0},
    {"bcast/a", PCCL_COLL_BROADCAST, PCCL_FLOAT64, PCCL_SUM, 200, 0, 0, 0},
    {"big", PCCL_COLL_ALLREDUCE, PCCL_FLOAT32, PCCL_SUM, 300000, 0, 0, 0},
    {"empty", PCCL_COLL_ALLREDUCE, PCCL_FLOAT32, PCCL_SUM, 0, 0, 0, 0},
};
#define NT ((int)(sizeof g_tensors / sizeof g_tensors[0]))

static pccl_engine_request_t request_of(const tensor_t *x) {
  pccl_engine_request_t q = PCCL_ENGINE_REQUEST_INIT;
  q.name = x->name;
  q.coll = x->coll;
  q.sendbuf = x->send;
  q.recvbuf = x->recv;
  q.count = x->count;
  q.dtype = x->dtype;
  q.op = x->op;
  q.root = g_size - 1;
  return q;
}

static void allocate_tensors(void) {
  for (int t = 0; t < NT; t++) {
    tensor_t *x = &g_tensors[t];
    size_t es = pccl_dtype_size(x->dtype);
    x->send = calloc(send_elems(x) + 1, es);
    x->recv = calloc(recv_elems(x) + 1, es);
  }
}

static pccl_engine_stats_t stats_of(pccl_engine_t *e) {
  pccl_engine_stats_t s = {.size = sizeof s};
  CHECK(pccl_engine_stats(e, &s) == PCCL_OK, "pccl_engine_stats");
  return s;
}

/* Submits every tensor in an order of this rank's own, waits, checks.
 * With `grouped`, the grad/ all-reduces of float32 go as one group. */
static void iteration(pccl_engine_t *e, int it, int grouped) {
  int order[NT];
  for (int t = 0; t < NT; t++) order[t] = t;
  srand((unsigned)(it * 1000 + g_rank * 7 + 1));
  for (int t = NT - 1; t > 0; t--) {
    int j = rand() % (t + 1), tmp = order[t];
    order[t] = order[j], order[j] = tmp;
  }
  for (int t = 0; t < NT; t++) fill(&g_tensors[t], t, it);
  if (grouped) { /* grad/a, grad/b and big: float32 sums, one group */
    pccl_engine_request_t qs[3] = {request_of(&g_tensors[0]), request_of(&g_tensors[1]),
                                   request_of(&g_tensors[12])};
    pccl_handle_t *hs[3];
    CHECK(pccl_engine_submit_group(e, qs, 3, hs) == PCCL_OK, "submit_group: %s", pccl_last_error(NULL));
    g_tensors[0].h = hs[0], g_tensors[1].h = hs[1], g_tensors[12].h = hs[2];
  }
  for (int k = 0; k < NT; k++) {
    int t = order[k];
    if (grouped && (t == 0 || t == 1 || t == 12)) continue;
    pccl_engine_request_t q = request_of(&g_tensors[t]);
    int64_t shape[2] = {(int64_t)g_tensors[t].count, 1};
    if (t % 2) q.ndim = 2, q.shape = shape; /* some carry a shape */
    pccl_status_t st = pccl_engine_submit(e, &q, &g_tensors[t].h);
    CHECK(st == PCCL_OK, "submit '%s': %s", g_tensors[t].name, pccl_last_error(NULL));
  }
  for (int t = 0; t < NT; t++) {
    pccl_status_t st = pccl_handle_wait(g_tensors[t].h);
    CHECK(st == PCCL_OK, "'%s' failed: %s", g_tensors[t].name, pccl_handle_error(g_tensors[t].h));
    pccl_handle_free(g_tensors[t].h);
    if (st == PCCL_OK) verify(&g_tensors[t], t, it);
  }
}

static pccl_engine_t *create(pccl_comm_t *comm, int64_t cache, int64_t fusion) {
  pccl_engine_config_t cfg = PCCL_ENGINE_CONFIG_INIT;
  cfg.cycle_ms = 2;
  cfg.cache_capacity = cache;
  cfg.fusion_bytes = fusion;
  pccl_engine_t *e = NULL;
  pccl_status_t st = pccl_engine_create(comm, &cfg, &e);
  CHECK(st == PCCL_OK, "pccl_engine_create: %s", pccl_last_error(NULL));
  return e;
}

/* One engine setting, several iterations; returns the engine's counters. */
static pccl_engine_stats_t run_iterations(pccl_comm_t *comm, int64_t cache, int64_t fusion,
                                          int iters, int grouped, pccl_engine_stats_t *after_first) {
  pccl_engine_t *e = create(comm, cache, fusion);
  if (!e) exit(1);
  for (int it = 0; it < iters; it++) {
    iteration(e, it, grouped);
    if (it == 0) *after_first = stats_of(e);
  }
  pccl_engine_stats_t s = stats_of(e);
  CHECK(pccl_engine_destroy(e) == PCCL_OK, "destroy");
  return s;
}

static void mode_results(pccl_comm_t *comm) {
  allocate_tensors();
  const int iters = 5;
  const uint64_t n = NT;
  pccl_engine_stats_t first, s;

  /* cache on: after the first iteration nothing goes to rank 0 */
  s = run_iterations(comm, 1024, 64 << 20, iters, 0, &first);
  CHECK(s.coordinator_cycles == first.coordinator_cycles,
        "cache on: %llu coordinator cycles after the first iteration",
        (unsigned long long)(s.coordinator_cycles - first.coordinator_cycles));
  CHECK(s.negotiated == n && s.cache_hits == n * (iters - 1),
        "cache on: negotiated %llu, cache hits %llu", (unsigned long long)s.negotiated,
        (unsigned long long)s.cache_hits);
  CHECK(s.tensors == n * iters && s.collectives <= s.tensors, "cache on: tensors %llu collectives %llu",
        (unsigned long long)s.tensors, (unsigned long long)s.collectives);

  /* cache off: every cycle negotiates */
  s = run_iterations(comm, 0, 64 << 20, iters, 0, &first);
  CHECK(s.cache_hits == 0 && s.coordinator_cycles == s.cycles && s.negotiated == n * iters,
        "cache off: hits %llu, coordinator cycles %llu of %llu", (unsigned long long)s.cache_hits,
        (unsigned long long)s.coordinator_cycles, (unsigned long long)s.cycles);

  /* a cache smaller than the working set: entries evicted and negotiated again */
  s = run_iterations(comm, 3, 64 << 20, iters, 0, &first);
  CHECK(s.tensors == n * iters && s.negotiated + s.cache_hits == n * iters,
        "small cache: negotiated %llu + hits %llu != %llu", (unsigned long long)s.negotiated,
        (unsigned long long)s.cache_hits, (unsigned long long)(n * iters));

  /* no fusion: one collective per request */
  s = run_iterations(comm, 1024, 0, iters, 0, &first);
  CHECK(s.collectives == n * iters && s.fused_tensors == 0, "no fusion: %llu collectives, %llu fused",
        (unsigned long long)s.collectives, (unsigned long long)s.fused_tensors);

  /* a group of three float32 sums runs as one fused collective; the fusion
   * threshold (2 MB) holds big (1.2 MB) and both small ones */
  s = run_iterations(comm, 1024, 2 << 20, iters, 1, &first);
  CHECK(s.fused_tensors >= 3ull * iters, "groups: %llu fused tensors, want >= %d",
        (unsigned long long)s.fused_tensors, 3 * iters);
  s = run_iterations(comm, 0, 2 << 20, 2, 1, &first); /* groups through rank 0 too */
  CHECK(s.fused_tensors >= 6, "groups, cache off: %llu fused", (unsigned long long)s.fused_tensors);

  /* a threshold below big's size: big runs alone, the rest still fuse */
  s = run_iterations(comm, 1024, 64 << 10, 2, 0, &first);
  CHECK(s.tensors == 2 * n, "small threshold: %llu tensors", (unsigned long long)s.tensors);
}

/* ---- errors ---- */

static void expect(pccl_status_t got, pccl_status_t want, const char *what) {
  CHECK(got == want, "%s: got %s, want %s (%s)", what, pccl_status_string(got),
        pccl_status_string(want), pccl_last_error(NULL));
}

static void mode_errors(pccl_comm_t *comm) {
  pccl_engine_t *e = NULL;
  pccl_engine_config_t bad = PCCL_ENGINE_CONFIG_INIT;
  bad.size = 4;
  expect(pccl_engine_create(comm, &bad, &e), PCCL_ERR_INVALID_ARGUMENT, "config size");
  bad = (pccl_engine_config_t)PCCL_ENGINE_CONFIG_INIT;
  bad.cycle_ms = NAN;
  expect(pccl_engine_create(comm, &bad, &e), PCCL_ERR_INVALID_ARGUMENT, "NaN cycle");
  expect(pccl_engine_create(NULL, NULL, &e), PCCL_ERR_INVALID_COMM, "NULL comm");
  expect(pccl_engine_create(comm, NULL, NULL), PCCL_ERR_INVALID_ARGUMENT, "NULL out");
  const char *vars[][2] = {{"PCCL_CACHE_CAPACITY", "many"}, {"PCCL_CACHE_CAPACITY", "-1"},
                           {"PCCL_FUSION_THRESHOLD", "64MB"}, {"PCCL_FUSION_THRESHOLD", "99G"},
                           {"PCCL_CYCLE_TIME_MS", "fast"}, {"PCCL_STALL_CHECK_SECONDS", "-3"}};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
    setenv(vars[i][0], vars[i][1], 1);
    expect(pccl_engine_create(comm, NULL, &e), PCCL_ERR_CONFIG, vars[i][0]);
    CHECK(strstr(pccl_last_error(NULL), vars[i][0]) != NULL, "message names %s: %s", vars[i][0],
          pccl_last_error(NULL));
    unsetenv(vars[i][0]);
  }
  setenv("PCCL_FUSION_THRESHOLD", "1M", 1);
  e = create(comm, -1, -1);
  unsetenv("PCCL_FUSION_THRESHOLD");
  if (!e) return;
  float a[8] = {0}, b[8];
  pccl_handle_t *h = NULL, *hs[2];
  pccl_engine_request_t q = PCCL_ENGINE_REQUEST_INIT;
  q.sendbuf = a, q.recvbuf = b, q.count = 8;
  expect(pccl_engine_submit(e, &q, &h), PCCL_ERR_INVALID_ARGUMENT, "NULL name");
  q.name = "";
  expect(pccl_engine_submit(e, &q, &h), PCCL_ERR_INVALID_ARGUMENT, "empty name");
  char longname[PCCL_ENGINE_NAME_MAX + 2];
  memset(longname, 'x', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  q.name = longname;
  expect(pccl_engine_submit(e, &q, &h), PCCL_ERR_INVALID_ARGUMENT, "long name");
  q.name = "t";
  q.size = 8;
  expect(pccl_engine_submit(e, &q, &h), PCCL_ERR_INVALID_ARGUMENT, "request size");
  q.size = sizeof q;
  q.coll = PCCL_COLL_REDUCE;
  expect(pccl_engine_submit(e, &q, &h), PCCL_ERR_UNSUPPORTED, "reduce");
  q.coll = PCCL_COLL_ALLREDUCE;
  q.dtype = (pccl_dtype_t)99;
  expect(pccl_engine_submit(e, &q, &h), PCCL_ERR_INVALID_DTYPE, "dtype");
  q.dtype = PCCL_FLOAT32;
  q.op = (pccl_op_t)-1;
  expect(pccl_engine_submit(e, &q, &h), PCCL_ERR_INVALID_OP, "op");
  q.op = PCCL_SUM;
  q.sendbuf = NULL;
  expect(pccl_engine_submit(e, &q, &h), PCCL_ERR_INVALID_ARGUMENT, "NULL sendbuf");
  CHECK(strstr(pccl_last_error(NULL), "'t'") != NULL, "message names the tensor: %s", pccl_last_error(NULL));
  q.sendbuf = (char *)a + 1;
  expect(pccl_engine_submit(e, &q, &h), PCCL_ERR_INVALID_ARGUMENT, "misaligned");
  q.sendbuf = a;
  q.count = SIZE_MAX / 2;
  expect(pccl_engine_submit(e, &q, &h), PCCL_ERR_OVERFLOW, "huge count");
  q.count = 8;
  int64_t shape[2] = {3, 3};
  q.ndim = 2, q.shape = shape;
  expect(pccl_engine_submit(e, &q, &h), PCCL_ERR_INVALID_ARGUMENT, "shape vs count");
  q.ndim = 9;
  expect(pccl_engine_submit(e, &q, &h), PCCL_ERR_INVALID_ARGUMENT, "ndim");
  q.ndim = 0;
  q.coll = PCCL_COLL_BROADCAST, q.root = g_size;
  expect(pccl_engine_submit(e, &q, &h), PCCL_ERR_INVALID_ARGUMENT, "root");
  q.coll = PCCL_COLL_ALLREDUCE, q.root = 0;
  expect(pccl_engine_submit_group(e, &q, 0, hs), PCCL_ERR_INVALID_ARGUMENT, "empty group");
  pccl_engine_request_t two[2] = {q, q}; /* the same name twice in one group */
  expect(pccl_engine_submit_group(e, two, 2, hs), PCCL_ERR_INVALID_ARGUMENT, "duplicate in group");
  /* a name pending twice on one rank; then the real one completes */
  for (int i = 0; i < 8; i++) a[i] = (float)(g_rank + i);
  expect(pccl_engine_submit(e, &q, &h), PCCL_OK, "first submit");
  pccl_handle_t *h2 = NULL;
  expect(pccl_engine_submit(e, &q, &h2), PCCL_ERR_INVALID_ARGUMENT, "second submit of a pending name");
  expect(pccl_handle_wait(h), PCCL_OK, "wait");
  for (int i = 0; i < 8; i++)
    CHECK(b[i] == (float)(g_size * (g_size - 1) / 2 + g_size * i), "b[%d] = %g", i, b[i]);
  pccl_handle_free(h);
  int done = 0;
  expect(pccl_handle_wait(NULL), PCCL_ERR_INVALID_ARGUMENT, "wait NULL");
  expect(pccl_handle_test(NULL, &done), PCCL_ERR_INVALID_ARGUMENT, "test NULL");
  expect(pccl_handle_free(NULL), PCCL_OK, "free NULL");
  pccl_engine_stats_t st = {.size = 3};
  expect(pccl_engine_stats(e, &st), PCCL_ERR_INVALID_ARGUMENT, "stats size");
  expect(pccl_engine_destroy(e), PCCL_OK, "destroy");
  expect(pccl_engine_destroy(NULL), PCCL_OK, "destroy NULL");
}

/* Ranks disagree: a new name with different counts, then a cached name
 * submitted by one rank with another shape. Every rank gets the error,
 * naming the tensor and the odd rank; nothing hangs. */
static void mode_mismatch(pccl_comm_t *comm) {
  pccl_engine_t *e = create(comm, 1024, -1);
  if (!e) return;
  int odd = g_size - 1;
  float a[64], b[64];
  for (int i = 0; i < 64; i++) a[i] = 1;
  pccl_engine_request_t q = PCCL_ENGINE_REQUEST_INIT;
  q.name = "layer1.weight";
  q.sendbuf = a, q.recvbuf = b;
  q.count = g_rank == odd ? 32 : 64;
  pccl_handle_t *h;
  expect(pccl_engine_submit(e, &q, &h), PCCL_OK, "submit");
  pccl_status_t st = pccl_handle_wait(h);
  char want[64];
  snprintf(want, sizeof want, "rank %d", odd);
  CHECK(st == PCCL_ERR_MISMATCH, "count mismatch: %s", pccl_status_string(st));
  CHECK(strstr(pccl_handle_error(h), "'layer1.weight'") && strstr(pccl_handle_error(h), want) &&
            strstr(pccl_handle_error(h), "count 32"),
        "count mismatch message: %s", pccl_handle_error(h));
  pccl_handle_free(h);
  /* the same name again, agreed: it works (and is cached) */
  q.count = 64;
  int64_t shape[2] = {8, 8}, other[2] = {4, 16};
  q.ndim = 2, q.shape = shape;
  for (int round = 0; round < 3; round++) {
    if (round == 2 && g_rank == odd) q.shape = other;
    expect(pccl_engine_submit(e, &q, &h), PCCL_OK, "submit");
    st = pccl_handle_wait(h);
    if (round < 2) {
      CHECK(st == PCCL_OK && b[0] == (float)g_size, "agreed round %d: %s %s", round,
            pccl_status_string(st), pccl_handle_error(h));
    } else {
      CHECK(st == PCCL_ERR_MISMATCH && strstr(pccl_handle_error(h), "shape [4,16]") &&
                strstr(pccl_handle_error(h), want),
            "shape mismatch on a cached name: %s: %s", pccl_status_string(st), pccl_handle_error(h));
    }
    pccl_handle_free(h);
  }
  /* a group whose second member disagrees: every member fails; the same
   * group again, agreed, runs */
  for (int round = 0; round < 2; round++) {
    pccl_engine_request_t qs[3];
    const char *names[3] = {"g.a", "g.b", "g.c"};
    for (int k = 0; k < 3; k++) {
      qs[k] = (pccl_engine_request_t)PCCL_ENGINE_REQUEST_INIT;
      qs[k].name = names[k], qs[k].sendbuf = a, qs[k].recvbuf = b + 16 * k, qs[k].count = 8;
    }
    if (round == 0 && g_rank == odd) qs[1].count = 4;
    pccl_handle_t *hs[3];
    expect(pccl_engine_submit_group(e, qs, 3, hs), PCCL_OK, "group submit");
    for (int k = 0; k < 3; k++) {
      st = pccl_handle_wait(hs[k]);
      if (round == 0)
        CHECK(st == PCCL_ERR_MISMATCH && strstr(pccl_handle_error(hs[k]), "'g.b'"),
              "group member %d: %s: %s", k, pccl_status_string(st), pccl_handle_error(hs[k]));
      else
        CHECK(st == PCCL_OK && b[16 * k] == (float)g_size, "agreed group member %d: %s %s", k,
              pccl_status_string(st), pccl_handle_error(hs[k]));
      pccl_handle_free(hs[k]);
    }
  }
  expect(pccl_engine_destroy(e), PCCL_OK, "destroy");
}

/* The last rank holds back one tensor past the stall time: rank 0 warns,
 * naming it and the rank; then it arrives and completes. Twice: once new,
 * once cached. */
static void mode_stall(pccl_comm_t *comm) {
  pccl_engine_config_t cfg = PCCL_ENGINE_CONFIG_INIT;
  cfg.stall_seconds = 1.0;
  pccl_engine_t *e = NULL;
  expect(pccl_engine_create(comm, &cfg, &e), PCCL_OK, "create");
  if (!e) return;
  int late = g_size - 1;
  for (int round = 0; round < 2; round++) {
    float a[4] = {1, 2, 3, 4}, b[4];
    pccl_engine_request_t q = PCCL_ENGINE_REQUEST_INIT;
    q.name = "slow.grad";
    q.sendbuf = a, q.recvbuf = b, q.count = 4;
    pccl_handle_t *h;
    double t0 = MPI_Wtime();
    uint64_t warned = stats_of(e).stall_warnings;
    if (g_rank == late && g_size > 1) sleep(3);
    expect(pccl_engine_submit(e, &q, &h), PCCL_OK, "submit");
    if (g_rank == 0 && g_size > 1) {
      char warning[512] = "";
      char want[32];
      snprintf(want, sizeof want, "missing on rank %d", late);
      while (MPI_Wtime() - t0 < 2.8 && stats_of(e).stall_warnings == warned) usleep(20000);
      pccl_engine_last_warning(e, warning, sizeof warning);
      printf("round %d (%s): warned after %.2f s\n", round, round ? "cached" : "new", MPI_Wtime() - t0);
      CHECK(strstr(warning, "'slow.grad'") && strstr(warning, want),
            "round %d: no stall warning naming the tensor and rank %d within 2.8 s: \"%s\"", round,
            late, warning);
    }
    expect(pccl_handle_wait(h), PCCL_OK, "late tensor");
    CHECK(b[3] == 4.0f * g_size, "late tensor's result %g", b[3]);
    pccl_handle_free(h);
  }
  expect(pccl_engine_destroy(e), PCCL_OK, "destroy");
}

/* Rank 0 submits a tensor nobody else does, and the last rank shuts its
 * engine down: rank 0's request ends with PCCL_ERR_ABORTED, later submits
 * fail the same way. */
static void mode_shutdown(pccl_comm_t *comm) {
  pccl_engine_t *e = create(comm, 1024, -1);
  if (!e) return;
  float a[4] = {0}, b[4];
  pccl_engine_request_t q = PCCL_ENGINE_REQUEST_INIT;
  q.name = "orphan";
  q.sendbuf = a, q.recvbuf = b, q.count = 4;
  pccl_handle_t *h = NULL;
  if (g_rank == 0) expect(pccl_engine_submit(e, &q, &h), PCCL_OK, "submit orphan");
  if (g_rank == g_size - 1) {
    usleep(100000);
    expect(pccl_engine_destroy(e), PCCL_OK, "destroy first");
    e = NULL;
  }
  if (g_rank == 0) {
    pccl_status_t st = pccl_handle_wait(h);
    /* on one rank the orphan has every rank's submission and may just run */
    CHECK(st == PCCL_ERR_ABORTED || (g_size == 1 && st == PCCL_OK), "orphan: %s",
          pccl_status_string(st));
    if (st == PCCL_ERR_ABORTED) {
      CHECK(strstr(pccl_handle_error(h), "'orphan'") && strstr(pccl_handle_error(h), "shut down"),
            "orphan's message: %s", pccl_handle_error(h));
    }
    pccl_handle_free(h);
  }
  if (e) {
    pccl_handle_t *h2 = NULL;
    q.name = "after";
    usleep(200000); /* the stop reaches every engine within a cycle */
    pccl_status_t st = pccl_engine_submit(e, &q, &h2);
    if (st == PCCL_OK) { /* raced the stop: then the handle says so */
      st = pccl_handle_wait(h2);
      pccl_handle_free(h2);
    }
    expect(st, PCCL_ERR_ABORTED, "submit after another rank stopped");
    expect(pccl_engine_destroy(e), PCCL_OK, "destroy");
  }
}

/* The last rank dies (SIGKILL) with the others' requests pending: under
 * PCCL_TIMEOUT=3 their engines stop within seconds and every pending handle
 * ends with PCCL_ERR_TIMEOUT naming the cause. Run by run_dead_peer.sh
 * (Open MPI's --enable-recovery keeps the survivors alive), which checks
 * for "rank R: survived"; MPI_Finalize would wait for the dead rank, so the
 * job ends with MPI_Abort. */
static void mode_dead(pccl_comm_t *comm) {
  pccl_engine_t *e = create(comm, 1024, -1);
  if (!e) return;
  float a[16], b[16];
  for (int i = 0; i < 16; i++) a[i] = 1;
  pccl_engine_request_t q = PCCL_ENGINE_REQUEST_INIT;
  q.name = "before", q.sendbuf = a, q.recvbuf = b, q.count = 16;
  pccl_handle_t *h;
  expect(pccl_engine_submit(e, &q, &h), PCCL_OK, "submit");
  expect(pccl_handle_wait(h), PCCL_OK, "before the death");
  pccl_handle_free(h);
  if (g_rank == g_size - 1) kill(getpid(), SIGKILL);
  q.name = "after";
  double t0 = MPI_Wtime();
  expect(pccl_engine_submit(e, &q, &h), PCCL_OK, "submit");
  pccl_status_t st = pccl_handle_wait(h);
  double s = MPI_Wtime() - t0;
  CHECK(st == PCCL_ERR_TIMEOUT && strstr(pccl_handle_error(h), "'after'") &&
            strstr(pccl_handle_error(h), "no progress") && s >= 2.5 && s < 15,
        "after the death: %s in %.1f s: %s", pccl_status_string(st), s, pccl_handle_error(h));
  if (!g_fail)
    printf("rank %d: survived: %s after %.1f s: %s\n", g_rank, pccl_status_string(st), s,
           pccl_handle_error(h));
  fflush(stdout);
  pccl_handle_free(h);
  pccl_engine_destroy(e);
  MPI_Abort(MPI_COMM_WORLD, g_fail);
}

/* Ranks with different cache capacities cannot share a bitvector. */
static void mode_settings(pccl_comm_t *comm) {
  pccl_engine_t *e = NULL;
  pccl_engine_config_t cfg = PCCL_ENGINE_CONFIG_INIT;
  cfg.cache_capacity = g_rank == 0 ? 16 : 1024;
  pccl_status_t st = pccl_engine_create(comm, &cfg, &e);
  if (g_size > 1) {
    CHECK(st == PCCL_ERR_INVALID_ARGUMENT && strstr(pccl_last_error(NULL), "cache capacity 16..1024"),
          "disagreeing settings: %s: %s", pccl_status_string(st), pccl_last_error(NULL));
  } else {
    CHECK(st == PCCL_OK, "one rank: %s", pccl_status_string(st));
    pccl_engine_destroy(e);
  }
}

/* Rank 0 writes the timeline; it must hold every phase and the tensor's row. */
static void mode_timeline(pccl_comm_t *comm, const char *path) {
  pccl_engine_config_t cfg = PCCL_ENGINE_CONFIG_INIT;
  cfg.timeline = path;
  pccl_engine_t *e = NULL;
  expect(pccl_engine_create(comm, &cfg, &e), PCCL_OK, "create");
  if (!e) return;
  float a[3][16], b[3][16];
  for (int it = 0; it < 2; it++) {
    pccl_engine_request_t qs[3];
    const char *names[3] = {"tl/x", "tl/\"quoted\"", "tl/z"};
    for (int k = 0; k < 3; k++) {
      qs[k] = (pccl_engine_request_t)PCCL_ENGINE_REQUEST_INIT;
      qs[k].name = names[k], qs[k].sendbuf = a[k], qs[k].recvbuf = b[k], qs[k].count = 16;
    }
    pccl_handle_t *hs[3];
    expect(pccl_engine_submit_group(e, qs, 3, hs), PCCL_OK, "group");
    for (int k = 0; k < 3; k++) expect(pccl_handle_wait(hs[k]), PCCL_OK, "wait"), pccl_handle_free(hs[k]);
  }
  expect(pccl_engine_destroy(e), PCCL_OK, "destroy");
  if (g_rank != 0) return;
  FILE *f = fopen(path, "r");
  CHECK(f != NULL, "no timeline at %s", path);
  if (!f) return;
  char text[1 << 16];
  size_t n = fread(text, 1, sizeof text - 1, f);
  text[n] = '\0';
  fclose(f);
  const char *want[] = {"\"wait\"", "\"negotiate\"", "\"fuse\"", "\"execute\"", "\"unfuse\"",
                        "\"tl/x\"", "\"tl/\\\"quoted\\\"\"", "\"thread_name\""};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    CHECK(strstr(text, want[i]) != NULL, "timeline lacks %s", want[i]);
  CHECK(text[0] == '[' && strstr(text, "}\n]\n") != NULL, "timeline is not a closed JSON array");
}

int main(int argc, char **argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  const char *mode = argc > 1 ? argv[1] : "results";
  pccl_comm_t *comm = NULL;
  if (pccl_comm_create_world(&comm) != PCCL_OK) {
    fprintf(stderr, "rank %d: pccl_comm_create_world: %s\n", g_rank, pccl_last_error(NULL));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (strcmp(mode, "results") == 0) mode_results(comm);
  else if (strcmp(mode, "errors") == 0) mode_errors(comm);
  else if (strcmp(mode, "mismatch") == 0) mode_mismatch(comm);
  else if (strcmp(mode, "stall") == 0) mode_stall(comm);
  else if (strcmp(mode, "shutdown") == 0) mode_shutdown(comm);
  else if (strcmp(mode, "settings") == 0) mode_settings(comm);
  else if (strcmp(mode, "dead") == 0) mode_dead(comm);
  else if (strcmp(mode, "timeline") == 0 && argc > 2) mode_timeline(comm, argv[2]);
  else {
    fprintf(stderr, "usage: test_engine results|errors|mismatch|stall|shutdown|settings|dead|timeline FILE\n");
    g_fail = 1;
  }
  int any = 0;
  MPI_Allreduce(&g_fail, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  pccl_comm_destroy(comm);
  if (g_rank == 0) printf("test_engine %s on %d ranks: %s\n", mode, g_size, any ? "FAILED" : "passed");
  MPI_Finalize();
  return any ? 1 : 0;
}
