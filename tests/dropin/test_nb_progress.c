/* test_nb_progress.c - a plain MPI program (2 ranks or more) whose
 * non-blocking collectives complete only if an MPI library moves them
 * inside calls other than the waits; valid MPI, which Open MPI's own calls
 * complete:
 *   1. NBX (a sparse exchange that ends in a non-blocking all-reduce used as
 *      a barrier) on a fresh communicator: rank 0 sends with MPI_Issend and
 *      polls MPI_Iprobe; the others have nothing to send and issue the
 *      MPI_Iallreduce at once. The all-reduce must not wait for rank 0
 *      (which would first have to receive nothing and see its send done).
 *   2. Two MPI_Iallreduce outstanding, then a blocking call the drop-in
 *      leaves to MPI: rank 0 makes it before its MPI_Waitall, the others
 *      after theirs, so the others wait on rank 0's calls while rank 0 is
 *      inside MPI. Four kinds: an MPI_Allreduce with a user-defined op on
 *      the same communicator, the same on another one, MPI_Comm_dup
 *      (which the drop-in does not intercept), and a loop of MPI_Iprobe
 *      (nor that) for a message the last rank sends after its MPI_Waitall.
 *      Each with all-reduces of one element (one round on the node
 *      segment), of BIG elements (several rounds: only the drop-in's
 *      progress thread moves rank 0's part of them while it is away) and
 *      of HUGE elements (on 2 ranks a ring, not the segment: the thread
 *      moves it too, its messages going through shm at every size).
 *   3. The reverse: an MPI_Iallreduce the drop-in leaves to MPI (small, on
 *      a communicator it has not attached) outstanding while rank 0 sits in
 *      an MPI_Allreduce pccl runs, which the others reach only after their
 *      MPI_Wait: MPI must move rank 0's part meanwhile (a pccl wait hung).
 *   4. A 4 MB MPI_Iallreduce that rank 0 issues before an MPI_Send the
 *      others receive before issuing theirs: issuing must not wait for the
 *      peers. On MPI_COMM_WORLD (pccl's from MPI_Init) and on a fresh
 *      communicator (MPI's: attaching it there would wait, and hung).
 * Results are checked against sums computed here; prints a digest of them
 * (run_dropin.sh compares it with the run on MPI alone). Exits nonzero on
 * a mismatch; a hang is the test's timeout. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

static int rank, size, failures;

static void check(const char *what, double got, double want) {
  if (got == want) return;
  if (failures++ < 10) printf("rank %d: FAIL %s: %g, want %g\n", rank, what, got, want);
}

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt) {
  (void)dt;
  for (int i = 0; i < *len; i++) ((double *)inout)[i] += ((const double *)in)[i];
}

static double nbx(void) {
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  int payload = 42, got = -1, sent = rank != 0, issued = 0, done = 0;
  double one = 1.0, all = 0.0;
  MPI_Request sr = MPI_REQUEST_NULL, br = MPI_REQUEST_NULL;
  if (rank == 0) MPI_Issend(&payload, 1, MPI_INT, size - 1, 7, c, &sr);
  while (!done) {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, 7, c, &flag, &st);
    if (flag) MPI_Recv(&got, 1, MPI_INT, st.MPI_SOURCE, 7, c, MPI_STATUS_IGNORE);
    if (!issued) {
      if (!sent) MPI_Test(&sr, &sent, MPI_STATUS_IGNORE);
      if (sent) MPI_Iallreduce(&one, &all, 1, MPI_DOUBLE, MPI_SUM, c, &br), issued = 1;
    } else {
      MPI_Test(&br, &done, MPI_STATUS_IGNORE);
    }
  }
  if (rank == size - 1) check("NBX payload", got, 42);
  check("NBX all-reduce", all, size);
  MPI_Comm_free(&c);
  return all;
}

enum { SAME_COMM, OTHER_COMM, COMM_DUP, IPROBE_LOOP, KINDS };

/* Elements of the large all-reduces: 512 KB, four parts of the default
 * segment's buffers; 16 MB, past the segment's all-reduce on 2 ranks. */
#define BIG (64 * 1024)
#define HUGE (2 * 1024 * 1024)

/* The blocking call of scenario 2 (`first`: rank 0's, before its wait). */
static double between(int kind, MPI_Op op, MPI_Comm other, int first) {
  double u = 1.0, ru = 0;
  MPI_Comm dup;
  switch (kind) {
  case SAME_COMM: MPI_Allreduce(&u, &ru, 1, MPI_DOUBLE, op, MPI_COMM_WORLD); break;
  case OTHER_COMM: MPI_Allreduce(&u, &ru, 1, MPI_DOUBLE, op, other); break;
  case COMM_DUP: MPI_Comm_dup(MPI_COMM_WORLD, &dup), MPI_Comm_free(&dup), ru = size; break;
  default: /* rank 0 polls for the last rank's message, sent after its wait */
    ru = size;
    if (first) {
      int flag = 0;
      while (!flag) MPI_Iprobe(size - 1, 9, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
      MPI_Recv(&ru, 1, MPI_DOUBLE, size - 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == size - 1) {
      MPI_Send(&ru, 1, MPI_DOUBLE, 0, 9, MPI_COMM_WORLD);
    }
    break;
  }
  return ru;
}

static double fallback_between(int kind, int n) {
  static double a[HUGE], b[HUGE], ra[HUGE], rb[HUGE];
  double ru = 0;
  for (int i = 0; i < n; i++) a[i] = rank + 1.0 + i, b[i] = 2.0 * (rank + 1) + i;
  MPI_Op op;
  MPI_Comm other;
  MPI_Op_create(user_sum, 1, &op);
  MPI_Comm_dup(MPI_COMM_WORLD, &other);
  MPI_Allreduce(a, ra, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* the drop-in attaches here */
  MPI_Request r[2];
  struct timespec later = {0, 200000000};
  if (rank != 0) nanosleep(&later, NULL); /* rank 0's calls are issued first */
  MPI_Iallreduce(a, ra, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r[0]);
  MPI_Iallreduce(b, rb, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r[1]);
  if (rank == 0) {
    ru = between(kind, op, other, 1);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  } else {
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    ru = between(kind, op, other, 0);
  }
  double p = size, tri = p * (p + 1) / 2, sum = 0;
  for (int i = 0; i < n; i++) {
    char what[64];
    if (ra[i] != tri + p * i) {
      snprintf(what, sizeof what, "first all-reduce of %d, element %d", n, i);
      check(what, ra[i], tri + p * i);
    }
    if (rb[i] != 2 * tri + p * i) {
      snprintf(what, sizeof what, "second all-reduce of %d, element %d", n, i);
      check(what, rb[i], 2 * tri + p * i);
    }
    sum += ra[i] + rb[i];
  }
  check("the call between", ru, p);
  MPI_Op_free(&op);
  MPI_Comm_free(&other);
  return sum + ru;
}

static double mpi_left_behind(void) {
  MPI_Comm fresh;
  MPI_Comm_dup(MPI_COMM_WORLD, &fresh);
  double one = 1.0, all = 0.0, u = rank + 1.0, ru = 0.0;
  MPI_Request r;
  MPI_Iallreduce(&one, &all, 1, MPI_DOUBLE, MPI_SUM, fresh, &r);
  if (rank == 0) {
    MPI_Allreduce(&u, &ru, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  } else {
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Allreduce(&u, &ru, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  check("the all-reduce left to MPI", all, size);
  check("the all-reduce pccl ran meanwhile", ru, size * (size + 1) / 2.0);
  MPI_Comm_free(&fresh);
  return all + ru;
}

static double issue_before_send(MPI_Comm c) {
  enum { N = 512 * 1024 };
  static double a[N], ra[N];
  for (int i = 0; i < N; i++) a[i] = rank + 1.0 + i;
  MPI_Request r;
  int token = 5;
  if (rank == 0) {
    MPI_Iallreduce(a, ra, N, MPI_DOUBLE, MPI_SUM, c, &r);
    for (int p = 1; p < size; p++) MPI_Send(&token, 1, MPI_INT, p, 11, MPI_COMM_WORLD);
  } else {
    MPI_Recv(&token, 1, MPI_INT, 0, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Iallreduce(a, ra, N, MPI_DOUBLE, MPI_SUM, c, &r);
  }
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  double p = size, tri = p * (p + 1) / 2, sum = 0;
  for (int i = 0; i < N; i++) {
    if (ra[i] != tri + p * i) check("all-reduce issued before a send", ra[i], tri + p * i);
    sum += ra[i];
  }
  return sum;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double d = nbx();
  for (int kind = SAME_COMM; kind < KINDS; kind++) d += fallback_between(kind, 1);
  for (int kind = SAME_COMM; kind < KINDS; kind++) d += fallback_between(kind, BIG);
  for (int kind = SAME_COMM; kind < KINDS; kind++) d += fallback_between(kind, HUGE);
  d += mpi_left_behind();
  d += issue_before_send(MPI_COMM_WORLD);
  MPI_Comm fresh;
  MPI_Comm_dup(MPI_COMM_WORLD, &fresh);
  d += issue_before_send(fresh);
  MPI_Comm_free(&fresh);
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("test_nb_progress: %d ranks, %d failures, digest %016llx\n", size, all,
                         (unsigned long long)d);
  MPI_Finalize();
  return all ? 1 : 0;
}
