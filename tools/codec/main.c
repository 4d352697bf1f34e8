/* main.c - pccl-codec-bench: pccl's error-bounded codecs (szp, szi) against
 * ZFP's fixed-accuracy mode on a generated 3-D field, one thread, same data
 * and same run. For each relative bound (x the field's value range) it
 * measures szp and zfp-1d through pccl_compress, szi through
 * pccl_compress_3d with the field's shape, zfp-3d through libzfp on the 3-D
 * field at the same tolerance, and zfp-3d-matched: ZFP 3-D at the largest
 * tolerance whose max error exceeds neither szp's nor szi's measured one,
 * since ZFP typically lands well under its tolerance. Prints a table (and
 * CSV) of ratio, throughput and error per row, and each pccl codec's
 * standing per bound. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define MAX_ROWS 5

/* ---- the field ------------------------------------------------------------ */

/* Generates the dataset as o->dtype; the caller frees orig. */
static int make_field(const bench_options_t *o, bench_field_t *f) {
  size_t n = (size_t)o->edge;
  *f = (bench_field_t){.nx = n, .ny = n, .nz = n, .count = n * n * n, .dtype = o->dtype,
                       .esize = pccl_dtype_size(o->dtype), .finite = 1};
  double *values = malloc(f->count * sizeof(double));
  if (values == NULL) return 0;
  pccl_data_fill(o->dataset, values, n, n, n, o->rel[0], 1);
  pccl_data_range(values, f->count, &f->lo, &f->hi);
  for (size_t i = 0; i < f->count; i++) f->finite &= isfinite(values[i]) != 0;
  if (o->dtype == PCCL_FLOAT64) {
    f->orig = values;
    return 1;
  }
  float *narrow = malloc(f->count * sizeof(float));
  for (size_t i = 0; narrow && i < f->count; i++) narrow[i] = (float)values[i];
  free(values);
  f->orig = narrow;
  return narrow != NULL;
}

static const bench_codec_t *const codecs[] = {&bench_szp, &bench_szi, &bench_zfp1d, &bench_zfp3d};
#define OWN 2 /* codecs[0 .. OWN) are pccl's */
#define NCODECS (sizeof codecs / sizeof codecs[0])

/* One output buffer for every codec, sized for the largest of them. */
static int make_buffers(bench_field_t *f) {
  for (size_t i = 0; i < NCODECS; i++) {
    if (!codecs[i]->available(codecs[i])) continue;
    size_t cap = codecs[i]->capacity(codecs[i], f);
    if (cap == 0) return 0;
    f->cap = cap > f->cap ? cap : f->cap;
  }
  f->comp = malloc(f->cap);
  f->dec = malloc(f->count * f->esize);
  return f->comp && f->dec;
}

/* ---- one bound -------------------------------------------------------------- */

typedef struct {
  const bench_options_t *o;
  bench_field_t *f;
  FILE *csv;
  int failed;
} run_t;

/* Measures c at tol into rows[*nrows]; a row that cannot run is a note. */
static void add_row(run_t *run, const bench_codec_t *c, const char *label, double rel,
                    double bound, double tol, bench_row_t *rows, int *nrows) {
  char err[BENCH_ERR_LEN] = "";
  bench_row_t *row = &rows[*nrows];
  *row = (bench_row_t){.label = label, .rel = rel, .bound = bound};
  bench_status_t st = bench_measure(c, run->f, tol, run->o->rounds, row, err);
  if (st != BENCH_OK) {
    printf("# %s at %.1e: %s: %s\n", label, rel, st == BENCH_SKIP ? "skipped" : "FAILED", err);
    run->failed |= st == BENCH_FAIL;
    return;
  }
  bench_print_row(row, run->f);
  if (run->csv) bench_csv_row(run->csv, run->o, run->f, row);
  run->failed |= !(row->acc.max_error <= bound);
  ++*nrows;
}

/* zfp-3d at the tolerance that meets the smallest max error of pccl's
 * codecs (rows[0 .. own)). */
static void add_matched_row(run_t *run, double rel, double bound, bench_row_t *rows, int own,
                            int *nrows) {
  char err[BENCH_ERR_LEN] = "";
  double tol = 0, target = rows[0].acc.max_error;
  int used = 0;
  for (int i = 1; i < own; i++) target = rows[i].acc.max_error < target ? rows[i].acc.max_error : target;
  bench_status_t st = bench_match(&bench_zfp3d, run->f, bench_zfp_tolerance(bound), target,
                                  run->o->match_trials, &tol, &used, err);
  if (st != BENCH_OK) {
    printf("# zfp-3d-matched at %.1e: %s: %s\n", rel, st == BENCH_SKIP ? "skipped" : "FAILED", err);
    run->failed |= st == BENCH_FAIL;
    return;
  }
  add_row(run, &bench_zfp3d, "zfp-3d-matched", rel, bound, tol, rows, nrows);
}

static void run_bound(run_t *run, double rel) {
  double range = run->f->hi - run->f->lo;
  double bound = rel * (range > 0 ? range : 1.0);
  bench_row_t rows[MAX_ROWS];
  int nrows = 0;
  for (size_t i = 0; i < OWN; i++) add_row(run, codecs[i], codecs[i]->name, rel, bound, bound, rows, &nrows);
  if (nrows < OWN) return; /* nothing to compare */
  for (size_t i = OWN; i < NCODECS; i++)
    if (codecs[i]->available(codecs[i]))
      add_row(run, codecs[i], codecs[i]->name, rel, bound, bound, rows, &nrows);
  if (run->o->match_trials > 0 && bench_zfp3d.available(&bench_zfp3d))
    add_matched_row(run, rel, bound, rows, OWN, &nrows);
  bench_print_summary(rows, OWN, nrows);
}

/* ---- main ----------------------------------------------------------------------- */

static int run_all(const bench_options_t *o, bench_field_t *f, FILE *csv) {
  run_t run = {o, f, csv, 0};
  int zfp = bench_zfp3d.available(&bench_zfp3d);
  bench_print_header(o, f, zfp);
  if (!(f->hi > f->lo)) printf("# the value range is 0: bounds are relative to 1 instead\n");
  if (!f->finite) printf("# the field holds NaN or Inf: ZFP takes finite values only\n");
  bench_print_columns();
  if (csv) bench_csv_header(csv);
  for (int i = 0; i < o->nrel; i++) run_bound(&run, o->rel[i]);
  return run.failed;
}

int main(int argc, char **argv) {
  bench_options_t o;
  char err[BENCH_ERR_LEN] = "";
  int parsed = bench_parse_args(argc, argv, &o, err);
  if (parsed == 0) {
    bench_usage(stdout);
    return 0;
  }
  if (parsed < 0) {
    fprintf(stderr, "pccl-codec-bench: %s\n", err);
    return 2;
  }
  FILE *csv = NULL;
  if (o.csv_path && !(csv = fopen(o.csv_path, "w"))) {
    fprintf(stderr, "pccl-codec-bench: cannot open %s: %s\n", o.csv_path, strerror(errno));
    return 2;
  }
  bench_field_t f;
  int failed = 1;
  if (!make_field(&o, &f) || !make_buffers(&f))
    fprintf(stderr, "pccl-codec-bench: out of memory for a %d^3 field\n", o.edge);
  else
    failed = run_all(&o, &f, csv);
  free((void *)f.orig);
  free(f.comp);
  free(f.dec);
  if (csv && fclose(csv) != 0) {
    fprintf(stderr, "pccl-codec-bench: error writing %s\n", o.csv_path);
    failed = 1;
  }
  return failed ? 1 : 0;
}
