/* main.c - pccl-zbench: compressed collectives against the plain ones and
 * Open MPI's own, on generated smooth fields (tools/common/datagen.c), timed
 * in the same run and interleaved round by round (median of the rounds; each
 * round's time is the slowest rank's). Every result is checked: the lossy
 * ones against the exact answer (computed in double through MPI, not pccl)
 * with the error printed beside the bound, the plain ones for equality with
 * MPI's up to float rounding.
 *
 *   pccl-zbench [-c allreduce,scatter] [-n EDGE] [-r REL] [--rounds R]
 *               [-a PLAIN-ALGOS] [--csv FILE]
 *
 * All-reduce: each rank holds an EDGE^3 float32 field (its own seed); the
 * bound is REL x the value range of the exact sum. Scatter: the root holds
 * one EDGE^3 field, EDGE^3 / p elements per rank; bound REL x its range.
 * PLAIN-ALGOS (default ring,rabenseifner,hier_ring,hier_rec; hierarchical
 * ones only across nodes) are the uncompressed candidates; the best of them
 * and of pccl's automatic choice is the "uncompressed best". The lossy rows
 * are the lossy call's automatic choice (plain on one node) and each
 * compressed algorithm forced. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "cli.h"
#include "datagen.h"
#include "pccl.h"

#define MAX_VARIANTS 16
#define MAX_ROUNDS 25

typedef enum { V_MPI, V_PLAIN, V_LOSSY } kind_t;

typedef struct {
  kind_t kind;
  char algo[32]; /* pccl's algorithm; "auto" lets pccl choose */
  double t[MAX_ROUNDS];
  double err, guaranteed;
  int stages;
  char ran[64];
} variant_t;

typedef struct {
  int edge, rounds, do_allreduce, do_scatter;
  double rel;
  char plain[256];
  const char *csv;
} opts_t;

static int rank, nranks;

static void usage_exit(const char *why) {
  if (rank == 0)
    fprintf(stderr, "pccl-zbench: %s\nusage: pccl-zbench [-c allreduce,scatter] [-n EDGE] [-r REL] "
                    "[--rounds R] [-a PLAIN-ALGOS] [--csv FILE]\n", why);
  MPI_Finalize();
  exit(2);
}

static opts_t parse(int argc, char **argv) {
  opts_t o = {256, 5, 1, 1, 1e-4, "ring,rabenseifner,hier_ring,hier_rec", NULL};
  for (int i = 1; i < argc; i++) {
    const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) usage_exit("missing value");
    char *end;
    if (!strcmp(f, "-c")) {
      o.do_allreduce = strstr(v, "allreduce") != NULL;
      o.do_scatter = strstr(v, "scatter") != NULL;
      if (!o.do_allreduce && !o.do_scatter) usage_exit("-c takes allreduce and/or scatter");
    } else if (!strcmp(f, "-n")) {
      if (!pccl_cli_int(v, 8, 1024, &o.edge)) usage_exit("-n takes an edge in 8..1024");
    } else if (!strcmp(f, "--rounds")) {
      if (!pccl_cli_int(v, 1, MAX_ROUNDS, &o.rounds)) usage_exit("--rounds takes 1..25");
    } else if (!strcmp(f, "-r")) {
      o.rel = strtod(v, &end);
      if (*end || !(o.rel > 0 && o.rel < 1)) usage_exit("-r takes a relative bound in (0, 1)");
    } else if (!strcmp(f, "-a")) {
      if (strlen(v) >= sizeof o.plain) usage_exit("-a list too long");
      strcpy(o.plain, v);
    } else if (!strcmp(f, "--csv")) {
      o.csv = v;
    } else {
      usage_exit("unknown option");
    }
    i++;
  }
  return o;
}

static void check(pccl_status_t st, pccl_comm_t *comm, const char *what) {
  if (st == PCCL_OK) return;
  fprintf(stderr, "pccl-zbench: rank %d: %s: %s (%s)\n", rank, what, pccl_status_string(st),
          pccl_last_error(comm));
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Field of one seed as float32, and its double copy for references. */
static void field(int edge, uint64_t seed, float *out, double *work) {
  size_t n = (size_t)edge * edge * edge;
  pccl_data_fill(PCCL_DATA_SMOOTH, work, edge, edge, edge, 0, seed);
  for (size_t i = 0; i < n; i++) out[i] = (float)work[i];
}

static double max_err(const float *got, const double *exact, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; i++) {
    double d = fabs((double)got[i] - exact[i]);
    m = d > m || d != d ? d : m;
  }
  double all;
  MPI_Allreduce(&m, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return all;
}

static int add_plain(variant_t *v, int n, const char *list, int multi_node) {
  char copy[256];
  strcpy(copy, list);
  v[n++] = (variant_t){.kind = V_PLAIN, .algo = "auto"};
  for (char *save, *a = strtok_r(copy, ",", &save); a && n < MAX_VARIANTS - 3; a = strtok_r(NULL, ",", &save)) {
    if (!multi_node && !strncmp(a, "hier", 4)) continue;
    v[n] = (variant_t){.kind = V_PLAIN};
    snprintf(v[n++].algo, sizeof v[0].algo, "%s", a);
  }
  return n;
}

static double median(double *t, int n) {
  double s[MAX_ROUNDS];
  memcpy(s, t, (size_t)n * sizeof *s);
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && s[j] < s[j - 1]; j--) {
      double x = s[j];
      s[j] = s[j - 1], s[j - 1] = x;
    }
  return s[n / 2];
}

typedef struct {
  pccl_coll_t coll;
  const float *in;
  float *out;
  size_t count, out_count;
  double bound;
  const double *exact; /* this rank's exact output */
} job_t;

/* One call of variant v; returns the slowest rank's seconds. */
static double run_once(pccl_comm_t *comm, variant_t *v, const job_t *j, int check_result) {
  int all = j->coll == PCCL_COLL_ALLREDUCE;
  if (v->kind != V_MPI)
    check(pccl_comm_set_algo(comm, j->coll, strcmp(v->algo, "auto") ? v->algo : NULL), comm, v->algo);
  pccl_lossy_t l = PCCL_LOSSY_INIT(j->bound);
  MPI_Barrier(MPI_COMM_WORLD);
  double t = MPI_Wtime();
  if (v->kind == V_MPI && all)
    MPI_Allreduce(j->in, j->out, (int)j->count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  else if (v->kind == V_MPI)
    MPI_Scatter(j->in, (int)j->out_count, MPI_FLOAT, j->out, (int)j->out_count, MPI_FLOAT, 0, MPI_COMM_WORLD);
  else if (v->kind == V_PLAIN && all)
    check(pccl_allreduce(j->in, j->out, j->count, PCCL_FLOAT32, PCCL_SUM, comm), comm, v->algo);
  else if (v->kind == V_PLAIN)
    check(pccl_scatter(j->in, j->out, j->out_count, PCCL_FLOAT32, 0, comm), comm, v->algo);
  else if (all)
    check(pccl_allreduce_lossy(j->in, j->out, j->count, PCCL_FLOAT32, PCCL_SUM, &l, comm), comm, v->algo);
  else
    check(pccl_scatter_lossy(j->in, j->out, j->out_count, PCCL_FLOAT32, 0, &l, comm), comm, v->algo);
  t = MPI_Wtime() - t;
  double slowest;
  MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (check_result) {
    v->err = max_err(j->out, j->exact, j->out_count);
    v->stages = l.stages;
    v->guaranteed = l.guaranteed;
    snprintf(v->ran, sizeof v->ran, "%s%s", strcmp(v->algo, "auto") ? "" : "auto:",
             v->kind == V_MPI ? "MPI" : pccl_comm_last_algo(comm));
  }
  return slowest;
}

static void report(FILE *csv, const char *coll, variant_t *v, int n, const opts_t *o,
                   const job_t *j) {
  double mpi = 0, plain_best = INFINITY;
  for (int i = 0; i < n; i++) {
    double m = median(v[i].t, o->rounds);
    if (v[i].kind == V_MPI) mpi = m;
    if (v[i].kind == V_PLAIN && m < plain_best) plain_best = m;
  }
  if (rank != 0) return;
  printf("\n# %s of a smooth %d^3 float32 field (%.1f MiB per rank in, %zu elements out), %d ranks, "
         "bound %.3g (%.0e x range), median of %d rounds\n",
         coll, o->edge, (double)j->count * 4 / (1 << 20), j->out_count, nranks, j->bound, o->rel,
         o->rounds);
  printf("%-8s %-14s %10s %9s %9s %11s %11s %6s %s\n", "kind", "algorithm", "time_ms", "vs_MPI",
         "vs_plain", "max_err", "guaranteed", "stages", "bound");
  for (int i = 0; i < n; i++) {
    double m = median(v[i].t, o->rounds);
    const char *kind = v[i].kind == V_MPI ? "mpi" : v[i].kind == V_PLAIN ? "plain" : "lossy";
    const char *ok = v[i].kind != V_LOSSY ? "-" : v[i].err <= j->bound ? "held" : "VIOLATED";
    printf("%-8s %-14s %10.2f %8.2fx %8.2fx %11.3g %11.3g %6d %s\n", kind, v[i].ran, m * 1e3, mpi / m,
           plain_best / m, v[i].err, v[i].guaranteed, v[i].stages, ok);
    if (csv)
      fprintf(csv, "%s,%d,%s,%s,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e,%d,%s\n", coll, nranks, kind, v[i].ran,
              m, mpi / m, plain_best / m, v[i].err, v[i].guaranteed, j->bound, v[i].stages, ok);
  }
  fflush(stdout);
}

static void bench(pccl_comm_t *comm, const opts_t *o, FILE *csv, job_t *j, int multi_node) {
  variant_t v[MAX_VARIANTS];
  int n = 0;
  v[n++] = (variant_t){.kind = V_MPI, .algo = "MPI"};
  n = add_plain(v, n, j->coll == PCCL_COLL_ALLREDUCE ? o->plain : "", multi_node);
  v[n++] = (variant_t){.kind = V_LOSSY, .algo = "auto"}; /* what a lossy call picks */
  if (j->coll == PCCL_COLL_ALLREDUCE) {
    v[n++] = (variant_t){.kind = V_LOSSY, .algo = "zring"};
    v[n++] = (variant_t){.kind = V_LOSSY, .algo = "zrecdbl"};
  } else {
    v[n++] = (variant_t){.kind = V_LOSSY, .algo = "zbinomial"};
  }
  for (int i = 0; i < n; i++) run_once(comm, &v[i], j, 1); /* warm-up, checked */
  for (int r = 0; r < o->rounds; r++)
    for (int i = 0; i < n; i++) {
      int at = (i + r) % n; /* rotate who goes first */
      v[at].t[r] = run_once(comm, &v[at], j, 0);
    }
  report(csv, pccl_coll_name(j->coll), v, n, o, j);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  opts_t o = parse(argc, argv);
  pccl_comm_t *comm;
  check(pccl_comm_create_world(&comm), NULL, "pccl_comm_create_world");
  int nnodes;
  pccl_comm_nnodes(comm, &nnodes);
  size_t n = (size_t)o.edge * o.edge * o.edge;
  float *in = malloc(n * sizeof(float)), *out = malloc(n * sizeof(float));
  double *work = malloc(n * sizeof(double)), *exact = malloc(n * sizeof(double));
  if (!in || !out || !work || !exact) check(PCCL_ERR_NO_MEMORY, comm, "buffers");
  FILE *csv = NULL;
  if (o.csv && rank == 0 && !(csv = fopen(o.csv, "w"))) usage_exit("cannot open the CSV file");
  if (csv) fprintf(csv, "coll,nranks,kind,algorithm,seconds,vs_mpi,vs_plain_best,max_err,guaranteed,bound,stages,bound_held\n");
  if (o.do_allreduce) {
    field(o.edge, (uint64_t)rank + 1, in, work);
    for (size_t i = 0; i < n; i++) work[i] = in[i]; /* the float inputs, exactly */
    MPI_Allreduce(work, exact, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double lo, hi;
    pccl_data_range(exact, n, &lo, &hi);
    job_t j = {PCCL_COLL_ALLREDUCE, in, out, n, n, o.rel * (hi - lo), exact};
    bench(comm, &o, csv, &j, nnodes > 1);
  }
  if (o.do_scatter) {
    size_t per = n / (size_t)nranks;
    field(o.edge, 1000, in, work); /* the same field on every rank; the root's is sent */
    double lo, hi;
    pccl_data_range(work, n, &lo, &hi);
    for (size_t i = 0; i < per; i++) exact[i] = in[(size_t)rank * per + i];
    job_t j = {PCCL_COLL_SCATTER, in, out, per, per, o.rel * (hi - lo), exact};
    bench(comm, &o, csv, &j, 0);
  }
  if (csv) fclose(csv);
  free(in), free(out), free(work), free(exact);
  pccl_comm_destroy(comm);
  MPI_Finalize();
  return 0;
}
