/* main.c - pccl-bench's driver. Run under mpirun, pccl-bench times pccl's
 * collectives over a sweep of message sizes, interleaved with MPI's own
 * collective on the same sizes, checks pccl's results against a reference
 * computed locally, and prints an nccl-tests style table per collective
 * (optionally CSV as well); `pccl-bench -h` lists the flags. This file owns
 * the buffers, the warm-up, the adaptive iteration count, the interleaved
 * timing rounds and their medians, the table and CSV output, and main(). */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "bench.h"
#include "options.h"
#include "pccl.h"
#include "pccl_mpi.h"
#include "reference.h"

enum {
  EXIT_USAGE = 2,       /* malformed arguments */
  MIN_ADAPTIVE_ITERS = 3,
  MAX_ADAPTIVE_ITERS = 10000,
  SENTINEL_BYTE = 0xA5, /* fills the output before the checked call */
};

#define TARGET_BLOCK_SECONDS 0.05

typedef enum { CHECK_OFF, CHECK_OK, CHECK_FAIL } check_result_t;

typedef struct {
  size_t bytes;
  char algorithm[MAX_NAME + 8]; /* what pccl ran; "auto:NAME" when it chose */
  double pccl_seconds;
  bool has_mpi;
  double mpi_seconds;
  check_result_t check;
} size_result_t;

typedef enum { IMPL_PCCL, IMPL_MPI } impl_t;

/* ---- timing ------------------------------------------------------------- */

static void call_once(const bench_t *b, const bench_case_t *c, impl_t impl) {
  if (impl == IMPL_MPI)
    run_mpi(b, c);
  else
    abort_on_pccl_error(b->comm, run_pccl(b, c), pccl_coll_name(c->coll));
}

/* Seconds per call of a block of `iters` calls (with --sync each after a
 * barrier, and then less a block of barriers alone), the slowest rank's. */
static double time_block(const bench_t *b, const bench_case_t *c, impl_t impl, int iters) {
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  for (int i = 0; i < iters; i++) {
    if (b->opts.sync) MPI_Barrier(MPI_COMM_WORLD);
    call_once(b, c, impl);
  }
  double seconds = (MPI_Wtime() - start) / iters;
  if (b->opts.sync) {
    MPI_Barrier(MPI_COMM_WORLD);
    start = MPI_Wtime();
    for (int i = 0; i < iters; i++) MPI_Barrier(MPI_COMM_WORLD);
    seconds -= (MPI_Wtime() - start) / iters;
  }
  MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return seconds;
}

/* First call of a size. A forced algorithm may answer PCCL_ERR_UNSUPPORTED
 * (assumed to be decided alike on every rank): the size is then skipped
 * with a note. Any other error aborts. */
static bool first_call_supported(const bench_t *b, const bench_case_t *c, size_t bytes) {
  pccl_status_t status = run_pccl(b, c);
  int unsupported = c->forced_algo != NULL && status == PCCL_ERR_UNSUPPORTED;
  if (!unsupported) abort_on_pccl_error(b->comm, status, pccl_coll_name(c->coll));
  if (unsupported && b->rank == 0)
    printf("# note: %s cannot run %s at %zu bytes: %s\n", c->forced_algo,
           pccl_coll_name(c->coll), bytes, pccl_last_error(b->comm));
  MPI_Allreduce(MPI_IN_PLACE, &unsupported, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return !unsupported;
}

/* -n, or enough calls that a block lasts TARGET_BLOCK_SECONDS, judged from
 * one timed call; rank 0 decides so every rank runs the same count. */
static int choose_iterations(const bench_t *b, const bench_case_t *c) {
  if (b->opts.iters > 0) return b->opts.iters;
  double seconds = time_block(b, c, IMPL_PCCL, 1);
  int iters = MAX_ADAPTIVE_ITERS;
  if (b->rank == 0 && seconds > TARGET_BLOCK_SECONDS / MAX_ADAPTIVE_ITERS) {
    iters = (int)(TARGET_BLOCK_SECONDS / seconds) + 1;
    if (iters < MIN_ADAPTIVE_ITERS) iters = MIN_ADAPTIVE_ITERS;
  }
  MPI_Bcast(&iters, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return iters;
}

static int compare_doubles(const void *left, const void *right) {
  double a = *(const double *)left, b = *(const double *)right;
  return (a > b) - (a < b);
}

static double median_of_rounds(double *rounds, int n) {
  qsort(rounds, (size_t)n, sizeof rounds[0], compare_doubles);
  return rounds[n / 2];
}

/* Rounds of a pccl block and an MPI block, which goes first alternating so
 * that a slow drift of the machine favours neither; the median of each. */
static void time_interleaved(const bench_t *b, const bench_case_t *c, int iters,
                             size_result_t *result) {
  double pccl_rounds[MAX_ROUNDS] = {0}, mpi_rounds[MAX_ROUNDS] = {0};
  const int n = b->opts.rounds;
  for (int round = 0; round < n; round++) {
    const bool mpi_first = result->has_mpi && round % 2 == 1;
    if (mpi_first) mpi_rounds[round] = time_block(b, c, IMPL_MPI, iters);
    pccl_rounds[round] = time_block(b, c, IMPL_PCCL, iters);
    if (result->has_mpi && !mpi_first) mpi_rounds[round] = time_block(b, c, IMPL_MPI, iters);
  }
  result->pccl_seconds = median_of_rounds(pccl_rounds, n);
  if (result->has_mpi) result->mpi_seconds = median_of_rounds(mpi_rounds, n);
}

/* One fresh call on freshly filled inputs, checked on every rank. */
static check_result_t check_pccl_result(const bench_t *b, const bench_case_t *c) {
  size_t elem_size = pccl_dtype_size(b->opts.dtype);
  size_t send_elems = send_elements(c->coll, c->count, b->nranks, b->opts.heavy);
  size_t send_bytes = send_elems * elem_size;
  size_t recv_bytes = recv_elements(c->coll, c->count, b->nranks, b->opts.heavy) * elem_size;
  fill_input(b, b->send, send_elems);
  memset(b->recv, SENTINEL_BYTE, recv_bytes);
  if (c->coll == PCCL_COLL_BROADCAST && !b->dsend && b->rank == b->opts.root)
    memcpy(b->recv, b->send, recv_bytes); /* run_pccl broadcasts in place */
  if (b->dsend) device_upload(b, send_bytes, recv_bytes, SENTINEL_BYTE);
  abort_on_pccl_error(b->comm, run_pccl(b, c), pccl_coll_name(c->coll));
  if (b->drecv) device_download(b, recv_bytes);
  int correct = output_matches(b, c);
  MPI_Allreduce(MPI_IN_PLACE, &correct, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return correct ? CHECK_OK : CHECK_FAIL;
}

/* ---- output ------------------------------------------------------------- */

static const char *check_text(check_result_t check, const char *off) {
  return check == CHECK_OK ? "ok" : check == CHECK_FAIL ? "FAIL" : off;
}

/* `value` with `decimals` decimals, or `missing` when absent. */
static const char *optional_number(char *text, size_t size, bool present, double value,
                                   int decimals, const char *missing) {
  if (!present) return missing;
  snprintf(text, size, "%.*f", decimals, value);
  return text;
}

static void print_table_header(const bench_t *b, pccl_coll_t coll) {
  if (b->rank != 0) return;
  printf("#\n# pccl-bench (pccl %s): %s\n", PCCL_VERSION_STRING, pccl_coll_name(coll));
  printf("# nranks %d  nnodes %d  dtype %s  op %s", b->nranks, b->nnodes,
         pccl_dtype_name(b->opts.dtype),
         is_reduction(coll) ? pccl_op_name(b->opts.op) : "none");
  if (is_rooted(coll)) printf("  root %d", b->opts.root);
  printf("\n# transport %s", pccl_comm_transport(b->comm));
  const char *mine = b->opts.device ? "cuda" : b->opts.shared_mem ? "pccl_mem_alloc" : "malloc";
  printf("\n# buffers pccl: %s, MPI: %s  memcpy limit %.2f GB/s (one core, %zu bytes, all ranks at once)",
         mine, b->opts.mpi_same && !b->opts.device ? mine : "malloc (its own)", b->memcpy_gbs,
         b->buffer_bytes);
  printf("\n# warmup %d  rounds %d  iters ", b->opts.warmup, b->opts.rounds);
  if (b->opts.iters > 0)
    printf("%d", b->opts.iters);
  else
    printf("adaptive (>= %.0f ms per block)", TARGET_BLOCK_SECONDS * 1e3);
  printf("  check %s%s\n#\n", b->opts.check ? "on" : "off",
         b->opts.sync ? "  sync (a barrier before each call; a block of barriers taken off)" : "");
  printf("#%11s %12s %9s  %-18s %10s %8s %8s %10s %9s %8s %6s\n", "size(B)", "count", "dtype",
         "algorithm", "time_us", "algbw", "busbw", "mpi_us", "mpi_busbw", "speedup", "check");
  printf("#%11s %12s %9s  %-18s %10s %8s %8s %10s %9s\n", "(B)", "(elements)", "", "", "(us)",
         "(GB/s)", "(GB/s)", "(us)", "(GB/s)");
  fflush(stdout);
}

static void report_size(const bench_t *b, const bench_case_t *c, const size_result_t *r) {
  if (b->rank != 0) return;
  double factor = bus_factor(c->coll, b->nranks);
  double time_us = r->pccl_seconds * 1e6, mpi_us = r->mpi_seconds * 1e6;
  double algbw = (double)r->bytes / r->pccl_seconds / 1e9;
  double mpi_busbw = (double)r->bytes / r->mpi_seconds / 1e9 * factor;
  double speedup = r->mpi_seconds / r->pccl_seconds;
  char mpi_text[32], busbw_text[32], speedup_text[32];
  printf("%12zu %12zu %9s  %-18s %10.2f %8.2f %8.2f %10s %9s %8s %6s\n", r->bytes,
         r->bytes / pccl_dtype_size(b->opts.dtype), pccl_dtype_name(b->opts.dtype), r->algorithm,
         time_us, algbw, algbw * factor,
         optional_number(mpi_text, sizeof mpi_text, r->has_mpi, mpi_us, 2, "n/a"),
         optional_number(busbw_text, sizeof busbw_text, r->has_mpi, mpi_busbw, 2, "n/a"),
         optional_number(speedup_text, sizeof speedup_text, r->has_mpi, speedup, 2, "n/a"),
         check_text(r->check, "n/a"));
  fflush(stdout);
  if (b->csv == NULL) return;
  /* "recmul:4" (or "auto:recmul:4") goes out as algorithm recmul, k 4 */
  const char *colon = strrchr(r->algorithm, ':');
  int k = colon && colon[1] >= '0' && colon[1] <= '9' ? atoi(colon + 1) : 0;
  int name_len = k ? (int)(colon - r->algorithm) : (int)strlen(r->algorithm);
  fprintf(b->csv, "%s,%.*s,%d,%d,%d,%zu,%.3f,%.4f,%.4f,%s,%s,%s\n", pccl_coll_name(c->coll),
          name_len, r->algorithm, k, b->nranks, b->nnodes, r->bytes, time_us, algbw, algbw * factor,
          optional_number(mpi_text, sizeof mpi_text, r->has_mpi, mpi_us, 3, ""),
          optional_number(speedup_text, sizeof speedup_text, r->has_mpi, speedup, 4, ""),
          check_text(r->check, ""));
  fflush(b->csv);
}

/* ---- the sweep ---------------------------------------------------------- */

/* MPI's int counts and packed displacements for `counts` (they fit where
 * MPI runs: mpi_available says when). */
static void set_mpi_counts(const size_t *counts, size_t p, int *mcounts, int *mdispls) {
  for (size_t r = 0, at = 0; r < p; at += counts[r++])
    mcounts[r] = (int)counts[r], mdispls[r] = (int)at;
}

/* A v-collective's counts, in `counts` (3 nranks) and MPI's in `mcounts`
 * (6 nranks): the ramp every rank shares, then this rank's all-to-allv
 * send counts (its row of the matrix) and receive counts (its column). */
static void set_vcounts(const bench_t *b, bench_case_t *c, size_t *counts, int *mcounts) {
  size_t p = (size_t)b->nranks, *sendcounts = counts + p, *recvcounts = counts + 2 * p;
  allgatherv_counts(c->count, b->nranks, b->opts.heavy, counts);
  for (int r = 0; r < b->nranks; r++) {
    sendcounts[r] = alltoallv_count(counts, b->nranks, b->rank, r);
    recvcounts[r] = alltoallv_count(counts, b->nranks, r, b->rank);
  }
  set_mpi_counts(counts, p, mcounts, mcounts + p);
  set_mpi_counts(sendcounts, p, mcounts + 2 * p, mcounts + 3 * p);
  set_mpi_counts(recvcounts, p, mcounts + 4 * p, mcounts + 5 * p);
  c->vcounts = counts, c->mcounts = mcounts, c->mdispls = mcounts + p;
  c->sendcounts = sendcounts, c->recvcounts = recvcounts;
  c->msendcounts = mcounts + 2 * p, c->msdispls = mcounts + 3 * p;
  c->mrecvcounts = mcounts + 4 * p, c->mrdispls = mcounts + 5 * p;
}

static void benchmark_size(bench_t *b, pccl_coll_t coll, const char *forced_algo,
                           size_t bytes) {
  size_t elem_size = pccl_dtype_size(b->opts.dtype);
  size_t multiplier = size_multiplier(coll, b->nranks);
  bench_case_t c = {.coll = coll, .forced_algo = forced_algo,
                    .count = bytes / (multiplier * elem_size)};
  if (c.count == 0) return;
  size_t p = (size_t)b->nranks, *vcounts = NULL;
  int *mcounts = NULL;
  if (has_vcounts(coll)) {
    vcounts = malloc(3 * p * sizeof *vcounts);
    mcounts = malloc(6 * p * sizeof *mcounts);
    if (!vcounts || !mcounts) abort_on_pccl_error(NULL, PCCL_ERR_NO_MEMORY, "allocating counts");
    set_vcounts(b, &c, vcounts, mcounts);
  }
  if (!first_call_supported(b, &c, bytes)) {
    free(vcounts), free(mcounts);
    return;
  }
  size_result_t result = {.bytes = multiplier * c.count * elem_size,
                          .has_mpi = mpi_available(b, &c)};
  for (int i = 0; i < b->opts.warmup; i++) {
    call_once(b, &c, IMPL_PCCL);
    if (result.has_mpi) call_once(b, &c, IMPL_MPI);
  }
  time_interleaved(b, &c, choose_iterations(b, &c), &result);
  result.check = b->opts.check ? check_pccl_result(b, &c) : CHECK_OFF;
  snprintf(result.algorithm, sizeof result.algorithm, "%s%s", forced_algo ? "" : "auto:",
           pccl_comm_last_algo(b->comm));
  if (result.check == CHECK_FAIL) b->any_check_failed = true;
  report_size(b, &c, &result);
  free(vcounts), free(mcounts);
}

/* The algorithms the -a list names, in its order: NULL for "auto", every
 * registered one for "all". Unknown names are noted and skipped. */
static int list_algorithms(const bench_t *b, pccl_coll_t coll, const char **registered, int count,
                           char (*items)[MAX_NAME], const char **out) {
  int n = 0;
  for (const char *cursor = b->opts.algos; next_list_item(&cursor, items[n]);) {
    if (strcmp(items[n], "auto") == 0) {
      out[n++] = NULL;
    } else if (strcmp(items[n], "all") == 0) {
      for (int i = 0; i < count; i++) out[n++] = registered[i];
    } else if (find_algorithm(registered, count, items[n]) >= 0) {
      out[n] = items[n];
      n++;
    } else if (b->rank == 0) {
      printf("# note: no algorithm '%s' for %s; skipped\n", items[n], pccl_coll_name(coll));
      fflush(stdout);
    }
  }
  return n;
}

static void set_algo(bench_t *b, pccl_coll_t coll, const char *name) {
  abort_on_pccl_error(b->comm, pccl_comm_set_algo(b->comm, coll, name), "pccl_comm_set_algo");
}

/* Size by size, every listed algorithm at each size before the next: a
 * machine whose speed drifts over the run (these emulated clusters do)
 * then shifts the candidates of one size alike, not the later ones. */
static void benchmark_collective(bench_t *b, pccl_coll_t coll) {
  print_table_header(b, coll);
  int count = 0;
  const char **registered = registered_algorithms(coll, &count);
  size_t most = 1 + (size_t)count; /* items, each "all" expanded */
  for (const char *c = b->opts.algos; *c; c++) most += (*c == ',') + (size_t)count;
  char (*items)[MAX_NAME] = calloc(most, MAX_NAME);
  const char **algos = calloc(most, sizeof *algos);
  if (!registered || !items || !algos) {
    fprintf(stderr, "pccl-bench: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int n = list_algorithms(b, coll, registered, count, items, algos);
  for (size_t bytes = b->opts.min_bytes;; bytes *= (size_t)b->opts.factor) {
    for (int i = 0; i < n; i++) {
      set_algo(b, coll, algos[i]);
      benchmark_size(b, coll, algos[i], bytes);
    }
    if (bytes > b->opts.max_bytes / (size_t)b->opts.factor) break;
  }
  set_algo(b, coll, NULL);
  free(algos);
  free(items);
  free(registered);
}

/* ---- setup -------------------------------------------------------------- */

static size_t largest_size(const options_t *opts) {
  size_t bytes = opts->min_bytes;
  while (bytes <= opts->max_bytes / (size_t)opts->factor) bytes *= (size_t)opts->factor;
  return bytes;
}

/* Plain malloc, as ordinary programs allocate: its large blocks start 16
 * bytes into a page, which some copies pay for (src/kernels/copy.h); 64-byte
 * aligned buffers, used here before, hid that. */
static void *allocate_buffer(const options_t *opts, size_t bytes, bool *ok) {
  void *buffer = NULL;
  if (opts->shared_mem ? pccl_mem_alloc(&buffer, bytes) != PCCL_OK
                       : (buffer = malloc(bytes)) == NULL) {
    *ok = false;
    return NULL;
  }
  memset(buffer, 0, bytes);
  return buffer;
}

static void free_buffer(const options_t *opts, void *buffer) {
  if (opts->shared_mem)
    pccl_mem_free(buffer);
  else
    free(buffer);
}

/* Allocates the buffers at the largest size; false on any rank's failure. */
static bool allocate_buffers(bench_t *b) {
  bool ok = true;
  b->buffer_bytes = largest_size(&b->opts);
  b->send = allocate_buffer(&b->opts, b->buffer_bytes, &ok);
  b->recv = allocate_buffer(&b->opts, b->buffer_bytes, &ok);
  const options_t plain = {.shared_mem = false};
  b->msend = b->opts.mpi_same ? b->send : allocate_buffer(&plain, b->buffer_bytes, &ok);
  b->mrecv = b->opts.mpi_same ? b->recv : allocate_buffer(&plain, b->buffer_bytes, &ok);
  int all_ok = ok;
  MPI_Allreduce(MPI_IN_PLACE, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (!all_ok) {
    if (b->rank == 0)
      fprintf(stderr, "pccl-bench: cannot allocate the buffers (%zu bytes each)\n",
              b->buffer_bytes);
    return false;
  }
  char why[256] = "";
  int device_ok = !b->opts.device || device_alloc(b, why, sizeof why);
  MPI_Allreduce(MPI_IN_PLACE, &device_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (!device_ok) {
    if (why[0]) fprintf(stderr, "pccl-bench: rank %d: --mem cuda: %s\n", b->rank, why);
    return false;
  }
  size_t elements = b->buffer_bytes / pccl_dtype_size(b->opts.dtype);
  fill_input(b, b->send, elements);
  if (b->msend != b->send) memcpy(b->msend, b->send, b->buffer_bytes);
  return true;
}

static void free_buffers(bench_t *b) {
  device_free(b);
  if (!b->opts.mpi_same) {
    free(b->msend);
    free(b->mrecv);
  }
  free_buffer(&b->opts, b->send);
  free_buffer(&b->opts, b->recv);
}

/* What one core's memcpy reaches between the two buffers at the largest size
 * (the best of a few, every rank copying at once as the collectives do):
 * the bound that intra-node bus bandwidth is measured against. */
static double memcpy_limit(const bench_t *b) {
  double best = 0;
  for (int i = 0; i < 5; i++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    memcpy(b->recv, b->send, b->buffer_bytes);
    t = MPI_Wtime() - t;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double gbs = (double)b->buffer_bytes / t / 1e9;
    if (gbs > best) best = gbs;
  }
  return best;
}

/* Rank 0 opens the CSV file and writes its header; false everywhere if it cannot. */
static bool open_csv(bench_t *b) {
  int opened = 1;
  if (b->rank == 0 && b->opts.csv_path != NULL) {
    b->csv = fopen(b->opts.csv_path, "w");
    opened = b->csv != NULL;
    if (b->csv == NULL)
      fprintf(stderr, "pccl-bench: cannot open %s: %s\n", b->opts.csv_path, strerror(errno));
    else
      fprintf(b->csv, "collective,algorithm,k,nranks,nnodes,bytes,time_us,algbw_gbs,"
                      "busbw_gbs,mpi_time_us,speedup_vs_mpi,check\n");
  }
  MPI_Bcast(&opened, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return opened;
}

static int run_benchmark(int argc, char **argv) {
  bench_t b = {0};
  MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &b.nranks);
  char error[512];
  if (!parse_options(argc, argv, b.nranks, &b.opts, error, sizeof error) ||
      (!b.opts.help && !validate_algorithms(&b.opts, error, sizeof error))) {
    if (b.rank == 0) fprintf(stderr, "pccl-bench: %s (see pccl-bench -h)\n", error);
    return EXIT_USAGE;
  }
  if (b.opts.help) {
    if (b.rank == 0) print_usage(stdout);
    return EXIT_SUCCESS;
  }
  if (!open_csv(&b)) return EXIT_USAGE;
  abort_on_pccl_error(NULL, pccl_comm_create_mpi(MPI_COMM_WORLD, &b.comm),
                      "pccl_comm_create_mpi");
  abort_on_pccl_error(b.comm, pccl_comm_nnodes(b.comm, &b.nnodes), "pccl_comm_nnodes");
  int exit_code = EXIT_FAILURE;
  if (allocate_buffers(&b)) {
    b.memcpy_gbs = memcpy_limit(&b);
    for (int coll = 0; coll < PCCL_COLL_COUNT; coll++)
      if (b.opts.colls[coll]) benchmark_collective(&b, (pccl_coll_t)coll);
    exit_code = b.any_check_failed ? EXIT_FAILURE : EXIT_SUCCESS;
  }
  free_buffers(&b);
  abort_on_pccl_error(b.comm, pccl_comm_destroy(b.comm), "pccl_comm_destroy");
  if (b.csv != NULL) fclose(b.csv);
  return exit_code;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int exit_code = run_benchmark(argc, argv);
  MPI_Finalize();
  return exit_code;
}
