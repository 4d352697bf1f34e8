/* main.c - pccl-tune: writes a tuning table (src/tune/table.h,
 * docs/tuning-format.md) by simulating, for each layout, collective and size,
 * every candidate (each registered algorithm; parameterized ones for each k
 * of the list; hierarchical ones only across nodes) on a machine profile and
 * keeping the fastest. Runs of sizes with the same winner become one row.
 * Also writes every prediction as CSV, and the table as C source for the
 * library's built-in table. Needs no MPI.
 *
 * With --ratio R it also writes rows for the lossy calls ("lossy ..."):
 * compressed algorithms, their streams simulated at ratio R, against the
 * plain ones, for the collectives that have compressed algorithms.
 *
 * A candidate whose simulation would hold more than --max-steps steps (a
 * full simulation that rank classes cannot shorten: k-ring with k not
 * dividing the node, say, at thousands of ranks) is left out at that size,
 * and the table says so in a comment: one such run can take minutes where
 * the rest of the layout takes seconds.
 *
 * With -j N, N threads tune the (layout, collective) pairs; each pair's rows
 * and CSV lines are kept apart and written in the order of the command, so
 * the output does not depend on N.
 *
 * usage: pccl-tune --profile FILE --layout N:M [--layout N:M ...] [-o TABLE]
 *                  [--csv FILE] [--c-source FILE] [-c COLLS] [-b 8] [-e 8M]
 *                  [-k 2,3,4,8] [--ratio R] [--max-steps N] [-j N] [-q] */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "config.h"
#include "sim.h"

#define MAX_LAYOUTS 64
#define MAX_KS 16
#define MAX_CANDS 256
#define ERR_LEN 512
#define MAX_THREADS 64

typedef struct {
  const char *profile, *table, *csv, *csource;
  int layouts[MAX_LAYOUTS][2], nlayouts;
  int colls[PCCL_COLL_COUNT], ncolls;
  size_t min_bytes, max_bytes;
  int ks[MAX_KS], nks;
  double ratio; /* > 0: also tune the lossy calls, streams at this ratio */
  size_t max_steps; /* pccl_sim_case_t.max_steps */
  int threads;
  int quiet;
} options_t;

static void usage(FILE *out) {
  fputs("usage: pccl-tune --profile FILE --layout N:M [--layout N:M ...] [options]\n"
        "  --profile FILE   machine profile (docs/profile-format.md); required\n"
        "  --layout N:M     N ranks, M consecutive ranks per node; one or more; required\n"
        "  -o FILE          the tuning table (default: standard output)\n"
        "  --csv FILE       every prediction as CSV\n"
        "  --c-source FILE  the table as C source (src/tune/builtin.c)\n"
        "  -c LIST          collectives (default allgather,reducescatter,allreduce)\n"
        "  -b SIZE, -e SIZE smallest and largest size in bytes, powers of two between\n"
        "                   (default 8 and 8M; K, M, G suffixes; sizes as pccl-bench)\n"
        "  -k LIST          values of k for parameterized algorithms (default 2,3,4,8)\n"
        "  --ratio R        also write rows for the lossy calls, compressed streams\n"
        "                   simulated at compression ratio R (>= 1)\n"
        "  --max-steps N    leave out a candidate whose simulation would hold more than\n"
        "                   N steps (default 16M, 0: no limit; K, M, G suffixes)\n"
        "  -j N             tune N (layout, collective) pairs at once, in threads\n"
        "                   (default 1; the output is the same for every N)\n"
        "  -q               no progress on standard error\n"
        "exit status: 0 success, 1 a simulation failed, 2 bad arguments or profile\n",
        out);
}

static int parse_ints(const char *text, int *out, int max, int lo, int hi, char sep, int *n) {
  const char *p = text;
  for (*n = 0; *p; (*n)++) {
    char *end = NULL;
    errno = 0;
    long v = strtol(p, &end, 10);
    if (*n == max || p[0] < '0' || p[0] > '9' || errno == ERANGE || v < lo || v > hi) return 0;
    out[*n] = (int)v;
    if (*end == sep && end[1]) end++;
    else if (*end) return 0;
    p = end;
  }
  return *n > 0;
}

static int parse_colls(const char *text, options_t *o) {
  char buf[256];
  if (strlen(text) >= sizeof buf) return 0;
  strcpy(buf, text);
  char *save = NULL;
  o->ncolls = 0;
  for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    int c = pccl__coll_from_name(t);
    if (c < 0 || o->ncolls == PCCL_COLL_COUNT) return 0;
    o->colls[o->ncolls++] = c;
  }
  return o->ncolls > 0;
}

/* A size (K, M, G suffixes), or 0 for no limit, which sizes exclude. */
static int parse_max_steps(const char *text, size_t *out) {
  if (!strcmp(text, "0")) {
    *out = 0;
    return 1;
  }
  return pccl_cli_size(text, out);
}

/* 1: run; 0: help; -1: error (message in err). */
static int parse_args(int argc, char **argv, options_t *o, char *err) {
  memset(o, 0, sizeof(*o));
  o->min_bytes = 8;
  o->max_bytes = 8u << 20;
  o->max_steps = (size_t)1 << 24;
  o->threads = 1;
  o->ks[0] = 2, o->ks[1] = 3, o->ks[2] = 4, o->ks[3] = 8, o->nks = 4;
  o->colls[0] = PCCL_COLL_ALLGATHER, o->colls[1] = PCCL_COLL_REDUCE_SCATTER;
  o->colls[2] = PCCL_COLL_ALLREDUCE, o->ncolls = 3;
  for (int i = 1; i < argc; i++) {
    const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int ok = 1, n;
    if (!strcmp(f, "-h") || !strcmp(f, "--help")) return 0;
    if (!strcmp(f, "-q")) {
      o->quiet = 1;
      continue;
    }
    if (!v) {
      snprintf(err, ERR_LEN, "%s needs a value (or is unknown; see --help)", f);
      return -1;
    }
    i++;
    if (!strcmp(f, "--profile")) o->profile = v;
    else if (!strcmp(f, "-o")) o->table = v;
    else if (!strcmp(f, "--csv")) o->csv = v;
    else if (!strcmp(f, "--c-source")) o->csource = v;
    else if (!strcmp(f, "-c")) ok = parse_colls(v, o);
    else if (!strcmp(f, "-b")) ok = pccl_cli_size(v, &o->min_bytes);
    else if (!strcmp(f, "-e")) ok = pccl_cli_size(v, &o->max_bytes);
    else if (!strcmp(f, "-k")) ok = parse_ints(v, o->ks, MAX_KS, 2, PCCL_K_MAX, ',', &o->nks);
    else if (!strcmp(f, "--ratio")) ok = pccl_cli_real(v, 1.0, 1e6, &o->ratio);
    else if (!strcmp(f, "--max-steps")) ok = parse_max_steps(v, &o->max_steps);
    else if (!strcmp(f, "-j")) ok = pccl_cli_int(v, 1, MAX_THREADS, &o->threads);
    else if (!strcmp(f, "--layout")) {
      ok = o->nlayouts < MAX_LAYOUTS &&
           parse_ints(v, o->layouts[o->nlayouts], 2, 1, 1 << 20, ':', &n) && n == 2;
      o->nlayouts += ok;
    } else {
      snprintf(err, ERR_LEN, "unknown option %s (see --help)", f);
      return -1;
    }
    if (!ok) {
      snprintf(err, ERR_LEN, "bad value for %s: \"%s\"", f, v);
      return -1;
    }
  }
  if (!o->profile || !o->nlayouts) {
    snprintf(err, ERR_LEN, "--profile and at least one --layout are required (see --help)");
    return -1;
  }
  if (o->min_bytes > o->max_bytes) {
    snprintf(err, ERR_LEN, "-b is larger than -e");
    return -1;
  }
  return 1;
}

/* The candidates for one collective on a layout: the plain algorithms, and
 * for the lossy calls the compressed ones too; not the node segment's
 * (seg) across nodes, where it cannot run. */
static int candidates(const options_t *o, pccl_coll_t coll, int lossy, int nranks, int nnodes,
                      pccl_choice_t *out) {
  int n = 0;
  for (int i = 0; i < PCCL_ALGO_COUNT; i++) {
    const pccl_algo_t *a = &pccl_algos[i];
    int hier = strncmp(a->name, "hier_", 5) == 0;
    if (a->coll != coll || (a->lossy && !lossy) || (hier && nnodes < 2)) continue;
    if (a->generate == pccl_gen_seg && nnodes > 1) continue;
    if (!a->kset) {
      if (n < MAX_CANDS) out[n++] = (pccl_choice_t){a, a->k};
      continue;
    }
    /* k beyond the members it spans only repeats a smaller case */
    int span = hier ? nnodes : nranks;
    for (int j = 0; j < o->nks; j++)
      if (o->ks[j] <= span && n < MAX_CANDS) out[n++] = (pccl_choice_t){a, o->ks[j]};
  }
  return n;
}

static int whole_vector(pccl_coll_t c) {
  return c == PCCL_COLL_ALLGATHER || c == PCCL_COLL_REDUCE_SCATTER || c == PCCL_COLL_SCATTER ||
         c == PCCL_COLL_GATHER || c == PCCL_COLL_ALLTOALL;
}

/* The shared progress count; its lock also guards run_t's job queue. */
typedef struct {
  pthread_mutex_t lock;
  int done, total, quiet;
} progress_t;

/* Where one (layout, collective) pair writes: rows and CSV lines into
 * memory streams of its own, so that pairs tuned at once do not mix. */
typedef struct {
  FILE *table, *csv;
  progress_t *progress;
} out_t;

static void emit(out_t *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void emit(out_t *w, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfprintf(w->table, fmt, ap);
  va_end(ap);
}

/* The fastest candidate at one size; -1 when the size is below one element
 * per rank (or every candidate is left out), -2 when a simulation failed.
 * Bit `at` of left[i] is set when candidate i is left out (over max_steps)
 * at this size, the at-th tried. Every size tries every candidate again:
 * whether a job can run as classes depends on its size (blocks of one size
 * on every rank, or not). */
static int best_at(const options_t *o, const pccl_profile_t *p, const pccl_choice_t *cand,
                   int ncand, uint64_t *left, int at, pccl_coll_t coll, int nranks, int rpn,
                   size_t bytes, double ratio, out_t *w) {
  size_t esize = 4, mult = whole_vector(coll) ? (size_t)nranks : 1;
  size_t count = bytes / (mult * esize);
  if (count == 0) return -1;
  int best = -1;
  double best_t = 0;
  for (int i = 0; i < ncand; i++) {
    pccl_sim_case_t c = {.coll = coll, .algo = cand[i].algo, .k = cand[i].k, .nranks = nranks,
                         .ranks_per_node = rpn, .count = count, .elem_size = esize, .ratio = ratio,
                         .max_steps = o->max_steps};
    pccl_sim_result_t r;
    if (pccl_sim_run(p, &c, &r) != PCCL_OK) {
      if (r.over_max_steps) {
        left[i] |= (uint64_t)1 << at;
        continue;
      }
      fprintf(stderr, "pccl-tune: simulating %s %s:%d on %d ranks at %zu bytes failed\n",
              pccl_coll_name(coll), cand[i].algo->name, cand[i].k, nranks, bytes);
      return -2;
    }
    if (w->csv)
      fprintf(w->csv, "%d,%d,%s,%d,%zu,%s,%d,%.6f\n", nranks, rpn, pccl_coll_name(coll), ratio > 0,
              bytes, cand[i].algo->name, cand[i].k, r.seconds * 1e6);
    if (best < 0 || r.seconds < best_t) {
      best = i;
      best_t = r.seconds;
    }
  }
  return best;
}

static void progress(out_t *w, int nranks, int rpn, pccl_coll_t coll, size_t bytes) {
  progress_t *pr = w->progress;
  pthread_mutex_lock(&pr->lock);
  pr->done++;
  if (!pr->quiet)
    fprintf(stderr, "\rpccl-tune: [%3d%%] layout %d:%d %-13s %10zu B   ", 100 * pr->done / pr->total,
            nranks, rpn, pccl_coll_name(coll), bytes);
  pthread_mutex_unlock(&pr->lock);
}

/* One row: "[lossy ]coll max algo[:k]". */
static void emit_row(out_t *w, int lossy, pccl_coll_t coll, const char *max, pccl_choice_t c) {
  emit(w, "%s%s %s %s", lossy ? "lossy " : "", pccl_coll_name(coll), max, c.algo->name);
  emit(w, c.algo->kset ? ":%d\n" : "\n", c.k);
}

/* A comment naming a candidate left out and the sizes (runs of doubling
 * sizes as FIRST-LAST) where it was: "# allreduce kring:4 left out at
 * 4096-65536, 1048576 B: ...". */
static void emit_left_out(const options_t *o, out_t *w, int lossy, pccl_coll_t coll,
                          pccl_choice_t c, uint64_t left) {
  emit(w, "# %s%s %s", lossy ? "lossy " : "", pccl_coll_name(coll), c.algo->name);
  emit(w, c.algo->kset ? ":%d left out at" : " left out at", c.k);
  const char *sep = " ";
  for (int j = 0; j < 64; j++) {
    if (!(left >> j & 1)) continue;
    int e = j;
    while (e + 1 < 64 && left >> (e + 1) & 1) e++;
    emit(w, "%s%zu", sep, o->min_bytes << j);
    if (e > j) emit(w, "-%zu", o->min_bytes << e);
    sep = ", ";
    j = e;
  }
  emit(w, " B: more than %zu steps to simulate\n", o->max_steps);
}

static int tune_coll(const options_t *o, const pccl_profile_t *p, int nranks, int rpn,
                     pccl_coll_t coll, int lossy, out_t *w) {
  int nnodes = (nranks + rpn - 1) / rpn;
  pccl_choice_t cand[MAX_CANDS];
  int ncand = candidates(o, coll, lossy, nranks, nnodes, cand);
  pccl_choice_t run = {NULL, 0};
  size_t run_end = 0;
  uint64_t left[MAX_CANDS] = {0};
  char max[32];
  int at = 0;
  for (size_t bytes = o->min_bytes; bytes <= o->max_bytes; bytes *= 2, at++) {
    int b = best_at(o, p, cand, ncand, left, at, coll, nranks, rpn, bytes, lossy ? o->ratio : 0, w);
    progress(w, nranks, rpn, coll, bytes);
    if (b == -2) return 1;
    if (b < 0) continue;
    if (run.algo && (run.algo != cand[b].algo || run.k != cand[b].k)) {
      snprintf(max, sizeof max, "%zu", run_end);
      emit_row(w, lossy, coll, max, run);
    }
    run = cand[b];
    run_end = bytes;
  }
  if (run.algo) emit_row(w, lossy, coll, "inf", run);
  for (int i = 0; i < ncand; i++)
    if (left[i]) emit_left_out(o, w, lossy, coll, cand[i], left[i]);
  return 0;
}

/* Whether the lossy calls of coll have compressed algorithms to tune. */
static int has_lossy(pccl_coll_t coll) {
  for (int i = 0; i < PCCL_ALGO_COUNT; i++)
    if (pccl_algos[i].coll == coll && pccl_algos[i].lossy) return 1;
  return 0;
}

/* The command line as comment lines of at most about 100 characters: the
 * table's lines may not pass 255 (docs/tuning-format.md), and a command
 * with many layouts does. A word too long for one line is cut. */
static void emit_command(out_t *w, int argc, char **argv) {
  enum { WIDTH = 100, CHUNK = 200 };
  size_t col = 0;
  for (int i = 0; i < argc; i++) {
    const char *word = i == 0 ? "pccl-tune" : argv[i];
    size_t len = strlen(word);
    if (col == 0 || col + 1 + len > WIDTH) {
      emit(w, "%s#  ", col ? "\n" : "");
      col = 3;
    }
    for (size_t at = 0; at < len || at == 0; at += CHUNK) {
      if (at > 0) {
        emit(w, "\n#  ");
        col = 3;
      }
      size_t n = len - at < CHUNK ? len - at : CHUNK;
      emit(w, " %.*s", (int)n, word + at);
      col += 1 + n;
      if (len == 0) break;
    }
  }
  emit(w, "\n");
}

static int write_c_source(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return 0;
  fputs("/* builtin.c - the tuning table built into the library; written by\n"
        " * pccl-tune (see the command in the table's first lines), do not edit. */\n"
        "#include \"table.h\"\n\nconst char pccl_tune_builtin[] =\n",
        f);
  const char *s = text ? text : "";
  for (const char *line = s; *line;) {
    const char *eol = strchr(line, '\n');
    size_t len = eol ? (size_t)(eol - line) : strlen(line);
    fputs("    \"", f);
    for (size_t i = 0; i < len; i++) {
      if (line[i] == '"' || line[i] == '\\') fputc('\\', f);
      fputc(line[i], f);
    }
    fputs("\\n\"\n", f);
    line += len + (eol ? 1 : 0);
  }
  fputs("    \"\";\n", f);
  return fclose(f) == 0;
}

/* One (layout, collective) pair: its rows and CSV lines once tuned. */
typedef struct {
  int layout, lossy;
  pccl_coll_t coll;
  char *rows, *lines;
  size_t rows_len, lines_len;
} job_t;

typedef struct {
  const options_t *o;
  const pccl_profile_t *p;
  job_t *jobs;
  int njobs, next, failed;
  progress_t progress;
} run_t;

static int run_job(run_t *run, job_t *j) {
  const options_t *o = run->o;
  out_t w = {open_memstream(&j->rows, &j->rows_len),
             o->csv ? open_memstream(&j->lines, &j->lines_len) : NULL, &run->progress};
  int failed = !w.table || (o->csv && !w.csv);
  if (failed) fprintf(stderr, "pccl-tune: out of memory\n");
  else failed = tune_coll(o, run->p, o->layouts[j->layout][0], o->layouts[j->layout][1], j->coll,
                          j->lossy, &w);
  if (w.table && fclose(w.table) != 0) failed = 1;
  if (w.csv && fclose(w.csv) != 0) failed = 1;
  return failed;
}

/* Takes pairs off the queue until none is left or one has failed. */
static void *worker(void *arg) {
  run_t *run = arg;
  for (;;) {
    pthread_mutex_lock(&run->progress.lock);
    int i = run->failed ? run->njobs : run->next++;
    pthread_mutex_unlock(&run->progress.lock);
    if (i >= run->njobs) return NULL;
    if (run_job(run, &run->jobs[i])) {
      pthread_mutex_lock(&run->progress.lock);
      run->failed = 1;
      pthread_mutex_unlock(&run->progress.lock);
    }
  }
}

/* The pairs in the order of the output: per layout, the plain calls, then
 * the lossy ones. */
static int make_jobs(const options_t *o, job_t *jobs) {
  int n = 0;
  for (int l = 0; l < o->nlayouts; l++) {
    for (int c = 0; c < o->ncolls; c++) jobs[n++] = (job_t){.layout = l, .coll = o->colls[c]};
    for (int c = 0; c < o->ncolls; c++)
      if (o->ratio > 0 && has_lossy((pccl_coll_t)o->colls[c]))
        jobs[n++] = (job_t){.layout = l, .coll = o->colls[c], .lossy = 1};
  }
  return n;
}

static void run_all(run_t *run) {
  pthread_t tid[MAX_THREADS];
  int started = 0;
  while (started < run->o->threads - 1 && pthread_create(&tid[started], NULL, worker, run) == 0)
    started++;
  worker(run);
  for (int i = 0; i < started; i++) pthread_join(tid[i], NULL);
}

/* The whole table: the command, then each layout's section. */
static char *table_text(const run_t *run, int argc, char **argv, const char *profile_name) {
  char *text = NULL;
  size_t len = 0;
  out_t w = {open_memstream(&text, &len), NULL, NULL};
  if (!w.table) return NULL;
  emit(&w, "# pccl tuning table (docs/tuning-format.md), profile %s, made by:\n", profile_name);
  emit_command(&w, argc, argv);
  for (int i = 0; i < run->njobs; i++) {
    const job_t *j = &run->jobs[i];
    if (i == 0 || j->layout != run->jobs[i - 1].layout)
      emit(&w, "layout %d %d\n", run->o->layouts[j->layout][0], run->o->layouts[j->layout][1]);
    fwrite(j->rows, 1, j->rows_len, w.table);
  }
  if (fclose(w.table) != 0) {
    free(text);
    return NULL;
  }
  return text;
}

static int write_outputs(const run_t *run, const char *text, FILE *table, FILE *csv,
                         const char *csource) {
  int failed = fputs(text, table) == EOF;
  if (csv) {
    fputs("nranks,ranks_per_node,collective,lossy,bytes,algorithm,k,time_us\n", csv);
    for (int i = 0; i < run->njobs; i++) fwrite(run->jobs[i].lines, 1, run->jobs[i].lines_len, csv);
  }
  if (csource && !write_c_source(csource, text)) {
    fprintf(stderr, "pccl-tune: cannot write %s\n", csource);
    failed = 1;
  }
  return failed;
}

int main(int argc, char **argv) {
  options_t o;
  char err[ERR_LEN] = "";
  int parsed = parse_args(argc, argv, &o, err);
  if (parsed <= 0) {
    if (parsed == 0) usage(stdout);
    else fprintf(stderr, "pccl-tune: %s\n", err);
    return parsed == 0 ? 0 : 2;
  }
  pccl_profile_t p;
  if (pccl_profile_load(o.profile, &p, err, sizeof err) != PCCL_OK) {
    fprintf(stderr, "pccl-tune: %s\n", err);
    return 2;
  }
  FILE *table = stdout, *csv = NULL;
  if ((o.table && !(table = fopen(o.table, "w"))) || (o.csv && !(csv = fopen(o.csv, "w")))) {
    fprintf(stderr, "pccl-tune: cannot write %s: %s\n", o.table && !table ? o.table : o.csv,
            strerror(errno));
    return 2;
  }
  job_t jobs[MAX_LAYOUTS * 2 * PCCL_COLL_COUNT];
  run_t run = {.o = &o, .p = &p, .jobs = jobs, .njobs = make_jobs(&o, jobs)};
  pthread_mutex_init(&run.progress.lock, NULL);
  run.progress.quiet = o.quiet;
  int nsizes = 0;
  for (size_t b = o.min_bytes; b <= o.max_bytes; b *= 2) nsizes++;
  run.progress.total = nsizes * run.njobs;
  run_all(&run);
  if (!o.quiet) fputc('\n', stderr);
  int failed = run.failed;
  if (!failed) {
    char *text = table_text(&run, argc, argv, p.name);
    if (!text) fprintf(stderr, "pccl-tune: out of memory\n");
    failed = !text || write_outputs(&run, text, table, csv, o.csource);
    free(text);
  }
  if (table != stdout && fclose(table) != 0) failed = 1;
  if (csv && fclose(csv) != 0) failed = 1;
  for (int i = 0; i < run.njobs; i++) {
    free(jobs[i].rows);
    free(jobs[i].lines);
  }
  pthread_mutex_destroy(&run.progress.lock);
  return failed;
}
