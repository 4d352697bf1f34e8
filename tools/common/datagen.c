/* datagen.c - generated datasets for the codec; see datagen.h. */
#include "datagen.h"

#include <math.h>

const char *pccl_data_name(pccl_data_kind_t kind) {
  static const char *const names[PCCL_DATA_COUNT] = {"smooth",   "wavefield", "noisy", "constant",
                                                     "denormal", "nonfinite", "large"};
  return (unsigned)kind < PCCL_DATA_COUNT ? names[kind] : "unknown";
}

/* splitmix64: a small generator whose stream is the same everywhere. */
static uint64_t next(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static double uniform(uint64_t *s) { return (double)(next(s) >> 11) * 0x1p-53; } /* [0, 1) */

typedef struct {
  double cx, cy, cz, width, amp;
} blob_t;

#define NBLOBS 6

static void make_blobs(blob_t *b, uint64_t *s) {
  for (int i = 0; i < NBLOBS; i++)
    b[i] = (blob_t){uniform(s), uniform(s), uniform(s), 0.05 + 0.2 * uniform(s), uniform(s) * 2 - 1};
}

static double smooth_at(const blob_t *b, double x, double y, double z) {
  double v = 0.3 * sin(6.1 * x + 2.3 * y) * cos(4.7 * z + 1.1 * y);
  for (int i = 0; i < NBLOBS; i++) {
    double dx = x - b[i].cx, dy = y - b[i].cy, dz = z - b[i].cz;
    v += b[i].amp * exp(-(dx * dx + dy * dy + dz * dz) / (2 * b[i].width * b[i].width));
  }
  return v;
}

/* Ricker-like shells around two sources; zero outside the fronts. */
static double wave_at(const blob_t *b, double x, double y, double z) {
  double v = 0;
  for (int i = 0; i < 2; i++) {
    double r = sqrt((x - b[i].cx) * (x - b[i].cx) + (y - b[i].cy) * (y - b[i].cy) +
                    (z - b[i].cz) * (z - b[i].cz));
    double front = 0.25 + 0.2 * i, d = (r - front) / 0.03;
    if (r < front + 0.1) v += (1 - 2 * d * d) * exp(-d * d) / (1 + 4 * r) * (r < front ? exp(-(front - r) * 8) : 1);
  }
  return fabs(v) < 1e-7 ? 0.0 : v;
}

void pccl_data_fill(pccl_data_kind_t kind, double *out, size_t nx, size_t ny, size_t nz,
                    double bound, uint64_t seed) {
  uint64_t s = seed * 0x2545F4914F6CDD1Dull + 1;
  blob_t blobs[NBLOBS];
  make_blobs(blobs, &s);
  size_t n = nx * ny * nz;
  for (size_t k = 0, i = 0; k < nz; k++)
    for (size_t j = 0; j < ny; j++)
      for (size_t l = 0; l < nx; l++, i++) {
        double x = (double)l / (double)nx, y = (double)j / (double)ny, z = (double)k / (double)nz;
        switch (kind) {
        case PCCL_DATA_WAVEFIELD: out[i] = wave_at(blobs, x, y, z); break;
        case PCCL_DATA_NOISY: out[i] = smooth_at(blobs, x, y, z) + 0.2 * (uniform(&s) - 0.5); break;
        case PCCL_DATA_CONSTANT: out[i] = 3.25; break;
        case PCCL_DATA_DENORMAL:
          out[i] = uniform(&s) < 0.2 ? 0.0 : (uniform(&s) - 0.5) * 0x1p-126; /* float32 subnormal */
          break;
        case PCCL_DATA_LARGE: {
          double limit = 0x1p30 * 2 * bound;
          out[i] = (uniform(&s) < 0.5 ? -1 : 1) * limit * (0.999 + 0.002 * uniform(&s));
          break;
        }
        default: out[i] = smooth_at(blobs, x, y, z); break;
        }
      }
  if (kind == PCCL_DATA_NONFINITE)
    for (size_t c = 0; c < n / 97 + 1 && n > 0; c++) {
      static const double specials[3] = {NAN, INFINITY, -INFINITY};
      out[next(&s) % n] = specials[c % 3];
    }
}

void pccl_data_range(const double *x, size_t n, double *lo, double *hi) {
  double a = INFINITY, b = -INFINITY;
  for (size_t i = 0; i < n; i++)
    if (isfinite(x[i])) {
      a = x[i] < a ? x[i] : a;
      b = x[i] > b ? x[i] : b;
    }
  *lo = a <= b ? a : 0;
  *hi = a <= b ? b : 0;
}

double pccl_data_fill_rel(pccl_data_kind_t kind, double *out, size_t nx, size_t ny, size_t nz,
                          double rel, uint64_t seed) {
  double lo, hi, bound = rel;
  pccl_data_fill(kind, out, nx, ny, nz, bound, seed);
  pccl_data_range(out, nx * ny * nz, &lo, &hi);
  if (hi > lo) bound = rel * (hi - lo);
  if (kind == PCCL_DATA_LARGE) pccl_data_fill(kind, out, nx, ny, nz, bound, seed);
  return bound;
}
