/* fuzz_decompress.c - libFuzzer target for the codec's decoder.
 *
 * The input is a compressed stream. pccl_compressed_info must accept or
 * refuse it (PCCL_ERR_CORRUPT); a refused header makes pccl_decompress
 * refuse it too, whatever count and dtype the caller asks for. A header that
 * parses is decoded with its own count and dtype (up to MAX_COUNT elements,
 * into a buffer of exactly that size, so AddressSanitizer sees any write
 * outside dst) and must give a documented status; asking for another count
 * or dtype is PCCL_ERR_INVALID_ARGUMENT. An szp or szi stream that decodes stops
 * decoding when its last byte is cut off. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_check.h"
#include "pccl.h"

#define MAX_COUNT ((size_t)1 << 18)

static int is_float(pccl_dtype_t t) {
  return t == PCCL_FLOAT16 || t == PCCL_BFLOAT16 || t == PCCL_FLOAT32 || t == PCCL_FLOAT64;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const uint8_t empty[1];
  if (data == NULL) data = empty;
  pccl_codec_t codec = PCCL_CODEC_COUNT;
  pccl_dtype_t dtype = PCCL_DTYPE_COUNT;
  size_t count = 0;
  double bound = 0;
  pccl_status_t info = pccl_compressed_info(data, size, &codec, &count, &dtype, &bound);
  CHECK(info == PCCL_OK || info == PCCL_ERR_CORRUPT);
  double *small = malloc(4 * sizeof(double));
  CHECK(small != NULL);
  if (info != PCCL_OK) {
    CHECK(pccl_decompress(data, size, small, 4, PCCL_FLOAT32) == PCCL_ERR_CORRUPT);
    CHECK(pccl_decompress(data, size, NULL, 0, PCCL_FLOAT64) == PCCL_ERR_CORRUPT);
    free(small);
    return 0;
  }
  CHECK((unsigned)codec < PCCL_CODEC_COUNT && is_float(dtype) && bound > 0 && isfinite(bound));
  size_t es = pccl_dtype_size(dtype);
  CHECK(count <= SIZE_MAX / es);
  /* The caller's count or dtype differs from the stream's. */
  CHECK(pccl_decompress(data, size, small, count + 1, dtype) == PCCL_ERR_INVALID_ARGUMENT);
  if (count > 0) CHECK(pccl_decompress(data, size, small, count - 1, dtype) == PCCL_ERR_INVALID_ARGUMENT);
  pccl_dtype_t other = dtype == PCCL_FLOAT32 ? PCCL_FLOAT64 : PCCL_FLOAT32;
  CHECK(pccl_decompress(data, size, small, count, other) == PCCL_ERR_INVALID_ARGUMENT);
  free(small);
  if (count > MAX_COUNT) return 0;

  uint8_t *dst = malloc(count * es + 1);
  CHECK(dst != NULL);
  if (count > 0) {
    CHECK(pccl_decompress(data, size, NULL, count, dtype) == PCCL_ERR_INVALID_ARGUMENT);
    if (es > 1) CHECK(pccl_decompress(data, size, dst + 1, count, dtype) == PCCL_ERR_INVALID_ARGUMENT);
  }
  pccl_status_t st = pccl_decompress(data, size, count ? dst : NULL, count, dtype);
  int have = pccl_codec_available(codec);
  CHECK(st == PCCL_OK || st == PCCL_ERR_CORRUPT || st == PCCL_ERR_NO_MEMORY ||
        (st == PCCL_ERR_UNSUPPORTED && !have));
  if (st == PCCL_OK && codec != PCCL_CODEC_ZFP)
    CHECK(pccl_decompress(data, size - 1, count ? dst : NULL, count, dtype) == PCCL_ERR_CORRUPT);
  free(dst);
  return 0;
}
