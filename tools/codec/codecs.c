/* codecs.c - the rows that go through pccl's public codec API: szp and
 * zfp-1d (ZFP on the buffer as one 1-D array, as the collectives see it),
 * and szi, given the field's 3-D shape. */
#include <math.h>
#include <string.h>

#include "bench.h"
#include "errmsg.h" /* pccl__thread_error: pccl_last_error is not in pccl_core */

static int pccl_available(const bench_codec_t *c) { return pccl_codec_available(c->codec); }

static size_t pccl_capacity(const bench_codec_t *c, const bench_field_t *f) {
  return pccl_compress_bound(c->codec, f->count, f->dtype);
}

static double same_tolerance(double tol) { return tol; }

double bench_zfp_tolerance(double tol) {
  int e = 0;
  frexp(tol, &e);
  return ldexp(1.0, e - 1); /* 2^e' <= tol < 2^(e'+1), as zfp_stream_set_accuracy */
}

/* BENCH_SKIP for a codec that refuses this input, BENCH_FAIL otherwise. */
static bench_status_t pccl_failure(pccl_status_t st, char *err) {
  snprintf(err, BENCH_ERR_LEN, "%s: %s", pccl_status_string(st), pccl__thread_error());
  return st == PCCL_ERR_UNSUPPORTED ? BENCH_SKIP : BENCH_FAIL;
}

static bench_status_t pccl_compress_row(const bench_codec_t *c, const bench_field_t *f,
                                        double tol, size_t *size, char *err) {
  pccl__thread_error()[0] = '\0'; /* no stale detail if a call fails without one */
  pccl_status_t st = c->codec == PCCL_CODEC_SZI
                         ? pccl_compress_3d(c->codec, f->orig, f->nx, f->ny, f->nz, f->dtype, tol,
                                            f->comp, f->cap, size)
                         : pccl_compress(c->codec, f->orig, f->count, f->dtype, tol, f->comp, f->cap, size);
  return st == PCCL_OK ? BENCH_OK : pccl_failure(st, err);
}

static bench_status_t pccl_decompress_row(const bench_codec_t *c, const bench_field_t *f,
                                          double tol, size_t size, char *err) {
  (void)c, (void)tol;
  pccl__thread_error()[0] = '\0';
  pccl_status_t st = pccl_decompress(f->comp, size, f->dec, f->count, f->dtype);
  return st == PCCL_OK ? BENCH_OK : pccl_failure(st, err);
}

const bench_codec_t bench_szp = {"szp", PCCL_CODEC_SZP, pccl_available, pccl_capacity,
                                 same_tolerance, pccl_compress_row, pccl_decompress_row};

const bench_codec_t bench_szi = {"szi", PCCL_CODEC_SZI, pccl_available, pccl_capacity,
                                 same_tolerance, pccl_compress_row, pccl_decompress_row};

const bench_codec_t bench_zfp1d = {"zfp-1d", PCCL_CODEC_ZFP, pccl_available, pccl_capacity,
                                   bench_zfp_tolerance, pccl_compress_row, pccl_decompress_row};
