/* local.c - pccl-profile's rank-local per-byte costs: `copy`, memcpy of
 * 64 MiB, and `gamma`, a float32 sum a[i] = b[i] + c[i] over 64 MiB per
 * input, counted per byte of one input; each the best of several runs after
 * one untimed run. The kernels are called through volatile pointers so that
 * the compiler cannot drop or merge the repeated, unobserved runs. */
#include <stdlib.h>
#include <string.h>

#include "profile_tool.h"

#define LOCAL_BYTES ((size_t)64 << 20)
#define LOCAL_MIN_RUNS 3

static void copy_bytes(void *dst, const void *src, size_t n) { memcpy(dst, src, n); }

static void add_f32(float *restrict a, const float *restrict b, const float *restrict c,
                    size_t n) {
  for (size_t i = 0; i < n; i++) a[i] = b[i] + c[i];
}

static void (*volatile copy_fn)(void *, const void *, size_t) = copy_bytes;
static void (*volatile add_fn)(float *restrict, const float *restrict, const float *restrict,
                               size_t) = add_f32;
static volatile float sink;

static double best_copy(char *dst, const char *src, int runs) {
  double best = 0;
  for (int r = 0; r <= runs; r++) {
    double t0 = MPI_Wtime();
    copy_fn(dst, src, LOCAL_BYTES);
    double t = MPI_Wtime() - t0;
    sink = (float)dst[(size_t)r * 4099 % LOCAL_BYTES];
    if (r == 1 || (r > 1 && t < best)) best = t; /* run 0 is the warm-up */
  }
  return best;
}

static double best_add(float *a, const float *b, const float *c, size_t n, int runs) {
  double best = 0;
  for (int r = 0; r <= runs; r++) {
    double t0 = MPI_Wtime();
    add_fn(a, b, c, n);
    double t = MPI_Wtime() - t0;
    sink = a[(size_t)r * 4099 % n];
    if (r == 1 || (r > 1 && t < best)) best = t;
  }
  return best;
}

int prof_measure_local(int reps, double *copy, double *gamma) {
  int runs = reps < LOCAL_MIN_RUNS ? LOCAL_MIN_RUNS : reps;
  size_t n = LOCAL_BYTES / sizeof(float);
  float *a = malloc(LOCAL_BYTES), *b = malloc(LOCAL_BYTES), *c = malloc(LOCAL_BYTES);
  int st = PROF_EXIT_FAIL;
  if (a && b && c) {
    for (size_t i = 0; i < n; i++) { /* touch every page before timing */
      a[i] = 0;
      b[i] = (float)(i % 1000);
      c[i] = 0.5f;
    }
    *copy = best_copy((char *)a, (const char *)b, runs) / (double)LOCAL_BYTES;
    *gamma = best_add(a, b, c, n, runs) / (double)LOCAL_BYTES;
    st = PROF_EXIT_OK;
  }
  free(a);
  free(b);
  free(c);
  return st;
}
