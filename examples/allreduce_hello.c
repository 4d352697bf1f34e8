/* allreduce_hello.c - the smallest pccl program: every rank contributes its
 * rank number, all-reduce sums them, and each rank checks the total.
 * Build against an installed pccl (see examples/Makefile) and run with
 * mpirun -np 4 ./allreduce_hello */
#include <stdio.h>

#include <pccl.h>

int main(void) {
  pccl_comm_t *comm;
  pccl_status_t st = pccl_comm_create_world(&comm); /* initialises MPI */
  if (st != PCCL_OK) {
    fprintf(stderr, "pccl_comm_create_world: %s: %s\n", pccl_status_string(st), pccl_last_error(NULL));
    return 1;
  }
  int rank, size;
  pccl_comm_rank(comm, &rank);
  pccl_comm_size(comm, &size);

  double value[4] = {rank, rank, rank, rank};
  st = pccl_allreduce(value, value, 4, PCCL_FLOAT64, PCCL_SUM, comm); /* in place */
  if (st != PCCL_OK) fprintf(stderr, "pccl_allreduce: %s\n", pccl_last_error(comm));

  double want = size * (size - 1) / 2.0;
  int ok = st == PCCL_OK && value[0] == want && value[3] == want;
  printf("rank %d of %d: sum of ranks = %g (%s, algorithm %s)\n", rank, size, value[0],
         ok ? "ok" : "WRONG", pccl_comm_last_algo(comm));

  pccl_comm_destroy(comm);
  pccl_finalize();
  return ok ? 0 : 1;
}
