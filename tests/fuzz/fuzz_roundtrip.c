/* fuzz_roundtrip.c - libFuzzer target for the szp and szi round trips.
 *
 * Input: byte 0 picks the dtype (bits 0-1: float32, float64, float16,
 * bfloat16), the bound's exponent range (bit 2: 2^-128..2^127, or all of
 * double's) and the codec (bit 3: szi for float32 and float64, as an
 * nx x ny x nz array with ny = 1 + bits 4-5 and nz = 1 + bit 6; else szp);
 * byte 1 the bound's exponent, byte 2 its mantissa; the rest are the
 * elements' bytes, any bit pattern (szi drops the ones its shape leaves over).
 * Checked against the input itself: the stream fits pccl_compress_bound and
 * describes itself; every decoded element is within the bound (measured in
 * long double), NaN keeps its bits, +-Inf stays; a capacity one byte short
 * and a stream one byte short are refused. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "pccl.h"

/* binary16 (5, 10) or bfloat16 (8, 7) bits to double; written here, not
 * taken from pccl. */
static double from_half(uint16_t h, int ebits, int mbits) {
  const int bias = (1 << (ebits - 1)) - 1;
  unsigned e = (h >> mbits) & ((1u << ebits) - 1), m = h & ((1u << mbits) - 1);
  double s = (h >> (ebits + mbits)) ? -1.0 : 1.0;
  if (e == (1u << ebits) - 1) return m ? NAN : s * INFINITY;
  if (e == 0) return s * ldexp(m, 1 - bias - mbits);
  return s * ldexp(m + (1u << mbits), (int)e - bias - mbits);
}

static double elem(const uint8_t *p, size_t i, pccl_dtype_t t) {
  float f;
  double d;
  uint16_t h;
  switch (t) {
  case PCCL_FLOAT32: memcpy(&f, p + 4 * i, 4); return f;
  case PCCL_FLOAT64: memcpy(&d, p + 8 * i, 8); return d;
  case PCCL_FLOAT16: memcpy(&h, p + 2 * i, 2); return from_half(h, 5, 10);
  default: memcpy(&h, p + 2 * i, 2); return from_half(h, 8, 7);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const pccl_dtype_t dtypes[4] = {PCCL_FLOAT32, PCCL_FLOAT64, PCCL_FLOAT16, PCCL_BFLOAT16};
  if (size < 3) return 0;
  pccl_dtype_t t = dtypes[data[0] & 3];
  int e = data[0] & 4 ? (int)data[1] * 9 - 1080 : (int)data[1] - 128; /* 2^-1080 .. 2^1215 or 2^-128 .. 2^127 */
  double bound = ldexp(1.0 + data[2] / 256.0, e);
  if (!(bound > 0 && isfinite(bound))) return 0; /* beyond double's range */
  size_t es = pccl_dtype_size(t), n = (size - 3) / es;
  pccl_codec_t codec = data[0] & 8 && es >= 4 ? PCCL_CODEC_SZI : PCCL_CODEC_SZP;
  size_t ny = codec == PCCL_CODEC_SZI ? 1 + (size_t)((data[0] >> 4) & 3) : 1;
  size_t nz = codec == PCCL_CODEC_SZI ? 1 + (size_t)((data[0] >> 6) & 1) : 1, nx = n / (ny * nz);
  n = nx * ny * nz;
  uint8_t *x = malloc(n * es + 1), *y = malloc(n * es + 1);
  CHECK(x != NULL && y != NULL);
  memcpy(x, data + 3, n * es); /* aligned, and exactly sized for AddressSanitizer */

  size_t cap = pccl_compress_bound(codec, n, t), zsize = 0;
  CHECK(cap >= 24);
  uint8_t *z = malloc(cap);
  CHECK(z != NULL);
  pccl_status_t st = pccl_compress_3d(codec, x, nx, ny, nz, t, bound, z, cap, &zsize);
  CHECK(st == PCCL_OK && zsize >= 24 && zsize <= cap);
  pccl_codec_t ic;
  size_t icount;
  pccl_dtype_t it;
  double ib;
  CHECK(pccl_compressed_info(z, zsize, &ic, &icount, &it, &ib) == PCCL_OK);
  CHECK(ic == codec && icount == n && it == t && ib == bound);
  CHECK(pccl_decompress(z, zsize, n ? y : NULL, n, t) == PCCL_OK);
  for (size_t i = 0; i < n; i++) {
    double a = elem(x, i, t), b = elem(y, i, t);
    if (isnan(a))
      CHECK(memcmp(x + i * es, y + i * es, es) == 0);
    else if (isinf(a))
      CHECK(b == a);
    else
      CHECK(fabsl((long double)b - (long double)a) <= (long double)bound);
  }
  CHECK(pccl_decompress(z, zsize - 1, n ? y : NULL, n, t) == PCCL_ERR_CORRUPT);
  uint8_t *short_dst = malloc(zsize - 1);
  CHECK(short_dst != NULL);
  size_t unchanged = 12345;
  st = pccl_compress_3d(codec, x, nx, ny, nz, t, bound, short_dst, zsize - 1, &unchanged);
  CHECK(st == PCCL_ERR_INVALID_ARGUMENT && unchanged == 12345);
  free(short_dst);
  free(z);
  free(x);
  free(y);
  return 0;
}
