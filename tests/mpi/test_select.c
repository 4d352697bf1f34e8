/* test_select.c - the default selection's choices, as docs/algorithms.md
 * states them, through pccl_comm_algo_for (which is checked against what a
 * call then runs in test_nonblocking):
 *   test_select --nodes   (under PCCL_RANKS_PER_NODE, several fake nodes of
 *       more than one rank): the two-level algorithms by size on both sides
 *       of each bound of the all-reduce, all-gather and reduce-scatter;
 *       and with PCCL_ALGO excluding hier_leader, the next row.
 *   test_select --node    (one node): small blocking and non-blocking calls
 *       on the node segment, and the non-blocking all-reduce up to 4 MiB
 *       (on 2 ranks the segment's bound; from 3 ranks it has none); the
 *       blocking broadcast's seg_cma rows (2, 3 and 4+ ranks); the
 *       uneven v-calls have no answer.
 *   test_select --skew    (one rank per fake node): an all-gatherv and a
 *       reduce-scatterv whose last rank holds half the data, run, and the
 *       algorithm they ran (pccl_comm_last_algo): from 8 nodes and above
 *       2 MiB recursive doubling / halving, else the ring; the same sizes
 *       in even blocks keep the ring.
 * Sizes are bytes (PCCL_UINT8 counts). Exits nonzero on any failure. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pccl.h"
#include "pccl_mpi.h"

static int failures, checks, rank, size;

/* The choice for coll of `bytes` (a block per rank for the all-gather and
 * reduce-scatter, whose rules bound the whole buffer) must be `want`. */
static void expect(pccl_comm_t *comm, pccl_coll_t coll, size_t bytes, int nb, const char *want) {
  int blocks = coll == PCCL_COLL_ALLGATHER || coll == PCCL_COLL_REDUCE_SCATTER;
  size_t count = blocks ? bytes / (size_t)size : bytes;
  const char *name = "(error)";
  pccl_status_t st = pccl_comm_algo_for(comm, coll, count, PCCL_UINT8, nb, &name);
  checks++;
  if (st == PCCL_OK && !strcmp(name, want)) return;
  failures++;
  printf("rank %d: FAIL %s%s of %zu bytes: %s, want %s\n", rank, nb ? "non-blocking " : "",
         pccl_coll_name(coll), bytes, st == PCCL_OK ? name : pccl_status_string(st), want);
}

static void across_nodes(pccl_comm_t *comm) {
  const char *algo = getenv("PCCL_ALGO");
  if (algo && strstr(algo, "-hier_leader")) { /* the next rows take its sizes */
    expect(comm, PCCL_COLL_ALLREDUCE, 8, 0, "hier_leader_rab");
    expect(comm, PCCL_COLL_ALLREDUCE, 32 << 10, 0, "hier_leader_rab");
    expect(comm, PCCL_COLL_ALLREDUCE, (64 << 10) + 1, 0, "hier_rec");
    return;
  }
  for (int nb = 0; nb < 2; nb++) { /* the same rows for non-blocking calls: no segment */
    expect(comm, PCCL_COLL_ALLREDUCE, 8, nb, "hier_leader");
    expect(comm, PCCL_COLL_ALLREDUCE, 32 << 10, nb, "hier_leader");
    expect(comm, PCCL_COLL_ALLREDUCE, (32 << 10) + 1, nb, "hier_leader_rab");
    expect(comm, PCCL_COLL_ALLREDUCE, 64 << 10, nb, "hier_leader_rab");
    expect(comm, PCCL_COLL_ALLREDUCE, (64 << 10) + 1, nb, "hier_rec");
    expect(comm, PCCL_COLL_ALLREDUCE, 512 << 10, nb, "hier_rec");
    expect(comm, PCCL_COLL_ALLREDUCE, (512 << 10) + 1, nb, "hier_rec_pipe");
    expect(comm, PCCL_COLL_ALLREDUCE, 1 << 20, nb, "hier_rec_pipe");
    expect(comm, PCCL_COLL_ALLREDUCE, (1 << 20) + 1, nb, "hier_ring_pipe");
    expect(comm, PCCL_COLL_ALLREDUCE, 2 << 20, nb, "hier_ring_pipe");
    expect(comm, PCCL_COLL_ALLREDUCE, (2 << 20) + 1, nb, "hier_rec_pipe");
    expect(comm, PCCL_COLL_ALLREDUCE, 4 << 20, nb, "hier_rec_pipe");
    expect(comm, PCCL_COLL_ALLREDUCE, (4 << 20) + 1, nb, "hier_ring_pipe");
    expect(comm, PCCL_COLL_ALLREDUCE, 256 << 20, nb, "hier_ring_pipe");
  }
  /* whole buffers a multiple of the rank count, on both sides of 64 KiB */
  size_t at = (size_t)(64 << 10) / (size_t)size * (size_t)size;
  expect(comm, PCCL_COLL_ALLGATHER, at, 0, "hier_leader");
  expect(comm, PCCL_COLL_ALLGATHER, at + (size_t)size, 0, "hier_ring"); /* up to 8 nodes */
  expect(comm, PCCL_COLL_REDUCE_SCATTER, at, 0, "hier_leader");
  expect(comm, PCCL_COLL_REDUCE_SCATTER, at + (size_t)size, 0, "hier_rechalv");
  size_t four = (size_t)(4 << 20) / (size_t)size * (size_t)size;
  expect(comm, PCCL_COLL_REDUCE_SCATTER, four, 0, "hier_rechalv");
  expect(comm, PCCL_COLL_REDUCE_SCATTER, four + (size_t)size, 0, "hier_ring");
}

static void one_node(pccl_comm_t *comm) {
  expect(comm, PCCL_COLL_ALLREDUCE, 8, 0, "seg");
  expect(comm, PCCL_COLL_ALLREDUCE, 16 << 10, 0, "seg");
  size_t nb_sizes[] = {8, 1 << 10, 64 << 10, 1 << 20, 4 << 20};
  for (size_t i = 0; i < sizeof nb_sizes / sizeof nb_sizes[0]; i++)
    expect(comm, PCCL_COLL_ALLREDUCE, nb_sizes[i], 1, "seg");
  expect(comm, PCCL_COLL_REDUCE_SCATTER, 8 * (size_t)size, 1, "seg");
  expect(comm, PCCL_COLL_BROADCAST, 8, 1, "seg");
  expect(comm, PCCL_COLL_SCAN, 1 << 20, 1, "seg");
  /* where the ranks may reach each other's memory (the all-reduce of 1 MiB
   * then takes seg_cma too), the blocking broadcast's seg_cma rows: on 2
   * ranks up to 1 MiB, on 3 up to 64 KiB, then binomial; from 4 ranks
   * above 64 KiB, the segment's buffers below */
  const char *ar = NULL;
  if (pccl_comm_algo_for(comm, PCCL_COLL_ALLREDUCE, 1 << 20, PCCL_UINT8, 0, &ar) == PCCL_OK &&
      !strcmp(ar, "seg_cma")) {
    size_t top = size == 2 ? (size_t)1 << 20 : (size_t)64 << 10;
    if (size <= 3) {
      expect(comm, PCCL_COLL_BROADCAST, top, 0, "seg_cma");
      expect(comm, PCCL_COLL_BROADCAST, top + 1, 0, "binomial");
    } else {
      expect(comm, PCCL_COLL_BROADCAST, top, 0, "seg");
      expect(comm, PCCL_COLL_BROADCAST, top + 1, 0, "seg_cma");
      expect(comm, PCCL_COLL_BROADCAST, (size_t)64 << 20, 0, "seg_cma");
    }
  }
  const char *name = NULL;
  checks++;
  if (pccl_comm_algo_for(comm, PCCL_COLL_ALLGATHERV, 8, PCCL_UINT8, 1, &name) != PCCL_ERR_UNSUPPORTED) {
    failures++;
    printf("rank %d: FAIL all-gatherv: not PCCL_ERR_UNSUPPORTED\n", rank);
  }
}

/* An all-gatherv and a reduce-scatterv of `bytes` (int8) in all, the last
 * rank holding half when `heavy`, must run `want_ag` and `want_rs`. */
static void run_v(pccl_comm_t *comm, size_t bytes, int heavy, const char *want_ag,
                  const char *want_rs) {
  size_t counts[64], p = (size_t)size, left = bytes;
  for (size_t r = 0; r + 1 < p; r++) left -= counts[r] = heavy ? bytes / 2 / (p - 1) : bytes / p;
  counts[p - 1] = left;
  char *send = calloc(bytes, 1), *recv = calloc(bytes, 1);
  for (int rs = 0; rs < 2; rs++) {
    pccl_status_t st = rs ? pccl_reduce_scatterv(send, recv, counts, PCCL_INT8, PCCL_SUM, comm)
                          : pccl_allgatherv(send, recv, counts, NULL, PCCL_INT8, comm);
    const char *want = rs ? want_rs : want_ag, *got = st == PCCL_OK ? pccl_comm_last_algo(comm) : "";
    checks++;
    if (st == PCCL_OK && !strcmp(got, want)) continue;
    failures++;
    printf("rank %d: FAIL %s of %zu bytes%s: %s, want %s\n", rank,
           rs ? "reduce_scatterv" : "allgatherv", bytes, heavy ? " (heavy)" : "",
           st == PCCL_OK ? got : pccl_last_error(comm), want);
  }
  free(send), free(recv);
}

static void skew(pccl_comm_t *comm) {
  int nnodes = 0;
  pccl_comm_nnodes(comm, &nnodes);
  int many = nnodes >= 8; /* heavy on 8 ranks: 4 times the mean */
  run_v(comm, 1 << 20, 1, "ring", "ring");
  run_v(comm, 4 << 20, 1, many ? "recdbl" : "ring", many ? "rechalv" : "ring");
  run_v(comm, 4 << 20, 0, "ring", "ring");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int nodes = argc == 2 && !strcmp(argv[1], "--nodes"), node = argc == 2 && !strcmp(argv[1], "--node");
  int skewed = argc == 2 && !strcmp(argv[1], "--skew");
  if ((!nodes && !node && !skewed) || size > 64) {
    if (rank == 0) fprintf(stderr, "usage: test_select --nodes|--node|--skew (at most 64 ranks)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  pccl_comm_t *comm = NULL;
  if (pccl_comm_create_mpi(MPI_COMM_WORLD, &comm) != PCCL_OK) {
    printf("rank %d: FAIL create: %s\n", rank, pccl_last_error(NULL));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (nodes)
    across_nodes(comm);
  else if (skewed)
    skew(comm);
  else
    one_node(comm);
  pccl_comm_destroy(comm);
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("test_select: %d checks on rank 0, %d failed in all\n", checks, all);
  MPI_Finalize();
  return all ? 1 : 0;
}
