/* pccl-enginebench - what the training engine costs and saves: a synthetic
 * training step submits T gradient all-reduces in an order of each rank's
 * own, and the step is timed with the response cache on and off, fusion on
 * and off, and the tensors in groups; beside it, in the same run, the same
 * all-reduces one by one with MPI_Allreduce. From the engine's counters it
 * prints, per step, the cycles, how many went to rank 0, coordination time
 * and bytes per cycle, and the collectives that ran.
 *
 *   mpirun -np 4 pccl-enginebench [--tensors 64] [--iters 20] [--warmup 3]
 *          [--cycle-ms 5] [--scale 1] [--groups 4] [--csv FILE]
 *
 * Tensor i holds scale * (64 if i is odd, else 256 << (i/2 % 8)) float32s:
 * weights and biases of a small network (T = 64, scale 1: 0.26 M floats).
 * --scale 0 makes every tensor empty: the steps are coordination alone. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pccl.h"

typedef struct {
  int tensors, iters, warmup, groups, scale;
  double cycle_ms;
  const char *csv;
} options_t;

typedef struct {
  const char *name;
  int64_t cache, fusion;
  int grouped;
} variant_t;

static int g_rank, g_size;
static float **g_send, **g_recv;
static size_t *g_count;
static char (*g_names)[32];

static size_t count_of(int i, int scale) {
  return (size_t)scale * (i % 2 ? 64u : 256u << (i / 2 % 8));
}

static void usage(void) {
  fprintf(stderr, "usage: pccl-enginebench [--tensors N] [--iters N] [--warmup N] [--cycle-ms X]\n"
                  "                        [--scale N] [--groups N] [--csv FILE]\n");
}

static int parse(int argc, char **argv, options_t *o) {
  *o = (options_t){64, 20, 3, 4, 1, 5.0, NULL};
  for (int i = 1; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    int ok = v != NULL;
    if (!strcmp(argv[i], "--tensors")) ok = ok && pccl_cli_int(v, 1, 100000, &o->tensors);
    else if (!strcmp(argv[i], "--iters")) ok = ok && pccl_cli_int(v, 1, 1000000, &o->iters);
    else if (!strcmp(argv[i], "--warmup")) ok = ok && pccl_cli_int(v, 0, 1000000, &o->warmup);
    else if (!strcmp(argv[i], "--groups")) ok = ok && pccl_cli_int(v, 1, 100000, &o->groups);
    else if (!strcmp(argv[i], "--scale")) ok = ok && pccl_cli_int(v, 0, 1 << 20, &o->scale);
    else if (!strcmp(argv[i], "--cycle-ms")) ok = ok && pccl_cli_real(v, 0, 1e4, &o->cycle_ms);
    else if (!strcmp(argv[i], "--csv")) o->csv = v;
    else ok = 0;
    if (!ok) {
      if (g_rank == 0) fprintf(stderr, "pccl-enginebench: bad option %s %s\n", argv[i], v ? v : "");
      return 0;
    }
    i++;
  }
  if (o->groups > o->tensors) o->groups = o->tensors;
  return 1;
}

/* A permutation of 0..n-1 of this rank's own for step `it`. */
static void order(int *out, int n, int it) {
  uint64_t x = 0x9E3779B97F4A7C15ull * (uint64_t)(it * 131 + g_rank + 1);
  for (int i = 0; i < n; i++) out[i] = i;
  for (int i = n - 1; i > 0; i--) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    int j = (int)(x % (uint64_t)(i + 1)), t = out[i];
    out[i] = out[j], out[j] = t;
  }
}

static pccl_engine_request_t request(int i) {
  pccl_engine_request_t q = PCCL_ENGINE_REQUEST_INIT;
  q.name = g_names[i];
  q.sendbuf = g_send[i];
  q.recvbuf = g_recv[i];
  q.count = g_count[i];
  q.op = PCCL_AVG;
  return q;
}

/* One step through the engine: every tensor (or group) submitted, then all waited. */
static int engine_step(pccl_engine_t *e, const options_t *o, int it, int grouped,
                       pccl_handle_t **h) {
  int n = o->tensors, *perm = malloc((size_t)n * sizeof(int));
  int units = grouped ? o->groups : n, ok = 1;
  order(perm, units, it);
  for (int k = 0; k < units && ok; k++) {
    int u = perm[k];
    if (!grouped) {
      pccl_engine_request_t q = request(u);
      ok = pccl_engine_submit(e, &q, &h[u]) == PCCL_OK;
      continue;
    }
    int lo = (int)((long)n * u / units), hi = (int)((long)n * (u + 1) / units);
    pccl_engine_request_t *qs = malloc((size_t)(hi - lo) * sizeof(*qs));
    for (int i = lo; i < hi; i++) qs[i - lo] = request(i);
    ok = pccl_engine_submit_group(e, qs, hi - lo, h + lo) == PCCL_OK;
    free(qs);
  }
  free(perm);
  if (!ok) fprintf(stderr, "rank %d: submit: %s\n", g_rank, pccl_last_error(NULL));
  for (int i = 0; i < n && ok; i++) {
    if (pccl_handle_wait(h[i]) != PCCL_OK) {
      fprintf(stderr, "rank %d: %s\n", g_rank, pccl_handle_error(h[i]));
      ok = 0;
    }
  }
  for (int i = 0; i < n; i++) pccl_handle_free(h[i]), h[i] = NULL;
  return ok;
}

static int mpi_step(const options_t *o, int it) {
  int *perm = malloc((size_t)o->tensors * sizeof(int));
  order(perm, o->tensors, it);
  /* MPI needs one order on every rank: it gets rank 0's */
  MPI_Bcast(perm, o->tensors, MPI_INT, 0, MPI_COMM_WORLD);
  for (int k = 0; k < o->tensors; k++) {
    int i = perm[k];
    MPI_Allreduce(g_send[i], g_recv[i], (int)g_count[i], MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    for (size_t j = 0; j < g_count[i]; j++) g_recv[i][j] /= (float)g_size;
  }
  free(perm);
  return 1;
}

typedef struct {
  double step_ms;
  double coord_min, coord_max; /* seconds coordinating: least and most over the ranks */
  pccl_engine_stats_t d;       /* rank 0's counters over the measured steps */
} result_t;

static double over_ranks(double x, MPI_Op op) {
  MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, op, MPI_COMM_WORLD);
  return x;
}

static int run_engine(pccl_comm_t *comm, const options_t *o, const variant_t *v, result_t *r) {
  pccl_engine_config_t cfg = PCCL_ENGINE_CONFIG_INIT;
  cfg.cycle_ms = o->cycle_ms;
  cfg.cache_capacity = v->cache;
  cfg.fusion_bytes = v->fusion;
  pccl_engine_t *e = NULL;
  if (pccl_engine_create(comm, &cfg, &e) != PCCL_OK) {
    fprintf(stderr, "rank %d: pccl_engine_create: %s\n", g_rank, pccl_last_error(NULL));
    return 0;
  }
  pccl_handle_t **h = calloc((size_t)o->tensors, sizeof(*h));
  int ok = 1;
  for (int it = 0; it < o->warmup && ok; it++) ok = engine_step(e, o, it, v->grouped, h);
  pccl_engine_stats_t a = {.size = sizeof a}, b = {.size = sizeof b};
  pccl_engine_stats(e, &a);
  double t0 = MPI_Wtime();
  for (int it = 0; it < o->iters && ok; it++) ok = engine_step(e, o, o->warmup + it, v->grouped, h);
  double t = MPI_Wtime() - t0;
  pccl_engine_stats(e, &b);
  pccl_engine_destroy(e);
  free(h);
  r->step_ms = over_ranks(t, MPI_MAX) / o->iters * 1e3;
  r->d.cycles = b.cycles - a.cycles;
  r->d.coordinator_cycles = b.coordinator_cycles - a.coordinator_cycles;
  r->d.cache_hits = b.cache_hits - a.cache_hits;
  r->d.coordination_bytes = b.coordination_bytes - a.coordination_bytes;
  /* A rank that reaches a cycle's collectives early waits there for the
   * others; the one that arrives last waits only for the protocol itself. So
   * the least coordination time over the ranks is the protocol's cost, the
   * most is that plus the ranks' skew. */
  r->coord_min = over_ranks(b.coordination_seconds - a.coordination_seconds, MPI_MIN);
  r->coord_max = over_ranks(b.coordination_seconds - a.coordination_seconds, MPI_MAX);
  r->d.collectives = b.collectives - a.collectives;
  r->d.fused_tensors = b.fused_tensors - a.fused_tensors;
  int all = ok;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all;
}

static void setup_tensors(const options_t *o) {
  int n = o->tensors;
  g_send = calloc((size_t)n, sizeof(*g_send));
  g_recv = calloc((size_t)n, sizeof(*g_recv));
  g_count = calloc((size_t)n, sizeof(*g_count));
  g_names = calloc((size_t)n, sizeof(*g_names));
  for (int i = 0; i < n; i++) {
    g_count[i] = count_of(i, o->scale);
    g_send[i] = malloc(g_count[i] * sizeof(float) + 4);
    g_recv[i] = malloc(g_count[i] * sizeof(float) + 4);
    for (size_t j = 0; j < g_count[i]; j++) g_send[i][j] = (float)((j + (size_t)g_rank) % 7);
    snprintf(g_names[i], sizeof g_names[i], "%s.%d", i % 2 ? "bias" : "weight", i / 2);
  }
}

int main(int argc, char **argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  options_t o;
  if (!parse(argc, argv, &o)) {
    if (g_rank == 0) usage();
    MPI_Finalize();
    return 2;
  }
  setup_tensors(&o);
  size_t floats = 0;
  for (int i = 0; i < o.tensors; i++) floats += g_count[i];
  pccl_comm_t *comm = NULL;
  if (pccl_comm_create_world(&comm) != PCCL_OK) {
    fprintf(stderr, "pccl_comm_create_world: %s\n", pccl_last_error(NULL));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  /* the MPI baseline first: no engine thread may run beside it */
  for (int it = 0; it < o.warmup; it++) mpi_step(&o, it);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int it = 0; it < o.iters; it++) mpi_step(&o, o.warmup + it);
  double mpi_ms = over_ranks(MPI_Wtime() - t0, MPI_MAX) / o.iters * 1e3;

  const variant_t variants[] = {
      {"cache+fusion", 1024, 64 << 20, 0},
      {"nocache+fusion", 0, 64 << 20, 0},
      {"cache+nofusion", 1024, 0, 0},
      {"nocache+nofusion", 0, 0, 0},
      {"cache+fusion+groups", 1024, 64 << 20, 1},
  };
  FILE *csv = g_rank == 0 && o.csv ? fopen(o.csv, "w") : NULL;
  if (g_rank == 0) {
    printf("# pccl-enginebench: %d ranks, %d float32 tensors (%.2f MB), %d steps after %d warm-up, "
           "cycle %.1f ms, groups %d\n", g_size, o.tensors, floats * 4 / 1e6, o.iters, o.warmup,
           o.cycle_ms, o.groups);
    printf("# MPI_Allreduce one tensor at a time: %.3f ms per step\n", mpi_ms);
    printf("# coord_us: time coordinating per cycle, least over the ranks (the protocol) and most\n"
           "# (protocol + waiting for late ranks); coord_B: bytes rank 0 moved to coordinate\n");
    printf("%-20s %9s %7s %8s %8s %9s %9s %9s %8s %9s %7s %8s\n", "variant", "step_ms", "vs_mpi",
           "cycles", "to_rank0", "coord_us", "coord_us", "coord_B", "colls", "KB", "fused", "hits");
    printf("%-20s %9s %7s %8s %8s %9s %9s %9s %8s %9s %7s %8s\n", "", "", "", "/step", "/step",
           "min", "max", "/cycle", "/step", "/coll", "/step", "/step");
    if (csv)
      fprintf(csv, "ranks,variant,step_ms,mpi_step_ms,cycles_per_step,coordinator_cycles_per_step,"
                   "coord_us_per_cycle_min,coord_us_per_cycle_max,coord_bytes_per_cycle,collectives_per_step,"
                   "bytes_per_collective,fused_per_step,cache_hits_per_step\n");
  }
  int status = 0;
  for (size_t k = 0; k < sizeof variants / sizeof variants[0]; k++) {
    result_t r;
    memset(&r, 0, sizeof r);
    if (!run_engine(comm, &o, &variants[k], &r)) {
      status = 1;
      break;
    }
    double it = o.iters, cyc = r.d.cycles ? (double)r.d.cycles : 1;
    double per_coll = r.d.collectives ? floats * 4.0 * it / (double)r.d.collectives : 0;
    if (g_rank != 0) continue;
    printf("%-20s %9.3f %7.2f %8.1f %8.1f %9.1f %9.1f %9.0f %8.1f %9.1f %7.1f %8.1f\n",
           variants[k].name, r.step_ms, mpi_ms / r.step_ms, r.d.cycles / it,
           r.d.coordinator_cycles / it, r.coord_min / cyc * 1e6, r.coord_max / cyc * 1e6,
           r.d.coordination_bytes / cyc, r.d.collectives / it, per_coll / 1024, r.d.fused_tensors / it, r.d.cache_hits / it);
    if (csv)
      fprintf(csv, "%d,%s,%.4f,%.4f,%.2f,%.2f,%.2f,%.2f,%.1f,%.2f,%.0f,%.2f,%.2f\n", g_size,
              variants[k].name, r.step_ms, mpi_ms, r.d.cycles / it, r.d.coordinator_cycles / it,
              r.coord_min / cyc * 1e6, r.coord_max / cyc * 1e6, r.d.coordination_bytes / cyc,
              r.d.collectives / it, per_coll, r.d.fused_tensors / it, r.d.cache_hits / it);
  }
  if (csv) fclose(csv);
  pccl_comm_destroy(comm);
  MPI_Finalize();
  return status;
}
