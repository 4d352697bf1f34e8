/* test_cuda_szp.c - the GPU szp codec (src/cuda/szp_gpu.h) against the CPU
 * one: on generated datasets x float32/float64/float16/bfloat16 x bounds,
 * the device's stream must equal pccl_compress's byte for byte, its decoded
 * array pccl_decompress's, and every finite element must lie within the
 * bound (NaN and Inf kept). Damaged streams (truncated, extended, bad
 * header, codes changed) must give PCCL_ERR_CORRUPT and leave dst as it
 * was. Without a CUDA device it prints SKIP and exits 77. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datagen.h"
#include "half.h"
#include "pccl.h"
#include "szp_gpu.h"

#define MAX_COUNT (1u << 22)

static int passed, failed;

static void expect(int ok, const char *what, size_t count, pccl_dtype_t t, double bound) {
  if (ok) {
    passed++;
    return;
  }
  failed++;
  printf("FAIL %s (%zu x %s, bound %g)\n", what, count, pccl_dtype_name(t), bound);
}

static void to_dtype(const double *x, size_t n, pccl_dtype_t t, void *out) {
  for (size_t i = 0; i < n; i++) switch (t) {
    case PCCL_FLOAT32: ((float *)out)[i] = (float)x[i]; break;
    case PCCL_FLOAT64: ((double *)out)[i] = x[i]; break;
    case PCCL_FLOAT16: ((uint16_t *)out)[i] = pccl_f32_to_f16((float)x[i]); break;
    default: ((uint16_t *)out)[i] = pccl_f32_to_bf16((float)x[i]); break;
    }
}

static double value(const void *p, size_t i, pccl_dtype_t t) {
  switch (t) {
  case PCCL_FLOAT32: return ((const float *)p)[i];
  case PCCL_FLOAT64: return ((const double *)p)[i];
  case PCCL_FLOAT16: return pccl_f16_to_f32(((const uint16_t *)p)[i]);
  default: return pccl_bf16_to_f32(((const uint16_t *)p)[i]);
  }
}

/* Every element within bound of the original; non-finite ones equal. */
static int within(const void *orig, const void *dec, size_t n, pccl_dtype_t t, double bound) {
  for (size_t i = 0; i < n; i++) {
    double a = value(orig, i, t), b = value(dec, i, t);
    if (isnan(a) ? !isnan(b) : isinf(a) ? a != b : !(fabs(a - b) <= bound)) return 0;
  }
  return 1;
}

typedef struct {
  pccl_cuda_szp_ws_t *ws;
  void *d_src, *d_stream, *d_out;
  size_t cap;
} gpu_t;

/* Decoding the damaged stream h[0..size) must fail as corrupt, dst intact. */
static void expect_corrupt(gpu_t *g, const uint8_t *h, size_t size, size_t count, pccl_dtype_t t,
                           const char *what) {
  size_t bytes = count * pccl_dtype_size(t);
  uint8_t *back = malloc(bytes + 1);
  cudaMemset(g->d_out, 0xA5, bytes);
  cudaMemcpy(g->d_stream, h, size, cudaMemcpyHostToDevice);
  pccl_status_t st = pccl_cuda_szp_decompress(g->d_stream, size, g->d_out, count, t, g->ws, NULL);
  cudaMemcpy(back, g->d_out, bytes, cudaMemcpyDeviceToHost);
  int intact = 1;
  for (size_t i = 0; i < bytes; i++) intact &= back[i] == 0xA5;
  expect(st == PCCL_ERR_CORRUPT && intact, what, count, t, 0);
  free(back);
}

static void check_damage(gpu_t *g, const uint8_t *ref, size_t size, size_t count, pccl_dtype_t t) {
  uint8_t *h = malloc(size + 1);
  memcpy(h, ref, size);
  expect_corrupt(g, h, size - 1, count, t, "truncated by one byte");
  expect_corrupt(g, h, 24 + (count > 32 ? 1 : 0), count, t, "codes cut");
  expect_corrupt(g, h, 10, count, t, "shorter than the header");
  h[size] = 0;
  expect_corrupt(g, h, size + 1, count, t, "one byte too many");
  h[0] = 'X';
  expect_corrupt(g, h, size, count, t, "bad magic");
  h[0] = 'P';
  h[24] = h[24] == 255 ? 0 : 255; /* block 0 changes size */
  expect_corrupt(g, h, size, count, t, "code changed");
  free(h);
}

static void check_case(gpu_t *g, const double *x, size_t count, pccl_dtype_t t, double bound) {
  size_t esize = pccl_dtype_size(t), cap = pccl_compress_bound(PCCL_CODEC_SZP, count, t);
  uint8_t *src = malloc(count * esize + 1), *ref = malloc(cap), *mine = malloc(cap);
  uint8_t *out_ref = malloc(count * esize + 1), *out_mine = malloc(count * esize + 1);
  size_t ref_size = 0, size = 0;
  to_dtype(x, count, t, src);
  pccl_status_t st = pccl_compress(PCCL_CODEC_SZP, src, count, t, bound, ref, cap, &ref_size);
  expect(st == PCCL_OK, "pccl_compress", count, t, bound);
  cudaMemcpy(g->d_src, src, count * esize, cudaMemcpyHostToDevice);
  st = pccl_cuda_szp_compress(g->d_src, count, t, bound, g->d_stream, g->cap, &size, g->ws, NULL);
  expect(st == PCCL_OK, "pccl_cuda_szp_compress", count, t, bound);
  cudaMemcpy(mine, g->d_stream, size <= cap ? size : cap, cudaMemcpyDeviceToHost);
  expect(size == ref_size && memcmp(mine, ref, size) == 0, "stream equals the CPU's", count, t, bound);
  pccl_decompress(ref, ref_size, out_ref, count, t);
  st = pccl_cuda_szp_decompress(g->d_stream, size, g->d_out, count, t, g->ws, NULL);
  expect(st == PCCL_OK, "pccl_cuda_szp_decompress", count, t, bound);
  cudaMemcpy(out_mine, g->d_out, count * esize, cudaMemcpyDeviceToHost);
  expect(memcmp(out_mine, out_ref, count * esize) == 0, "decoded equals the CPU's", count, t, bound);
  expect(within(src, out_mine, count, t, bound), "within the bound", count, t, bound);
  if (count > 0 && count < 100000) check_damage(g, ref, ref_size, count, t);
  free(src), free(ref), free(mine), free(out_ref), free(out_mine);
}

int main(void) {
  int devices = 0;
  cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    printf("SKIP: no CUDA device (%s)\n", cudaGetErrorString(e));
    return 77;
  }
  gpu_t g = {NULL, NULL, NULL, NULL, pccl_compress_bound(PCCL_CODEC_SZP, MAX_COUNT, PCCL_FLOAT64)};
  if (pccl_cuda_szp_ws_create(MAX_COUNT, &g.ws) != PCCL_OK ||
      cudaMalloc(&g.d_src, MAX_COUNT * 8) != cudaSuccess ||
      cudaMalloc(&g.d_stream, g.cap) != cudaSuccess ||
      cudaMalloc(&g.d_out, MAX_COUNT * 8) != cudaSuccess) {
    printf("FAIL: workspace or device buffers\n");
    return 1;
  }
  const pccl_dtype_t dtypes[4] = {PCCL_FLOAT32, PCCL_FLOAT64, PCCL_FLOAT16, PCCL_BFLOAT16};
  const size_t edge = 160, counts[] = {0, 1, 33, 4097, 4096 * 3 + 31, edge * edge * edge};
  const double rel[] = {1e-2, 1e-4, 1e-6};
  double *x = malloc(edge * edge * edge * sizeof(double));
  for (int k = 0; k < PCCL_DATA_COUNT; k++)
    for (size_t r = 0; r < 3; r++) {
      double bound = pccl_data_fill_rel((pccl_data_kind_t)k, x, edge, edge, edge, rel[r], 11);
      for (int d = 0; d < 4; d++)
        for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
          check_case(&g, x, counts[c], dtypes[d], bound);
    }
  /* Capacity one byte short of the stream: refused. */
  size_t size = 0, ok_size = 0;
  pccl_data_fill(PCCL_DATA_NOISY, x, 64, 64, 1, 1.0, 5);
  float *f = malloc(4096 * sizeof(float));
  for (int i = 0; i < 4096; i++) f[i] = (float)x[i];
  cudaMemcpy(g.d_src, f, 4096 * sizeof(float), cudaMemcpyHostToDevice);
  pccl_cuda_szp_compress(g.d_src, 4096, PCCL_FLOAT32, 1e-3, g.d_stream, g.cap, &ok_size, g.ws, NULL);
  expect(pccl_cuda_szp_compress(g.d_src, 4096, PCCL_FLOAT32, 1e-3, g.d_stream, ok_size - 1, &size,
                                g.ws, NULL) == PCCL_ERR_INVALID_ARGUMENT,
         "cap one byte short", 4096, PCCL_FLOAT32, 1e-3);
  expect(pccl_cuda_szp_compress(g.d_src, MAX_COUNT + 1, PCCL_FLOAT32, 1e-3, g.d_stream, g.cap,
                                &size, g.ws, NULL) == PCCL_ERR_INVALID_ARGUMENT,
         "count above the workspace", MAX_COUNT + 1, PCCL_FLOAT32, 1e-3);
  free(f), free(x);
  cudaFree(g.d_src), cudaFree(g.d_stream), cudaFree(g.d_out);
  pccl_cuda_szp_ws_destroy(g.ws);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
