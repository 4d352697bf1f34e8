/* main.c - pccl-sim: predicts a collective's time on a machine profile by
 * simulating the schedules pccl would run (src/sim/), over a range of sizes
 * and algorithms; prints a table and optionally writes CSV. Needs no MPI.
 *
 * Sizes follow pccl-bench (nccl-tests): the size of an all-gather, reduce-
 * scatter, scatter, gather or all-to-all is count x nranks x element size,
 * of the others count x element size; bus bandwidth uses nccl-tests' factors.
 * The compressed (lossy) algorithms run like the others; their streams are
 * assumed to compress by --ratio. Each row gives the run's wall times, its
 * peak memory (the process's resident high-water mark, reset before each
 * run through /proc/self/clear_refs where Linux allows it, else the
 * process's peak so far) and how many ranks were simulated ("all", or one
 * per class); runs longer than a few seconds report progress on stderr. */
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "config.h"
#include "sim.h"

#define MAX_ALGOS 64
#define ERR_LEN 512

typedef struct {
  const char *profile_path, *csv_path, *algos;
  int nranks, ranks_per_node; /* ranks_per_node 0: the profile's */
  pccl_coll_t coll;
  pccl_dtype_t dtype;
  size_t min_bytes, max_bytes;
  int factor;
  double ratio; /* compression ratio of the lossy algorithms' streams */
  int full;     /* --sim full */
  pccl_choice_t choice[MAX_ALGOS];
  int nchoices;
} options_t;

static void usage(FILE *out) {
  fputs("usage: pccl-sim --profile FILE --ranks N [options]\n"
        "  --profile FILE       machine profile (docs/profile-format.md); required\n"
        "  --ranks N            ranks to simulate, 1 to 1048576; required\n"
        "  --ranks-per-node M   consecutive ranks per node (default: the profile's)\n"
        "  -c COLL              allgather, reducescatter, allreduce, broadcast, reduce,\n"
        "                       scatter, gather, alltoall, scan, exscan, allgatherv or\n"
        "                       reducescatterv (the v-collectives with equal blocks:\n"
        "                       the simulator takes no counts; default allgather)\n"
        "  -a LIST              comma list of NAME or NAME:K (k of a parameterized\n"
        "                       algorithm), or all: every registered one, the\n"
        "                       compressed (lossy) ones included (default all)\n"
        "  --ratio R            compression ratio (uncompressed / compressed bytes) of\n"
        "                       the lossy algorithms' streams, a number >= 1 (default 1:\n"
        "                       streams as large as the data); plain ones ignore it\n"
        "  -b SIZE              smallest size in bytes (default 1K); K, M, G are powers\n"
        "                       of 1024; sizes as pccl-bench: all-gather, reduce-scatter,\n"
        "                       scatter, gather, all-to-all and the v-collectives count\n"
        "                       the whole vector (count x ranks), the others one\n"
        "                       rank's\n"
        "  -e SIZE              largest size in bytes (default 64M)\n"
        "  -f FACTOR            integer size factor, at least 2 (default 2)\n"
        "  -t DTYPE             element type: int8, uint8, int32, uint32, int64, uint64,\n"
        "                       float16, bfloat16, float32 (or float), float64 (or double)\n"
        "                       (default float32)\n"
        "  --sim MODE           auto (default): where every node's schedules are node\n"
        "                       0's up to a renaming of the nodes, simulate node 0's\n"
        "                       ranks only (the same prediction; docs/simulator.md);\n"
        "                       full: simulate every rank\n"
        "  --csv FILE           also write the results as CSV to FILE\n"
        "  -h, --help           show this help\n"
        "exit status: 0 success, 1 a simulation failed, 2 bad arguments or profile\n",
        out);
}

/* ---- values ---------------------------------------------------------------- */

static int parse_coll(const char *text, pccl_coll_t *out) {
  int c = pccl__coll_from_name(text);
  if (c < 0) return 0;
  *out = (pccl_coll_t)c;
  return 1;
}

static int parse_dtype(const char *text, pccl_dtype_t *out) {
  if (strcmp(text, "float") == 0) text = "float32";
  if (strcmp(text, "double") == 0) text = "float64";
  for (int d = 0; d < PCCL_DTYPE_COUNT; d++)
    if (strcmp(text, pccl_dtype_name((pccl_dtype_t)d)) == 0) {
      *out = (pccl_dtype_t)d;
      return 1;
    }
  return 0;
}

/* One item of -a: NAME or NAME:K, as the library reads it. */
static int parse_choice(pccl_coll_t coll, const char *item, size_t len, pccl_choice_t *out,
                        char *err) {
  char text[96], why[160];
  if (len >= sizeof text) {
    snprintf(err, ERR_LEN, "-a: item '%.*s...' is too long", 32, item);
    return 0;
  }
  memcpy(text, item, len);
  text[len] = '\0';
  if (pccl_choice_parse(coll, text, out, why, sizeof why) == PCCL_OK) return 1;
  snprintf(err, ERR_LEN, "-a: %s", why);
  return 0;
}

static int parse_algos(options_t *o, char *err) {
  o->nchoices = 0;
  if (strcmp(o->algos, "all") == 0) {
    for (int i = 0; i < PCCL_ALGO_COUNT && o->nchoices < MAX_ALGOS; i++)
      if (pccl_algos[i].coll == o->coll) o->choice[o->nchoices++] = (pccl_choice_t){&pccl_algos[i], pccl_algos[i].k};
    return 1;
  }
  for (const char *s = o->algos;;) {
    const char *comma = strchr(s, ',');
    size_t len = comma ? (size_t)(comma - s) : strlen(s);
    if (o->nchoices == MAX_ALGOS) {
      snprintf(err, ERR_LEN, "-a: more than %d algorithms", MAX_ALGOS);
      return 0;
    }
    if (!parse_choice(o->coll, s, len, &o->choice[o->nchoices++], err)) return 0;
    if (!comma) return 1;
    s = comma + 1;
  }
}

/* ---- command line ------------------------------------------------------------- */

static int apply(options_t *o, const char *flag, const char *v, char *err) {
  int ok = 1;
  if (strcmp(flag, "--profile") == 0)
    o->profile_path = v;
  else if (strcmp(flag, "--csv") == 0)
    o->csv_path = v;
  else if (strcmp(flag, "-a") == 0)
    o->algos = v;
  else if (strcmp(flag, "--ranks") == 0)
    ok = pccl_cli_int(v, 1, 1 << 20, &o->nranks);
  else if (strcmp(flag, "--ranks-per-node") == 0)
    ok = pccl_cli_int(v, 1, 1 << 20, &o->ranks_per_node);
  else if (strcmp(flag, "-c") == 0)
    ok = parse_coll(v, &o->coll);
  else if (strcmp(flag, "-t") == 0)
    ok = parse_dtype(v, &o->dtype);
  else if (strcmp(flag, "-b") == 0)
    ok = pccl_cli_size(v, &o->min_bytes);
  else if (strcmp(flag, "-e") == 0)
    ok = pccl_cli_size(v, &o->max_bytes);
  else if (strcmp(flag, "-f") == 0)
    ok = pccl_cli_int(v, 2, INT_MAX, &o->factor);
  else if (strcmp(flag, "--ratio") == 0)
    ok = pccl_cli_real(v, 1.0, DBL_MAX, &o->ratio);
  else if (strcmp(flag, "--sim") == 0)
    ok = (o->full = strcmp(v, "full") == 0) || strcmp(v, "auto") == 0;
  else {
    snprintf(err, ERR_LEN, "unknown option '%s' (see --help)", flag);
    return 0;
  }
  if (!ok) snprintf(err, ERR_LEN, "%s: bad value '%s' (see --help)", flag, v);
  return ok;
}

/* 1: run; 0: --help shown; -1: error in err. */
static int parse_args(int argc, char **argv, options_t *o, char *err) {
  *o = (options_t){.algos = "all", .coll = PCCL_COLL_ALLGATHER, .dtype = PCCL_FLOAT32,
                   .min_bytes = 1024, .max_bytes = 64u << 20, .factor = 2, .ratio = 1.0};
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) return 0;
    if (i + 1 >= argc) {
      snprintf(err, ERR_LEN, "%s: missing value (see --help)", argv[i]);
      return -1;
    }
    if (!apply(o, argv[i], argv[i + 1], err)) return -1;
    i++;
  }
  if (!o->profile_path) snprintf(err, ERR_LEN, "--profile FILE is required");
  else if (o->nranks == 0) snprintf(err, ERR_LEN, "--ranks N is required");
  else if (o->min_bytes > o->max_bytes) snprintf(err, ERR_LEN, "-b is larger than -e");
  else return parse_algos(o, err) ? 1 : -1;
  return -1;
}

/* ---- running --------------------------------------------------------------------- */

static int whole_vector(pccl_coll_t c) {
  return c == PCCL_COLL_ALLGATHER || c == PCCL_COLL_REDUCE_SCATTER || c == PCCL_COLL_SCATTER ||
         c == PCCL_COLL_GATHER || c == PCCL_COLL_ALLTOALL || c == PCCL_COLL_ALLGATHERV ||
         c == PCCL_COLL_REDUCE_SCATTERV;
}

/* nccl-tests' factor from algorithm bandwidth to bus bandwidth. */
static double bus_factor(pccl_coll_t c, int n) {
  if (c == PCCL_COLL_ALLREDUCE) return 2.0 * (n - 1) / n;
  if (c == PCCL_COLL_BROADCAST || c == PCCL_COLL_REDUCE) return 1.0;
  return (double)(n - 1) / n;
}

/* ---- progress and memory ------------------------------------------------- */

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct {
  const char *algo;
  size_t bytes;
  double start, last; /* when the run began, when progress was last shown */
} progress_t;

/* Shows where a run is, first after 5 s, then at most every 5 s. */
static void show_progress(void *ctx, const char *phase, size_t done, size_t total) {
  progress_t *pr = ctx;
  double t = now();
  if (t - pr->start < 5 || t - pr->last < 5) return;
  pr->last = t;
  fprintf(stderr, "pccl-sim: %s at %zu bytes: %s, %zu of %zu %s (%.0f s)\n", pr->algo, pr->bytes,
          phase, done, total, strcmp(phase, "generating") == 0 ? "ranks" : "steps", t - pr->start);
}

/* Resets the resident high-water mark; 0 where the kernel does not allow it. */
static int reset_peak(void) {
  FILE *f = fopen("/proc/self/clear_refs", "w");
  if (!f) return 0;
  int ok = fputs("5", f) >= 0;
  return fclose(f) == 0 && ok;
}

/* The resident high-water mark in MiB (VmHWM); -1 if unknown. */
static double peak_mib(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  double kib = -1;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "VmHWM: %lf kB", &kib) == 1) break;
  if (f) fclose(f);
  return kib < 0 ? -1 : kib / 1024;
}

static int simulate_size(const options_t *o, const pccl_profile_t *p, size_t bytes, FILE *csv) {
  size_t esize = pccl_dtype_size(o->dtype);
  size_t mult = whole_vector(o->coll) ? (size_t)o->nranks : 1;
  size_t count = bytes / (mult * esize);
  if (count == 0) {
    printf("# %zu bytes: less than one element per rank, skipped\n", bytes);
    return 0;
  }
  bytes = count * mult * esize;
  int nnodes = (o->nranks + o->ranks_per_node - 1) / o->ranks_per_node, failed = 0;
  for (int i = 0; i < o->nchoices; i++) {
    const pccl_choice_t *ch = &o->choice[i];
    progress_t pr = {ch->algo->name, bytes, now(), 0};
    pccl_sim_case_t c = {o->coll, ch->algo, ch->k, o->nranks, o->ranks_per_node, count, esize,
                         o->ratio, o->full, show_progress, &pr, 0};
    pccl_sim_result_t r;
    reset_peak();
    pccl_status_t st = pccl_sim_run(p, &c, &r);
    double peak = peak_mib();
    int k = ch->k;
    if (st != PCCL_OK) {
      fprintf(stderr, "pccl-sim: %s %s k=%d at %zu bytes: %s: %s\n", pccl_coll_name(o->coll),
              ch->algo->name, k, bytes, pccl_status_string(st), r.message);
      failed = 1;
      continue;
    }
    double algbw = r.seconds > 0 ? (double)bytes / r.seconds / 1e9 : 0;
    double busbw = algbw * bus_factor(o->coll, o->nranks);
    char ranks[16];
    snprintf(ranks, sizeof ranks, r.classes ? "%d" : "all", r.classes);
    printf("%12zu %12zu  %-14s %4d %12.3f %9.3f %9.3f %10zu %11zu %8.3f %8.3f %8.0f %6s\n", bytes,
           count, ch->algo->name, k, r.seconds * 1e6, algbw, busbw, r.nmessages, r.nsteps,
           r.gen_wall, r.sim_wall, peak, ranks);
    fflush(stdout);
    if (csv)
      fprintf(csv, "%s,%s,%d,%d,%d,%zu,%.6f,%.6f,%.6f,%zu,%zu,%zu,%.4f,%.4f,%d,%g,%.0f,%d\n",
              pccl_coll_name(o->coll), ch->algo->name, k, o->nranks, nnodes, bytes,
              r.seconds * 1e6, algbw, busbw, count, r.nmessages, r.nsteps, r.gen_wall, r.sim_wall,
              ch->algo->lossy, ch->algo->lossy ? o->ratio : 1.0, peak, r.classes);
  }
  return failed;
}

/* Names the compressed algorithms among the choices, and what they assume. */
static void print_lossy(const options_t *o, const pccl_profile_t *p) {
  int any = 0;
  for (int i = 0; i < o->nchoices; i++) {
    if (!o->choice[i].algo->lossy) continue;
    printf("%s %s", any ? "," : "# compressed (lossy):", o->choice[i].algo->name);
    any = 1;
  }
  if (any)
    printf("; streams at ratio %g; compress %.3g GB/s, decompress %.3g GB/s per rank\n",
           o->ratio, p->compress > 0 ? 1e-9 / p->compress : INFINITY,
           p->decompress > 0 ? 1e-9 / p->decompress : INFINITY);
}

static int run(const options_t *o, const pccl_profile_t *p, FILE *csv) {
  int nnodes = (o->nranks + o->ranks_per_node - 1) / o->ranks_per_node, failed = 0;
  printf("# pccl-sim: profile %s, %d ranks, %d per node (%d nodes), %s, %s\n", p->name,
         o->nranks, o->ranks_per_node, nnodes, pccl_coll_name(o->coll), pccl_dtype_name(o->dtype));
  print_lossy(o, p);
  printf("#%11s %12s  %-14s %4s %12s %9s %9s %10s %11s %8s %8s %8s %6s\n", "size(B)", "count",
         "algorithm", "k", "time_us", "algbw", "busbw", "messages", "steps", "gen_s", "sim_s",
         "peak", "ranks");
  printf("#%11s %12s  %-14s %4s %12s %9s %9s %10s %11s %8s %8s %8s %6s\n", "", "(elements)", "",
         "", "(predicted)", "(GB/s)", "(GB/s)", "", "", "(wall)", "(wall)", "(MiB)", "(sim)");
  if (csv)
    fputs("collective,algorithm,k,nranks,nnodes,bytes,time_us,algbw_gbs,busbw_gbs,count,"
          "messages,steps,gen_wall_s,sim_wall_s,lossy,ratio,peak_mib,classes\n", csv);
  for (size_t bytes = o->min_bytes; bytes <= o->max_bytes;) {
    failed |= simulate_size(o, p, bytes, csv);
    if (bytes > SIZE_MAX / (size_t)o->factor) break;
    bytes *= (size_t)o->factor;
  }
  return failed;
}

int main(int argc, char **argv) {
  options_t o;
  char err[ERR_LEN] = "";
  int parsed = parse_args(argc, argv, &o, err);
  if (parsed == 0) {
    usage(stdout);
    return 0;
  }
  if (parsed < 0) {
    fprintf(stderr, "pccl-sim: %s\n", err);
    return 2;
  }
  pccl_profile_t p;
  if (pccl_profile_load(o.profile_path, &p, err, sizeof err) != PCCL_OK) {
    fprintf(stderr, "pccl-sim: %s\n", err);
    return 2;
  }
  if (o.ranks_per_node == 0) o.ranks_per_node = p.ranks_per_node;
  FILE *csv = NULL;
  if (o.csv_path && !(csv = fopen(o.csv_path, "w"))) {
    fprintf(stderr, "pccl-sim: cannot open %s: %s\n", o.csv_path, strerror(errno));
    return 2;
  }
  int failed = run(&o, &p, csv);
  if (csv && fclose(csv) != 0) {
    fprintf(stderr, "pccl-sim: error writing %s\n", o.csv_path);
    failed = 1;
  }
  return failed ? 1 : 0;
}
