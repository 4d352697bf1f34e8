/* report.c - pccl-codec-bench's output: the setup line, one table row per
 * (codec, bound), the per-bound summary of szp and szi against each ZFP row, and
 * the same rows as CSV. */
#include <string.h>

#include "bench.h"

static double original_bytes(const bench_field_t *f) { return (double)(f->count * f->esize); }

static double ratio_of(const bench_row_t *r, const bench_field_t *f) {
  return original_bytes(f) / (double)r->bytes;
}

static double gbs(const bench_field_t *f, double seconds) { return original_bytes(f) / seconds / 1e9; }

static const char *status_of(const bench_row_t *r) {
  return r->acc.max_error <= r->bound ? "ok" : "VIOLATED";
}

void bench_print_header(const bench_options_t *o, const bench_field_t *f, int zfp) {
  printf("# pccl-codec-bench: dataset %s, %zu x %zu x %zu %s = %.1f MiB, values [%.6g, %.6g], "
         "best of %d rounds, one thread, %s\n",
         pccl_data_name(o->dataset), f->nx, f->ny, f->nz, pccl_dtype_name(f->dtype),
         original_bytes(f) / (1 << 20), f->lo, f->hi, o->rounds, zfp ? bench_zfp_version() : "no zfp");
  printf("# GB/s: original bytes / time; ratio: original / compressed bytes; tol: the tolerance "
         "the codec applied (ZFP: a power of two)\n"
         "# summary: szp's and szi's speed and ratio divided by each ZFP row's (above 1: pccl ahead)\n");
}

void bench_print_columns(void) {
  printf("%-15s %8s %10s %10s %9s %10s %10s %10s %9s %8s %9s  %s\n", "codec", "rel", "abs bound",
         "tol", "ratio", "comp GB/s", "dec GB/s", "max error", "err/bound", "PSNR dB", "NRMSE",
         "status");
}

void bench_print_row(const bench_row_t *r, const bench_field_t *f) {
  printf("%-15s %8.1e %10.3e %10.3e %9.2f %10.3f %10.3f %10.3e %9.4f %8.2f %9.3e  %s\n", r->label,
         r->rel, r->bound, r->tol, ratio_of(r, f), gbs(f, r->compress_s), gbs(f, r->decompress_s),
         r->acc.max_error, r->acc.max_error / r->bound, r->acc.psnr, r->acc.nrmse, status_of(r));
  fflush(stdout);
}

void bench_print_summary(const bench_row_t *rows, int own, int nrows) {
  for (int o = 0; o < own && nrows > own; o++) {
    const bench_row_t *me = &rows[o];
    printf("# summary %.1e, %s over:", me->rel, me->label);
    for (int i = own; i < nrows; i++)
      printf("%s %s compress %.2fx decompress %.2fx ratio %.2fx", i > own ? " |" : "", rows[i].label,
             rows[i].compress_s / me->compress_s, rows[i].decompress_s / me->decompress_s,
             (double)rows[i].bytes / (double)me->bytes);
    printf("\n");
  }
  printf("\n");
  fflush(stdout);
}

void bench_csv_header(FILE *csv) {
  fputs("dataset,nx,ny,nz,dtype,codec,rel_bound,abs_bound,tolerance,original_bytes,"
        "compressed_bytes,ratio,compress_s,decompress_s,compress_gbs,decompress_gbs,max_error,"
        "error_over_bound,psnr_db,nrmse,status\n",
        csv);
}

void bench_csv_row(FILE *csv, const bench_options_t *o, const bench_field_t *f, const bench_row_t *r) {
  fprintf(csv, "%s,%zu,%zu,%zu,%s,%s,%.6g,%.9g,%.9g,%.0f,%zu,%.6g,%.6g,%.6g,%.6g,%.6g,%.9g,%.6g,%.6g,"
          "%.6g,%s\n",
          pccl_data_name(o->dataset), f->nx, f->ny, f->nz, pccl_dtype_name(f->dtype), r->label,
          r->rel, r->bound, r->tol, original_bytes(f), r->bytes, ratio_of(r, f), r->compress_s,
          r->decompress_s, gbs(f, r->compress_s), gbs(f, r->decompress_s), r->acc.max_error,
          r->acc.max_error / r->bound, r->acc.psnr, r->acc.nrmse, status_of(r));
}
