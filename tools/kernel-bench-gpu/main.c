/* pccl-kernel-bench-gpu - the device reduction kernel against the device's
 * own copy bandwidth, measured in the same run: sum of two buffers of
 * MIB MiB (default 256) for float32 and bfloat16 (and any datatype named),
 * timed with CUDA events, best of ROUNDS. A reduction moves three buffers'
 * bytes (two read, one written), a device-to-device copy two; the table
 * gives each one's GB/s and the reduction's as a fraction of the copy's.
 *
 *   pccl-kernel-bench-gpu [MIB [ROUNDS [CSV]]]
 *
 * Exits 77 with the reason where there is no device. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpu.h"

static void must(cudaError_t e, const char *what) {
  if (e == cudaSuccess) return;
  fprintf(stderr, "pccl-kernel-bench-gpu: %s: %s\n", what, cudaGetErrorString(e));
  exit(1);
}

static void must_ok(pccl_status_t st, const char *what) {
  if (st == PCCL_OK) return;
  fprintf(stderr, "pccl-kernel-bench-gpu: %s: %s (%s)\n", what, pccl_status_string(st), pccl__gpu_last_error());
  exit(1);
}

/* Seconds of the best of `rounds` runs of one reduction (op >= 0) or copy. */
static double best_time(int op, pccl_dtype_t t, void *dst, const void *a, const void *b, size_t bytes,
                        int rounds) {
  cudaEvent_t start, stop;
  must(cudaEventCreate(&start), "cudaEventCreate");
  must(cudaEventCreate(&stop), "cudaEventCreate");
  double best = 1e30;
  for (int r = 0; r < rounds + 1; r++) { /* the first is a warm-up */
    must(cudaEventRecord(start, NULL), "cudaEventRecord");
    if (op >= 0) must_ok(pccl__gpu_reduce(dst, a, b, bytes / pccl_dtype_size(t), t, (pccl_op_t)op, NULL), "reduce");
    else must(cudaMemcpyAsync(dst, a, bytes, cudaMemcpyDeviceToDevice, NULL), "cudaMemcpyAsync");
    must(cudaEventRecord(stop, NULL), "cudaEventRecord");
    must(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    must(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    if (r > 0 && ms / 1e3 < best) best = ms / 1e3;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return best;
}

int main(int argc, char **argv) {
  size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 256;
  int rounds = argc > 2 ? atoi(argv[2]) : 10;
  const char *csv_path = argc > 3 ? argv[3] : NULL;
  if (mib == 0 || rounds <= 0) {
    fprintf(stderr, "usage: pccl-kernel-bench-gpu [MIB [ROUNDS [CSV]]]\n");
    return 2;
  }
  if (pccl__gpu_devices() <= 0) {
    printf("pccl-kernel-bench-gpu: %s\n", pccl__gpu_why_none());
    return 77;
  }
  size_t bytes = mib << 20;
  void *a = NULL, *b = NULL, *d = NULL;
  must_ok(pccl__gpu_alloc(&a, bytes), "cudaMalloc");
  must_ok(pccl__gpu_alloc(&b, bytes), "cudaMalloc");
  must_ok(pccl__gpu_alloc(&d, bytes), "cudaMalloc");
  must(cudaMemset(a, 0x3c, bytes), "cudaMemset"); /* finite values in every type */
  must(cudaMemset(b, 0x3b, bytes), "cudaMemset");
  struct cudaDeviceProp prop;
  must(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  double copy_s = best_time(-1, PCCL_UINT8, d, a, NULL, bytes, rounds);
  double copy_gbs = 2.0 * (double)bytes / copy_s / 1e9;
  printf("# %s: %zu MiB buffers, best of %d; copy = cudaMemcpy device to device (2 buffers' bytes), "
         "reduce = pccl's kernel (3)\n", prop.name, mib, rounds);
  printf("%-10s %-5s %10s %10s %12s %10s\n", "dtype", "op", "time_us", "GB/s", "copy_GB/s", "of_copy");
  FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
  if (csv) fprintf(csv, "device,dtype,op,bytes,time_us,gbs,copy_gbs,fraction_of_copy\n");
  const pccl_dtype_t types[] = {PCCL_FLOAT32, PCCL_BFLOAT16, PCCL_FLOAT16, PCCL_FLOAT64, PCCL_INT32, PCCL_INT8};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
    double s = best_time(PCCL_SUM, types[i], d, a, b, bytes, rounds);
    double gbs = 3.0 * (double)bytes / s / 1e9;
    printf("%-10s %-5s %10.1f %10.1f %12.1f %9.2f\n", pccl_dtype_name(types[i]), "sum", s * 1e6, gbs,
           copy_gbs, gbs / copy_gbs);
    if (csv)
      fprintf(csv, "%s,%s,sum,%zu,%.1f,%.1f,%.1f,%.3f\n", prop.name, pccl_dtype_name(types[i]), bytes,
              s * 1e6, gbs, copy_gbs, gbs / copy_gbs);
  }
  if (csv) fclose(csv);
  pccl__gpu_free(a), pccl__gpu_free(b), pccl__gpu_free(d);
  return 0;
}
