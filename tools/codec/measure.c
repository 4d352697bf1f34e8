/* measure.c - timing and accuracy of one codec on the field, and the search
 * for the ZFP tolerance that matches szp's achieved max error.
 *
 * Times come from CLOCK_MONOTONIC around each single call; the best of the
 * rounds is kept, after one untimed round trip that faults in the shared
 * output buffers. */
#include <math.h>
#include <time.h>

#include "bench.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static pccl_accuracy_t accuracy_of(const bench_field_t *f) {
  if (f->dtype == PCCL_FLOAT64) return pccl_accuracy_f64(f->orig, f->dec, f->count);
  return pccl_accuracy_f32(f->orig, f->dec, f->count);
}

static bench_status_t round_trip(const bench_codec_t *c, const bench_field_t *f, double tol,
                                 size_t *size, char *err) {
  bench_status_t st = c->compress(c, f, tol, size, err);
  return st == BENCH_OK ? c->decompress(c, f, tol, *size, err) : st;
}

bench_status_t bench_measure(const bench_codec_t *c, const bench_field_t *f, double tol, int rounds,
                             bench_row_t *row, char *err) {
  size_t size = 0;
  bench_status_t st = round_trip(c, f, tol, &size, err);
  double best_compress = INFINITY, best_decompress = INFINITY;
  for (int r = 0; r < rounds && st == BENCH_OK; r++) {
    double t0 = now();
    st = c->compress(c, f, tol, &size, err);
    best_compress = fmin(best_compress, now() - t0);
  }
  for (int r = 0; r < rounds && st == BENCH_OK; r++) {
    double t0 = now();
    st = c->decompress(c, f, tol, size, err);
    best_decompress = fmin(best_decompress, now() - t0);
  }
  if (st != BENCH_OK) return st;
  row->tol = c->tolerance(tol);
  row->bytes = size;
  row->compress_s = best_compress;
  row->decompress_s = best_decompress;
  row->acc = accuracy_of(f);
  return BENCH_OK;
}

/* ---- matching the max error --------------------------------------------------
 * ZFP's fixed-accuracy mode applies a tolerance only through its power of
 * two, so the search runs over exponents: it starts at start's, gallops
 * (1, 2, 4, ... steps) away from it until the target is bracketed, then
 * bisects. A tolerance is good when its max error is at or below target. */

#define MATCH_EXP_MIN -1060
#define MATCH_EXP_MAX 1000

typedef struct {
  int good, bad; /* best good and worst bad exponent so far */
  int have_good, have_bad;
} bracket_t;

/* Next exponent to try; 0 in *done when the bracket is closed. */
static int next_exponent(const bracket_t *b, int step, int *done) {
  *done = 0;
  if (b->have_good && b->have_bad) {
    *done = b->bad - b->good <= 1;
    return b->good + (b->bad - b->good) / 2;
  }
  long e = b->have_good ? (long)b->good + step : (long)b->bad - step;
  *done = e < MATCH_EXP_MIN || e > MATCH_EXP_MAX;
  return (int)e;
}

bench_status_t bench_match(const bench_codec_t *c, const bench_field_t *f, double start,
                           double target, int trials, double *tol, int *used, char *err) {
  int e = 0, done = 0;
  frexp(start, &e);
  e--; /* 2^e <= start */
  bracket_t b = {0, 0, 0, 0};
  *used = 0;
  for (int step = 1; *used < trials && !done; e = next_exponent(&b, step, &done)) {
    size_t size;
    bench_status_t st = round_trip(c, f, ldexp(1.0, e), &size, err);
    if (st != BENCH_OK) return st;
    ++*used;
    int good = accuracy_of(f).max_error <= target;
    if (good && (!b.have_good || e > b.good)) b.good = e, b.have_good = 1;
    if (!good && (!b.have_bad || e < b.bad)) b.bad = e, b.have_bad = 1;
    if (!(b.have_good && b.have_bad)) step = *used == 1 ? 1 : step * 2;
  }
  if (!b.have_good) {
    snprintf(err, BENCH_ERR_LEN, "no tolerance in %d trials kept the max error at or below %.3e",
             *used, target);
    return BENCH_SKIP;
  }
  *tol = ldexp(1.0, b.good);
  return BENCH_OK;
}
