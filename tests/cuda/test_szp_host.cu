/* test_szp_host.cu - the szp block coder (src/compress/szp_block.h) as nvcc
 * compiles it for src/cuda/szp.cu, run here on the host, against the CPU
 * library (built by the C compiler, SSE2 planes where available): streams
 * and decoded arrays must be the same byte for byte. Needs no GPU.
 *
 * Two encoders are checked: the one-pass pccl__szp_encode the CPU runs,
 * and the split the GPU kernels run (measure: quantize, predict, plan; then
 * write from the code alone, raw blocks without quantizing again). Cases:
 * every generated dataset x float32/float64/float16/bfloat16 x bounds 1e-2
 * .. 1e-6 of the range x counts that are not multiples of 32, a stream long
 * enough for the library's threaded parts, and hand-made blocks: NaN, Inf,
 * |q| just under and at 2^30, float16 values far above the bound. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pccl.h"
extern "C" {
#include "codec.h"
#include "datagen.h"
}
#include "szp_block.h"

static int passed, failed;

static void expect(int ok, const char *fmt, ...) {
  if (ok) {
    passed++;
    return;
  }
  failed++;
  va_list ap;
  va_start(ap, fmt);
  printf("FAIL ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
}

static void to_dtype(const double *x, size_t n, pccl_dtype_t t, void *out) {
  for (size_t i = 0; i < n; i++) switch (t) {
    case PCCL_FLOAT32: ((float *)out)[i] = (float)x[i]; break;
    case PCCL_FLOAT64: ((double *)out)[i] = x[i]; break;
    case PCCL_FLOAT16: ((uint16_t *)out)[i] = pccl_f32_to_f16((float)x[i]); break;
    default: ((uint16_t *)out)[i] = pccl_f32_to_bf16((float)x[i]); break;
    }
}

/* The stream, block by block: split = 0 the CPU's one pass, 1 the GPU's. */
static size_t hd_compress(const uint8_t *src, size_t count, pccl_dtype_t t, double bound,
                          int split, uint8_t *dst) {
  size_t esize = pccl_dtype_size(t), nb = pccl__szp_nblocks(count);
  size_t pos = PCCL_CODEC_HEADER + nb;
  uint8_t *codes = dst + PCCL_CODEC_HEADER;
  pccl__szp_quant_t qz = pccl__szp_quant_of(bound);
  pccl__codec_header_write(dst, PCCL_CODEC_SZP, t, count, bound);
  for (size_t b = 0; b < nb; b++) {
    const uint8_t *in = src + b * PCCL_SZP_B * esize;
    size_t n = pccl__szp_block_count(count, b);
    if (!split) {
      pos += pccl__szp_encode(in, n, t, esize, &qz, dst + pos, &codes[b]);
      continue;
    }
    int32_t q[PCCL_SZP_B];
    pccl__szp_pred_t p;
    int bad = pccl__szp_quantize(in, n, t, &qz, q);
    pccl__szp_predict(q, &p);
    pccl__szp_plan_t plan = pccl__szp_plan(q[0], &p, bad, n, esize);
    codes[b] = (uint8_t)plan.code;
    if (plan.code != PCCL_SZP_RAW) { /* as the write kernel: again from the code */
      pccl__szp_quantize(in, n, t, &qz, q);
      pccl__szp_predict(q, &p);
    }
    pccl__szp_write(in, q[0], &p, codes[b], n, esize, dst + pos);
    pos += pccl__szp_block_bytes(codes[b], n, esize);
  }
  return pos;
}

static void hd_decompress(const uint8_t *stream, size_t count, pccl_dtype_t t, double bound,
                          uint8_t *dst) {
  size_t esize = pccl_dtype_size(t), nb = pccl__szp_nblocks(count);
  const uint8_t *codes = stream + PCCL_CODEC_HEADER, *data = codes + nb;
  double step = pccl__szp_quant_of(bound).step;
  for (size_t b = 0; b < nb; b++) {
    size_t n = pccl__szp_block_count(count, b);
    pccl__szp_decode(data, codes[b], n, t, esize, step, dst + b * PCCL_SZP_B * esize);
    data += pccl__szp_block_bytes(codes[b], n, esize);
  }
}

/* One case: x[0..count) as dtype t at absolute bound. */
static void check_case(const char *name, const double *x, size_t count, pccl_dtype_t t,
                       double bound) {
  size_t esize = pccl_dtype_size(t), cap = pccl_compress_bound(PCCL_CODEC_SZP, count, t);
  uint8_t *src = (uint8_t *)malloc(count * esize + 1), *ref = (uint8_t *)malloc(cap);
  uint8_t *mine = (uint8_t *)malloc(cap), *out_ref = (uint8_t *)malloc(count * esize + 1);
  uint8_t *out_mine = (uint8_t *)malloc(count * esize + 1);
  size_t ref_size = 0;
  to_dtype(x, count, t, src);
  pccl_status_t st = pccl_compress(PCCL_CODEC_SZP, src, count, t, bound, ref, cap, &ref_size);
  expect(st == PCCL_OK, "%s %s n=%zu bound=%g: pccl_compress %s", name, pccl_dtype_name(t), count,
         bound, pccl_status_string(st));
  for (int split = 0; split < 2 && st == PCCL_OK; split++) {
    size_t size = hd_compress(src, count, t, bound, split, mine);
    expect(size == ref_size && memcmp(mine, ref, size) == 0,
           "%s %s n=%zu bound=%g %s: stream of %zu bytes differs from the CPU's %zu", name,
           pccl_dtype_name(t), count, bound, split ? "split" : "encode", size, ref_size);
  }
  if (st == PCCL_OK) {
    st = pccl_decompress(ref, ref_size, out_ref, count, t);
    expect(st == PCCL_OK, "%s: pccl_decompress %s", name, pccl_status_string(st));
    hd_decompress(ref, count, t, bound, out_mine);
    expect(memcmp(out_mine, out_ref, count * esize) == 0, "%s %s n=%zu bound=%g: decoded arrays differ",
           name, pccl_dtype_name(t), count, bound);
  }
  free(src), free(ref), free(mine), free(out_ref), free(out_mine);
}

static const pccl_dtype_t dtypes[4] = {PCCL_FLOAT32, PCCL_FLOAT64, PCCL_FLOAT16, PCCL_BFLOAT16};

/* Every dataset x dtype x bound x count, prefixes of one 40^3 field. */
static void check_datasets(void) {
  const size_t edge = 40, counts[] = {1, 31, 33, 95, 1000, 4099, 40 * 40 * 40};
  const double rel[] = {1e-2, 1e-3, 1e-4, 1e-5, 1e-6};
  double *x = (double *)malloc(edge * edge * edge * sizeof(double));
  for (int k = 0; k < PCCL_DATA_COUNT; k++)
    for (size_t r = 0; r < sizeof(rel) / sizeof(rel[0]); r++) {
      double bound = pccl_data_fill_rel((pccl_data_kind_t)k, x, edge, edge, edge, rel[r], 7);
      for (int d = 0; d < 4; d++)
        for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
          check_case(pccl_data_name((pccl_data_kind_t)k), x, counts[c], dtypes[d], bound);
    }
  free(x);
}

/* Blocks the datasets may not reach: specials and the quantization limit. */
static void check_edges(void) {
  const double bound = 1e-3, step = pccl__szp_quant_of(bound).step, qmax = 0x1p30;
  const size_t n = 12 * PCCL_SZP_B + 5;
  double *x = (double *)malloc(n * sizeof(double));
  for (size_t i = 0; i < n; i++) {
    size_t b = i / PCCL_SZP_B;
    double v = 0.25 * sin(0.1 * (double)i);
    switch (b) {
    case 0: v = i == 7 ? NAN : v; break;
    case 1: v = i % 2 ? INFINITY : -INFINITY; break;
    case 2: v = (qmax - 1 - (double)(i % 3)) * step; break; /* just under the limit */
    case 3: v = -(qmax - 1) * step; break;
    case 4: v = qmax * step; break; /* at the limit: raw */
    case 5: v = 65504.0 + (double)(i % 7); break;   /* float16 far above the bound */
    case 6: v = (double)(i % 2 ? 1 : -1) * 1e-40; break;
    case 7: v = (double)(i * i % 17) * 3e4 * step; break; /* wide order-1 residuals */
    case 8: v = (double)i * 1e3 * step; break;            /* linear: order 2 */
    default: break;
    }
    x[i] = v;
  }
  for (int d = 0; d < 4; d++)
    for (size_t c = n - 40; c <= n; c += 13) check_case("edges", x, c, dtypes[d], bound);
  free(x);
}

/* Long enough for the library's threaded parts (8192 blocks each). */
static void check_parts(void) {
  const size_t nx = 160, count = nx * nx * 40 + 17;
  double *x = (double *)malloc((nx * nx * 41) * sizeof(double)), lo, hi;
  pccl_data_fill(PCCL_DATA_SMOOTH, x, nx, nx, 41, 1.0, 3);
  pccl_data_range(x, count, &lo, &hi);
  setenv("PCCL_CODEC_THREADS", "4", 1);
  for (int d = 0; d < 4; d++) check_case("parts", x, count, dtypes[d], 1e-4 * (hi - lo));
  unsetenv("PCCL_CODEC_THREADS");
  free(x);
}

int main(void) {
  check_datasets();
  check_edges();
  check_parts();
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
