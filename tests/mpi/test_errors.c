/* test_errors.c - bad input gets a clear error, never a crash or a write.
 *
 * For every collective: NULL and misaligned buffers, unknown datatype and op,
 * roots out of range, byte counts that overflow, overlapping buffers that are
 * not the in-place layout, NULL and destroyed communicators. Each call must
 * return the documented status, leave a last-error message that names the
 * call and the rank, and leave the receive buffer untouched. Then malformed
 * PCCL_ALGO / PCCL_RANKS_PER_NODE values and unknown algorithm names, and a
 * check that the communicator still computes correct results afterwards, and
 * bad sizes and pointers given to pccl_mem_alloc / pccl_mem_free.
 * Rank 0 prints "N passed, M failed".
 */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv */
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pccl_mpi.h"

#define SENTINEL 0xA5
#define NELEM 64 /* elements per rank block in the test buffers */

static int g_rank, g_size;
static long g_pass, g_fail;

static void expect(int cond, const char *what) {
  if (cond) {
    g_pass++;
  } else {
    g_fail++;
    fprintf(stderr, "rank %d: FAILED: %s\n", g_rank, what);
  }
}

/* One entry point for every collective, so cases can loop over them. */
static pccl_status_t call(pccl_coll_t coll, const void *s, void *r, size_t n, pccl_dtype_t d,
                          pccl_op_t op, int root, pccl_comm_t *c) {
  switch (coll) {
    case PCCL_COLL_ALLGATHER: return pccl_allgather(s, r, n, d, c);
    case PCCL_COLL_REDUCE_SCATTER: return pccl_reduce_scatter(s, r, n, d, op, c);
    case PCCL_COLL_ALLREDUCE: return pccl_allreduce(s, r, n, d, op, c);
    case PCCL_COLL_BROADCAST: return pccl_broadcast(s, r, n, d, root, c);
    case PCCL_COLL_REDUCE: return pccl_reduce(s, r, n, d, op, root, c);
    case PCCL_COLL_SCATTER: return pccl_scatter(s, r, n, d, root, c);
    case PCCL_COLL_GATHER: return pccl_gather(s, r, n, d, root, c);
    case PCCL_COLL_ALLTOALL: return pccl_alltoall(s, r, n, d, c);
    case PCCL_COLL_SCAN: return pccl_scan(s, r, n, d, op, c);
    case PCCL_COLL_EXSCAN: return pccl_exscan(s, r, n, d, op, c);
    case PCCL_COLL_ALLGATHERV:
    case PCCL_COLL_REDUCE_SCATTERV: { /* n from every rank: the plain call it runs as; test_vcolls has the rest */
      size_t counts[64];
      for (int i = 0; i < 64; i++) counts[i] = n;
      return coll == PCCL_COLL_ALLGATHERV ? pccl_allgatherv(s, r, counts, NULL, d, c)
                                          : pccl_reduce_scatterv(s, r, counts, d, op, c);
    }
    case PCCL_COLL_GATHERV:
    case PCCL_COLL_SCATTERV:
    case PCCL_COLL_ALLTOALLV: { /* blocks of n, packed: test_vcolls has uneven ones */
      size_t counts[64];
      for (int i = 0; i < 64; i++) counts[i] = n;
      if (coll == PCCL_COLL_GATHERV) return pccl_gatherv(s, n, r, counts, NULL, d, root, c);
      if (coll == PCCL_COLL_SCATTERV) return pccl_scatterv(s, counts, NULL, r, n, d, root, c);
      return pccl_alltoallv(s, counts, NULL, r, counts, NULL, d, c);
    }
    default: return PCCL_ERR_INTERNAL;
  }
}

static int is_reduction(pccl_coll_t c) {
  return c == PCCL_COLL_REDUCE_SCATTER || c == PCCL_COLL_ALLREDUCE || c == PCCL_COLL_REDUCE ||
         c == PCCL_COLL_SCAN || c == PCCL_COLL_EXSCAN || c == PCCL_COLL_REDUCE_SCATTERV;
}
/* The v-calls below run with equal blocks: the plain call's cases apply. */
static pccl_coll_t plain(pccl_coll_t c) {
  return c == PCCL_COLL_GATHERV ? PCCL_COLL_GATHER
         : c == PCCL_COLL_SCATTERV ? PCCL_COLL_SCATTER
         : c == PCCL_COLL_ALLTOALLV ? PCCL_COLL_ALLTOALL : c;
}
static int is_rooted(pccl_coll_t c) {
  c = plain(c);
  return c == PCCL_COLL_BROADCAST || c == PCCL_COLL_REDUCE || c == PCCL_COLL_SCATTER ||
         c == PCCL_COLL_GATHER;
}

/* Buffers big enough for every collective at NELEM elements per block, with
 * slack so a misaligned pointer stays inside. */
static unsigned char *g_send, *g_recv;
static size_t g_bytes;

static int recv_untouched(void) {
  for (size_t i = 0; i < g_bytes; i++)
    if (g_recv[i] != SENTINEL) return 0;
  return 1;
}

/* Runs one call that must fail with `want`; checks status, message, buffer. */
static void bad_call(pccl_coll_t coll, const void *s, void *r, size_t n, pccl_dtype_t d,
                     pccl_op_t op, int root, pccl_comm_t *comm, pccl_status_t want,
                     const char *label) {
  memset(g_recv, SENTINEL, g_bytes);
  pccl_status_t st = call(coll, s, r, n, d, op, root, comm);
  char what[256];
  snprintf(what, sizeof what, "%s %s: status %d (%s), expected %d (%s)", pccl_coll_name(coll),
           label, (int)st, pccl_status_string(st), (int)want, pccl_status_string(want));
  expect(st == want, what);
  const char *msg = pccl_last_error(comm);
  snprintf(what, sizeof what, "%s %s: last error \"%s\" names neither the call nor the rank",
           pccl_coll_name(coll), label, msg);
  /* Calls on a live communicator name the rank; the others name the call. */
  const int live = want != PCCL_ERR_INVALID_COMM;
  char rank_text[32];
  snprintf(rank_text, sizeof rank_text, "rank %d", g_rank);
  expect(strstr(msg, "pccl_") != NULL && (!live || strstr(msg, rank_text) != NULL), what);
  snprintf(what, sizeof what, "%s %s: wrote to recvbuf", pccl_coll_name(coll), label);
  expect(recv_untouched(), what);
}

static void argument_errors(pccl_comm_t *comm) {
  const int p = g_size;
  for (int ci = 0; ci < PCCL_COLL_COUNT; ci++) {
    const pccl_coll_t c = (pccl_coll_t)ci, pc = plain(c);
    const pccl_op_t op = PCCL_SUM;
    const int root = 0;
    const int red = is_reduction(c), rooted = is_rooted(c);
    float *s = (float *)g_send, *r = (float *)g_recv;

    /* NULL buffers where the rank reads or writes them. For rooted calls
     * only the root reads sendbuf (broadcast, scatter) or writes recvbuf
     * (reduce, gather), so test the side every rank uses. */
    if (pc != PCCL_COLL_BROADCAST && pc != PCCL_COLL_SCATTER)
      bad_call(c, NULL, r, NELEM, PCCL_FLOAT32, op, root, comm, PCCL_ERR_INVALID_ARGUMENT,
               "NULL sendbuf");
    else if (g_rank == root)
      bad_call(c, NULL, r, NELEM, PCCL_FLOAT32, op, root, comm, PCCL_ERR_INVALID_ARGUMENT,
               "NULL sendbuf at root");
    /* exscan ignores rank 0's recvbuf (MPI: not significant there), so
     * rank 0 would go on and wait for the others: exscan_root_recv checks
     * that rank's side */
    if (c != PCCL_COLL_REDUCE && pc != PCCL_COLL_GATHER && c != PCCL_COLL_EXSCAN) {
      memset(g_recv, SENTINEL, g_bytes);
      pccl_status_t st = call(c, s, NULL, NELEM, PCCL_FLOAT32, op, root, comm);
      char what[128];
      snprintf(what, sizeof what, "%s NULL recvbuf: status %d", pccl_coll_name(c), (int)st);
      expect(st == PCCL_ERR_INVALID_ARGUMENT, what);
    }

    /* Misaligned: a float32 sendbuf one byte off, on the ranks that read it
     * (a rank that ignores sendbuf would go on and wait for the others). */
    if ((pc != PCCL_COLL_BROADCAST && pc != PCCL_COLL_SCATTER) || g_rank == root)
      bad_call(c, (unsigned char *)s + 1, r, NELEM, PCCL_FLOAT32, op, root, comm,
               PCCL_ERR_INVALID_ARGUMENT, "misaligned sendbuf");

    /* Unknown datatypes and ops. */
    const pccl_dtype_t bad_dtypes[] = {PCCL_DTYPE_COUNT, (pccl_dtype_t)-1, (pccl_dtype_t)1000};
    for (size_t i = 0; i < sizeof bad_dtypes / sizeof bad_dtypes[0]; i++)
      bad_call(c, s, r, NELEM, bad_dtypes[i], op, root, comm, PCCL_ERR_INVALID_DTYPE,
               "unknown dtype");
    if (red) {
      const pccl_op_t bad_ops[] = {PCCL_OP_COUNT, (pccl_op_t)-1, (pccl_op_t)77};
      for (size_t i = 0; i < sizeof bad_ops / sizeof bad_ops[0]; i++)
        bad_call(c, s, r, NELEM, PCCL_FLOAT32, bad_ops[i], root, comm, PCCL_ERR_INVALID_OP,
                 "unknown op");
      /* Ops that exist, on types they are not defined on (pccl.h's list). */
      const struct { pccl_dtype_t d; pccl_op_t op; } undefined[] = {
          {PCCL_FLOAT32, PCCL_BAND}, {PCCL_FLOAT64, PCCL_LXOR}, {PCCL_BOOL, PCCL_SUM},
          {PCCL_BOOL, PCCL_AVG},     {PCCL_INT32, PCCL_MAXLOC}, {PCCL_DOUBLE_INT, PCCL_SUM},
          {PCCL_FLOAT_INT, PCCL_BOR}};
      for (size_t i = 0; i < sizeof undefined / sizeof undefined[0]; i++)
        bad_call(c, s, r, 4, undefined[i].d, undefined[i].op, root, comm, PCCL_ERR_INVALID_OP,
                 "an op not defined on the type");
    }
    /* A pair type needs its struct's alignment (8), not its size (16). */
    if ((pc != PCCL_COLL_BROADCAST && pc != PCCL_COLL_SCATTER) || g_rank == root)
      bad_call(c, (unsigned char *)s + 4, r, 4, PCCL_DOUBLE_INT, red ? PCCL_MAXLOC : op, root, comm,
               PCCL_ERR_INVALID_ARGUMENT, "double_int sendbuf 4 bytes off");
    if (rooted) {
      bad_call(c, s, r, NELEM, PCCL_FLOAT32, op, -1, comm, PCCL_ERR_INVALID_ARGUMENT, "root -1");
      bad_call(c, s, r, NELEM, PCCL_FLOAT32, op, p, comm, PCCL_ERR_INVALID_ARGUMENT,
               "root = nranks");
    }

    /* Byte counts that do not fit in size_t (the buffers are never reached). */
    bad_call(c, s, r, SIZE_MAX / 4, PCCL_FLOAT64, op, root, comm, PCCL_ERR_OVERFLOW,
             "count SIZE_MAX/4 of float64");
    bad_call(c, s, r, SIZE_MAX, PCCL_INT8, op, root, comm, PCCL_ERR_OVERFLOW,
             "count SIZE_MAX of int8");
    /* (a gatherv's or scatterv's rank other than the root sees its own
     * block alone, which is a valid size: test_vcolls checks the root) */
    if (c != PCCL_COLL_GATHERV && c != PCCL_COLL_SCATTERV)
      bad_call(c, s, r, (size_t)PTRDIFF_MAX / (size_t)p + 1, PCCL_INT8, op, root, comm,
               PCCL_ERR_OVERFLOW, "more than PTRDIFF_MAX bytes in all");

    /* Overlap that is not the in-place layout: recvbuf one element past
     * sendbuf (reached by every rank for the unrooted collectives). */
    if (!rooted && c != PCCL_COLL_EXSCAN)
      bad_call(c, g_recv + sizeof(float), r, NELEM, PCCL_FLOAT32, op, root, comm,
               PCCL_ERR_INVALID_ARGUMENT, "overlapping buffers");
  }
}

/* Rank 0's recvbuf of an exscan is not significant: NULL, or overlapping
 * its sendbuf, is accepted and left alone; the other ranks get the sums of
 * the ranks below them, and a NULL recvbuf there is an error on that rank. */
static void exscan_root_recv(pccl_comm_t *comm) {
  int32_t *in = (int32_t *)g_send, *out = (int32_t *)g_recv;
  for (int i = 0; i < NELEM; i++) in[i] = g_rank * 1000 + i;
  memset(g_recv, SENTINEL, g_bytes);
  void *recv = g_rank == 0 ? NULL : out;
  expect(pccl_exscan(in, recv, NELEM, PCCL_INT32, PCCL_SUM, comm) == PCCL_OK,
         "exscan with rank 0's recvbuf NULL");
  int ok = 1;
  for (int i = 0; g_rank > 0 && i < NELEM; i++)
    ok &= out[i] == (g_rank * (g_rank - 1) / 2) * 1000 + g_rank * i;
  expect(ok, "exscan with rank 0's recvbuf NULL: the others get their prefix");
  if (g_size == 1) {
    expect(pccl_exscan(in, g_send + sizeof(int32_t), NELEM, PCCL_INT32, PCCL_SUM, comm) == PCCL_OK,
           "exscan on one rank: an overlapping recvbuf is ignored");
    expect(pccl_scan(in, NULL, NELEM, PCCL_INT32, PCCL_SUM, comm) == PCCL_ERR_INVALID_ARGUMENT,
           "scan with a NULL recvbuf");
  }
}

static void comm_errors(void) {
  float x[4] = {1, 2, 3, 4};
  /* NULL communicator. */
  for (int ci = 0; ci < PCCL_COLL_COUNT; ci++)
    bad_call((pccl_coll_t)ci, x, g_recv, 1, PCCL_FLOAT32, PCCL_SUM, 0, NULL,
             PCCL_ERR_INVALID_COMM, "NULL comm");

  /* Destroyed communicator: every call, the getters and a second destroy. */
  pccl_comm_t *dead = NULL;
  expect(pccl_comm_create_mpi(MPI_COMM_WORLD, &dead) == PCCL_OK, "create for destroy test");
  expect(pccl_comm_destroy(dead) == PCCL_OK, "destroy");
  for (int ci = 0; ci < PCCL_COLL_COUNT; ci++)
    bad_call((pccl_coll_t)ci, x, g_recv, 1, PCCL_FLOAT32, PCCL_SUM, 0, dead,
             PCCL_ERR_INVALID_COMM, "destroyed comm");
  int v = -7;
  expect(pccl_comm_rank(dead, &v) == PCCL_ERR_INVALID_COMM && v == -7, "rank of destroyed comm");
  expect(pccl_comm_destroy(dead) == PCCL_ERR_INVALID_COMM, "second destroy");
  expect(pccl_comm_destroy(NULL) == PCCL_OK, "destroy(NULL)");
  expect(pccl_comm_create_mpi(MPI_COMM_WORLD, NULL) == PCCL_ERR_INVALID_ARGUMENT,
         "create with NULL out");
  expect(pccl_comm_create_mpi(MPI_COMM_NULL, &dead) != PCCL_OK && dead == NULL,
         "create from MPI_COMM_NULL");
}

static void getter_errors(pccl_comm_t *comm) {
  pccl_status_t (*getters[])(const pccl_comm_t *, int *) = {
      pccl_comm_rank,  pccl_comm_size,       pccl_comm_node,
      pccl_comm_nnodes, pccl_comm_local_rank, pccl_comm_local_size};
  for (size_t i = 0; i < sizeof getters / sizeof getters[0]; i++)
    expect(getters[i](comm, NULL) == PCCL_ERR_INVALID_ARGUMENT, "getter with NULL out");
  int rank = -1, size = -1;
  expect(pccl_comm_rank(comm, &rank) == PCCL_OK && rank == g_rank, "rank matches MPI");
  expect(pccl_comm_size(comm, &size) == PCCL_OK && size == g_size, "size matches MPI");
}

static void algo_errors(pccl_comm_t *comm) {
  expect(pccl_comm_set_algo(comm, PCCL_COLL_ALLGATHER, "no-such-algo") ==
             PCCL_ERR_INVALID_ARGUMENT,
         "set_algo unknown name");
  expect(strstr(pccl_last_error(comm), "no-such-algo") != NULL, "set_algo error names the algo");
  expect(pccl_comm_set_algo(comm, (pccl_coll_t)99, "ring") == PCCL_ERR_INVALID_ARGUMENT,
         "set_algo unknown collective");
  expect(pccl_comm_set_algo(comm, PCCL_COLL_ALLGATHER, "rechalv") == PCCL_ERR_INVALID_ARGUMENT,
         "set_algo algorithm of another collective");
  expect(pccl_comm_set_algo(comm, PCCL_COLL_ALLGATHER, NULL) == PCCL_OK, "set_algo NULL");
  int total = -1;
  const char *names[8];
  expect(pccl_algo_list((pccl_coll_t)-1, names, 8, &total) == PCCL_ERR_INVALID_ARGUMENT,
         "algo_list unknown collective");
  expect(pccl_algo_list(PCCL_COLL_ALLGATHER, names, 8, NULL) == PCCL_ERR_INVALID_ARGUMENT,
         "algo_list NULL count");
}

/* Each malformed environment makes creation fail with PCCL_ERR_CONFIG and a
 * message that quotes the offending text; a valid one creates fine. */
/* Ranks that disagree on what shapes their schedules: every rank gets
 * PCCL_ERR_CONFIG at creation instead of a hang in the first collective. */
static void disagreeing_env(const char *var, const char *mine, const char *quoted) {
  setenv(var, mine, 1);
  pccl_comm_t *c = (pccl_comm_t *)&g_pass;
  pccl_status_t st = pccl_comm_create_mpi(MPI_COMM_WORLD, &c);
  char what[256];
  snprintf(what, sizeof what, "ranks disagree on %s (mine \"%s\"): status %d, message \"%s\"",
           var, mine, (int)st, pccl_last_error(NULL));
  expect(st == PCCL_ERR_CONFIG && c == NULL && strstr(pccl_last_error(NULL), quoted), what);
  if (st == PCCL_OK) pccl_comm_destroy(c);
  unsetenv(var);
}

static void env_errors(void) {
  static const struct {
    const char *var, *value, *quoted;
  } bad[] = {
      {"PCCL_ALGO", "allgather:no-such-algo", "no-such-algo"},
      {"PCCL_ALGO", "no-such-coll:ring", "no-such-coll"},
      {"PCCL_ALGO", "allgather", "allgather"},
      {"PCCL_ALGO", "allgather:ring,,allreduce:ring", "empty entry"},
      {"PCCL_ALGO", "allgather:rechalv", "rechalv"},
      {"PCCL_RANKS_PER_NODE", "abc", "abc"},
      {"PCCL_RANKS_PER_NODE", "0", "\"0\""},
      {"PCCL_RANKS_PER_NODE", "-3", "-3"},
      {"PCCL_RANKS_PER_NODE", "4x", "4x"},
      {"PCCL_RANKS_PER_NODE", "99999999999999999999999", "99999999999999999999999"},
      {"PCCL_HIER_INTRA", "fast", "fast"},
      {"PCCL_HIER_INTRA", "Ring", "Ring"},
      {"PCCL_CUDA", "maybe", "maybe"},
      {"PCCL_CUDA", "yes", "yes"},
      {"PCCL_ALGO", "allgather:ring:4", "takes no parameter"},
      {"PCCL_ALGO", "allgather:recmul:1", "recmul:1"},
      {"PCCL_ALGO", "allgather:recmul:x", "recmul:x"},
      {"PCCL_TUNING_FILE", "/nonexistent/pccl.tuning", "/nonexistent/pccl.tuning"},
      {"PCCL_TIMEOUT", "-1", "\"-1\""},
      {"PCCL_TIMEOUT", "soon", "soon"},
      {"PCCL_TIMEOUT", "nan", "nan"},
      {"PCCL_TIMEOUT", "inf", "inf"},
      {"PCCL_TIMEOUT", "5s", "5s"},
      {"PCCL_CHECK", "yes", "yes"},
      {"PCCL_CHECK", "2", "\"2\""},
      {"PCCL_MAX_SCRATCH", "lots", "lots"},
      {"PCCL_MAX_SCRATCH", "-1M", "-1M"},
      {"PCCL_MAX_SCRATCH", "1K", "below the least"},
      {"PCCL_MAX_SCRATCH", "64MB", "64MB"},
      {"PCCL_MAX_SCRATCH", "99999999G", "99999999G"},
      {"PCCL_ALGO", "allreduce:-nosuch", "nosuch"},
      {"PCCL_ALGO", "allreduce:-", "allreduce"},
      {"PCCL_SEG", "yes", "yes"},
      {"PCCL_SEG", "2", "\"2\""},
      {"PCCL_SEG_BYTES", "big", "big"},
      {"PCCL_SEG_BYTES", "4K", "below the least"},
      {"PCCL_SEG_BYTES", "2G", "2G"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    setenv(bad[i].var, bad[i].value, 1);
    pccl_comm_t *c = (pccl_comm_t *)&g_pass; /* must be reset to NULL */
    pccl_status_t st = pccl_comm_create_mpi(MPI_COMM_WORLD, &c);
    char what[256];
    snprintf(what, sizeof what, "%s=\"%s\": status %d, comm %p, message \"%s\"", bad[i].var,
             bad[i].value, (int)st, (void *)c, pccl_last_error(NULL));
    expect(st == PCCL_ERR_CONFIG && c == NULL && strstr(pccl_last_error(NULL), bad[i].quoted),
           what);
    if (st == PCCL_OK) pccl_comm_destroy(c);
    unsetenv(bad[i].var);
  }
  setenv("PCCL_ALGO", "allgather:bruck,reduce_scatter:ring,allreduce:auto", 1);
  pccl_comm_t *c = NULL;
  expect(pccl_comm_create_mpi(MPI_COMM_WORLD, &c) == PCCL_OK, "valid PCCL_ALGO accepted");
  if (c) {
    float in = 1.0f, out[64];
    expect(pccl_allgather(&in, out, 1, PCCL_FLOAT32, c) == PCCL_OK, "forced allgather runs");
    expect(strcmp(pccl_comm_last_algo(c), "bruck") == 0, "PCCL_ALGO forces bruck");
    pccl_comm_destroy(c);
  }
  unsetenv("PCCL_ALGO");
  /* An excluded algorithm is never chosen automatically; excluding every
   * one of a collective is an error naming it, not a crash. */
  setenv("PCCL_ALGO", "allreduce:-seg,allreduce:-recdbl", 1);
  c = NULL;
  expect(pccl_comm_create_mpi(MPI_COMM_WORLD, &c) == PCCL_OK, "PCCL_ALGO exclusion accepted");
  if (c) {
    float in = 1.0f, out = 0.0f;
    expect(pccl_allreduce(&in, &out, 1, PCCL_FLOAT32, PCCL_SUM, c) == PCCL_OK &&
               out == (float)g_size, "allreduce with seg and recdbl excluded");
    expect(strcmp(pccl_comm_last_algo(c), "seg") != 0 &&
               strcmp(pccl_comm_last_algo(c), "recdbl") != 0,
           "PCCL_ALGO exclusion keeps seg and recdbl out");
    pccl_comm_destroy(c);
  }
  setenv("PCCL_ALGO", "allgather:-ring,allgather:-recdbl,allgather:-bruck,allgather:-recmul,"
                      "allgather:-precmul,allgather:-kring,allgather:-seg,allgather:-cma,"
                      "allgather:-seg_cma", 1);
  c = NULL;
  expect(pccl_comm_create_mpi(MPI_COMM_WORLD, &c) == PCCL_OK, "PCCL_ALGO excluding all accepted");
  if (c) {
    float in = 1.0f, out[64];
    pccl_status_t st = pccl_allgather(&in, out, 1, PCCL_FLOAT32, c);
    expect(st == PCCL_ERR_CONFIG && strstr(pccl_last_error(c), "excludes every algorithm"),
           "every all-gather excluded: PCCL_ERR_CONFIG");
    pccl_comm_destroy(c);
  }
  unsetenv("PCCL_ALGO");
}

/* After all the rejected calls the communicator still gives right answers. */
/* Rank r's element i in repeat_calls: negative on rank 0's even elements,
 * so that signed and unsigned minima differ. */
static int32_t rep_value(int r, int i) { return r == 0 && i % 2 == 0 ? -3 - i : r * 5 + i + 1; }

/* The expected element i: ranks [0, upto) reduced with op, as dtype. */
static int32_t rep_expect(int upto, int i, pccl_op_t op, pccl_dtype_t dtype) {
  int32_t acc = rep_value(0, i);
  for (int r = 1; r < upto; r++) {
    int32_t v = rep_value(r, i);
    if (op == PCCL_SUM) acc = (int32_t)((uint32_t)acc + (uint32_t)v);
    else if (dtype == PCCL_INT32) acc = op == PCCL_MAX ? (v > acc ? v : acc) : (v < acc ? v : acc);
    else acc = (int32_t)(op == PCCL_MAX ? ((uint32_t)v > (uint32_t)acc ? (uint32_t)v : (uint32_t)acc)
                                        : ((uint32_t)v < (uint32_t)acc ? (uint32_t)v : (uint32_t)acc));
  }
  return acc;
}

/* Calls on the same buffers, one argument changed at a time (and some
 * repeated unchanged): pccl reuses a repeated call's validation and
 * selection, and must see every change. Each result against a reference
 * computed here; past the count, and where a rank gets nothing, recvbuf
 * must keep its sentinel. */
static void repeat_calls(pccl_comm_t *comm) {
  int32_t *in = (int32_t *)g_send, *out = (int32_t *)g_recv;
  const int last = g_size - 1;
  const struct {
    pccl_coll_t coll;
    pccl_op_t op;
    pccl_dtype_t dtype;
    int n, root;
  } seq[] = {
      {PCCL_COLL_ALLREDUCE, PCCL_SUM, PCCL_INT32, NELEM, 0},
      {PCCL_COLL_ALLREDUCE, PCCL_SUM, PCCL_INT32, NELEM, 0},
      {PCCL_COLL_ALLREDUCE, PCCL_MIN, PCCL_INT32, NELEM, 0},
      {PCCL_COLL_ALLREDUCE, PCCL_MIN, PCCL_UINT32, NELEM, 0},
      {PCCL_COLL_ALLREDUCE, PCCL_MIN, PCCL_UINT32, NELEM / 2, 0},
      {PCCL_COLL_SCAN, PCCL_MIN, PCCL_UINT32, NELEM / 2, 0},
      {PCCL_COLL_SCAN, PCCL_MIN, PCCL_UINT32, NELEM / 2, 0},
      {PCCL_COLL_EXSCAN, PCCL_MIN, PCCL_UINT32, NELEM / 2, 0},
      {PCCL_COLL_EXSCAN, PCCL_MAX, PCCL_INT32, NELEM / 2, 0},
      {PCCL_COLL_REDUCE, PCCL_MAX, PCCL_INT32, NELEM / 2, last},
      {PCCL_COLL_REDUCE, PCCL_MAX, PCCL_INT32, NELEM / 2, 0},
      {PCCL_COLL_REDUCE, PCCL_MAX, PCCL_INT32, NELEM / 2, 0},
  };
  for (int i = 0; i < NELEM; i++) in[i] = rep_value(g_rank, i);
  for (size_t k = 0; k < sizeof seq / sizeof seq[0]; k++) {
    memset(g_recv, SENTINEL, g_bytes);
    pccl_status_t st = call(seq[k].coll, in, out, (size_t)seq[k].n, seq[k].dtype, seq[k].op,
                            seq[k].root, comm);
    int upto = seq[k].coll == PCCL_COLL_SCAN     ? g_rank + 1
               : seq[k].coll == PCCL_COLL_EXSCAN ? g_rank
               : seq[k].coll == PCCL_COLL_REDUCE && g_rank != seq[k].root ? 0
                                                                           : g_size;
    int ok = st == PCCL_OK;
    for (int i = 0; ok && i < seq[k].n && upto > 0; i++)
      ok = out[i] == rep_expect(upto, i, seq[k].op, seq[k].dtype);
    const unsigned char *rest = (const unsigned char *)out + (upto > 0 ? seq[k].n : 0) * sizeof(int32_t);
    for (const unsigned char *p = rest; ok && p < g_recv + g_bytes; p++) ok = *p == SENTINEL;
    char what[128];
    snprintf(what, sizeof what, "repeated calls, step %zu (%s %s %s n=%d root %d): status %d", k,
             pccl_coll_name(seq[k].coll), pccl_op_name(seq[k].op), pccl_dtype_name(seq[k].dtype),
             seq[k].n, seq[k].root, (int)st);
    expect(ok, what);
  }
  /* the same call after pccl_comm_set_algo runs the algorithm now forced */
  memset(g_recv, SENTINEL, g_bytes);
  expect(pccl_allreduce(in, out, NELEM, PCCL_INT32, PCCL_SUM, comm) == PCCL_OK, "repeat before set_algo");
  expect(pccl_comm_set_algo(comm, PCCL_COLL_ALLREDUCE, "recdbl") == PCCL_OK, "set_algo recdbl");
  expect(pccl_allreduce(in, out, NELEM, PCCL_INT32, PCCL_SUM, comm) == PCCL_OK &&
             strcmp(pccl_comm_last_algo(comm), "recdbl") == 0 && out[1] == rep_expect(g_size, 1, PCCL_SUM, PCCL_INT32),
         "the same call after pccl_comm_set_algo runs the forced algorithm");
  expect(pccl_comm_set_algo(comm, PCCL_COLL_ALLREDUCE, "auto") == PCCL_OK, "set_algo auto");
}

static void still_works(pccl_comm_t *comm) {
  int32_t *in = (int32_t *)g_send, *out = (int32_t *)g_recv;
  for (int i = 0; i < NELEM; i++) in[i] = g_rank * 1000 + i;
  expect(pccl_allreduce(in, out, NELEM, PCCL_INT32, PCCL_SUM, comm) == PCCL_OK,
         "allreduce after errors");
  int ok = 1;
  const int32_t ranksum = g_size * (g_size - 1) / 2;
  for (int i = 0; i < NELEM; i++) ok &= out[i] == ranksum * 1000 + g_size * i;
  expect(ok, "allreduce after errors gives the sum");
  /* count 0 with NULL buffers is a no-op. */
  for (int ci = 0; ci < PCCL_COLL_COUNT; ci++)
    expect(call((pccl_coll_t)ci, NULL, NULL, 0, PCCL_FLOAT32, PCCL_SUM, 0, comm) == PCCL_OK,
           "count 0 with NULL buffers");
}

/* The shared allocator: bad sizes and pointers are errors with a message;
 * what it returns is zeroed, page-aligned and writable. */
static void mem_errors(void) {
  void *p = (void *)1;
  expect(pccl_mem_alloc(NULL, 64) == PCCL_ERR_INVALID_ARGUMENT, "mem_alloc with NULL ptr");
  expect(pccl_mem_alloc(&p, 0) == PCCL_ERR_INVALID_ARGUMENT && p == NULL, "mem_alloc of 0");
  expect(strstr(pccl_last_error(NULL), "pccl_mem_alloc") != NULL, "mem_alloc error names it");
  p = (void *)1;
  expect(pccl_mem_alloc(&p, SIZE_MAX) == PCCL_ERR_INVALID_ARGUMENT && p == NULL,
         "mem_alloc of SIZE_MAX");
  expect(pccl_mem_free(NULL) == PCCL_OK, "mem_free(NULL) does nothing");
  expect(pccl_mem_free(g_send) == PCCL_ERR_INVALID_ARGUMENT, "mem_free of a malloc pointer");
  expect(strstr(pccl_last_error(NULL), "pccl_mem_free") != NULL, "mem_free error names it");
  unsigned char *m = NULL;
  expect(pccl_mem_alloc((void **)&m, 10000) == PCCL_OK && m != NULL, "mem_alloc");
  if (!m) return;
  int zero = 1;
  for (int i = 0; i < 10000; i++) zero &= m[i] == 0;
  expect(zero && (uintptr_t)m % 4096 == 0, "mem_alloc is zeroed and page-aligned");
  memset(m, 7, 10000);
  expect(pccl_mem_free(m + 1) == PCCL_ERR_INVALID_ARGUMENT, "mem_free of an inner pointer");
  expect(pccl_mem_free(m) == PCCL_OK, "mem_free");
  expect(pccl_mem_free(m) == PCCL_ERR_INVALID_ARGUMENT, "double mem_free");
}

/* The watchdog's setters: bad values and dead communicators are refused. */
static void timeout_setters(void) {
  pccl_comm_t *c = NULL;
  expect(pccl_comm_create_mpi(MPI_COMM_WORLD, &c) == PCCL_OK, "create for the setters");
  expect(pccl_comm_set_timeout(c, -1.0) == PCCL_ERR_INVALID_ARGUMENT, "negative timeout");
  expect(pccl_comm_set_timeout(c, 0.0 / 0.0) == PCCL_ERR_INVALID_ARGUMENT, "NaN timeout");
  expect(pccl_comm_set_timeout(c, 1e300) == PCCL_ERR_INVALID_ARGUMENT, "huge timeout");
  expect(pccl_comm_set_timeout(c, 0.0) == PCCL_OK, "timeout 0 (wait forever)");
  expect(pccl_comm_set_timeout(NULL, 1.0) == PCCL_ERR_INVALID_COMM, "set_timeout on NULL");
  expect(pccl_comm_abort(NULL) == PCCL_ERR_INVALID_COMM, "abort on NULL");
  expect(pccl_comm_destroy(c) == PCCL_OK, "destroy after the setters");
  expect(pccl_comm_abort(c) == PCCL_ERR_INVALID_COMM, "abort on a destroyed communicator");
}

static void status_strings(void) {
  for (int s = 0; s <= PCCL_ERR_ABORTED; s++)
    for (int t = 0; t < s; t++)
      expect(strcmp(pccl_status_string((pccl_status_t)s), pccl_status_string((pccl_status_t)t)),
             "status strings are distinct");
  expect(pccl_status_string((pccl_status_t)12345) != NULL, "unknown status has a string");
}

/* Ranks that make different calls on the node segment: every rank reads a
 * part whose digest differs from its own call's and answers
 * PCCL_ERR_MISMATCH, naming the peer; the communicator is then broken.
 * Under cma the check comes before any rank touches a peer's buffers, whose
 * sizes differ. */
/* Local rank 0 passes one element more than the others, after `agreed`
 * calls that match (with a timed algorithm, `agreed` decides which path the
 * call that differs takes): every rank gets PCCL_ERR_MISMATCH, then a
 * broken communicator. */
static void seg_mismatch(const char *algo, size_t count, int agreed) {
  pccl_comm_t *c = NULL;
  if (pccl_comm_create_mpi(MPI_COMM_WORLD, &c) != PCCL_OK) {
    expect(0, "create for the segment mismatch");
    return;
  }
  expect(pccl_comm_set_algo(c, PCCL_COLL_ALLREDUCE, algo) == PCCL_OK, "force seg or cma");
  float *in = calloc(count + 1, sizeof *in), *out = calloc(count + 1, sizeof *out);
  char what[640];
  pccl_status_t st = PCCL_OK;
  for (int i = 0; i < agreed && st == PCCL_OK; i++)
    st = pccl_allreduce(in, out, count, PCCL_FLOAT32, PCCL_SUM, c);
  snprintf(what, sizeof what, "%s: %d matching calls of %zu elements: \"%s\"", algo, agreed, count,
           pccl_last_error(c));
  expect(st == PCCL_OK, what);
  st = pccl_allreduce(in, out, g_rank == 0 ? count + 1 : count, PCCL_FLOAT32, PCCL_SUM, c);
  snprintf(what, sizeof what, "%s: counts differ: status %d, \"%s\"", algo, (int)st,
           pccl_last_error(c));
  expect(st == PCCL_ERR_MISMATCH && strstr(pccl_last_error(c), "different call"), what);
  st = pccl_allreduce(in, out, count, PCCL_FLOAT32, PCCL_SUM, c);
  snprintf(what, sizeof what, "%s: the call after a mismatch fails on the broken communicator", algo);
  expect(st == PCCL_ERR_MISMATCH && strstr(pccl_last_error(c), "broken"), what);
  pccl_comm_destroy(c);
  free(in);
  free(out);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* A broadcast's root reads no peer's part, so it cannot see that a peer's
 * call differs; the peer, which can, leaves the rounds and says so, and the
 * root's next wait (here: for a buffer to refill, the call being several
 * rounds long) ends at once with PCCL_ERR_MISMATCH instead of at the
 * timeout, set long enough that the two cannot be mistaken. */
static void seg_broadcast_root_learns(void) {
  pccl_comm_t *c = NULL;
  if (pccl_comm_create_mpi(MPI_COMM_WORLD, &c) != PCCL_OK) {
    expect(0, "create for the broadcast mismatch");
    return;
  }
  expect(pccl_comm_set_algo(c, PCCL_COLL_BROADCAST, "seg") == PCCL_OK, "force seg broadcast");
  expect(pccl_comm_set_timeout(c, 120.0) == PCCL_OK, "timeout 120 s");
  const size_t n = (size_t)1 << 20; /* 4 MiB of float: many rounds of the default 128 KiB */
  float *buf = calloc(n, sizeof *buf);
  if (!buf) {
    expect(0, "memory for the broadcast mismatch");
    pccl_comm_destroy(c);
    return;
  }
  double t0 = MPI_Wtime();
  pccl_status_t st = pccl_broadcast(buf, buf, g_rank == 0 ? n : n - 1, PCCL_FLOAT32, 0, c);
  double took = MPI_Wtime() - t0;
  char what[700];
  snprintf(what, sizeof what, "seg broadcast, counts differ: rank %d status %d after %.1f s, \"%s\"",
           g_rank, (int)st, took, pccl_last_error(c));
  expect(st == PCCL_ERR_MISMATCH && took < 30.0, what);
  if (g_rank == 0)
    expect(strstr(pccl_last_error(c), "left the segment's rounds") != NULL,
           "the root names the peer that left");
  free(buf);
  pccl_comm_destroy(c);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* pccl_comm_create_group: bad lists refused on the calling rank alone;
 * a sub-communicator of every other rank counted down from the top (an
 * order that is not the parent's) computes the right sum; members listing the
 * same ranks in different orders get PCCL_ERR_MISMATCH. */
static void group_creation(pccl_comm_t *world) {
  pccl_comm_t *sub = (pccl_comm_t *)&sub;
  int me[1] = {g_rank}, other[1] = {(g_rank + 1) % g_size};
  int twice[2] = {g_rank, g_rank}, outside[1] = {g_size};
  expect(pccl_comm_create_group(world, 1, NULL, &sub) == PCCL_ERR_INVALID_ARGUMENT && !sub,
         "create_group: NULL ranks");
  expect(pccl_comm_create_group(world, 1, me, NULL) == PCCL_ERR_INVALID_ARGUMENT,
         "create_group: NULL out");
  expect(pccl_comm_create_group(world, 0, me, &sub) == PCCL_ERR_INVALID_ARGUMENT,
         "create_group: no ranks");
  expect(pccl_comm_create_group(world, g_size + 1, me, &sub) == PCCL_ERR_INVALID_ARGUMENT,
         "create_group: more ranks than the parent");
  expect(pccl_comm_create_group(world, 1, outside, &sub) == PCCL_ERR_INVALID_ARGUMENT &&
             strstr(pccl_last_error(NULL), "not a rank of the parent"),
         "create_group: rank out of range");
  if (g_size >= 2) {
    expect(pccl_comm_create_group(world, 2, twice, &sub) == PCCL_ERR_INVALID_ARGUMENT &&
               strstr(pccl_last_error(NULL), "listed twice"),
           "create_group: rank listed twice");
    expect(pccl_comm_create_group(world, 1, other, &sub) == PCCL_ERR_INVALID_ARGUMENT &&
               strstr(pccl_last_error(NULL), "not in ranks"),
           "create_group: caller not listed");
  }
  expect(pccl_comm_create_group(NULL, 1, me, &sub) == PCCL_ERR_INVALID_COMM,
         "create_group: NULL parent");

  int ranks[64], n = 0;
  for (int r = g_size - 1; r >= 0; r -= 2) ranks[n++] = r;
  if ((g_size - 1 - g_rank) % 2 == 0) {
    pccl_status_t st = pccl_comm_create_group(world, n, ranks, &sub);
    expect(st == PCCL_OK, "create_group over every other rank from the top");
    if (st == PCCL_OK) {
      int rank = -1, size = -1;
      pccl_comm_rank(sub, &rank);
      pccl_comm_size(sub, &size);
      expect(size == n && rank >= 0 && ranks[rank] == g_rank, "create_group: rank i is ranks[i]");
      int64_t v = g_rank + 1, sum = 0, want = 0;
      for (int i = 0; i < n; i++) want += ranks[i] + 1;
      expect(pccl_allreduce(&v, &sum, 1, PCCL_INT64, PCCL_SUM, sub) == PCCL_OK && sum == want,
             "create_group: all-reduce over the group");
      pccl_comm_destroy(sub);
    }
  }
  if (g_size >= 2) { /* ranks {0, 1}: rank 1 lists them the other way round */
    int order[2] = {g_rank == 1, g_rank != 1};
    if (g_rank < 2)
      expect(pccl_comm_create_group(world, 2, order, &sub) == PCCL_ERR_MISMATCH && !sub &&
                 strstr(pccl_last_error(NULL), "different rank lists"),
             "create_group: the same ranks in different orders");
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  g_bytes = (size_t)g_size * NELEM * 8 + 64;
  g_send = (unsigned char *)aligned_alloc(64, (g_bytes + 63) / 64 * 64);
  g_recv = (unsigned char *)aligned_alloc(64, (g_bytes + 63) / 64 * 64);
  memset(g_send, 0, g_bytes);

  pccl_comm_t *comm = NULL;
  pccl_status_t st = pccl_comm_create_mpi(MPI_COMM_WORLD, &comm);
  expect(st == PCCL_OK, "create");
  if (st == PCCL_OK) {
    argument_errors(comm);
    exscan_root_recv(comm);
    repeat_calls(comm);
    getter_errors(comm);
    algo_errors(comm);
    group_creation(comm);
    still_works(comm);
    pccl_comm_destroy(comm);
  }
  comm_errors();
  env_errors();
  if (g_size >= 2) disagreeing_env("PCCL_HIER_INTRA", g_rank == 0 ? "recursive" : "ring", "PCCL_HIER_INTRA");
  /* the node segment: rank 0 would skip its collective set-up, or lay it
   * out for other sizes than its peers */
  if (g_size >= 2) disagreeing_env("PCCL_SEG", g_rank == 0 ? "0" : "1", "PCCL_SEG or PCCL_SHM");
  if (g_size >= 2) disagreeing_env("PCCL_SHM", g_rank == 0 ? "0" : "1", "PCCL_SEG or PCCL_SHM");
  if (g_size >= 2) disagreeing_env("PCCL_SEG_BYTES", g_rank == 0 ? "64K" : "1M", "PCCL_SEG_BYTES");
  /* malformed on rank 0 alone: its peers, whose own is fine, must not wait
   * for it in the creation's collective steps */
  if (g_size >= 2)
    disagreeing_env("PCCL_TIMEOUT", g_rank == 0 ? "abc" : "5", g_rank == 0 ? "abc" : "another rank");
  if (g_size >= 3) { /* rank 1 alone on node 1, the others one node too large for their indices */
    char rpn[16];
    snprintf(rpn, sizeof rpn, "%d", g_rank == 1 ? 1 : g_size);
    disagreeing_env("PCCL_RANKS_PER_NODE", rpn, "node layout");
  }
  if (g_size >= 2) seg_mismatch("seg", 1, 0);
  if (g_size >= 2) seg_mismatch("cma", 1, 0);
  /* 16 KiB and 4 bytes more: one size class, whose trials run its first 4
   * calls on the buffers and the next 4 direct (seg.c, RUN) */
  if (g_size >= 2) seg_mismatch("seg_cma", 4096, 0);
  if (g_size >= 2) seg_mismatch("seg_cma", 4096, 4);
  if (g_size >= 2) seg_broadcast_root_learns();
  mem_errors();
  status_strings();
  timeout_setters();

  long counts[2] = {g_pass, g_fail}, total[2];
  MPI_Reduce(counts, total, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (g_rank == 0) printf("%ld passed, %ld failed\n", total[0], total[1]);
  free(g_send);
  free(g_recv);
  int any = g_fail > 0, all = 0;
  MPI_Allreduce(&any, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return all ? 1 : 0;
}
