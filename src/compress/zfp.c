/* zfp.c - ZFP's fixed-accuracy mode as a pccl codec: the side-by-side anchor
 * for szp (docs/compression.md). Built only where libzfp is found
 * (PCCL_HAVE_ZFP); elsewhere the row reports itself unavailable.
 *
 * The array is coded as 1-D, as the collectives see their buffers. ZFP takes
 * float32 and float64 only, finite and normal (ZFP 1.0 decodes subnormals to
 * zero, which can be far outside a tiny bound): the row checks the input and
 * refuses the rest (PCCL_ERR_UNSUPPORTED) instead of losing them. ZFP
 * cannot reach bounds below the data's precision either: the row decodes what
 * it wrote and refuses a stream that misses the bound, so the bound holds for
 * every codec. Its
 * bound is ZFP's own fixed-accuracy guarantee. ZFP's decoder does not check
 * its input length, so the payload is copied into a zero-padded buffer of
 * ZFP's maximum stream size first: a damaged stream decodes to garbage but
 * never reads outside memory we own. */
#include "codec.h"
#include "errmsg.h"

#ifdef PCCL_HAVE_ZFP
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zfp.h>

static int zfp_available(void) { return 1; }

static zfp_type zfp_type_of(pccl_dtype_t t) {
  return t == PCCL_FLOAT32 ? zfp_type_float : t == PCCL_FLOAT64 ? zfp_type_double : zfp_type_none;
}

/* Stream and field for a.count elements at data; NULL on failure. */
static zfp_stream *open_stream(const pccl_codec_args_t *a, void *data, zfp_field **field) {
  *field = zfp_field_1d(data, zfp_type_of(a->dtype), a->count);
  zfp_stream *zs = zfp_stream_open(NULL);
  if (*field == NULL || zs == NULL) {
    zfp_field_free(*field);
    zfp_stream_close(zs);
    return NULL;
  }
  zfp_stream_set_accuracy(zs, a->bound);
  return zs;
}

static void close_stream(zfp_stream *zs, zfp_field *field) {
  stream_close(zfp_stream_bit_stream(zs));
  zfp_stream_close(zs);
  zfp_field_free(field);
}

static size_t zfp_bound(const pccl_codec_args_t *a) {
  if (zfp_type_of(a->dtype) == zfp_type_none) return 0; /* not a type ZFP codes */
  if (a->count == 0) return 1;
  /* ZFP counts the worst case in bits, in a size_t: keep it from wrapping. */
  if (a->count > SIZE_MAX / 16 / (8 * a->esize)) return 0;
  zfp_field *field;
  zfp_stream *zs = open_stream(a, NULL, &field);
  if (zs == NULL) return 0;
  size_t max = zfp_stream_maximum_size(zs, field);
  zfp_stream_close(zs);
  zfp_field_free(field);
  return max >= a->count * a->esize ? max : 0;
}

/* ZFP's accuracy mode cannot go below the data's own precision (a 1e-30
 * bound on float32 values near 1e-3 is missed): decode and check, and refuse
 * what ZFP cannot bound rather than return it. */
static pccl_status_t verify(const pccl_codec_args_t *a, const void *src, uint8_t *stream,
                            size_t size) {
  void *back = malloc(a->count * a->esize);
  if (back == NULL) return PCCL_ERR_NO_MEMORY;
  zfp_field *field;
  zfp_stream *zs = open_stream(a, back, &field);
  if (zs == NULL) {
    free(back);
    return PCCL_ERR_NO_MEMORY;
  }
  zfp_stream_set_bit_stream(zs, stream_open(stream, size));
  zfp_stream_rewind(zs);
  int ok = zfp_decompress(zs, field) != 0;
  close_stream(zs, field);
  for (size_t i = 0; ok && i < a->count; i++) {
    double x = a->dtype == PCCL_FLOAT32 ? ((const float *)src)[i] : ((const double *)src)[i];
    double y = a->dtype == PCCL_FLOAT32 ? ((const float *)back)[i] : ((const double *)back)[i];
    ok = fabs(y - x) <= a->bound;
  }
  free(back);
  return ok ? PCCL_OK
            : pccl__thread_error_set(PCCL_ERR_UNSUPPORTED, "pccl_compress",
                                     "zfp cannot keep this data within the bound %g", a->bound);
}

/* Finite and either zero or normal. */
static int codable(const pccl_codec_args_t *a, const void *src) {
  int ok = 1;
  if (a->dtype == PCCL_FLOAT32)
    for (size_t i = 0; i < a->count; i++) {
      float x = ((const float *)src)[i];
      ok &= isfinite(x) && (x == 0 || fabsf(x) >= FLT_MIN);
    }
  else
    for (size_t i = 0; i < a->count; i++) {
      double x = ((const double *)src)[i];
      ok &= isfinite(x) && (x == 0 || fabs(x) >= DBL_MIN);
    }
  return ok;
}

static pccl_status_t zfp_compress_row(const pccl_codec_args_t *a, const void *src, uint8_t *dst,
                                      size_t cap, size_t *size) {
  const char *where = "pccl_compress";
  if (zfp_type_of(a->dtype) == zfp_type_none || !codable(a, src))
    return pccl__thread_error_set(PCCL_ERR_UNSUPPORTED, where,
                                  "zfp codes float32/float64 without NaN, Inf or subnormals "
                                  "(%s given)", pccl_dtype_name(a->dtype));
  if (a->count == 0) return (*size = 0, PCCL_OK);
  zfp_field *field;
  zfp_stream *zs = open_stream(a, (void *)src, &field);
  if (zs == NULL) return PCCL_ERR_NO_MEMORY;
  if (zfp_stream_maximum_size(zs, field) > cap) {
    zfp_stream_close(zs);
    zfp_field_free(field);
    return PCCL_ERR_INVALID_ARGUMENT;
  }
  zfp_stream_set_bit_stream(zs, stream_open(dst, cap));
  zfp_stream_rewind(zs);
  *size = zfp_compress(zs, field);
  close_stream(zs, field);
  if (*size == 0) return pccl__thread_error_set(PCCL_ERR_INTERNAL, where, "zfp_compress failed");
  return verify(a, src, dst, *size);
}

static pccl_status_t zfp_decompress_row(const pccl_codec_args_t *a, const uint8_t *src,
                                        size_t size, void *dst) {
  const char *where = "pccl_decompress";
  if (zfp_type_of(a->dtype) == zfp_type_none)
    return pccl__thread_error_set(PCCL_ERR_CORRUPT, where, "zfp stream of %s", pccl_dtype_name(a->dtype));
  if (a->count == 0)
    return size ? pccl__thread_error_set(PCCL_ERR_CORRUPT, where, "zfp: bytes after an empty stream")
                : PCCL_OK;
  zfp_field *field;
  zfp_stream *zs = open_stream(a, dst, &field);
  if (zs == NULL) return PCCL_ERR_NO_MEMORY;
  size_t max = zfp_stream_maximum_size(zs, field);
  uint8_t *padded = size <= max ? calloc(max, 1) : NULL;
  if (padded == NULL) {
    zfp_stream_close(zs);
    zfp_field_free(field);
    return size > max ? pccl__thread_error_set(PCCL_ERR_CORRUPT, where, "zfp: %zu bytes exceed the "
                                               "largest stream (%zu)", size, max)
                      : PCCL_ERR_NO_MEMORY;
  }
  memcpy(padded, src, size);
  zfp_stream_set_bit_stream(zs, stream_open(padded, max));
  zfp_stream_rewind(zs);
  size_t used = zfp_decompress(zs, field);
  close_stream(zs, field);
  free(padded);
  if (used == 0 || used != size)
    return pccl__thread_error_set(PCCL_ERR_CORRUPT, where, "zfp: stream of %zu bytes decoded %zu", size,
                                  used);
  return PCCL_OK;
}

const pccl_codec_ops_t pccl__codec_zfp = {"zfp", zfp_available, zfp_bound, zfp_compress_row,
                                          zfp_decompress_row};

#else /* !PCCL_HAVE_ZFP */

static int zfp_unavailable(void) { return 0; }

const pccl_codec_ops_t pccl__codec_zfp = {"zfp", zfp_unavailable, NULL, NULL, NULL};

#endif
