/* main.c - pccl-overlap: how much of a non-blocking all-reduce hides behind
 * computation, pccl_iallreduce against MPI_Iallreduce in the same run, both
 * on malloc buffers (float32 sums).
 *
 * Per size: the blocking all-reduce's time (each library's), the
 * non-blocking one issued and waited for at once, a compute loop
 * sized to take as long as MPI's blocking all-reduce, and then each library
 * issuing its all-reduce, computing in `chunks` pieces with a test of the
 * request after each (MPI_Test / pccl_test), and waiting. A library that
 * overlaps fully takes max(compute, all-reduce); one that does not, their
 * sum. "hidden" is the share of the shorter of the two that the overlap
 * saved: (compute + allreduce - overlapped) / min(compute, allreduce), with
 * the library's non-blocking all-reduce issued and waited for at once as
 * the all-reduce.
 * Each figure is the median of `rounds` timings, each the mean of enough
 * repetitions to last about 2 ms, timed by the slowest rank.
 *   pccl-overlap [-b MIN] [-e MAX] [-f FACTOR] [-r ROUNDS] [-k CHUNKS] [--csv FILE] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pccl.h"

static int rank, nranks;

static void die(const char *msg) {
  if (rank == 0) fprintf(stderr, "pccl-overlap: %s\n", msg);
  MPI_Abort(MPI_COMM_WORLD, 2);
}

typedef struct {
  size_t min, max;
  int factor, rounds, chunks;
  const char *csv;
} options_t;

static options_t parse(int argc, char **argv) {
  options_t o = {8, 64u << 20, 4, 9, 16, NULL};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int ok = v != NULL;
    if (!strcmp(a, "-b")) ok = ok && pccl_cli_size(v, &o.min);
    else if (!strcmp(a, "-e")) ok = ok && pccl_cli_size(v, &o.max);
    else if (!strcmp(a, "-f")) ok = ok && pccl_cli_int(v, 2, 1024, &o.factor);
    else if (!strcmp(a, "-r")) ok = ok && pccl_cli_int(v, 1, 1000, &o.rounds);
    else if (!strcmp(a, "-k")) ok = ok && pccl_cli_int(v, 1, 1 << 20, &o.chunks);
    else if (!strcmp(a, "--csv")) o.csv = v;
    else die("usage: pccl-overlap [-b MIN] [-e MAX] [-f FACTOR] [-r ROUNDS] [-k CHUNKS] [--csv FILE]");
    if (!ok) die("an option's value is missing or malformed");
    i++;
  }
  if (o.min < 4 || o.min > o.max) die("need 4 <= MIN <= MAX (bytes of float32)");
  return o;
}

/* The computation: a dependent arithmetic chain on a small private array,
 * `iters` steps; its result is kept so the compiler cannot drop it. */
static volatile float sink;
static void compute(long iters) {
  float x[64];
  for (int i = 0; i < 64; i++) x[i] = (float)i;
  for (long it = 0; it < iters; it++) x[it & 63] = x[it & 63] * 0.999f + 0.5f;
  sink = x[7];
}

/* Steps of compute() per second on this rank, over about 50 ms; the
 * slowest rank's rate, so every rank computes as long. */
static double compute_rate(void) {
  long iters = 1 << 16;
  double t, rate;
  for (;;) {
    t = MPI_Wtime();
    compute(iters);
    t = MPI_Wtime() - t;
    if (t > 0.05) break;
    iters *= 2;
  }
  rate = (double)iters / t;
  MPI_Allreduce(MPI_IN_PLACE, &rate, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  return rate;
}

typedef enum {
  MPI_BLOCKING, PCCL_BLOCKING, MPI_NB, PCCL_NB, COMPUTE, MPI_OVERLAP, PCCL_OVERLAP, NKINDS
} kind_t;

typedef struct {
  float *send, *recv;
  size_t n;
  long iters; /* compute()'s steps in all */
  int chunks;
  int reps; /* repetitions per timing, so that one lasts a few milliseconds */
  pccl_comm_t *comm;
} point_t;

static void check_pccl(pccl_status_t st, const point_t *p) {
  if (st != PCCL_OK) {
    fprintf(stderr, "pccl-overlap: rank %d: %s\n", rank, pccl_last_error(p->comm));
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
}

/* One repetition of `kind`. */
static void once(kind_t kind, const point_t *p) {
  long piece = p->iters / p->chunks;
  MPI_Request mreq;
  pccl_request_t *preq;
  int done;
  switch (kind) {
    case MPI_BLOCKING:
      MPI_Allreduce(p->send, p->recv, (int)p->n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      break;
    case PCCL_BLOCKING:
      check_pccl(pccl_allreduce(p->send, p->recv, p->n, PCCL_FLOAT32, PCCL_SUM, p->comm), p);
      break;
    case MPI_NB: /* issued and waited for at once: the non-blocking path's own cost */
      MPI_Iallreduce(p->send, p->recv, (int)p->n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &mreq);
      MPI_Wait(&mreq, MPI_STATUS_IGNORE);
      break;
    case PCCL_NB:
      check_pccl(pccl_iallreduce(p->send, p->recv, p->n, PCCL_FLOAT32, PCCL_SUM, p->comm, &preq), p);
      check_pccl(pccl_wait(&preq), p);
      break;
    case COMPUTE:
      for (int c = 0; c < p->chunks; c++) compute(piece);
      break;
    case MPI_OVERLAP:
      MPI_Iallreduce(p->send, p->recv, (int)p->n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &mreq);
      for (int c = 0; c < p->chunks; c++) {
        compute(piece);
        MPI_Test(&mreq, &done, MPI_STATUS_IGNORE);
      }
      MPI_Wait(&mreq, MPI_STATUS_IGNORE);
      break;
    case PCCL_OVERLAP:
      check_pccl(pccl_iallreduce(p->send, p->recv, p->n, PCCL_FLOAT32, PCCL_SUM, p->comm, &preq), p);
      for (int c = 0; c < p->chunks; c++) {
        compute(piece);
        check_pccl(pccl_test(&preq, &done), p);
      }
      check_pccl(pccl_wait(&preq), p);
      break;
    default:
      break;
  }
}

/* p->reps repetitions of `kind`: the time of one on this rank. */
static double timed(kind_t kind, const point_t *p) {
  double t = MPI_Wtime();
  for (int i = 0; i < p->reps; i++) once(kind, p);
  return (MPI_Wtime() - t) / p->reps;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median over rounds of the slowest rank's time; the kinds alternate
 * within each round so drifts of the machine touch them alike. */
static void measure(const point_t *p, int rounds, double out[NKINDS]) {
  double *t = malloc(sizeof(double) * (size_t)rounds * NKINDS);
  if (!t) die("out of memory");
  for (int k = 0; k < NKINDS; k++) once((kind_t)k, p); /* warm-up */
  for (int r = 0; r < rounds; r++)
    for (int k = 0; k < NKINDS; k++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double mine = timed((kind_t)k, p);
      MPI_Allreduce(&mine, &t[k * rounds + r], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
  for (int k = 0; k < NKINDS; k++) {
    qsort(&t[k * rounds], (size_t)rounds, sizeof(double), by_value);
    out[k] = t[k * rounds + rounds / 2];
  }
  free(t);
}

/* The share of the shorter of compute and all-reduce that overlapping hid. */
static double hidden(double compute_s, double coll_s, double overlapped_s) {
  double shorter = compute_s < coll_s ? compute_s : coll_s;
  return shorter > 0 ? (compute_s + coll_s - overlapped_s) / shorter : 0.0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  options_t o = parse(argc, argv);
  point_t p = {0};
  if (pccl_comm_create_world(&p.comm) != PCCL_OK) die("cannot create the pccl communicator");
  double rate = compute_rate();
  FILE *csv = NULL;
  if (rank == 0 && o.csv && !(csv = fopen(o.csv, "w"))) die("cannot open the CSV file");
  if (csv)
    fprintf(csv, "bytes,ranks,mpi_us,pccl_us,mpi_iwait_us,pccl_iwait_us,compute_us,"
                 "mpi_overlap_us,pccl_overlap_us,mpi_hidden,pccl_hidden,speedup\n");
  if (rank == 0)
    printf("# pccl-overlap: %d ranks, float32 sum, malloc buffers, %d chunks, median of %d\n"
           "# %10s %9s %9s %9s %9s %10s %11s %11s %7s %7s %7s\n",
           nranks, o.chunks, o.rounds, "bytes", "mpi_us", "pccl_us", "mpi_iw", "pccl_iw",
           "compute_us", "mpi_ovl_us", "pccl_ovl_us", "mpi_hid", "pccl_hid", "speedup");
  for (size_t bytes = o.min; bytes <= o.max; bytes *= (size_t)o.factor) {
    p.n = bytes / sizeof(float);
    p.send = malloc(p.n * sizeof(float));
    p.recv = malloc(p.n * sizeof(float));
    if (!p.send || !p.recv) die("out of memory");
    for (size_t i = 0; i < p.n; i++) p.send[i] = (float)(rank + 1);
    p.chunks = o.chunks;
    /* the compute matches MPI's blocking all-reduce at this size */
    p.iters = 0;
    p.reps = 1;
    double t[NKINDS];
    measure(&p, o.rounds < 3 ? o.rounds : 3, t);
    p.iters = (long)(t[MPI_BLOCKING] * rate);
    p.reps = t[MPI_BLOCKING] > 0.002 ? 1 : t[MPI_BLOCKING] < 2e-6 ? 1000 : (int)(0.002 / t[MPI_BLOCKING]);
    if (p.iters < p.chunks) p.iters = p.chunks;
    measure(&p, o.rounds, t);
    double mh = hidden(t[COMPUTE], t[MPI_NB], t[MPI_OVERLAP]);
    double ph = hidden(t[COMPUTE], t[PCCL_NB], t[PCCL_OVERLAP]);
    double speedup = t[MPI_OVERLAP] / t[PCCL_OVERLAP];
    if (rank == 0) {
      printf("  %10zu %9.2f %9.2f %9.2f %9.2f %10.2f %11.2f %11.2f %7.2f %7.2f %7.2f\n", bytes,
             t[MPI_BLOCKING] * 1e6, t[PCCL_BLOCKING] * 1e6, t[MPI_NB] * 1e6, t[PCCL_NB] * 1e6,
             t[COMPUTE] * 1e6, t[MPI_OVERLAP] * 1e6, t[PCCL_OVERLAP] * 1e6, mh, ph, speedup);
      if (csv)
        fprintf(csv, "%zu,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\n", bytes, nranks,
                t[MPI_BLOCKING] * 1e6, t[PCCL_BLOCKING] * 1e6, t[MPI_NB] * 1e6, t[PCCL_NB] * 1e6,
                t[COMPUTE] * 1e6, t[MPI_OVERLAP] * 1e6, t[PCCL_OVERLAP] * 1e6, mh, ph, speedup);
    }
    /* the sums are checked once per size: nranks (nranks + 1) / 2 */
    float want = (float)(nranks * (nranks + 1) / 2);
    for (size_t i = 0; i < p.n; i++)
      if (p.recv[i] != want) die("wrong all-reduce result");
    free(p.send);
    free(p.recv);
  }
  if (csv) fclose(csv);
  pccl_comm_destroy(p.comm);
  MPI_Finalize();
  return 0;
}
