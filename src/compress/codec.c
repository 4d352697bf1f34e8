/* codec.c - the public compression API: argument checks, the container
 * header shared by all codecs, and dispatch through the codec table.
 *
 * Header (24 bytes, little-endian):
 *   0  'P' 'Z'        magic
 *   2  version        PCCL_CODEC_VERSION
 *   3  codec          pccl_codec_t
 *   4  dtype          pccl_dtype_t
 *   5  0 0 0          reserved, must be zero
 *   8  count          uint64
 *   16 bound          IEEE binary64: the absolute error bound
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "codec.h"
#include "errmsg.h"
#include "szp_block.h" /* the header writer and PCCL_CODEC_VERSION, shared with the GPU */

static const pccl_codec_ops_t *const codecs[PCCL_CODEC_COUNT] = {
#define PCCL_CODEC_ROW(id, ops) [id] = &ops,
    PCCL_CODEC_MAP(PCCL_CODEC_ROW)
#undef PCCL_CODEC_ROW
};

static int is_float(pccl_dtype_t t) {
  return t == PCCL_FLOAT32 || t == PCCL_FLOAT64 || t == PCCL_FLOAT16 || t == PCCL_BFLOAT16;
}

static const pccl_codec_ops_t *codec_of(pccl_codec_t c) {
  return (unsigned)c < PCCL_CODEC_COUNT && codecs[c]->available() ? codecs[c] : NULL;
}

const char *pccl_codec_name(pccl_codec_t codec) {
  return (unsigned)codec < PCCL_CODEC_COUNT ? codecs[codec]->name : "unknown";
}

int pccl_codec_available(pccl_codec_t codec) { return codec_of(codec) != NULL; }

size_t pccl_compress_bound(pccl_codec_t codec, size_t count, pccl_dtype_t dtype) {
  const pccl_codec_ops_t *ops = codec_of(codec);
  if (ops == NULL || !is_float(dtype)) return 0;
  pccl_codec_args_t a = {count, dtype, pccl_dtype_size(dtype), 1.0, {count, 1, 1}};
  if (count > SIZE_MAX / a.esize) return 0;
  size_t payload = ops->bound(&a);
  return payload == 0 || payload > SIZE_MAX - PCCL_CODEC_HEADER ? 0 : payload + PCCL_CODEC_HEADER;
}

static uint64_t get64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* Parses and validates a header; every field a later step trusts is checked. */
static pccl_status_t read_header(const uint8_t *h, size_t size, pccl_codec_t *codec,
                                 pccl_codec_args_t *a) {
  const char *where = "pccl_decompress";
  if (size < PCCL_CODEC_HEADER)
    return pccl__thread_error_set(PCCL_ERR_CORRUPT, where, "%zu bytes: shorter than the %d-byte header",
                                  size, PCCL_CODEC_HEADER);
  if (h[0] != 'P' || h[1] != 'Z')
    return pccl__thread_error_set(PCCL_ERR_CORRUPT, where, "not a pccl compressed stream (bad magic)");
  if (h[2] != PCCL_CODEC_VERSION)
    return pccl__thread_error_set(PCCL_ERR_CORRUPT, where, "format version %u, this library reads %d",
                                  h[2], PCCL_CODEC_VERSION);
  if (h[3] >= PCCL_CODEC_COUNT || !is_float((pccl_dtype_t)h[4]) || h[5] || h[6] || h[7])
    return pccl__thread_error_set(PCCL_ERR_CORRUPT, where, "bad codec %u / datatype %u in header",
                                  h[3], h[4]);
  uint64_t bits = get64(h + 16), count = get64(h + 8);
  *codec = (pccl_codec_t)h[3];
  a->dtype = (pccl_dtype_t)h[4];
  a->esize = pccl_dtype_size(a->dtype);
  memcpy(&a->bound, &bits, sizeof(bits));
  if (!(a->bound > 0 && isfinite(a->bound)))
    return pccl__thread_error_set(PCCL_ERR_CORRUPT, where, "bound %g in header is not positive and finite",
                                  a->bound);
  if (count > SIZE_MAX / a->esize)
    return pccl__thread_error_set(PCCL_ERR_CORRUPT, where, "element count %llu in header is too large",
                                  (unsigned long long)count);
  a->count = (size_t)count;
  return PCCL_OK;
}

pccl_status_t pccl_compress_3d(pccl_codec_t codec, const void *src, size_t nx, size_t ny,
                               size_t nz, pccl_dtype_t dtype, double abs_bound, void *dst,
                               size_t dst_capacity, size_t *compressed_size) {
  const char *where = "pccl_compress";
  if ((ny != 0 && nx > SIZE_MAX / ny) || (nz != 0 && nx * ny > SIZE_MAX / nz))
    return pccl__thread_error_set(PCCL_ERR_OVERFLOW, where, "%zu x %zu x %zu elements overflow size_t",
                                  nx, ny, nz);
  size_t count = nx * ny * nz;
  if ((unsigned)codec >= PCCL_CODEC_COUNT)
    return pccl__thread_error_set(PCCL_ERR_INVALID_ARGUMENT, where, "unknown codec %d", (int)codec);
  const pccl_codec_ops_t *ops = codec_of(codec);
  if (ops == NULL)
    return pccl__thread_error_set(PCCL_ERR_UNSUPPORTED, where, "codec %s is not in this build",
                                  codecs[codec]->name);
  if (!is_float(dtype))
    return pccl__thread_error_set(PCCL_ERR_INVALID_DTYPE, where,
                                  "datatype %s: only float16/bfloat16/float32/float64 compress",
                                  pccl_dtype_name(dtype));
  pccl_codec_args_t a = {count, dtype, pccl_dtype_size(dtype), abs_bound, {nx, ny, nz}};
  if (dst == NULL || compressed_size == NULL || (src == NULL && count > 0))
    return pccl__thread_error_set(PCCL_ERR_INVALID_ARGUMENT, where, "NULL %s",
                                  dst == NULL ? "dst" : compressed_size == NULL ? "compressed_size" : "src");
  if ((uintptr_t)src % a.esize != 0)
    return pccl__thread_error_set(PCCL_ERR_INVALID_ARGUMENT, where, "src %p is not aligned to %zu bytes",
                                  src, a.esize);
  if (!(abs_bound > 0 && isfinite(abs_bound)))
    return pccl__thread_error_set(PCCL_ERR_INVALID_ARGUMENT, where,
                                  "error bound %g must be positive and finite", abs_bound);
  if (count > SIZE_MAX / a.esize)
    return pccl__thread_error_set(PCCL_ERR_OVERFLOW, where, "%zu elements overflow size_t", count);
  if (ops->bound(&a) == 0) /* the codec does not take this type or size */
    return pccl__thread_error_set(PCCL_ERR_UNSUPPORTED, where, "codec %s cannot code %zu x %s",
                                  ops->name, count, pccl_dtype_name(dtype));
  if (dst_capacity < PCCL_CODEC_HEADER)
    return pccl__thread_error_set(PCCL_ERR_INVALID_ARGUMENT, where,
                                  "dst_capacity %zu is below pccl_compress_bound (%zu)", dst_capacity,
                                  pccl_compress_bound(codec, count, dtype));
  size_t payload = 0;
  uint8_t *out = dst;
  pccl_status_t st = ops->compress(&a, src, out + PCCL_CODEC_HEADER,
                                   dst_capacity - PCCL_CODEC_HEADER, &payload);
  if (st == PCCL_ERR_INVALID_ARGUMENT)
    return pccl__thread_error_set(st, where, "dst_capacity %zu is too small; pccl_compress_bound says %zu",
                                  dst_capacity, pccl_compress_bound(codec, count, dtype));
  if (st != PCCL_OK) return st;
  pccl__codec_header_write(out, (unsigned)codec, dtype, count, abs_bound);
  *compressed_size = PCCL_CODEC_HEADER + payload;
  return PCCL_OK;
}

pccl_status_t pccl_compress(pccl_codec_t codec, const void *src, size_t count, pccl_dtype_t dtype,
                            double abs_bound, void *dst, size_t dst_capacity,
                            size_t *compressed_size) {
  return pccl_compress_3d(codec, src, count, 1, 1, dtype, abs_bound, dst, dst_capacity,
                          compressed_size);
}

pccl_status_t pccl_compressed_info(const void *src, size_t src_size, pccl_codec_t *codec,
                                   size_t *count, pccl_dtype_t *dtype, double *abs_bound) {
  if (src == NULL)
    return pccl__thread_error_set(PCCL_ERR_INVALID_ARGUMENT, "pccl_compressed_info", "NULL src");
  pccl_codec_t c = PCCL_CODEC_SZP;
  pccl_codec_args_t a = {0};
  pccl_status_t st = read_header(src, src_size, &c, &a);
  if (st != PCCL_OK) return st;
  if (codec) *codec = c;
  if (count) *count = a.count;
  if (dtype) *dtype = a.dtype;
  if (abs_bound) *abs_bound = a.bound;
  return PCCL_OK;
}

pccl_status_t pccl_decompress(const void *src, size_t src_size, void *dst, size_t count,
                              pccl_dtype_t dtype) {
  const char *where = "pccl_decompress";
  if (src == NULL || (dst == NULL && count > 0))
    return pccl__thread_error_set(PCCL_ERR_INVALID_ARGUMENT, where, "NULL %s", src ? "dst" : "src");
  pccl_codec_t codec = PCCL_CODEC_SZP;
  pccl_codec_args_t a = {0};
  pccl_status_t st = read_header(src, src_size, &codec, &a);
  if (st != PCCL_OK) return st;
  if (a.count != count || a.dtype != dtype)
    return pccl__thread_error_set(PCCL_ERR_INVALID_ARGUMENT, where,
                                  "stream holds %zu x %s, the call asks for %zu x %s", a.count,
                                  pccl_dtype_name(a.dtype), count, pccl_dtype_name(dtype));
  if ((uintptr_t)dst % a.esize != 0)
    return pccl__thread_error_set(PCCL_ERR_INVALID_ARGUMENT, where, "dst %p is not aligned to %zu bytes",
                                  dst, a.esize);
  const pccl_codec_ops_t *ops = codec_of(codec);
  if (ops == NULL)
    return pccl__thread_error_set(PCCL_ERR_UNSUPPORTED, where, "stream is %s, not in this build",
                                  codecs[codec]->name);
  return ops->decompress(&a, (const uint8_t *)src + PCCL_CODEC_HEADER, src_size - PCCL_CODEC_HEADER,
                         dst);
}
