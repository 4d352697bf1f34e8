/* test_scratch - PCCL_MAX_SCRATCH bounds the memory a collective adds:
 * large reduce-scatter, all-reduce, all-gather and all-to-all calls (whose
 * algorithms would need several times their buffers in scratch) run
 * through bounded pieces, give the right answer, and raise this process's
 * peak resident memory by no more than the limit plus 1 MB for everything
 * else (MPI's and pccl's bookkeeping). With the shared-memory transport on,
 * twice the limit: scratch is shared memory that the node's peers read, so
 * a rank's resident set also counts the pages of peers' scratch it reads
 * (the same physical pages; each rank allocates at most the limit).
 *
 *   PCCL_MAX_SCRATCH=4M mpiexec -n 4 test_scratch [MB per rank, default 24] */
#define _DEFAULT_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pccl.h"

#define ALLOWANCE_KB (1 << 10) /* MPI's and pccl's own growth, not scratch */

static int g_rank, g_size, g_fail;

/* Peak resident memory (VmHWM), and resetting it to the current resident
 * size (Linux's clear_refs "5"), so each call is measured from where it
 * starts. */
static long peak_kb(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "VmHWM: %ld kB", &kb) == 1) break;
  if (f) fclose(f);
  return kb;
}

static long reset_peak(void) {
  FILE *f = fopen("/proc/self/clear_refs", "w");
  if (f) fputs("5", f), fclose(f);
  return peak_kb();
}

static long long limit_bytes(void) {
  const char *v = getenv("PCCL_MAX_SCRATCH");
  if (!v) return -1;
  char *end;
  long long n = strtoll(v, &end, 10);
  return *end == 'M' ? n << 20 : *end == 'K' ? n << 10 : n;
}

/* Element i of rank r's input: small integers, exact in float sums. */
static float input(int r, size_t i) { return (float)((i * 7 + (size_t)r * 3) % 13); }

static void check(const char *what, int ok, long grew_kb, long allowed_kb) {
  int all = ok && grew_kb <= allowed_kb;
  if (!all) {
    fprintf(stderr, "rank %d: %s: %s, peak memory grew %ld KB (allowed %ld KB)\n", g_rank, what,
            ok ? "results right" : "results WRONG", grew_kb, allowed_kb);
    g_fail = 1;
  } else if (g_rank == 0) {
    printf("%-15s results right, peak memory +%ld KB (allowed %ld KB)\n", what, grew_kb, allowed_kb);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  long long limit = limit_bytes();
  if (limit <= 0) {
    if (g_rank == 0) fprintf(stderr, "test_scratch: set PCCL_MAX_SCRATCH (e.g. 4M)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  size_t mb = argc > 1 ? (size_t)atoi(argv[1]) : 24, p = (size_t)g_size;
  size_t total = (mb << 20) / sizeof(float) / p * p, block = total / p; /* floats */
  float *a = malloc(total * sizeof(float)), *b = malloc(total * sizeof(float));
  pccl_comm_t *comm;
  if (!a || !b || pccl_comm_create_world(&comm) != PCCL_OK) MPI_Abort(MPI_COMM_WORLD, 1);
  for (size_t i = 0; i < total; i++) a[i] = input(g_rank, i), b[i] = -1;
  /* warm-up: transports, schedules' tables and MPI's buffers are in place */
  pccl_allreduce(a, b, 1 << 14, PCCL_FLOAT32, PCCL_SUM, comm);
  const char *shm = getenv("PCCL_SHM");
  const int peers_pages = !(shm && strcmp(shm, "0") == 0);
  const long allowed = (long)(limit >> 10) * (peers_pages ? 2 : 1) + ALLOWANCE_KB;

  long before = reset_peak();
  pccl_status_t st = pccl_reduce_scatter(a, b, block, PCCL_FLOAT32, PCCL_SUM, comm);
  int ok = st == PCCL_OK;
  for (size_t i = 0; ok && i < block; i++) {
    float want = 0;
    for (int r = 0; r < g_size; r++) want += input(r, (size_t)g_rank * block + i);
    ok = b[i] == want;
  }
  check("reduce_scatter", ok, peak_kb() - before, allowed);

  before = reset_peak();
  st = pccl_allreduce(a, b, total, PCCL_FLOAT32, PCCL_SUM, comm);
  ok = st == PCCL_OK;
  for (size_t i = 0; ok && i < total; i++) {
    float want = 0;
    for (int r = 0; r < g_size; r++) want += input(r, i);
    ok = b[i] == want;
  }
  check("allreduce", ok, peak_kb() - before, allowed);

  before = reset_peak();
  st = pccl_allgather(a, b, block, PCCL_FLOAT32, comm);
  ok = st == PCCL_OK;
  for (size_t i = 0; ok && i < total; i++) ok = b[i] == input((int)(i / block), i % block);
  check("allgather", ok, peak_kb() - before, allowed);

  before = reset_peak();
  st = pccl_alltoall(a, b, block, PCCL_FLOAT32, comm);
  ok = st == PCCL_OK;
  for (size_t i = 0; ok && i < total; i++)
    ok = b[i] == input((int)(i / block), (size_t)g_rank * block + i % block);
  check("alltoall", ok, peak_kb() - before, allowed);

  /* compressed, with an error bound: the answer within it, memory bounded too */
  pccl_comm_set_algo(comm, PCCL_COLL_ALLREDUCE, "zring"); /* one node: else it runs exact */
  before = reset_peak();
  pccl_lossy_t lossy = PCCL_LOSSY_INIT(0.01);
  st = pccl_allreduce_lossy(a, b, total, PCCL_FLOAT32, PCCL_SUM, &lossy, comm);
  ok = st == PCCL_OK && lossy.stages > 0;
  for (size_t i = 0; ok && i < total; i++) {
    float want = 0;
    for (int r = 0; r < g_size; r++) want += input(r, i);
    ok = b[i] - want <= 0.01f + 1e-5f && want - b[i] <= 0.01f + 1e-5f;
  }
  check("allreduce_lossy", ok, peak_kb() - before, allowed);

  int any = 0;
  MPI_Allreduce(&g_fail, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  pccl_comm_destroy(comm);
  free(a);
  free(b);
  if (g_rank == 0) printf("test_scratch on %d ranks: %s\n", g_size, any ? "FAILED" : "passed");
  MPI_Finalize();
  return any;
}
