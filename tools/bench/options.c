/* options.c - pccl-bench's command-line parsing and validation: the usage
 * text, the defaults, the flags that take a value, sizes with K/M/G
 * suffixes, bounded integers, and the names of collectives, datatypes and
 * ops (the library's own, from pccl_coll_name, pccl_dtype_name and
 * pccl_op_name), and the check that every algorithm -a names exists for one
 * of the chosen collectives. Every error leaves a message for rank 0 to print. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "options.h"

void print_usage(FILE *out) {
  fputs(
      "usage: mpirun -np N pccl-bench [options]\n"
      "  -c LIST      collectives: comma list of allgather, reducescatter, allreduce,\n"
      "               broadcast, reduce, scatter, gather, alltoall, scan, exscan,\n"
      "               allgatherv, reducescatterv, gatherv, scatterv (rank r's count\n"
      "               2 (r + 1) / (p + 1) of the mean, packed), alltoallv (rank i\n"
      "               sends rank j the count of rank (j - i) mod p, packed), or all\n"
      "               (default allgather,reducescatter,allreduce). A v-collective's\n"
      "               size is p x the mean count, its equal-count twin's: the whole\n"
      "               gathered or scattered buffer, each rank's all-to-allv send\n"
      "               (and receive) buffer\n"
      "  -a LIST      algorithms: comma list of names, all (every registered one) or\n"
      "               auto (automatic selection, reported as auto:NAME; default)\n"
      "  -b SIZE      smallest size in bytes (default 1K); K, M, G are powers of 1024\n"
      "  -e SIZE      largest size in bytes (default 64M)\n"
      "  -f FACTOR    integer size multiplication factor, at least 2 (default 2)\n"
      "  -d DTYPE     int8, uint8, int32, uint32, int64, uint64, float16, bfloat16,\n"
      "               float32, float64 (default float32)\n"
      "  -o OP        sum, prod, min, max, avg (default sum)\n"
      "  -n ITERS     calls per timed block (default: adapted so that a block lasts\n"
      "               at least 50 ms, between 3 and 10000)\n"
      "  -w WARMUP    warm-up calls per size (default 3)\n"
      "  -r ROOT      root of broadcast, reduce, scatter(v) and gather(v) (default 0)\n"
      "  --rounds R   interleaved pccl/MPI timing rounds, odd; the median is\n"
      "               reported (default 5; more steadies a noisy machine)\n"
      "  --csv FILE   also write the results as CSV to FILE (rank 0)\n"
      "  --no-mpi     do not time MPI's own collectives\n"
      "  --sync       a barrier before every call, its own time (a block of barriers\n"
      "               alone) taken off: the latency of calls that do not overlap,\n"
      "               where a plain block lets a scan's low ranks run calls ahead\n"
      "  --check 0|1  check pccl's results (default 1)\n"
      "  --mem KIND   pccl's buffers: malloc (default: what ordinary programs pass),\n"
      "               pccl (pccl_mem_alloc: ranks of a node read each other's buffers\n"
      "               directly) or cuda (device buffers; builds with CUDA)\n"
      "  --mpi-mem KIND  MPI's buffers: malloc (default: its own pair, what an MPI\n"
      "               program uses) or same (pccl's buffers, whatever --mem says)\n"
      "  --vcounts SHAPE  the v-collectives' counts: ramp (default: rank r about\n"
      "               2(r + 1)/(p + 1) of the mean) or heavy (the last rank half of\n"
      "               all the data, the others the rest evenly)\n"
      "  -h           show this help\n"
      "exit status: 0 success, 1 a check failed, 2 bad arguments\n",
      out);
}

static options_t default_options(void) {
  options_t opts = {
      .algos = "auto",
      .min_bytes = 1024,
      .max_bytes = 64u * 1024 * 1024,
      .factor = 2,
      .dtype = PCCL_FLOAT32,
      .op = PCCL_SUM,
      .warmup = 3,
      .rounds = 5,
      .with_mpi = true,
      .check = true,
      .shared_mem = false,
  };
  opts.colls[PCCL_COLL_ALLGATHER] = true;
  opts.colls[PCCL_COLL_REDUCE_SCATTER] = true;
  opts.colls[PCCL_COLL_ALLREDUCE] = true;
  return opts;
}

bool next_list_item(const char **cursor, char item[MAX_NAME]) {
  if (**cursor == '\0') return false;
  const char *comma = strchr(*cursor, ',');
  size_t length = comma ? (size_t)(comma - *cursor) : strlen(*cursor);
  size_t copied = length < MAX_NAME - 1 ? length : MAX_NAME - 1;
  memcpy(item, *cursor, copied);
  item[copied] = '\0';
  *cursor += length + (comma ? 1 : 0);
  return true;
}

int find_name(const char *const *names, int count, const char *name) {
  for (int i = 0; i < count; i++)
    if (strcmp(names[i], name) == 0) return i;
  return -1;
}

int find_algorithm(const char *const *names, int count, const char *item) {
  size_t len = strcspn(item, ":"); /* "recmul:4" is algorithm recmul with k = 4 */
  for (int i = 0; i < count; i++)
    if (strlen(names[i]) == len && strncmp(names[i], item, len) == 0) return i;
  return -1;
}

/* The library's name of value `value` of an enum: what -c, -d and -o accept. */
typedef const char *name_of_fn(int value);

static const char *coll_name_of(int value) { return pccl_coll_name((pccl_coll_t)value); }
static const char *dtype_name_of(int value) { return pccl_dtype_name((pccl_dtype_t)value); }
static const char *op_name_of(int value) { return pccl_op_name((pccl_op_t)value); }

/* The enum value from 0 to count-1 that `name_of` calls `name`, or -1. */
static int find_enum_name(name_of_fn *name_of, int count, const char *name) {
  for (int i = 0; i < count; i++)
    if (strcmp(name_of(i), name) == 0) return i;
  return -1;
}

/* Appends " name0, name1, ..." to the message of length `written` in
 * `error`; returns the length snprintf reports (no appending once full). */
static int append_names(char *error, size_t error_size, int written, name_of_fn *name_of,
                        int count) {
  for (int i = 0; i < count && written > 0 && (size_t)written < error_size; i++)
    written += snprintf(error + written, error_size - (size_t)written, "%s %s",
                        i == 0 ? "" : ",", name_of(i));
  return written;
}

/* A byte count: decimal digits, then optionally K, M or G (powers of 1024). */
static bool parse_size(const char *text, size_t *bytes) {
  if (!isdigit((unsigned char)text[0])) return false;
  char *end = NULL;
  errno = 0;
  unsigned long long value = strtoull(text, &end, 10);
  if (errno == ERANGE) return false;
  unsigned long long unit = 1;
  switch (*end) {
  case 'K': case 'k': unit = 1ull << 10; end++; break;
  case 'M': case 'm': unit = 1ull << 20; end++; break;
  case 'G': case 'g': unit = 1ull << 30; end++; break;
  default: break;
  }
  if (*end != '\0' || value == 0 || value > SIZE_MAX / unit) return false;
  *bytes = (size_t)(value * unit);
  return true;
}

static bool parse_int_option(const char *flag, const char *text, int min, int max, int *out,
                             char *error, size_t error_size) {
  char *end = NULL;
  errno = 0;
  long value = isdigit((unsigned char)text[0]) ? strtol(text, &end, 10) : -1;
  if (end == NULL || *end != '\0' || errno == ERANGE || value < min || value > max) {
    snprintf(error, error_size, "%s expects an integer from %d to %d, got '%s'", flag, min,
             max, text);
    return false;
  }
  *out = (int)value;
  return true;
}

static bool parse_collectives(const char *list, bool colls[PCCL_COLL_COUNT], char *error,
                              size_t error_size) {
  memset(colls, 0, sizeof(bool) * PCCL_COLL_COUNT);
  bool any = false;
  char item[MAX_NAME];
  for (const char *cursor = list; next_list_item(&cursor, item);) {
    int coll = find_enum_name(coll_name_of, PCCL_COLL_COUNT, item);
    if (strcmp(item, "all") == 0) {
      for (int c = 0; c < PCCL_COLL_COUNT; c++) colls[c] = true;
    } else if (coll >= 0) {
      colls[coll] = true;
    } else {
      int written = snprintf(error, error_size, "-c: unknown collective '%s' (expected", item);
      written = append_names(error, error_size, written, coll_name_of, PCCL_COLL_COUNT);
      if (written > 0 && (size_t)written < error_size)
        snprintf(error + written, error_size - (size_t)written, " or all)");
      return false;
    }
    any = true;
  }
  if (!any) snprintf(error, error_size, "-c selects no collective");
  return any;
}

static bool parse_name_option(const char *flag, const char *text, name_of_fn *name_of,
                              int count, int *out, char *error, size_t error_size) {
  *out = find_enum_name(name_of, count, text);
  if (*out >= 0) return true;
  int written = snprintf(error, error_size, "%s: unknown value '%s' (expected", flag, text);
  written = append_names(error, error_size, written, name_of, count);
  if (written > 0 && (size_t)written < error_size)
    snprintf(error + written, error_size - (size_t)written, ")");
  return false;
}

/* Applies `flag value`; false with a message in `error` when malformed. */
static bool apply_option(options_t *opts, const char *flag, const char *value, char *error,
                         size_t error_size) {
  int number = 0;
  if (strcmp(flag, "-c") == 0) return parse_collectives(value, opts->colls, error, error_size);
  if (strcmp(flag, "-a") == 0) {
    opts->algos = value;
    return true;
  }
  if (strcmp(flag, "-b") == 0 || strcmp(flag, "-e") == 0) {
    if (parse_size(value, strcmp(flag, "-b") == 0 ? &opts->min_bytes : &opts->max_bytes))
      return true;
    snprintf(error, error_size,
             "%s expects a positive byte count with an optional K, M or G suffix, got '%s'",
             flag, value);
    return false;
  }
  if (strcmp(flag, "-f") == 0)
    return parse_int_option(flag, value, 2, INT_MAX, &opts->factor, error, error_size);
  if (strcmp(flag, "-n") == 0)
    return parse_int_option(flag, value, 1, INT_MAX, &opts->iters, error, error_size);
  if (strcmp(flag, "-w") == 0)
    return parse_int_option(flag, value, 0, INT_MAX, &opts->warmup, error, error_size);
  if (strcmp(flag, "-r") == 0)
    return parse_int_option(flag, value, 0, INT_MAX, &opts->root, error, error_size);
  if (strcmp(flag, "--rounds") == 0) {
    if (!parse_int_option(flag, value, 1, MAX_ROUNDS, &opts->rounds, error, error_size))
      return false;
    if (opts->rounds % 2 == 1) return true;
    snprintf(error, error_size, "--rounds must be odd (the median is reported), got %d",
             opts->rounds);
    return false;
  }
  if (strcmp(flag, "--csv") == 0) {
    opts->csv_path = value;
    return true;
  }
  if (strcmp(flag, "--check") == 0) {
    if (!parse_int_option(flag, value, 0, 1, &number, error, error_size)) return false;
    opts->check = number == 1;
    return true;
  }
  if (strcmp(flag, "--mem") == 0) {
    opts->shared_mem = strcmp(value, "pccl") == 0;
    opts->device = strcmp(value, "cuda") == 0;
    if (opts->shared_mem || opts->device || strcmp(value, "malloc") == 0) return true;
    snprintf(error, error_size, "--mem expects pccl, malloc or cuda, got '%s'", value);
    return false;
  }
  if (strcmp(flag, "--vcounts") == 0) {
    opts->heavy = strcmp(value, "heavy") == 0;
    if (opts->heavy || strcmp(value, "ramp") == 0) return true;
    snprintf(error, error_size, "--vcounts expects ramp or heavy, got '%s'", value);
    return false;
  }
  if (strcmp(flag, "--mpi-mem") == 0) {
    opts->mpi_same = strcmp(value, "same") == 0;
    if (opts->mpi_same || strcmp(value, "malloc") == 0) return true;
    snprintf(error, error_size, "--mpi-mem expects malloc or same, got '%s'", value);
    return false;
  }
  /* The types and ops whose results reference.c checks: int8 to float64 and
   * sum to avg (the rest of pccl_dtype_t / pccl_op_t are measured with
   * pccl-mpibench under the drop-in, against MPI's own). */
  if (strcmp(flag, "-d") == 0) {
    if (!parse_name_option(flag, value, dtype_name_of, PCCL_FLOAT64 + 1, &number, error,
                           error_size))
      return false;
    opts->dtype = (pccl_dtype_t)number;
    return true;
  }
  if (!parse_name_option(flag, value, op_name_of, PCCL_AVG + 1, &number, error, error_size))
    return false;
  opts->op = (pccl_op_t)number; /* -o, the last flag that takes a value */
  return true;
}

static bool takes_value(const char *flag) {
  static const char *const flags[] = {"-c", "-a", "-b", "-e", "-f", "-d", "-o",
                                      "-n", "-w", "-r", "--rounds", "--csv", "--check", "--mem",
                                      "--mpi-mem", "--vcounts"};
  return find_name(flags, (int)(sizeof flags / sizeof flags[0]), flag) >= 0;
}

bool parse_options(int argc, char **argv, int nranks, options_t *opts, char *error,
                   size_t error_size) {
  *opts = default_options();
  for (int i = 1; i < argc; i++) {
    const char *flag = argv[i];
    if (strcmp(flag, "-h") == 0 || strcmp(flag, "--help") == 0) {
      opts->help = true;
      return true;
    }
    if (strcmp(flag, "--no-mpi") == 0) {
      opts->with_mpi = false;
      continue;
    }
    if (strcmp(flag, "--sync") == 0) {
      opts->sync = true;
      continue;
    }
    if (!takes_value(flag)) {
      snprintf(error, error_size, "unknown option '%s'", flag);
      return false;
    }
    if (i + 1 >= argc) {
      snprintf(error, error_size, "option %s needs a value", flag);
      return false;
    }
    if (!apply_option(opts, flag, argv[++i], error, error_size)) return false;
  }
  if (opts->min_bytes > opts->max_bytes) {
    snprintf(error, error_size, "-b (%zu bytes) is larger than -e (%zu bytes)",
             opts->min_bytes, opts->max_bytes);
    return false;
  }
  if (opts->root >= nranks) {
    snprintf(error, error_size, "-r %d is not a rank (there are %d ranks)", opts->root,
             nranks);
    return false;
  }
  return true;
}

static bool algorithm_registered(pccl_coll_t coll, const char *name) {
  int count = 0;
  const char **names = registered_algorithms(coll, &count);
  bool found = find_algorithm(names, count, name) >= 0;
  free(names);
  return found;
}

static bool is_algorithm_keyword(const char *item) {
  return strcmp(item, "auto") == 0 || strcmp(item, "all") == 0;
}

bool validate_algorithms(const options_t *opts, char *error, size_t error_size) {
  char item[MAX_NAME];
  bool any = false;
  for (const char *cursor = opts->algos; next_list_item(&cursor, item);) {
    any = true;
    if (is_algorithm_keyword(item)) continue;
    bool exists = false;
    for (int c = 0; c < PCCL_COLL_COUNT && !exists; c++)
      exists = opts->colls[c] && algorithm_registered((pccl_coll_t)c, item);
    if (!exists) {
      snprintf(error, error_size,
               "-a: algorithm '%s' exists for none of the chosen collectives", item);
      return false;
    }
  }
  if (!any) snprintf(error, error_size, "-a lists no algorithm");
  return any;
}

