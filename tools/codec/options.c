/* options.c - pccl-codec-bench's command line: strict, so a malformed value
 * is an error (exit status 2) rather than a silent default. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli.h"

void bench_usage(FILE *out) {
  fputs("usage: pccl-codec-bench [options]\n"
        "Compares pccl's codecs with ZFP's fixed-accuracy mode on one thread, on a\n"
        "generated 3-D field: szp and zfp-1d through pccl_compress, szi through\n"
        "pccl_compress_3d with the field's shape, zfp-3d through libzfp on the 3-D\n"
        "field at the same tolerance, and zfp-3d-matched at the tolerance whose max\n"
        "error comes closest to szp's and szi's without exceeding either.\n"
        "  -n NX              cube edge, 1 to 1024 (default 256: 256^3 values)\n"
        "  -d NAME            dataset (default smooth):\n"
        "                    ",
        out);
  for (int k = 0; k < PCCL_DATA_COUNT; k++)
    fprintf(out, "%s %s", k ? "," : "", pccl_data_name((pccl_data_kind_t)k));
  fputs("\n"
        "                     ('large' is generated around the first bound of -r)\n"
        "  -t TYPE            float32 or float64 (default float32)\n"
        "  -r LIST            comma list of bounds relative to the value range, each in\n"
        "                     (0, 1] (default 1e-3,1e-4,1e-5)\n"
        "  --rounds N         timed runs of each compression and decompression, after\n"
        "                     one untimed warm-up; the best is reported (default 5)\n"
        "  --match-trials N   most round trips spent finding zfp-3d-matched's tolerance;\n"
        "                     0 leaves those rows out (default 12)\n"
        "  --csv FILE         also write the rows as CSV to FILE\n"
        "  -h, --help         show this help\n"
        "exit status: 0 success, 1 a codec failed or missed its bound, 2 bad arguments\n",
        out);
}

static int parse_dataset(const char *text, pccl_data_kind_t *out) {
  for (int k = 0; k < PCCL_DATA_COUNT; k++)
    if (strcmp(text, pccl_data_name((pccl_data_kind_t)k)) == 0) {
      *out = (pccl_data_kind_t)k;
      return 1;
    }
  return 0;
}

static int parse_dtype(const char *text, pccl_dtype_t *out) {
  if (strcmp(text, "float32") == 0) *out = PCCL_FLOAT32;
  else if (strcmp(text, "float64") == 0) *out = PCCL_FLOAT64;
  else return 0;
  return 1;
}

/* One relative bound: a plain decimal number in (0, 1], ended by ',' or the end. */
static const char *parse_rel(const char *s, double *out) {
  if (!((s[0] >= '0' && s[0] <= '9') || s[0] == '.')) return NULL;
  char *end = NULL;
  double v = strtod(s, &end);
  if (end == s || (*end != ',' && *end != '\0') || !(v > 0 && v <= 1)) return NULL;
  *out = v;
  return end;
}

static int parse_rel_list(const char *text, bench_options_t *o) {
  o->nrel = 0;
  for (const char *s = text;; s++) {
    if (o->nrel == BENCH_MAX_BOUNDS || !(s = parse_rel(s, &o->rel[o->nrel]))) return 0;
    o->nrel++;
    if (*s == '\0') return 1;
  }
}

static int known(const char *flag) {
  static const char *const flags[] = {"-n", "-d", "-t", "-r", "--rounds", "--match-trials", "--csv"};
  for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
    if (strcmp(flag, flags[i]) == 0) return 1;
  return 0;
}

static int apply(bench_options_t *o, const char *flag, const char *v, char *err) {
  int ok = 1;
  if (strcmp(flag, "-n") == 0)
    ok = pccl_cli_int(v, 1, 1024, &o->edge);
  else if (strcmp(flag, "-d") == 0)
    ok = parse_dataset(v, &o->dataset);
  else if (strcmp(flag, "-t") == 0)
    ok = parse_dtype(v, &o->dtype);
  else if (strcmp(flag, "-r") == 0)
    ok = parse_rel_list(v, o);
  else if (strcmp(flag, "--rounds") == 0)
    ok = pccl_cli_int(v, 1, 1000, &o->rounds);
  else if (strcmp(flag, "--match-trials") == 0)
    ok = pccl_cli_int(v, 0, 64, &o->match_trials);
  else if (strcmp(flag, "--csv") == 0)
    o->csv_path = v;
  if (!ok) snprintf(err, BENCH_ERR_LEN, "%s: bad value '%s' (see --help)", flag, v);
  return ok;
}

int bench_parse_args(int argc, char **argv, bench_options_t *o, char *err) {
  *o = (bench_options_t){.edge = 256, .dataset = PCCL_DATA_SMOOTH, .dtype = PCCL_FLOAT32,
                         .rel = {1e-3, 1e-4, 1e-5}, .nrel = 3, .rounds = 5, .match_trials = 12};
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) return 0;
    if (!known(argv[i])) {
      snprintf(err, BENCH_ERR_LEN, "unknown option '%s' (see --help)", argv[i]);
      return -1;
    }
    if (i + 1 >= argc) {
      snprintf(err, BENCH_ERR_LEN, "%s: missing value (see --help)", argv[i]);
      return -1;
    }
    if (!apply(o, argv[i], argv[i + 1], err)) return -1;
    i++;
  }
  return 1;
}
