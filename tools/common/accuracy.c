/* accuracy.c - error metrics of a decoded array; see accuracy.h. */
#include "accuracy.h"

#include <math.h>

typedef struct {
  double max, sum_sq, lo, hi;
  size_t compared;
} tally_t;

static tally_t tally_start(void) { return (tally_t){0.0, 0.0, INFINITY, -INFINITY, 0}; }

/* Error at one position whose original is not NaN. */
static double error_at(double original, double decoded) {
  if (original == decoded) return 0.0; /* +-Inf decoded as itself too */
  double e = fabs(decoded - original);
  return isnan(e) ? INFINITY : e; /* decoded NaN, or Inf against Inf of the other sign */
}

static inline void tally_add(tally_t *t, double original, double decoded) {
  if (isnan(original)) return;
  double e = error_at(original, decoded);
  t->max = e > t->max ? e : t->max;
  t->sum_sq += e * e;
  t->compared++;
  if (isfinite(original)) {
    t->lo = original < t->lo ? original : t->lo;
    t->hi = original > t->hi ? original : t->hi;
  }
}

static pccl_accuracy_t tally_finish(const tally_t *t) {
  pccl_accuracy_t a = {.max_error = t->max, .compared = t->compared};
  a.range = t->lo <= t->hi ? t->hi - t->lo : 0.0;
  a.rmse = t->compared ? sqrt(t->sum_sq / (double)t->compared) : 0.0;
  if (a.rmse == 0) {
    a.psnr = INFINITY;
    a.nrmse = 0.0;
  } else if (a.range == 0) {
    a.psnr = -INFINITY;
    a.nrmse = INFINITY;
  } else {
    a.nrmse = a.rmse / a.range;
    a.psnr = -20.0 * log10(a.nrmse);
  }
  return a;
}

pccl_accuracy_t pccl_accuracy_f64(const double *original, const double *decoded, size_t n) {
  tally_t t = tally_start();
  for (size_t i = 0; i < n; i++) tally_add(&t, original[i], decoded[i]);
  return tally_finish(&t);
}

pccl_accuracy_t pccl_accuracy_f32(const float *original, const float *decoded, size_t n) {
  tally_t t = tally_start();
  for (size_t i = 0; i < n; i++) tally_add(&t, original[i], decoded[i]);
  return tally_finish(&t);
}
