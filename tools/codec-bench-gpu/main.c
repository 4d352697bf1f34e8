/* pccl-codec-bench-gpu - throughput of the GPU szp codec (src/cuda/szp_gpu.h)
 * on a generated smooth 3-D float32 field (tools/common/datagen.c), timed
 * with CUDA events around each call, best of N rounds after a warm-up.
 * Prints a table and writes it as CSV.
 *
 * usage: pccl-codec-bench-gpu [MIB [ROUNDS [CSV]]]   (defaults 256 5 codec-bench-gpu.csv)
 * exit status: 0 done, 1 a call failed or missed its bound, 77 no CUDA device. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "datagen.h"
#include "pccl.h"
#include "szp_gpu.h"

/* Best time in ms of `rounds` calls of compress (dir 0) or decompress. */
static float best_ms(int dir, int rounds, const void *src, size_t n, double bound, void *stream_buf,
                     size_t cap, size_t *size, void *out, pccl_cuda_szp_ws_t *ws, int *bad) {
  cudaEvent_t a, b;
  float best = INFINITY;
  cudaEventCreate(&a), cudaEventCreate(&b);
  for (int r = 0; r <= rounds; r++) { /* round 0 warms up */
    cudaEventRecord(a, NULL);
    pccl_status_t st = dir == 0 ? pccl_cuda_szp_compress(src, n, PCCL_FLOAT32, bound, stream_buf, cap,
                                                        size, ws, NULL)
                                : pccl_cuda_szp_decompress(stream_buf, *size, out, n, PCCL_FLOAT32, ws,
                                                           NULL);
    cudaEventRecord(b, NULL);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    if (r > 0 && ms < best) best = ms;
    *bad |= st != PCCL_OK;
  }
  cudaEventDestroy(a), cudaEventDestroy(b);
  return best;
}

int main(int argc, char **argv) {
  size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 256;
  int rounds = argc > 2 ? atoi(argv[2]) : 5;
  const char *csv_path = argc > 3 ? argv[3] : "codec-bench-gpu.csv";
  int devices = 0;
  cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    printf("pccl-codec-bench-gpu: no CUDA device (%s)\n", cudaGetErrorString(e));
    return 77;
  }
  size_t n = mib * 1024 * 256, nz = n / (512 * 512), cap = pccl_compress_bound(PCCL_CODEC_SZP, n, PCCL_FLOAT32);
  nz = nz > 0 ? nz : 1;
  n = 512 * 512 * nz;
  double *x = malloc(n * sizeof(double)), lo, hi;
  float *f = malloc(n * sizeof(float)), *back = malloc(n * sizeof(float));
  pccl_data_fill(PCCL_DATA_SMOOTH, x, 512, 512, nz, 1.0, 1);
  pccl_data_range(x, n, &lo, &hi);
  for (size_t i = 0; i < n; i++) f[i] = (float)x[i];
  void *d_src, *d_stream, *d_out;
  pccl_cuda_szp_ws_t *ws;
  if (pccl_cuda_szp_ws_create(n, &ws) != PCCL_OK || cudaMalloc(&d_src, n * 4) != cudaSuccess ||
      cudaMalloc(&d_stream, cap) != cudaSuccess || cudaMalloc(&d_out, n * 4) != cudaSuccess) {
    printf("pccl-codec-bench-gpu: allocation failed\n");
    return 1;
  }
  cudaMemcpy(d_src, f, n * 4, cudaMemcpyHostToDevice);
  FILE *csv = fopen(csv_path, "w");
  if (csv) fprintf(csv, "dataset,dtype,elements,rel_bound,abs_bound,ratio,comp_GBps,dec_GBps,max_err_over_bound\n");
  printf("# pccl-codec-bench-gpu: smooth 512 x 512 x %zu float32 = %.1f MiB, best of %d\n", nz,
         n * 4.0 / (1 << 20), rounds);
  printf("%-8s %-10s %8s %10s %10s %10s\n", "rel", "abs bound", "ratio", "comp GB/s", "dec GB/s", "err/bound");
  const double rel[] = {1e-2, 1e-3, 1e-4, 1e-5};
  int bad = 0;
  for (int r = 0; r < 4; r++) {
    double bound = rel[r] * (hi - lo), err = 0;
    size_t size = 0;
    float c = best_ms(0, rounds, d_src, n, bound, d_stream, cap, &size, d_out, ws, &bad);
    float d = best_ms(1, rounds, d_src, n, bound, d_stream, cap, &size, d_out, ws, &bad);
    cudaMemcpy(back, d_out, n * 4, cudaMemcpyDeviceToHost);
    for (size_t i = 0; i < n; i++) err = fmax(err, fabs((double)back[i] - f[i]));
    bad |= !(err <= bound);
    double gb = n * 4.0 / 1e9;
    printf("%-8.0e %-10.3e %8.2f %10.1f %10.1f %10.4f\n", rel[r], bound, n * 4.0 / size,
           gb / (c / 1e3), gb / (d / 1e3), err / bound);
    if (csv)
      fprintf(csv, "smooth,float32,%zu,%g,%g,%.4f,%.2f,%.2f,%.6f\n", n, rel[r], bound, n * 4.0 / size,
              gb / (c / 1e3), gb / (d / 1e3), err / bound);
  }
  if (csv) fclose(csv);
  pccl_cuda_szp_ws_destroy(ws);
  cudaFree(d_src), cudaFree(d_stream), cudaFree(d_out);
  free(x), free(f), free(back);
  if (bad) printf("pccl-codec-bench-gpu: a call failed or missed its bound\n");
  return bad ? 1 : 0;
}
