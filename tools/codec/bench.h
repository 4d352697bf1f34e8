/* bench.h - the pieces of pccl-codec-bench: its options, the field under
 * test with the buffers every codec shares, the codecs it compares, and
 * one measured row per (codec, bound). */
#ifndef PCCL_CODEC_BENCH_H
#define PCCL_CODEC_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "accuracy.h"
#include "datagen.h"
#include "pccl.h"

#define BENCH_MAX_BOUNDS 16
#define BENCH_ERR_LEN 512

/* ---- options.c ---------------------------------------------------------- */
typedef struct {
  int edge; /* cube edge: nx = ny = nz */
  pccl_data_kind_t dataset;
  pccl_dtype_t dtype; /* PCCL_FLOAT32 or PCCL_FLOAT64 */
  double rel[BENCH_MAX_BOUNDS];
  int nrel;
  int rounds;
  int match_trials; /* 0: no zfp-3d-matched rows */
  const char *csv_path;
} bench_options_t;

void bench_usage(FILE *out);

/* 1: run; 0: --help asked for; -1: error, message in err (BENCH_ERR_LEN). */
int bench_parse_args(int argc, char **argv, bench_options_t *o, char *err);

/* ---- the field and its buffers (main.c) --------------------------------- */
typedef struct {
  size_t nx, ny, nz, count, esize;
  pccl_dtype_t dtype;
  const void *orig; /* count elements, x fastest */
  void *dec;        /* count elements: every codec decodes here */
  uint8_t *comp;    /* cap bytes: every codec compresses here */
  size_t cap;
  double lo, hi; /* smallest and largest finite value of orig */
  int finite;    /* 1 when every value is finite, as ZFP needs */
} bench_field_t;

/* ---- codecs.c, zfp3d.c -------------------------------------------------- */
typedef enum { BENCH_FAIL = -1, BENCH_OK = 0, BENCH_SKIP = 1 } bench_status_t;

/* One codec as the benchmark drives it: compress f->orig into f->comp at
 * tolerance tol, decompress f->comp into f->dec. BENCH_SKIP means the codec
 * does not take this input (err says why); BENCH_FAIL is a codec error. */
typedef struct bench_codec {
  const char *name;
  pccl_codec_t codec; /* the pccl codec behind the row, when there is one */
  int (*available)(const struct bench_codec *c);
  size_t (*capacity)(const struct bench_codec *c, const bench_field_t *f); /* 0: overflow */
  double (*tolerance)(double tol); /* the tolerance the codec really applies */
  bench_status_t (*compress)(const struct bench_codec *c, const bench_field_t *f, double tol,
                             size_t *size, char *err);
  bench_status_t (*decompress)(const struct bench_codec *c, const bench_field_t *f, double tol,
                               size_t size, char *err);
} bench_codec_t;

extern const bench_codec_t bench_szp;   /* pccl_compress, PCCL_CODEC_SZP */
extern const bench_codec_t bench_szi;   /* pccl_compress_3d, PCCL_CODEC_SZI, the field's shape */
extern const bench_codec_t bench_zfp1d; /* pccl_compress, PCCL_CODEC_ZFP (1-D) */
extern const bench_codec_t bench_zfp3d; /* libzfp directly, 3-D field */

/* ZFP's fixed-accuracy mode truncates a tolerance to a power of two. */
double bench_zfp_tolerance(double tol);

/* "zfp x.y.z" of the linked libzfp, or "no zfp". */
const char *bench_zfp_version(void);

/* ---- measure.c ---------------------------------------------------------- */
typedef struct {
  const char *label; /* codec column */
  double rel, bound; /* the requested bound, relative and absolute */
  double tol;        /* tolerance the codec applied */
  size_t bytes;      /* compressed size */
  double compress_s, decompress_s; /* best of the rounds */
  pccl_accuracy_t acc;
} bench_row_t;

/* Round-trips f through c at tol once untimed (page faults, caches), then
 * times `rounds` compressions and `rounds` decompressions, keeps the best of
 * each and measures the last decoded array. Fills all of row but label,
 * rel and bound. */
bench_status_t bench_measure(const bench_codec_t *c, const bench_field_t *f, double tol, int rounds,
                             bench_row_t *row, char *err);

/* The largest tolerance at which c's measured max error stays at or below
 * target, found in at most `trials` round trips; *tol gets it, *used the
 * trials spent. BENCH_SKIP when no trial met the target. */
bench_status_t bench_match(const bench_codec_t *c, const bench_field_t *f, double start,
                           double target, int trials, double *tol, int *used, char *err);

/* ---- report.c ----------------------------------------------------------- */
void bench_print_header(const bench_options_t *o, const bench_field_t *f, int zfp);
void bench_print_columns(void);
void bench_print_row(const bench_row_t *row, const bench_field_t *f);
/* Each of pccl's rows (rows[0 .. own)) against each ZFP row of one bound
 * (rows[own .. nrows)). */
void bench_print_summary(const bench_row_t *rows, int own, int nrows);
void bench_csv_header(FILE *csv);
void bench_csv_row(FILE *csv, const bench_options_t *o, const bench_field_t *f,
                   const bench_row_t *row);

#endif
