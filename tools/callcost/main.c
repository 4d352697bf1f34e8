/* pccl-callcost - what a small collective costs, piece by piece, on the
 * ranks of one node:
 *   floor     one cache line from rank 0's core to rank 1's and back
 *             (ping-pong on a shared line; half of it is one transfer)
 *   segment   the node segment's own all-reduce (pccl_seg_run), no call
 *             layer: what the transport costs
 *   pccl      pccl_allreduce forced to the segment: the whole call
 *   call      pccl - segment: validation, selection, dispatch
 *   mpi       MPI_Allreduce on malloc memory, the same run
 * Blocks of each alternate over the rounds; the medians are printed, in
 * nanoseconds per call, as a table and (--csv FILE) as CSV.
 * Usage: mpirun -np N pccl-callcost [-b BYTES] [-n ITERS] [-r ROUNDS] [--csv FILE] */
#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pccl.h"
#include "pccl_mpi.h"
#include "seg.h"

#define MAX_ROUNDS 64

typedef struct {
  int rank, size, iters;
  size_t count;
  float *send, *recv;
  pccl_comm_t *comm;
  pccl_seg_t *seg;
  _Atomic uint64_t *line; /* the ping-pong line, in an MPI shared window */
} ctx_t;

enum { FLOOR, SEGMENT, PCCL, MPI, NKIND };
static const char *names[NKIND] = {"floor", "segment", "pccl", "mpi"};

static void die(const char *what) {
  fprintf(stderr, "pccl-callcost: %s\n", what);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Rank 0 writes i, rank 1 answers -i-ish (i + 1 << 32); others idle. */
static void pingpong(const ctx_t *c) {
  if (c->rank > 1) return;
  for (uint64_t i = 1; i <= (uint64_t)c->iters; i++) {
    uint64_t ping = 2 * i - 1, pong = 2 * i;
    if (c->rank == 0) {
      atomic_store_explicit(c->line, ping, memory_order_release);
      while (atomic_load_explicit(c->line, memory_order_acquire) != pong) {
      }
    } else {
      while (atomic_load_explicit(c->line, memory_order_acquire) != ping) {
      }
      atomic_store_explicit(c->line, pong, memory_order_release);
    }
  }
}

static void run(ctx_t *c, int kind) {
  static const _Atomic int no_abort = 0;
  pccl_seg_watch_t watch = {0.0, &no_abort, NULL};
  pccl_seg_call_t call = {.coll = PCCL_COLL_ALLREDUCE, .sendbuf = c->send, .recvbuf = c->recv,
                          .count = c->count, .dtype = PCCL_FLOAT32, .op = PCCL_SUM,
                          .path = PCCL_SEG_BUFFERS};
  pccl_seg_prepare(c->seg, &call); /* as the call layer keeps a repeated call */
  char why[256];
  int in_step;
  for (int i = 0; i < c->iters; i++) {
    switch (kind) {
    case SEGMENT:
      if (pccl_seg_run(c->seg, &call, &watch, why, sizeof why, &in_step) != PCCL_OK) die(why);
      break;
    case PCCL:
      if (pccl_allreduce(c->send, c->recv, c->count, PCCL_FLOAT32, PCCL_SUM, c->comm) != PCCL_OK)
        die(pccl_last_error(c->comm));
      break;
    case MPI:
      MPI_Allreduce(c->send, c->recv, (int)c->count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      break;
    }
  }
}

/* Nanoseconds per call of one block, the slowest rank's. */
static double block(ctx_t *c, int kind) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t = MPI_Wtime();
  if (kind == FLOOR)
    pingpong(c);
  else
    run(c, kind);
  t = (MPI_Wtime() - t) / c->iters * 1e9;
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return t;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  ctx_t c = {0};
  size_t bytes = 8;
  int rounds = 9;
  const char *csv = NULL;
  c.iters = 20000;
  if (argc % 2 == 0) die("usage: pccl-callcost [-b BYTES] [-n ITERS] [-r ROUNDS] [--csv FILE]");
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "-b")) bytes = strtoull(argv[i + 1], NULL, 10);
    else if (!strcmp(argv[i], "-n")) c.iters = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "-r")) rounds = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--csv")) csv = argv[i + 1];
    else die("usage: pccl-callcost [-b BYTES] [-n ITERS] [-r ROUNDS] [--csv FILE]");
  }
  if (bytes < 4 || bytes % 4 || c.iters < 1 || rounds < 1 || rounds > MAX_ROUNDS)
    die("-b must be a positive multiple of 4, -n positive, -r in 1..64");
  MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &c.size);
  if (c.size < 2) die("run it on at least 2 ranks of one node");
  c.count = bytes / 4;
  c.send = malloc(bytes);
  c.recv = malloc(bytes);
  if (!c.send || !c.recv) die("out of memory");
  for (size_t i = 0; i < c.count; i++) c.send[i] = (float)(c.rank + 1);

  MPI_Win win;
  void *base;
  if (MPI_Win_allocate_shared(c.rank == 0 ? 64 : 0, 64, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win) !=
      MPI_SUCCESS)
    die("MPI_Win_allocate_shared failed: the ranks must share a node");
  MPI_Aint size;
  int unit;
  MPI_Win_shared_query(win, 0, &size, &unit, &base);
  c.line = base;
  if (c.rank == 0) atomic_store(c.line, 0);

  char why[256];
  if (pccl_seg_create(MPI_COMM_WORLD, 0, PCCL_SEG_BYTES_DEFAULT, &c.seg, why, sizeof why) != PCCL_OK)
    die(why);
  if (pccl_comm_create_mpi(MPI_COMM_WORLD, &c.comm) != PCCL_OK) die(pccl_last_error(NULL));
  if (pccl_comm_set_algo(c.comm, PCCL_COLL_ALLREDUCE, "seg") != PCCL_OK) die(pccl_last_error(c.comm));

  double t[NKIND][MAX_ROUNDS];
  for (int k = 0; k < NKIND; k++) block(&c, k); /* warm-up */
  MPI_Barrier(MPI_COMM_WORLD);
  if (c.rank == 0) atomic_store(c.line, 0);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int r = 0; r < rounds; r++)
    for (int k = 0; k < NKIND; k++) {
      int kind = (k + r) % NKIND; /* each goes first in turn */
      if (kind == FLOOR) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (c.rank == 0) atomic_store(c.line, 0);
        MPI_Barrier(MPI_COMM_WORLD);
      }
      t[kind][r] = block(&c, kind);
    }
  double med[NKIND];
  for (int k = 0; k < NKIND; k++) {
    qsort(t[k], (size_t)rounds, sizeof(double), cmp);
    med[k] = t[k][rounds / 2];
  }
  if (c.rank == 0) {
    printf("# pccl-callcost: %d ranks, all-reduce of %zu bytes (float32 sum), malloc buffers, "
           "%d calls per block, median of %d rounds, ns per call (slowest rank)\n",
           c.size, bytes, c.iters, rounds);
    printf("# floor = cache-line round trip between rank 0 and rank 1\n");
    printf("%10s %10s %10s %10s %10s %12s\n", "floor_ns", "segment_ns", "pccl_ns", "call_ns", "mpi_ns",
           "mpi/pccl");
    printf("%10.1f %10.1f %10.1f %10.1f %10.1f %12.2f\n", med[FLOOR], med[SEGMENT], med[PCCL],
           med[PCCL] - med[SEGMENT], med[MPI], med[MPI] / med[PCCL]);
    if (csv) {
      FILE *f = fopen(csv, "w");
      if (!f) die("cannot write the CSV file");
      fprintf(f, "ranks,bytes");
      for (int k = 0; k < NKIND; k++) fprintf(f, ",%s_ns", names[k]);
      fprintf(f, ",call_ns\n%d,%zu", c.size, bytes);
      for (int k = 0; k < NKIND; k++) fprintf(f, ",%.1f", med[k]);
      fprintf(f, ",%.1f\n", med[PCCL] - med[SEGMENT]);
      fclose(f);
    }
  }
  pccl_comm_destroy(c.comm);
  pccl_seg_destroy(c.seg, 1);
  MPI_Win_free(&win);
  free(c.send);
  free(c.recv);
  pccl_finalize();
  MPI_Finalize();
  return 0;
}
