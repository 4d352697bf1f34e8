/* pccl-bench: pccl's benchmark. Run under mpirun, it times pccl's collectives
 * over a sweep of message sizes, interleaved with MPI's own collective on the
 * same sizes, checks pccl's results against a reference computed locally, and
 * prints an nccl-tests style table per collective (optionally CSV as well).
 * `pccl-bench -h` lists the flags. */
#define _POSIX_C_SOURCE 200809L

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "pccl.h"
#include "pccl_mpi.h"

enum {
  EXIT_USAGE = 2,           /* malformed arguments */
  ROUNDS = 5,               /* interleaved pccl/MPI rounds per size */
  BUFFER_ALIGNMENT = 64,
  MIN_ADAPTIVE_ITERS = 3,
  MAX_ADAPTIVE_ITERS = 10000,
  PATTERN_PERIOD = 5,       /* inputs repeat every 5 elements */
  SENTINEL_BYTE = 0xA5,     /* fills the output before the checked call */
  MAX_NAME = 128,           /* longest list item -c and -a accept */
};
_Static_assert(ROUNDS % 2 == 1, "the median of the rounds needs an odd count");

#define TARGET_BLOCK_SECONDS 0.05

static const char *const coll_names[PCCL_COLL_COUNT] = {
    [PCCL_COLL_ALLGATHER] = "allgather", [PCCL_COLL_REDUCE_SCATTER] = "reducescatter",
    [PCCL_COLL_ALLREDUCE] = "allreduce", [PCCL_COLL_BROADCAST] = "broadcast",
    [PCCL_COLL_REDUCE] = "reduce",       [PCCL_COLL_SCATTER] = "scatter",
    [PCCL_COLL_GATHER] = "gather",       [PCCL_COLL_ALLTOALL] = "alltoall",
};

static const char *const dtype_names[PCCL_DTYPE_COUNT] = {
    [PCCL_INT8] = "int8",         [PCCL_UINT8] = "uint8",       [PCCL_INT32] = "int32",
    [PCCL_UINT32] = "uint32",     [PCCL_INT64] = "int64",       [PCCL_UINT64] = "uint64",
    [PCCL_FLOAT16] = "float16",   [PCCL_BFLOAT16] = "bfloat16", [PCCL_FLOAT32] = "float32",
    [PCCL_FLOAT64] = "float64",
};

static const char *const op_names[PCCL_OP_COUNT] = {
    [PCCL_SUM] = "sum", [PCCL_PROD] = "prod", [PCCL_MIN] = "min",
    [PCCL_MAX] = "max", [PCCL_AVG] = "avg",
};

typedef struct {
  bool colls[PCCL_COLL_COUNT]; /* collectives to run, in enum order */
  const char *algos;           /* comma list of names, "auto" and "all" */
  size_t min_bytes, max_bytes;
  int factor;
  pccl_dtype_t dtype;
  pccl_op_t op;
  int iters; /* 0: adapt to the size */
  int warmup;
  int root;
  const char *csv_path; /* NULL: no CSV */
  bool with_mpi;
  bool check;
  bool help;
} options_t;

typedef struct {
  options_t opts;
  pccl_comm_t *comm;
  int rank, nranks, nnodes;
  size_t buffer_bytes;       /* size of each buffer below */
  void *send, *recv;         /* pccl's buffers */
  void *mpi_send, *mpi_recv; /* MPI's, so the check sees only pccl's output */
  FILE *csv;                 /* rank 0 with --csv only */
  bool any_check_failed;
} bench_t;

/* One collective at one size. */
typedef struct {
  pccl_coll_t coll;
  const char *forced_algo; /* NULL: automatic selection */
  size_t count;            /* the count argument pccl and MPI get */
} bench_case_t;

typedef enum { CHECK_OFF, CHECK_OK, CHECK_FAIL } check_result_t;

typedef struct {
  size_t bytes;
  const char *algorithm; /* what pccl ran */
  double pccl_seconds;
  bool has_mpi;
  double mpi_seconds;
  check_result_t check;
} size_result_t;

/* One element of any datatype, in memory order. */
typedef struct {
  unsigned char bytes[8];
} element_t;

typedef enum { IMPL_PCCL, IMPL_MPI } impl_t;

/* ---- errors ------------------------------------------------------------ */

static void abort_on_pccl_error(const pccl_comm_t *comm, pccl_status_t status,
                                const char *what) {
  if (status == PCCL_OK) return;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fprintf(stderr, "pccl-bench: rank %d: %s failed: %s: %s\n", rank, what,
          pccl_status_string(status), pccl_last_error(comm));
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static void abort_out_of_memory(void) {
  fprintf(stderr, "pccl-bench: out of memory\n");
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* ---- collective properties --------------------------------------------- */

static bool is_reduction(pccl_coll_t coll) {
  return coll == PCCL_COLL_REDUCE_SCATTER || coll == PCCL_COLL_ALLREDUCE ||
         coll == PCCL_COLL_REDUCE;
}

static bool is_rooted(pccl_coll_t coll) {
  return coll == PCCL_COLL_BROADCAST || coll == PCCL_COLL_REDUCE ||
         coll == PCCL_COLL_SCATTER || coll == PCCL_COLL_GATHER;
}

/* Reported bytes are this many times count*elemsize (nccl-tests' sizes). */
static size_t size_multiplier(pccl_coll_t coll, int nranks) {
  bool per_count = coll == PCCL_COLL_ALLREDUCE || coll == PCCL_COLL_BROADCAST ||
                   coll == PCCL_COLL_REDUCE;
  return per_count ? 1 : (size_t)nranks;
}

/* nccl-tests' factor from algorithm bandwidth to bus bandwidth. */
static double bus_factor(pccl_coll_t coll, int nranks) {
  double n = nranks;
  switch (coll) {
  case PCCL_COLL_ALLREDUCE: return 2.0 * (n - 1.0) / n;
  case PCCL_COLL_BROADCAST:
  case PCCL_COLL_REDUCE: return 1.0;
  default: return (n - 1.0) / n;
  }
}

static size_t send_elements(pccl_coll_t coll, size_t count, int nranks) {
  bool whole = coll == PCCL_COLL_REDUCE_SCATTER || coll == PCCL_COLL_SCATTER ||
               coll == PCCL_COLL_ALLTOALL;
  return whole ? (size_t)nranks * count : count;
}

static size_t recv_elements(pccl_coll_t coll, size_t count, int nranks) {
  bool whole = coll == PCCL_COLL_ALLGATHER || coll == PCCL_COLL_GATHER ||
               coll == PCCL_COLL_ALLTOALL;
  return whole ? (size_t)nranks * count : count;
}

/* ---- datatypes ---------------------------------------------------------- */

static bool dtype_is_float(pccl_dtype_t dtype) {
  return dtype == PCCL_FLOAT16 || dtype == PCCL_BFLOAT16 || dtype == PCCL_FLOAT32 ||
         dtype == PCCL_FLOAT64;
}

static bool dtype_is_unsigned(pccl_dtype_t dtype) {
  return dtype == PCCL_UINT8 || dtype == PCCL_UINT32 || dtype == PCCL_UINT64;
}

/* IEEE binary16 bits nearest to the finite `value` (ties to even). */
static uint16_t half_from_float(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  uint32_t sign = (bits >> 16) & 0x8000u;
  uint32_t mantissa = bits & 0x7fffffu;
  int exponent = (int)((bits >> 23) & 0xffu) - 127 + 15;
  if (exponent >= 31) return (uint16_t)(sign | 0x7c00u); /* overflows to inf */
  if (exponent < -10) return (uint16_t)sign;             /* underflows to zero */
  uint32_t shift = 13;
  if (exponent <= 0) { /* subnormal: the implicit bit becomes explicit */
    mantissa |= 0x800000u;
    shift = (uint32_t)(14 - exponent);
    exponent = 0;
  }
  uint32_t kept = mantissa >> shift;
  uint32_t rest = mantissa & ((1u << shift) - 1u);
  uint32_t halfway = 1u << (shift - 1u);
  if (rest > halfway || (rest == halfway && (kept & 1u))) kept++; /* may carry into exponent */
  return (uint16_t)(sign | (((uint32_t)exponent << 10) + kept));
}

/* bfloat16 bits nearest to the finite `value` (ties to even). */
static uint16_t bfloat16_from_float(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return (uint16_t)(bits >> 16);
}

/* A 16-bit float's bits as an integer that steps by one per unit in the last place. */
static long ulp_index(uint16_t bits) {
  return (bits & 0x8000u) ? -(long)(bits & 0x7fffu) : (long)bits;
}

/* Integer element holding `bits` truncated to the type's width. */
static element_t integer_element(pccl_dtype_t dtype, uint64_t bits) {
  element_t element = {{0}};
  switch (dtype) {
  case PCCL_INT8:
  case PCCL_UINT8: {
    uint8_t narrow = (uint8_t)bits;
    memcpy(element.bytes, &narrow, sizeof narrow);
    break;
  }
  case PCCL_INT32:
  case PCCL_UINT32: {
    uint32_t narrow = (uint32_t)bits;
    memcpy(element.bytes, &narrow, sizeof narrow);
    break;
  }
  default: memcpy(element.bytes, &bits, sizeof bits); break; /* int64, uint64 */
  }
  return element;
}

/* Floating-point element nearest to `value`. */
static element_t real_element(pccl_dtype_t dtype, double value) {
  element_t element = {{0}};
  switch (dtype) {
  case PCCL_FLOAT16: {
    uint16_t half = half_from_float((float)value);
    memcpy(element.bytes, &half, sizeof half);
    break;
  }
  case PCCL_BFLOAT16: {
    uint16_t bfloat = bfloat16_from_float((float)value);
    memcpy(element.bytes, &bfloat, sizeof bfloat);
    break;
  }
  case PCCL_FLOAT32: {
    float single = (float)value;
    memcpy(element.bytes, &single, sizeof single);
    break;
  }
  default: memcpy(element.bytes, &value, sizeof value); break; /* float64 */
  }
  return element;
}

static element_t small_integer_element(pccl_dtype_t dtype, int64_t value) {
  return dtype_is_float(dtype) ? real_element(dtype, (double)value)
                               : integer_element(dtype, (uint64_t)value);
}

/* MPI's type for `dtype`; float16/bfloat16 move as 16-bit integers and
 * cannot be reduced (MPI_DATATYPE_NULL). */
static MPI_Datatype mpi_datatype(pccl_dtype_t dtype, bool for_reduction) {
  switch (dtype) {
  case PCCL_INT8: return MPI_INT8_T;
  case PCCL_UINT8: return MPI_UINT8_T;
  case PCCL_INT32: return MPI_INT32_T;
  case PCCL_UINT32: return MPI_UINT32_T;
  case PCCL_INT64: return MPI_INT64_T;
  case PCCL_UINT64: return MPI_UINT64_T;
  case PCCL_FLOAT32: return MPI_FLOAT;
  case PCCL_FLOAT64: return MPI_DOUBLE;
  default: return for_reduction ? MPI_DATATYPE_NULL : MPI_UINT16_T; /* float16, bfloat16 */
  }
}

/* MPI's op for `op`; MPI_OP_NULL for avg, which MPI lacks. */
static MPI_Op mpi_op(pccl_op_t op) {
  switch (op) {
  case PCCL_SUM: return MPI_SUM;
  case PCCL_PROD: return MPI_PROD;
  case PCCL_MIN: return MPI_MIN;
  case PCCL_MAX: return MPI_MAX;
  default: return MPI_OP_NULL;
  }
}

/* ---- option parsing ----------------------------------------------------- */

static void print_usage(FILE *out) {
  fputs(
      "usage: mpirun -np N pccl-bench [options]\n"
      "  -c LIST      collectives: comma list of allgather, reducescatter, allreduce,\n"
      "               broadcast, reduce, scatter, gather, alltoall, or all\n"
      "               (default allgather,reducescatter,allreduce)\n"
      "  -a LIST      algorithms: comma list of names, all (every registered one) or\n"
      "               auto (automatic selection; default)\n"
      "  -b SIZE      smallest size in bytes (default 1K); K, M, G are powers of 1024\n"
      "  -e SIZE      largest size in bytes (default 64M)\n"
      "  -f FACTOR    integer size multiplication factor, at least 2 (default 2)\n"
      "  -d DTYPE     int8, uint8, int32, uint32, int64, uint64, float16, bfloat16,\n"
      "               float32, float64 (default float32)\n"
      "  -o OP        sum, prod, min, max, avg (default sum)\n"
      "  -n ITERS     calls per timed block (default: adapted so that a block lasts\n"
      "               at least 50 ms, between 3 and 10000)\n"
      "  -w WARMUP    warm-up calls per size (default 3)\n"
      "  -r ROOT      root of broadcast, reduce, scatter and gather (default 0)\n"
      "  --csv FILE   also write the results as CSV to FILE (rank 0)\n"
      "  --no-mpi     do not time MPI's own collectives\n"
      "  --check 0|1  check pccl's results (default 1)\n"
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
      .with_mpi = true,
      .check = true,
  };
  opts.colls[PCCL_COLL_ALLGATHER] = true;
  opts.colls[PCCL_COLL_REDUCE_SCATTER] = true;
  opts.colls[PCCL_COLL_ALLREDUCE] = true;
  return opts;
}

/* Copies the next item of a comma list into `item` (truncated to MAX_NAME-1
 * characters) and moves *cursor past it; false at the end of the list. */
static bool next_list_item(const char **cursor, char item[MAX_NAME]) {
  if (**cursor == '\0') return false;
  const char *comma = strchr(*cursor, ',');
  size_t length = comma ? (size_t)(comma - *cursor) : strlen(*cursor);
  size_t copied = length < MAX_NAME - 1 ? length : MAX_NAME - 1;
  memcpy(item, *cursor, copied);
  item[copied] = '\0';
  *cursor += length + (comma ? 1 : 0);
  return true;
}

/* Index of `name` in `names`, or -1. */
static int find_name(const char *const *names, int count, const char *name) {
  for (int i = 0; i < count; i++)
    if (strcmp(names[i], name) == 0) return i;
  return -1;
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
    int coll = find_name(coll_names, PCCL_COLL_COUNT, item);
    if (strcmp(item, "all") == 0) {
      for (int c = 0; c < PCCL_COLL_COUNT; c++) colls[c] = true;
    } else if (coll >= 0) {
      colls[coll] = true;
    } else {
      snprintf(error, error_size,
               "-c: unknown collective '%s' (expected allgather, reducescatter, allreduce, "
               "broadcast, reduce, scatter, gather, alltoall or all)",
               item);
      return false;
    }
    any = true;
  }
  if (!any) snprintf(error, error_size, "-c selects no collective");
  return any;
}

static bool parse_name_option(const char *flag, const char *text, const char *const *names,
                              int count, int *out, char *error, size_t error_size) {
  *out = find_name(names, count, text);
  if (*out >= 0) return true;
  int written = snprintf(error, error_size, "%s: unknown value '%s' (expected", flag, text);
  for (int i = 0; i < count && written > 0 && (size_t)written < error_size; i++)
    written += snprintf(error + written, error_size - (size_t)written, "%s %s",
                        i == 0 ? "" : ",", names[i]);
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
  if (strcmp(flag, "--csv") == 0) {
    opts->csv_path = value;
    return true;
  }
  if (strcmp(flag, "--check") == 0) {
    if (!parse_int_option(flag, value, 0, 1, &number, error, error_size)) return false;
    opts->check = number == 1;
    return true;
  }
  if (strcmp(flag, "-d") == 0) {
    if (!parse_name_option(flag, value, dtype_names, PCCL_DTYPE_COUNT, &number, error,
                           error_size))
      return false;
    opts->dtype = (pccl_dtype_t)number;
    return true;
  }
  if (!parse_name_option(flag, value, op_names, PCCL_OP_COUNT, &number, error, error_size))
    return false;
  opts->op = (pccl_op_t)number; /* -o, the last flag that takes a value */
  return true;
}

static bool takes_value(const char *flag) {
  static const char *const flags[] = {"-c", "-a", "-b", "-e", "-f", "-d", "-o",
                                      "-n", "-w", "-r", "--csv", "--check"};
  return find_name(flags, (int)(sizeof flags / sizeof flags[0]), flag) >= 0;
}

static bool parse_options(int argc, char **argv, int nranks, options_t *opts, char *error,
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

/* ---- algorithms --------------------------------------------------------- */

/* The algorithms registered for `coll` (free the array, not the names). */
static const char **registered_algorithms(pccl_coll_t coll, int *count) {
  const char *unused[1];
  abort_on_pccl_error(NULL, pccl_algo_list(coll, unused, 0, count), "pccl_algo_list");
  const char **names = malloc(sizeof *names * (size_t)(*count > 0 ? *count : 1));
  if (names == NULL) abort_out_of_memory();
  abort_on_pccl_error(NULL, pccl_algo_list(coll, names, *count, count), "pccl_algo_list");
  return names;
}

static bool algorithm_registered(pccl_coll_t coll, const char *name) {
  int count = 0;
  const char **names = registered_algorithms(coll, &count);
  bool found = find_name(names, count, name) >= 0;
  free(names);
  return found;
}

static bool is_algorithm_keyword(const char *item) {
  return strcmp(item, "auto") == 0 || strcmp(item, "all") == 0;
}

/* Every name in -a must exist for at least one chosen collective. */
static bool validate_algorithms(const options_t *opts, char *error, size_t error_size) {
  char item[MAX_NAME];
  bool any = false;
  for (const char *cursor = opts->algos; next_list_item(&cursor, item); any = true) {
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

/* ---- buffers and reference ---------------------------------------------- */

/* Input element `index` of `rank`: a small integer, so float sums are exact. */
static int64_t input_value(pccl_dtype_t dtype, int rank, size_t index) {
  int64_t value = (int64_t)(((size_t)rank * 7 + (index % PATTERN_PERIOD) * 3) % 5);
  return dtype_is_unsigned(dtype) ? value : value - 2;
}

static void fill_input(const bench_t *b, void *buffer, size_t elements) {
  size_t elem_size = pccl_dtype_size(b->opts.dtype);
  element_t cycle[PATTERN_PERIOD];
  for (size_t j = 0; j < PATTERN_PERIOD; j++)
    cycle[j] = small_integer_element(b->opts.dtype, input_value(b->opts.dtype, b->rank, j));
  unsigned char *bytes = buffer;
  for (size_t i = 0; i < elements; i++)
    memcpy(bytes + i * elem_size, cycle[i % PATTERN_PERIOD].bytes, elem_size);
}

/* The wrapped integer sum as a value of `dtype`, divided by nranks in C. */
static uint64_t integer_average(pccl_dtype_t dtype, uint64_t sum, int nranks) {
  switch (dtype) {
  case PCCL_INT8: return (uint64_t)(int64_t)((int8_t)sum / nranks);
  case PCCL_UINT8: return (uint8_t)sum / (uint64_t)nranks;
  case PCCL_INT32: return (uint64_t)(int64_t)((int32_t)sum / nranks);
  case PCCL_UINT32: return (uint32_t)sum / (uint64_t)nranks;
  case PCCL_INT64: return (uint64_t)((int64_t)sum / nranks);
  default: return sum / (uint64_t)nranks; /* uint64 */
  }
}

/* Every rank's input element `index` reduced, for an integer dtype;
 * sum and prod wrap like unsigned C arithmetic. */
static element_t reduced_integer(const bench_t *b, size_t index) {
  pccl_dtype_t dtype = b->opts.dtype;
  int64_t first = input_value(dtype, 0, index);
  uint64_t sum = (uint64_t)first, product = (uint64_t)first;
  int64_t min = first, max = first;
  for (int r = 1; r < b->nranks; r++) {
    int64_t value = input_value(dtype, r, index);
    sum += (uint64_t)value;
    product *= (uint64_t)value;
    min = value < min ? value : min;
    max = value > max ? value : max;
  }
  switch (b->opts.op) {
  case PCCL_SUM: return integer_element(dtype, sum);
  case PCCL_PROD: return integer_element(dtype, product);
  case PCCL_MIN: return integer_element(dtype, (uint64_t)min);
  case PCCL_MAX: return integer_element(dtype, (uint64_t)max);
  default: return integer_element(dtype, integer_average(dtype, sum, b->nranks));
  }
}

/* Every rank's input element `index` reduced, for a floating-point dtype;
 * exact in double for small integers, avg divided in the dtype's precision. */
static element_t reduced_real(const bench_t *b, size_t index) {
  pccl_dtype_t dtype = b->opts.dtype;
  double first = (double)input_value(dtype, 0, index);
  double sum = first, product = first, min = first, max = first;
  for (int r = 1; r < b->nranks; r++) {
    double value = (double)input_value(dtype, r, index);
    sum += value;
    product *= value;
    min = value < min ? value : min;
    max = value > max ? value : max;
  }
  switch (b->opts.op) {
  case PCCL_SUM: return real_element(dtype, sum);
  case PCCL_PROD: return real_element(dtype, product);
  case PCCL_MIN: return real_element(dtype, min);
  case PCCL_MAX: return real_element(dtype, max);
  default:
    if (dtype == PCCL_FLOAT64) return real_element(dtype, sum / b->nranks);
    return real_element(dtype, (double)((float)sum / (float)b->nranks));
  }
}

/* The element pccl should have written at position `k` of its output;
 * `reduced` holds the reduced inputs by index modulo PATTERN_PERIOD. */
static element_t expected_element(const bench_t *b, const bench_case_t *c,
                                  const element_t reduced[PATTERN_PERIOD], size_t k) {
  pccl_dtype_t dtype = b->opts.dtype;
  size_t my_block = (size_t)b->rank * c->count;
  int source_rank = (int)(k / c->count);
  switch (c->coll) {
  case PCCL_COLL_ALLGATHER:
  case PCCL_COLL_GATHER:
    return small_integer_element(dtype, input_value(dtype, source_rank, k % c->count));
  case PCCL_COLL_ALLTOALL:
    return small_integer_element(dtype,
                                 input_value(dtype, source_rank, my_block + k % c->count));
  case PCCL_COLL_BROADCAST:
    return small_integer_element(dtype, input_value(dtype, b->opts.root, k));
  case PCCL_COLL_SCATTER:
    return small_integer_element(dtype, input_value(dtype, b->opts.root, my_block + k));
  case PCCL_COLL_REDUCE_SCATTER: return reduced[(my_block + k) % PATTERN_PERIOD];
  default: return reduced[k % PATTERN_PERIOD]; /* allreduce, reduce */
  }
}

/* Output elements this rank checks: none off the root for reduce and gather. */
static size_t checked_elements(const bench_t *b, const bench_case_t *c) {
  bool root_only = c->coll == PCCL_COLL_REDUCE || c->coll == PCCL_COLL_GATHER;
  if (root_only && b->rank != b->opts.root) return 0;
  return recv_elements(c->coll, c->count, b->nranks);
}

static bool output_matches(const bench_t *b, const bench_case_t *c) {
  pccl_dtype_t dtype = b->opts.dtype;
  size_t elem_size = pccl_dtype_size(dtype);
  element_t reduced[PATTERN_PERIOD] = {{{0}}};
  if (is_reduction(c->coll))
    for (size_t j = 0; j < PATTERN_PERIOD; j++)
      reduced[j] = dtype_is_float(dtype) ? reduced_real(b, j) : reduced_integer(b, j);
  bool within_one_ulp = is_reduction(c->coll) && b->opts.op == PCCL_AVG &&
                        (dtype == PCCL_FLOAT16 || dtype == PCCL_BFLOAT16);
  const unsigned char *output = b->recv;
  size_t elements = checked_elements(b, c);
  for (size_t k = 0; k < elements; k++) {
    element_t expected = expected_element(b, c, reduced, k);
    const unsigned char *actual = output + k * elem_size;
    bool match;
    if (within_one_ulp) {
      uint16_t got, want;
      memcpy(&got, actual, sizeof got);
      memcpy(&want, expected.bytes, sizeof want);
      long distance = ulp_index(got) - ulp_index(want);
      match = distance >= -1 && distance <= 1;
    } else {
      match = memcmp(actual, expected.bytes, elem_size) == 0;
    }
    if (!match) {
      fprintf(stderr, "pccl-bench: rank %d: %s count %zu: wrong output element %zu\n",
              b->rank, coll_names[c->coll], c->count, k);
      return false;
    }
  }
  return true;
}

/* ---- running the collectives -------------------------------------------- */

static pccl_status_t run_pccl(const bench_t *b, const bench_case_t *c) {
  const void *send = b->send;
  void *recv = b->recv;
  size_t count = c->count;
  pccl_dtype_t dtype = b->opts.dtype;
  pccl_op_t op = b->opts.op;
  int root = b->opts.root;
  switch (c->coll) {
  case PCCL_COLL_ALLGATHER: return pccl_allgather(send, recv, count, dtype, b->comm);
  case PCCL_COLL_REDUCE_SCATTER:
    return pccl_reduce_scatter(send, recv, count, dtype, op, b->comm);
  case PCCL_COLL_ALLREDUCE: return pccl_allreduce(send, recv, count, dtype, op, b->comm);
  case PCCL_COLL_BROADCAST: return pccl_broadcast(send, recv, count, dtype, root, b->comm);
  case PCCL_COLL_REDUCE: return pccl_reduce(send, recv, count, dtype, op, root, b->comm);
  case PCCL_COLL_SCATTER: return pccl_scatter(send, recv, count, dtype, root, b->comm);
  case PCCL_COLL_GATHER: return pccl_gather(send, recv, count, dtype, root, b->comm);
  default: return pccl_alltoall(send, recv, count, dtype, b->comm); /* alltoall */
  }
}

/* MPI_COMM_WORLD keeps MPI's default handler: MPI errors abort the job. */
static void run_mpi(const bench_t *b, const bench_case_t *c) {
  void *send = b->mpi_send, *recv = b->mpi_recv;
  int count = (int)c->count;
  MPI_Datatype type = mpi_datatype(b->opts.dtype, is_reduction(c->coll));
  MPI_Op op = mpi_op(b->opts.op);
  int root = b->opts.root;
  MPI_Comm world = MPI_COMM_WORLD;
  switch (c->coll) {
  case PCCL_COLL_ALLGATHER: MPI_Allgather(send, count, type, recv, count, type, world); break;
  case PCCL_COLL_REDUCE_SCATTER:
    MPI_Reduce_scatter_block(send, recv, count, type, op, world);
    break;
  case PCCL_COLL_ALLREDUCE: MPI_Allreduce(send, recv, count, type, op, world); break;
  case PCCL_COLL_BROADCAST:
    MPI_Bcast(b->rank == root ? send : recv, count, type, root, world);
    break;
  case PCCL_COLL_REDUCE: MPI_Reduce(send, recv, count, type, op, root, world); break;
  case PCCL_COLL_SCATTER:
    MPI_Scatter(send, count, type, recv, count, type, root, world);
    break;
  case PCCL_COLL_GATHER: MPI_Gather(send, count, type, recv, count, type, root, world); break;
  default: MPI_Alltoall(send, count, type, recv, count, type, world); break; /* alltoall */
  }
}

/* Whether MPI can run the same call: n/a for float16/bfloat16 reductions,
 * avg, and counts beyond an int. */
static bool mpi_available(const bench_t *b, const bench_case_t *c) {
  if (!b->opts.with_mpi || c->count > INT_MAX) return false;
  if (!is_reduction(c->coll)) return true;
  return mpi_datatype(b->opts.dtype, true) != MPI_DATATYPE_NULL &&
         mpi_op(b->opts.op) != MPI_OP_NULL;
}

static void call_once(const bench_t *b, const bench_case_t *c, impl_t impl) {
  if (impl == IMPL_MPI)
    run_mpi(b, c);
  else
    abort_on_pccl_error(b->comm, run_pccl(b, c), coll_names[c->coll]);
}

/* Seconds per call of a block of `iters` calls, the slowest rank's. */
static double time_block(const bench_t *b, const bench_case_t *c, impl_t impl, int iters) {
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  for (int i = 0; i < iters; i++) call_once(b, c, impl);
  double seconds = (MPI_Wtime() - start) / iters;
  MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return seconds;
}

/* First call of a size. A forced algorithm may answer PCCL_ERR_UNSUPPORTED
 * (assumed to be decided alike on every rank): the size is then skipped
 * with a note. Any other error aborts. */
static bool first_call_supported(const bench_t *b, const bench_case_t *c, size_t bytes) {
  pccl_status_t status = run_pccl(b, c);
  int unsupported = c->forced_algo != NULL && status == PCCL_ERR_UNSUPPORTED;
  if (!unsupported) abort_on_pccl_error(b->comm, status, coll_names[c->coll]);
  if (unsupported && b->rank == 0)
    printf("# note: %s cannot run %s at %zu bytes: %s\n", c->forced_algo, coll_names[c->coll],
           bytes, pccl_last_error(b->comm));
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

static double median_of_rounds(double rounds[ROUNDS]) {
  qsort(rounds, ROUNDS, sizeof rounds[0], compare_doubles);
  return rounds[ROUNDS / 2];
}

/* Rounds of a pccl block then an MPI block; the median of each. */
static void time_interleaved(const bench_t *b, const bench_case_t *c, int iters,
                             size_result_t *result) {
  double pccl_rounds[ROUNDS] = {0}, mpi_rounds[ROUNDS] = {0};
  for (int round = 0; round < ROUNDS; round++) {
    pccl_rounds[round] = time_block(b, c, IMPL_PCCL, iters);
    if (result->has_mpi) mpi_rounds[round] = time_block(b, c, IMPL_MPI, iters);
  }
  result->pccl_seconds = median_of_rounds(pccl_rounds);
  if (result->has_mpi) result->mpi_seconds = median_of_rounds(mpi_rounds);
}

/* One fresh call on freshly filled inputs, checked on every rank. */
static check_result_t check_pccl_result(const bench_t *b, const bench_case_t *c) {
  size_t elem_size = pccl_dtype_size(b->opts.dtype);
  fill_input(b, b->send, send_elements(c->coll, c->count, b->nranks));
  memset(b->recv, SENTINEL_BYTE, recv_elements(c->coll, c->count, b->nranks) * elem_size);
  abort_on_pccl_error(b->comm, run_pccl(b, c), coll_names[c->coll]);
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
  printf("#\n# pccl-bench (pccl %s): %s\n", PCCL_VERSION_STRING, coll_names[coll]);
  printf("# nranks %d  nnodes %d  dtype %s  op %s", b->nranks, b->nnodes,
         dtype_names[b->opts.dtype], is_reduction(coll) ? op_names[b->opts.op] : "none");
  if (is_rooted(coll)) printf("  root %d", b->opts.root);
  printf("\n# warmup %d  rounds %d  iters ", b->opts.warmup, ROUNDS);
  if (b->opts.iters > 0)
    printf("%d", b->opts.iters);
  else
    printf("adaptive (>= %.0f ms per block)", TARGET_BLOCK_SECONDS * 1e3);
  printf("  check %s\n#\n", b->opts.check ? "on" : "off");
  printf("#%11s %12s %9s  %-14s %10s %8s %8s %10s %9s %8s %6s\n", "size(B)", "count", "dtype",
         "algorithm", "time_us", "algbw", "busbw", "mpi_us", "mpi_busbw", "speedup", "check");
  printf("#%11s %12s %9s  %-14s %10s %8s %8s %10s %9s %8s %6s\n", "(B)", "(elements)", "", "",
         "(us)", "(GB/s)", "(GB/s)", "(us)", "(GB/s)", "", "");
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
  printf("%12zu %12zu %9s  %-14s %10.2f %8.2f %8.2f %10s %9s %8s %6s\n", r->bytes,
         r->bytes / pccl_dtype_size(b->opts.dtype), dtype_names[b->opts.dtype], r->algorithm,
         time_us, algbw, algbw * factor,
         optional_number(mpi_text, sizeof mpi_text, r->has_mpi, mpi_us, 2, "n/a"),
         optional_number(busbw_text, sizeof busbw_text, r->has_mpi, mpi_busbw, 2, "n/a"),
         optional_number(speedup_text, sizeof speedup_text, r->has_mpi, speedup, 2, "n/a"),
         check_text(r->check, "n/a"));
  fflush(stdout);
  if (b->csv == NULL) return;
  fprintf(b->csv, "%s,%s,0,%d,%d,%zu,%.3f,%.4f,%.4f,%s,%s,%s\n", coll_names[c->coll],
          r->algorithm, b->nranks, b->nnodes, r->bytes, time_us, algbw, algbw * factor,
          optional_number(mpi_text, sizeof mpi_text, r->has_mpi, mpi_us, 3, ""),
          optional_number(speedup_text, sizeof speedup_text, r->has_mpi, speedup, 4, ""),
          check_text(r->check, ""));
  fflush(b->csv);
}

/* ---- the sweep ---------------------------------------------------------- */

static void benchmark_size(bench_t *b, pccl_coll_t coll, const char *forced_algo,
                           size_t bytes) {
  size_t elem_size = pccl_dtype_size(b->opts.dtype);
  size_t multiplier = size_multiplier(coll, b->nranks);
  bench_case_t c = {.coll = coll, .forced_algo = forced_algo,
                    .count = bytes / (multiplier * elem_size)};
  if (c.count == 0) return;
  if (!first_call_supported(b, &c, bytes)) return;
  size_result_t result = {.bytes = multiplier * c.count * elem_size,
                          .has_mpi = mpi_available(b, &c)};
  for (int i = 0; i < b->opts.warmup; i++) {
    call_once(b, &c, IMPL_PCCL);
    if (result.has_mpi) call_once(b, &c, IMPL_MPI);
  }
  time_interleaved(b, &c, choose_iterations(b, &c), &result);
  result.check = b->opts.check ? check_pccl_result(b, &c) : CHECK_OFF;
  result.algorithm = pccl_comm_last_algo(b->comm);
  if (result.check == CHECK_FAIL) b->any_check_failed = true;
  report_size(b, &c, &result);
}

/* Runs the size sweep with `forced_algo` (NULL: automatic selection). */
static void benchmark_algorithm(bench_t *b, pccl_coll_t coll, const char *forced_algo) {
  if (forced_algo != NULL)
    abort_on_pccl_error(b->comm, pccl_comm_set_algo(b->comm, coll, forced_algo),
                        "pccl_comm_set_algo");
  for (size_t bytes = b->opts.min_bytes;; bytes *= (size_t)b->opts.factor) {
    benchmark_size(b, coll, forced_algo, bytes);
    if (bytes > b->opts.max_bytes / (size_t)b->opts.factor) break;
  }
  if (forced_algo != NULL)
    abort_on_pccl_error(b->comm, pccl_comm_set_algo(b->comm, coll, NULL),
                        "pccl_comm_set_algo");
}

static void benchmark_collective(bench_t *b, pccl_coll_t coll) {
  print_table_header(b, coll);
  int count = 0;
  const char **registered = registered_algorithms(coll, &count);
  char item[MAX_NAME];
  for (const char *cursor = b->opts.algos; next_list_item(&cursor, item);) {
    if (strcmp(item, "auto") == 0) {
      benchmark_algorithm(b, coll, NULL);
    } else if (strcmp(item, "all") == 0) {
      for (int i = 0; i < count; i++) benchmark_algorithm(b, coll, registered[i]);
    } else if (find_name(registered, count, item) >= 0) {
      benchmark_algorithm(b, coll, item);
    } else if (b->rank == 0) {
      printf("# note: no algorithm '%s' for %s; skipped\n", item, coll_names[coll]);
      fflush(stdout);
    }
  }
  free(registered);
}

/* ---- setup -------------------------------------------------------------- */

static size_t largest_size(const options_t *opts) {
  size_t bytes = opts->min_bytes;
  while (bytes <= opts->max_bytes / (size_t)opts->factor) bytes *= (size_t)opts->factor;
  return bytes;
}

static void *aligned_buffer(size_t bytes, bool *ok) {
  void *buffer = NULL;
  if (posix_memalign(&buffer, BUFFER_ALIGNMENT, bytes) != 0) {
    *ok = false;
    return NULL;
  }
  memset(buffer, 0, bytes);
  return buffer;
}

/* Allocates the buffers at the largest size; false on any rank's failure. */
static bool allocate_buffers(bench_t *b) {
  bool ok = true;
  b->buffer_bytes = largest_size(&b->opts);
  b->send = aligned_buffer(b->buffer_bytes, &ok);
  b->recv = aligned_buffer(b->buffer_bytes, &ok);
  if (b->opts.with_mpi) {
    b->mpi_send = aligned_buffer(b->buffer_bytes, &ok);
    b->mpi_recv = aligned_buffer(b->buffer_bytes, &ok);
  }
  int all_ok = ok;
  MPI_Allreduce(MPI_IN_PLACE, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (!all_ok) {
    if (b->rank == 0)
      fprintf(stderr, "pccl-bench: cannot allocate the buffers (%zu bytes each)\n",
              b->buffer_bytes);
    return false;
  }
  size_t elements = b->buffer_bytes / pccl_dtype_size(b->opts.dtype);
  fill_input(b, b->send, elements);
  if (b->opts.with_mpi) fill_input(b, b->mpi_send, elements);
  return true;
}

static void free_buffers(bench_t *b) {
  free(b->send);
  free(b->recv);
  free(b->mpi_send);
  free(b->mpi_recv);
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
