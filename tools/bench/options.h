/* options.h - pccl-bench's command line: the options a run takes (options_t),
 * their parsing and validation into that struct with a message for anything
 * malformed, the usage text, and the comma-list helpers that -c and -a share
 * with the driver. */
#ifndef PCCL_BENCH_OPTIONS_H
#define PCCL_BENCH_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "pccl.h"

enum {
  MAX_NAME = 128, /* longest list item -c and -a accept */
  MAX_ROUNDS = 99 /* most timing rounds --rounds accepts */
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
  int rounds; /* interleaved timing rounds, odd */
  int root;
  const char *csv_path; /* NULL: no CSV */
  bool with_mpi;
  bool sync; /* --sync: a barrier before every call, its time taken off */
  bool check;
  bool shared_mem; /* buffers from pccl_mem_alloc (else posix_memalign) */
  bool device;     /* --mem cuda: pccl runs on device copies of the buffers */
  bool mpi_same;   /* --mpi-mem same: MPI runs on pccl's buffers (else malloc's of its own) */
  bool heavy;      /* --vcounts heavy: the last rank holds half of a v-collective's data */
  bool help;
} options_t;

/* Writes the -h text to `out`. */
void print_usage(FILE *out);

/* Parses argv into *opts (defaults for what is absent) and checks it against
 * `nranks`; false with a message in `error` when malformed. -h stops the
 * parse with opts->help set. */
bool parse_options(int argc, char **argv, int nranks, options_t *opts, char *error,
                   size_t error_size);

/* Every name in -a must exist for at least one chosen collective; false with
 * a message in `error` otherwise. */
bool validate_algorithms(const options_t *opts, char *error, size_t error_size);

/* Copies the next item of a comma list into `item` (truncated to MAX_NAME-1
 * characters) and moves *cursor past it; false at the end of the list. */
bool next_list_item(const char **cursor, char item[MAX_NAME]);

/* Index of `name` in `names`, or -1. */
int find_name(const char *const *names, int count, const char *name);
/* The same for an algorithm item of -a, "name" or "name:k". */
int find_algorithm(const char *const *names, int count, const char *item);

#endif
