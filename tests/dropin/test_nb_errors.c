/* test_nb_errors.c - a plain MPI program that checks how the drop-in's
 * non-blocking collectives report errors, with MPI_ERRORS_RETURN:
 *   test_nb_errors --mismatch   (run under PCCL_CHECK=1) rank 0 passes
 *       another count to MPI_Iallreduce, twice: the ranks' agreement fails,
 *       so MPI_Wait returns an error on every rank, and then MPI_Waitall
 *       returns MPI_ERR_IN_STATUS with the request's status holding it; a
 *       correct call afterwards still works.
 *   test_nb_errors --refused    (run under PCCL_ALGO=allreduce:cma, which
 *       pccl runs blocking only) MPI_Iallreduce itself returns an error
 *       and no request.
 * Each error's class is checked (MPI_ERR_OTHER for a mismatch,
 * MPI_ERR_UNSUPPORTED_OPERATION for a refusal). Exits nonzero on any
 * failure. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int failures, rank, size;

static void expect_class(const char *what, int rc, int want) {
  int cls = MPI_SUCCESS;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  int ok = cls == want;
  printf("rank %d: %s: class %d, want %d: %s\n", rank, what, cls, want, ok ? "as expected" : "FAIL");
  failures += !ok;
}

static void check_sum(const char *what, const int *v, int n) {
  for (int i = 0; i < n; i++)
    if (v[i] != size * (i + 1)) {
      printf("rank %d: %s: FAIL element %d is %d\n", rank, what, i, v[i]);
      failures++;
      return;
    }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int mismatch = argc == 2 && !strcmp(argv[1], "--mismatch");
  int refused = argc == 2 && !strcmp(argv[1], "--refused");
  if (!mismatch && !refused) {
    if (rank == 0) fprintf(stderr, "usage: test_nb_errors --mismatch|--refused\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int in[4] = {1, 2, 3, 4}, out[4] = {0};
  MPI_Request req = MPI_REQUEST_NULL;
  if (refused) {
    int rc = MPI_Iallreduce(in, out, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    expect_class("MPI_Iallreduce refused", rc, size > 1 ? MPI_ERR_UNSUPPORTED_OPERATION : MPI_SUCCESS);
    if (rc == MPI_SUCCESS) MPI_Wait(&req, MPI_STATUS_IGNORE);
    else if (req != MPI_REQUEST_NULL) printf("rank %d: FAIL a request came back\n", rank), failures++;
  } else {
    int n = rank == 0 ? 2 : 1;
    int rc = MPI_Iallreduce(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    expect_class("MPI_Iallreduce issued", rc, MPI_SUCCESS);
    expect_class("MPI_Wait after a mismatch", MPI_Wait(&req, MPI_STATUS_IGNORE),
                 size > 1 ? MPI_ERR_OTHER : MPI_SUCCESS);
    MPI_Request two[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status st[2];
    rc = MPI_Iallreduce(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &two[1]);
    expect_class("MPI_Iallreduce issued again", rc, MPI_SUCCESS);
    rc = MPI_Waitall(2, two, st);
    expect_class("MPI_Waitall after a mismatch", rc, size > 1 ? MPI_ERR_IN_STATUS : MPI_SUCCESS);
    if (rc == MPI_ERR_IN_STATUS) {
      expect_class("its status", st[1].MPI_ERROR, MPI_ERR_OTHER);
      expect_class("the null request's status", st[0].MPI_ERROR, MPI_SUCCESS);
    }
  }
  /* the communicator still works */
  memset(out, 0, sizeof out);
  expect_class("MPI_Iallreduce after", MPI_Iallreduce(in, out, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req),
               refused && size > 1 ? MPI_ERR_UNSUPPORTED_OPERATION : MPI_SUCCESS);
  if (!(refused && size > 1)) {
    expect_class("its MPI_Wait", MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
    check_sum("MPI_Iallreduce after", out, 4);
  }
  memset(out, 0, sizeof out);
  expect_class("MPI_Allreduce after", MPI_Allreduce(in, out, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
               MPI_SUCCESS);
  check_sum("MPI_Allreduce after", out, 4);
  MPI_Finalize();
  return failures != 0;
}
