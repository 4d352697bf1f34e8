/* datagen.h - test data for the codec, generated here (no downloads):
 * the datasets the compression tests, pccl-codec-bench and the examples
 * share. Deterministic for a given seed on every machine. */
#ifndef PCCL_TOOLS_DATAGEN_H
#define PCCL_TOOLS_DATAGEN_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
  PCCL_DATA_SMOOTH = 0,    /* 3-D field: Gaussians and waves, like a seismic snapshot */
  PCCL_DATA_WAVEFIELD = 1, /* spherical wavefronts, exactly zero where no wave has arrived */
  PCCL_DATA_NOISY = 2,     /* smooth field plus uniform noise at 10% of its range */
  PCCL_DATA_CONSTANT = 3,  /* one value everywhere */
  PCCL_DATA_DENORMAL = 4,  /* float32 subnormals, signed, and zeros */
  PCCL_DATA_NONFINITE = 5, /* smooth field with NaN, +Inf and -Inf scattered in */
  PCCL_DATA_LARGE = 6,     /* magnitudes around the codec's quantization limit for bound */
  PCCL_DATA_COUNT
} pccl_data_kind_t;

const char *pccl_data_name(pccl_data_kind_t kind);

/* Fills out[nx*ny*nz] (x fastest). `bound` matters only for
 * PCCL_DATA_LARGE: values spread around 2^30 x 2 x bound, the largest
 * magnitude the codec quantizes, on both sides of it. */
void pccl_data_fill(pccl_data_kind_t kind, double *out, size_t nx, size_t ny, size_t nz,
                    double bound, uint64_t seed);

/* Smallest and largest finite value of x[0..n); both 0 when none. */
void pccl_data_range(const double *x, size_t n, double *lo, double *hi);

/* Fills like pccl_data_fill for a bound of `rel` times the data's finite
 * range (rel itself when the range is empty) and returns that bound; the
 * PCCL_DATA_LARGE field is made for the bound it returns. */
double pccl_data_fill_rel(pccl_data_kind_t kind, double *out, size_t nx, size_t ny, size_t nz,
                          double rel, uint64_t seed);

#endif
