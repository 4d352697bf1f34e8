/* accuracy.h - how far a decoded array lies from its original: maximum
 * absolute error, RMSE, PSNR and NRMSE against the original's value range.
 * Shared by pccl-codec-bench, the codec's tests and the examples.
 *
 * Positions whose original is NaN are skipped. Anywhere else a decoded value
 * that is not the original's NaN/Inf counterpart counts as infinite error:
 * a finite original decoded to NaN or +-Inf, or +-Inf decoded to anything
 * but itself. */
#ifndef PCCL_TOOLS_ACCURACY_H
#define PCCL_TOOLS_ACCURACY_H

#include <stddef.h>

typedef struct {
  double max_error; /* largest |decoded - original| */
  double rmse;      /* root mean square error over the compared positions */
  double range;     /* largest minus smallest finite original value; 0 when none */
  double psnr;      /* dB: 20 log10(range / rmse); +inf when rmse is 0,
                       -inf when range is 0 and rmse is not */
  double nrmse;     /* rmse / range; 0 when rmse is 0, +inf when range is 0 and rmse is not */
  size_t compared;  /* positions whose original is not NaN */
} pccl_accuracy_t;

/* Metrics of decoded[0..n) against original[0..n). */
pccl_accuracy_t pccl_accuracy_f64(const double *original, const double *decoded, size_t n);
pccl_accuracy_t pccl_accuracy_f32(const float *original, const float *decoded, size_t n);

#endif
