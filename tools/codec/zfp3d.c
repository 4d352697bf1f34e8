/* zfp3d.c - the zfp-3d rows: libzfp called directly on the field as the
 * 3-D array it is (nx x ny x nz, x fastest), in fixed-accuracy mode and
 * ZFP's default serial execution. This is ZFP at its natural best on such
 * data, against which pccl's 1-D codecs are compared. Without libzfp
 * (PCCL_HAVE_ZFP unset) the codec reports itself unavailable. */
#include "bench.h"

#ifdef PCCL_HAVE_ZFP
#include <zfp.h>

static int zfp3d_available(const bench_codec_t *c) {
  (void)c;
  return 1;
}

static zfp_type type_of(pccl_dtype_t t) {
  return t == PCCL_FLOAT64 ? zfp_type_double : zfp_type_float;
}

static void close_3d(zfp_stream *zs, zfp_field *field) {
  if (zs) stream_close(zfp_stream_bit_stream(zs));
  zfp_stream_close(zs);
  zfp_field_free(field);
}

/* A fixed-accuracy stream over f->comp and a 3-D field over data; NULL when
 * out of memory. */
static zfp_stream *open_3d(const bench_field_t *f, void *data, double tol, zfp_field **field) {
  *field = zfp_field_3d(data, type_of(f->dtype), f->nx, f->ny, f->nz);
  zfp_stream *zs = zfp_stream_open(NULL);
  bitstream *bits = f->comp ? stream_open(f->comp, f->cap) : NULL;
  if (*field == NULL || zs == NULL || (f->comp && bits == NULL)) {
    if (bits) stream_close(bits);
    close_3d(zs, *field);
    return NULL;
  }
  zfp_stream_set_accuracy(zs, tol);
  if (bits) {
    zfp_stream_set_bit_stream(zs, bits);
    zfp_stream_rewind(zs);
  }
  return zs;
}

static size_t zfp3d_capacity(const bench_codec_t *c, const bench_field_t *f) {
  (void)c;
  bench_field_t shape = *f;
  shape.comp = NULL; /* the size alone: no stream */
  zfp_field *field;
  zfp_stream *zs = open_3d(&shape, NULL, 1.0, &field);
  if (zs == NULL) return 0;
  size_t max = zfp_stream_maximum_size(zs, field);
  close_3d(zs, field);
  return max;
}

static bench_status_t zfp3d_compress(const bench_codec_t *c, const bench_field_t *f, double tol,
                                     size_t *size, char *err) {
  (void)c;
  if (!f->finite) {
    snprintf(err, BENCH_ERR_LEN, "libzfp takes finite values only");
    return BENCH_SKIP;
  }
  zfp_field *field;
  zfp_stream *zs = open_3d(f, (void *)f->orig, tol, &field);
  if (zs == NULL) return (snprintf(err, BENCH_ERR_LEN, "out of memory"), BENCH_FAIL);
  *size = zfp_compress(zs, field);
  close_3d(zs, field);
  if (*size == 0) return (snprintf(err, BENCH_ERR_LEN, "zfp_compress failed"), BENCH_FAIL);
  return BENCH_OK;
}

static bench_status_t zfp3d_decompress(const bench_codec_t *c, const bench_field_t *f, double tol,
                                       size_t size, char *err) {
  (void)c;
  zfp_field *field;
  zfp_stream *zs = open_3d(f, f->dec, tol, &field);
  if (zs == NULL) return (snprintf(err, BENCH_ERR_LEN, "out of memory"), BENCH_FAIL);
  size_t used = zfp_decompress(zs, field);
  close_3d(zs, field);
  if (used != size) {
    snprintf(err, BENCH_ERR_LEN, "zfp_decompress read %zu of %zu bytes", used, size);
    return BENCH_FAIL;
  }
  return BENCH_OK;
}

const char *bench_zfp_version(void) { return "zfp " ZFP_VERSION_STRING; }

const bench_codec_t bench_zfp3d = {"zfp-3d", PCCL_CODEC_ZFP, zfp3d_available, zfp3d_capacity,
                                   bench_zfp_tolerance, zfp3d_compress, zfp3d_decompress};

#else /* !PCCL_HAVE_ZFP */

static int zfp3d_unavailable(const bench_codec_t *c) {
  (void)c;
  return 0;
}

const char *bench_zfp_version(void) { return "no zfp"; }

const bench_codec_t bench_zfp3d = {"zfp-3d", PCCL_CODEC_ZFP, zfp3d_unavailable, NULL, NULL, NULL,
                                   NULL};

#endif
