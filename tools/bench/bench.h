/* bench.h - private declarations shared by pccl-bench's files: the state of a
 * run (bench_t), one collective at one size (bench_case_t), and what
 * collectives.c provides: error aborts, the properties of each collective
 * (element counts, nccl-tests' size and bus bandwidth conventions) and the
 * calls of a collective through pccl and through MPI. */
#ifndef PCCL_BENCH_BENCH_H
#define PCCL_BENCH_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "options.h"
#include "pccl.h"

typedef struct {
  options_t opts;
  pccl_comm_t *comm;
  int rank, nranks, nnodes;
  size_t buffer_bytes;       /* size of each buffer below */
  /* pccl's buffers (--mem) and MPI's: a pair of malloc's own unless
   * --mpi-mem same, as each side gets what a program would give it (Open
   * MPI ran up to 6x slower on pccl_mem_alloc's memory at some sizes). The
   * check refills the input and runs pccl alone. */
  void *send, *recv;
  void *msend, *mrecv;
  void *dsend, *drecv;       /* --mem cuda: device copies pccl runs on */
  double memcpy_gbs;         /* one core's memcpy between them (the limit) */
  FILE *csv;                 /* rank 0 with --csv only */
  bool any_check_failed;
} bench_t;

/* One collective at one size. */
typedef struct {
  pccl_coll_t coll;
  const char *forced_algo; /* NULL: automatic selection */
  size_t count;            /* the count argument pccl and MPI get (v-collectives: the mean) */
  /* the v-collectives: every rank's count (allgatherv_counts), and MPI's
   * int counts and packed displacements; the all-to-allv's this rank's send
   * and receive counts (alltoallv_count), MPI's int ones, packed */
  const size_t *vcounts;
  const int *mcounts, *mdispls;
  const size_t *sendcounts, *recvcounts;
  const int *msendcounts, *msdispls, *mrecvcounts, *mrdispls;
} bench_case_t;

/* ---- device.c (--mem cuda) ---------------------------------------------- */

/* Device buffers of b->buffer_bytes; false with the reason in why. */
bool device_alloc(bench_t *b, char *why, size_t len);
void device_free(bench_t *b);
/* Before pccl's check: the host input up, recv's sentinel bytes set. */
void device_upload(const bench_t *b, size_t send_bytes, size_t recv_bytes, int sentinel);
/* After it: pccl's result down into the host recv buffer. */
void device_download(const bench_t *b, size_t recv_bytes);

/* ---- collectives.c ------------------------------------------------------ */

/* Unless `status` is PCCL_OK, reports `what` failed and aborts the job. */
void abort_on_pccl_error(const pccl_comm_t *comm, pccl_status_t status, const char *what);

bool is_reduction(pccl_coll_t coll);
bool is_rooted(pccl_coll_t coll);
/* Whether `coll` takes a count per rank (allgatherv_counts' ramp). */
bool has_vcounts(pccl_coll_t coll);

/* Reported bytes are this many times count*elemsize (nccl-tests' sizes). */
size_t size_multiplier(pccl_coll_t coll, int nranks);

/* nccl-tests' factor from algorithm bandwidth to bus bandwidth. */
double bus_factor(pccl_coll_t coll, int nranks);

/* Elements of the send and receive buffers a call with `count` uses
 * (`heavy`: the v-collectives' counts are allgatherv_counts' heavy ones). */
size_t send_elements(pccl_coll_t coll, size_t count, int nranks, bool heavy);
size_t recv_elements(pccl_coll_t coll, size_t count, int nranks, bool heavy);

/* A v-collective's counts, summing to exactly nranks x mean: a ramp, rank
 * r's count about 2 (r + 1) / (p + 1) times the mean (the largest near
 * twice the mean, the smallest near 2 / (p + 1) of it); or, `heavy`, the
 * last rank's half of the total and the others' share of the rest (the
 * imbalance of one rank that produced most of the data). */
void allgatherv_counts(size_t mean, int nranks, bool heavy, size_t *counts);

/* The all-to-allv's matrix over those counts: rank `from` sends rank `to`
 * counts[(to - from) mod nranks], so that every rank sends and receives
 * nranks x mean in all, and (past 2 ranks) what i sends j is not what j
 * sends i. */
size_t alltoallv_count(const size_t *counts, int nranks, int from, int to);

/* The algorithms registered for `coll` (free the array, not the names). */
const char **registered_algorithms(pccl_coll_t coll, int *count);

/* One call of case `c` on pccl's buffers, and on MPI's (MPI errors abort). */
pccl_status_t run_pccl(const bench_t *b, const bench_case_t *c);
void run_mpi(const bench_t *b, const bench_case_t *c);

/* Whether MPI can run the same call: n/a for float16/bfloat16 reductions,
 * avg, and counts beyond an int. */
bool mpi_available(const bench_t *b, const bench_case_t *c);

#endif
