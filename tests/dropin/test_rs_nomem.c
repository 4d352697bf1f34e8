/* test_rs_nomem.c - a plain MPI program for the drop-in: an in-place
 * MPI_Reduce_scatter_block whose scratch block cannot be allocated on one
 * rank (rank 1 lowers its address-space limit just before the call). Every
 * rank must get an error back at once, not after PCCL_TIMEOUT (the test's
 * environment sets it to 120 s; each rank must return within 30 s), with
 * recvbuf unchanged; with the limit restored, the next call must give the
 * right sums. MPI_ERRORS_RETURN is set on MPI_COMM_WORLD.
 *   test_rs_nomem     (under LD_PRELOAD=libpccl_mpi.so, 2 or more ranks) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define BLOCK ((size_t)4 << 20) /* ints per rank: 16 MiB of scratch, far above the stack's */

static int failures;

static void check(int ok, int rank, const char *what) {
  if (!ok) {
    printf("rank %d: FAIL %s\n", rank, what);
    failures++;
  }
}

/* This process's address space now, in bytes (/proc/self/statm). */
static size_t vm_bytes(void) {
  unsigned long pages = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f) {
    if (fscanf(f, "%lu", &pages) != 1) pages = 0;
    fclose(f);
  }
  return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}

/* In place: rank r's elements are r + 1, so block 0 sums to size (size+1)/2. */
static void fill(int *buf, size_t n, int rank) {
  for (size_t i = 0; i < n; i++) buf[i] = rank + 1;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  (void)argv;
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 1 || size < 2) {
    if (rank == 0) fprintf(stderr, "usage: mpiexec -np N (N >= 2) test_rs_nomem\n");
    MPI_Finalize();
    return 2;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  size_t n = BLOCK * (size_t)size;
  int *buf = malloc(n * sizeof *buf);
  if (!buf) MPI_Abort(MPI_COMM_WORLD, 2);
  const int want = size * (size + 1) / 2;

  /* A first call, which sets pccl up (its communicator, the segment). */
  fill(buf, n, rank);
  int rc = MPI_Reduce_scatter_block(MPI_IN_PLACE, buf, (int)BLOCK, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  check(rc == MPI_SUCCESS && buf[0] == want && buf[BLOCK - 1] == want, rank, "first call");

  /* Rank 1 cannot allocate 16 MiB more. */
  struct rlimit old, low;
  getrlimit(RLIMIT_AS, &old);
  fill(buf, n, rank);
  if (rank == 1) {
    low = old;
    low.rlim_cur = vm_bytes() + ((size_t)4 << 20);
    if (setrlimit(RLIMIT_AS, &low) != 0) perror("setrlimit");
  }
  double t0 = MPI_Wtime();
  rc = MPI_Reduce_scatter_block(MPI_IN_PLACE, buf, (int)BLOCK, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  double took = MPI_Wtime() - t0;
  if (rank == 1) setrlimit(RLIMIT_AS, &old);
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  if (rc != MPI_SUCCESS) MPI_Error_string(rc, text, &len);
  printf("rank %d: scratch refused on rank 1: rc %d after %.2f s: \"%s\"\n", rank, rc, took, text);
  check(rc != MPI_SUCCESS, rank, "the call fails on every rank");
  check(took < 30.0, rank, "and returns at once, not at PCCL_TIMEOUT");
  int untouched = 1;
  for (size_t i = 0; i < n && untouched; i++) untouched = buf[i] == rank + 1;
  check(untouched, rank, "recvbuf is unchanged");

  /* Nothing ran, so nothing is out of step: the next call works. */
  fill(buf, n, rank);
  rc = MPI_Reduce_scatter_block(MPI_IN_PLACE, buf, (int)BLOCK, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int right = rc == MPI_SUCCESS;
  for (size_t i = 0; i < BLOCK && right; i++) right = buf[i] == want;
  for (size_t i = BLOCK; i < n && right; i++) right = buf[i] == rank + 1;
  check(right, rank, "the call after it gives the right sums and leaves the rest");

  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("test_rs_nomem: %d ranks, %d failures\n", size, all);
  free(buf);
  MPI_Finalize();
  return all != 0 || failures != 0; /* a rank's own count too: calls out of step corrupt `all` */
}
