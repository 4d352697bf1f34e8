/* fortran_nb.c - the Fortran entry points of the non-blocking collectives
 * pccl runs, of the calls that complete requests, and of the blocking
 * point-to-point calls. Open MPI's Fortran wrappers call PMPI_Wait and the
 * rest themselves, so a Fortran program's request would never reach the
 * C completion calls that move pccl's call (nonblocking.c): its MPI_WAIT
 * would wait forever on a generalized request nothing completes. So every
 * completion call is defined here too, and the blocking point-to-point
 * calls, inside which a peer's progress may depend on ours, as in C. Each
 * converts its handles and statuses and calls the C entry point, which
 * treats MPI's own requests as MPI does.
 *
 * Fortran statuses are MPI_STATUS_SIZE integers, which Open MPI makes the
 * size of C's MPI_Status (sizeof(MPI_Status) / sizeof(MPI_Fint): 6). A
 * LOGICAL argument gets 1 for .TRUE., gfortran's and Open MPI's value. */
#include <stdlib.h>

#include "fortran.h"

#define F_STATUS_SIZE (sizeof(MPI_Status) / sizeof(MPI_Fint))
/* Requests and statuses of an array call held on the stack up to this many. */
#define F_ON_STACK 16

/* A non-blocking call's outcome: its request, as Fortran's handle (read
 * through a pointer: the call that fills it is an argument beside it). */
static void give(MPI_Fint *req, MPI_Fint *ierr, int rc, const MPI_Request *r) {
  *ierr = rc;
  if (rc == MPI_SUCCESS) *req = PMPI_Request_c2f(*r);
}

/* ---- the non-blocking collectives ---------------------------------------- */

static void iallreduce_f(void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *op, MPI_Fint *comm,
                         MPI_Fint *req, MPI_Fint *ierr) {
  MPI_Request q;
  give(req, ierr, MPI_Iallreduce(F_BUF(s), F_BUF(r), *n, F_TYPE(t), PMPI_Op_f2c(*op), F_COMM(comm), &q),
       &q);
}

static void iscan_f(void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *op, MPI_Fint *comm,
                    MPI_Fint *req, MPI_Fint *ierr) {
  MPI_Request q;
  give(req, ierr, MPI_Iscan(F_BUF(s), F_BUF(r), *n, F_TYPE(t), PMPI_Op_f2c(*op), F_COMM(comm), &q), &q);
}

static void iexscan_f(void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *op, MPI_Fint *comm,
                      MPI_Fint *req, MPI_Fint *ierr) {
  MPI_Request q;
  give(req, ierr, MPI_Iexscan(F_BUF(s), F_BUF(r), *n, F_TYPE(t), PMPI_Op_f2c(*op), F_COMM(comm), &q),
       &q);
}

static void ireduce_scatter_block_f(void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *op,
                                    MPI_Fint *comm, MPI_Fint *req, MPI_Fint *ierr) {
  MPI_Request q;
  give(req, ierr,
       MPI_Ireduce_scatter_block(F_BUF(s), F_BUF(r), *n, F_TYPE(t), PMPI_Op_f2c(*op), F_COMM(comm), &q),
       &q);
}

static void ireduce_f(void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *op, MPI_Fint *root,
                      MPI_Fint *comm, MPI_Fint *req, MPI_Fint *ierr) {
  MPI_Request q;
  give(req, ierr,
       MPI_Ireduce(F_BUF(s), F_BUF(r), *n, F_TYPE(t), PMPI_Op_f2c(*op), *root, F_COMM(comm), &q), &q);
}

static void ibcast_f(void *b, MPI_Fint *n, MPI_Fint *t, MPI_Fint *root, MPI_Fint *comm,
                     MPI_Fint *req, MPI_Fint *ierr) {
  MPI_Request q;
  give(req, ierr, MPI_Ibcast(F_BUF(b), *n, F_TYPE(t), *root, F_COMM(comm), &q), &q);
}

static void iallgather_f(void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *rn, MPI_Fint *rt,
                         MPI_Fint *comm, MPI_Fint *req, MPI_Fint *ierr) {
  MPI_Request q;
  give(req, ierr,
       MPI_Iallgather(F_BUF(s), *sn, F_TYPE(st), F_BUF(r), *rn, F_TYPE(rt), F_COMM(comm), &q), &q);
}

static void ialltoall_f(void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *rn, MPI_Fint *rt,
                        MPI_Fint *comm, MPI_Fint *req, MPI_Fint *ierr) {
  MPI_Request q;
  give(req, ierr,
       MPI_Ialltoall(F_BUF(s), *sn, F_TYPE(st), F_BUF(r), *rn, F_TYPE(rt), F_COMM(comm), &q), &q);
}

static void iscatter_f(void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *rn, MPI_Fint *rt,
                       MPI_Fint *root, MPI_Fint *comm, MPI_Fint *req, MPI_Fint *ierr) {
  MPI_Request q;
  give(req, ierr,
       MPI_Iscatter(F_BUF(s), *sn, F_TYPE(st), F_BUF(r), *rn, F_TYPE(rt), *root, F_COMM(comm), &q),
       &q);
}

static void igather_f(void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *rn, MPI_Fint *rt,
                      MPI_Fint *root, MPI_Fint *comm, MPI_Fint *req, MPI_Fint *ierr) {
  MPI_Request q;
  give(req, ierr,
       MPI_Igather(F_BUF(s), *sn, F_TYPE(st), F_BUF(r), *rn, F_TYPE(rt), *root, F_COMM(comm), &q), &q);
}

static void ibarrier_f(MPI_Fint *comm, MPI_Fint *req, MPI_Fint *ierr) {
  MPI_Request q;
  give(req, ierr, MPI_Ibarrier(F_COMM(comm), &q), &q);
}

/* The vector forms: a non-blocking call's count and displacement arrays
 * must stay as they are until it completes, so they cannot be converted
 * into C arrays freed on return; they pass as they are, which needs
 * Fortran integers of C's size (Open MPI's and MPICH's default). Where
 * they differ, the F_INTS_OK entries go to the MPI's own. */
#define F_INTS(a) ((const int *)(a))
#define F_INTS_OK (sizeof(MPI_Fint) == sizeof(int))

static void ireduce_scatter_f(void *s, void *r, MPI_Fint *counts, MPI_Fint *t, MPI_Fint *op,
                              MPI_Fint *comm, MPI_Fint *req, MPI_Fint *ierr) {
  MPI_Request q;
  give(req, ierr,
       MPI_Ireduce_scatter(F_BUF(s), F_BUF(r), F_INTS(counts), F_TYPE(t), PMPI_Op_f2c(*op),
                           F_COMM(comm), &q),
       &q);
}

static void iallgatherv_f(void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *counts,
                          MPI_Fint *displs, MPI_Fint *rt, MPI_Fint *comm, MPI_Fint *req,
                          MPI_Fint *ierr) {
  MPI_Request q;
  give(req, ierr,
       MPI_Iallgatherv(F_BUF(s), *sn, F_TYPE(st), F_BUF(r), F_INTS(counts), F_INTS(displs),
                       F_TYPE(rt), F_COMM(comm), &q),
       &q);
}

static void igatherv_f(void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *counts,
                       MPI_Fint *displs, MPI_Fint *rt, MPI_Fint *root, MPI_Fint *comm,
                       MPI_Fint *req, MPI_Fint *ierr) {
  MPI_Request q;
  give(req, ierr,
       MPI_Igatherv(F_BUF(s), *sn, F_TYPE(st), F_BUF(r), F_INTS(counts), F_INTS(displs),
                    F_TYPE(rt), *root, F_COMM(comm), &q),
       &q);
}

static void iscatterv_f(void *s, MPI_Fint *counts, MPI_Fint *displs, MPI_Fint *st, void *r,
                        MPI_Fint *rn, MPI_Fint *rt, MPI_Fint *root, MPI_Fint *comm,
                        MPI_Fint *req, MPI_Fint *ierr) {
  MPI_Request q;
  give(req, ierr,
       MPI_Iscatterv(F_BUF(s), F_INTS(counts), F_INTS(displs), F_TYPE(st), F_BUF(r), *rn,
                     F_TYPE(rt), *root, F_COMM(comm), &q),
       &q);
}

static void ialltoallv_f(void *s, MPI_Fint *sc, MPI_Fint *sd, MPI_Fint *st, void *r, MPI_Fint *rc,
                         MPI_Fint *rd, MPI_Fint *rt, MPI_Fint *comm, MPI_Fint *req,
                         MPI_Fint *ierr) {
  MPI_Request q;
  give(req, ierr,
       MPI_Ialltoallv(F_BUF(s), F_INTS(sc), F_INTS(sd), F_TYPE(st), F_BUF(r), F_INTS(rc),
                      F_INTS(rd), F_TYPE(rt), F_COMM(comm), &q),
       &q);
}

/* ---- completion ------------------------------------------------------------ */

/* A single-status call's status, as Open MPI's wrappers give it: written
 * when the call succeeded and the program asked for it. */
static MPI_Status *c_status(MPI_Fint *status, MPI_Status *c) {
  return pccl_ip_f_status_ignored(status) ? MPI_STATUS_IGNORE : c;
}
static void f_status(int rc, const MPI_Status *c, MPI_Fint *status) {
  if (rc == MPI_SUCCESS && c != MPI_STATUS_IGNORE) PMPI_Status_c2f(c, status);
}

static void wait_f(MPI_Fint *req, MPI_Fint *status, MPI_Fint *ierr) {
  MPI_Request q = PMPI_Request_f2c(*req);
  MPI_Status c, *cs = c_status(status, &c);
  *ierr = MPI_Wait(&q, cs);
  *req = PMPI_Request_c2f(q);
  f_status(*ierr, cs, status);
}

static void test_f(MPI_Fint *req, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr) {
  MPI_Request q = PMPI_Request_f2c(*req);
  MPI_Status c, *cs = c_status(status, &c);
  int done = 0;
  *ierr = MPI_Test(&q, &done, cs);
  *req = PMPI_Request_c2f(q);
  *flag = done ? 1 : 0;
  if (done) f_status(*ierr, cs, status);
}

static void request_get_status_f(MPI_Fint *req, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr) {
  MPI_Status c, *cs = c_status(status, &c);
  int done = 0;
  *ierr = MPI_Request_get_status(PMPI_Request_f2c(*req), &done, cs);
  *flag = done ? 1 : 0;
  if (done) f_status(*ierr, cs, status);
}

static void request_free_f(MPI_Fint *req, MPI_Fint *ierr) {
  MPI_Request q = PMPI_Request_f2c(*req);
  *ierr = MPI_Request_free(&q);
  if (*ierr == MPI_SUCCESS) *req = PMPI_Request_c2f(MPI_REQUEST_NULL);
}

static void cancel_f(MPI_Fint *req, MPI_Fint *ierr) {
  MPI_Request q = PMPI_Request_f2c(*req);
  *ierr = MPI_Cancel(&q);
}

/* An array call's requests, statuses and indices in C: on the stack for a
 * few, else one allocation. */
typedef struct {
  MPI_Request *reqs, req_stack[F_ON_STACK];
  MPI_Status *sts, st_stack[F_ON_STACK];
  int *idx, idx_stack[F_ON_STACK];
  void *heap;
} f_array_t;

/* `statuses`: the program's array of statuses, NULL for a call without
 * one (the -any calls have a single status). */
static int array_open(f_array_t *a, MPI_Fint n, const MPI_Fint *reqs, const MPI_Fint *statuses,
                      MPI_Fint *ierr) {
  size_t k = n > 0 ? (size_t)n : 0;
  a->heap = NULL;
  a->reqs = a->req_stack;
  a->sts = a->st_stack;
  a->idx = a->idx_stack;
  if (k > F_ON_STACK) {
    a->heap = malloc(k * (sizeof(MPI_Request) + sizeof(MPI_Status) + sizeof(int)));
    if (!a->heap) {
      *ierr = MPI_ERR_NO_MEM;
      PMPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_NO_MEM);
      return 0;
    }
    a->reqs = a->heap;
    a->sts = (MPI_Status *)(a->reqs + k);
    a->idx = (int *)(a->sts + k);
  }
  if (!statuses || pccl_ip_f_statuses_ignored(statuses)) a->sts = MPI_STATUSES_IGNORE;
  for (size_t i = 0; i < k; i++) a->reqs[i] = PMPI_Request_f2c(reqs[i]);
  return 1;
}

/* The first k statuses, when the call succeeded or reported errors in
 * them. */
static void put_statuses(const f_array_t *a, int k, MPI_Fint *statuses, int rc) {
  if (a->sts == MPI_STATUSES_IGNORE || (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS)) return;
  for (int i = 0; i < k; i++) PMPI_Status_c2f(&a->sts[i], statuses + (size_t)i * F_STATUS_SIZE);
}

/* Every handle back to Fortran (a completed request's is now null). */
static void array_close(f_array_t *a, MPI_Fint n, MPI_Fint *reqs) {
  for (int i = 0; i < n; i++) reqs[i] = PMPI_Request_c2f(a->reqs[i]);
  free(a->heap);
}

static void waitall_f(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *statuses, MPI_Fint *ierr) {
  f_array_t a;
  if (!array_open(&a, *n, reqs, statuses, ierr)) return;
  *ierr = MPI_Waitall(*n, a.reqs, a.sts);
  put_statuses(&a, *n, statuses, *ierr);
  array_close(&a, *n, reqs);
}

static void testall_f(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *flag, MPI_Fint *statuses,
                      MPI_Fint *ierr) {
  f_array_t a;
  int done = 0;
  if (!array_open(&a, *n, reqs, statuses, ierr)) return;
  *ierr = MPI_Testall(*n, a.reqs, &done, a.sts);
  *flag = done ? 1 : 0;
  if (done || *ierr != MPI_SUCCESS) put_statuses(&a, *n, statuses, *ierr);
  array_close(&a, *n, reqs);
}

/* The -any calls: the index counts from 1 in Fortran. */
static void any_done(int rc, int done, int at, MPI_Fint *index, const MPI_Status *cs,
                     MPI_Fint *status) {
  *index = at == MPI_UNDEFINED ? MPI_UNDEFINED : at + 1;
  if (done && at != MPI_UNDEFINED) f_status(rc, cs, status);
}

static void waitany_f(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *index, MPI_Fint *status,
                      MPI_Fint *ierr) {
  f_array_t a;
  MPI_Status c, *cs = c_status(status, &c);
  int at = MPI_UNDEFINED;
  if (!array_open(&a, *n, reqs, NULL, ierr)) return;
  *ierr = MPI_Waitany(*n, a.reqs, &at, cs);
  array_close(&a, *n, reqs);
  any_done(*ierr, 1, at, index, cs, status);
}

static void testany_f(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *index, MPI_Fint *flag,
                      MPI_Fint *status, MPI_Fint *ierr) {
  f_array_t a;
  MPI_Status c, *cs = c_status(status, &c);
  int at = MPI_UNDEFINED, done = 0;
  if (!array_open(&a, *n, reqs, NULL, ierr)) return;
  *ierr = MPI_Testany(*n, a.reqs, &at, &done, cs);
  array_close(&a, *n, reqs);
  *flag = done ? 1 : 0;
  any_done(*ierr, done, at, index, cs, status);
}

/* The -some calls: how many completed (MPI_UNDEFINED when none was
 * active), their indices from 1, and their statuses in the same order. */
static void some_done(f_array_t *a, MPI_Fint *n, MPI_Fint *reqs, int out, MPI_Fint *outcount,
                      MPI_Fint *indices, MPI_Fint *statuses, int rc) {
  int k = out == MPI_UNDEFINED || (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) ? 0 : out;
  *outcount = out;
  for (int i = 0; i < k; i++) indices[i] = a->idx[i] + 1;
  put_statuses(a, k, statuses, rc);
  array_close(a, *n, reqs);
}

static void waitsome_f(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *outcount, MPI_Fint *indices,
                       MPI_Fint *statuses, MPI_Fint *ierr) {
  f_array_t a;
  int out = MPI_UNDEFINED;
  if (!array_open(&a, *n, reqs, statuses, ierr)) return;
  *ierr = MPI_Waitsome(*n, a.reqs, &out, a.idx, a.sts);
  some_done(&a, n, reqs, out, outcount, indices, statuses, *ierr);
}

static void testsome_f(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *outcount, MPI_Fint *indices,
                       MPI_Fint *statuses, MPI_Fint *ierr) {
  f_array_t a;
  int out = MPI_UNDEFINED;
  if (!array_open(&a, *n, reqs, statuses, ierr)) return;
  *ierr = MPI_Testsome(*n, a.reqs, &out, a.idx, a.sts);
  some_done(&a, n, reqs, out, outcount, indices, statuses, *ierr);
}

/* ---- blocking point-to-point ----------------------------------------------- */

static void send_f(void *b, MPI_Fint *n, MPI_Fint *t, MPI_Fint *dest, MPI_Fint *tag,
                   MPI_Fint *comm, MPI_Fint *ierr) {
  *ierr = MPI_Send(F_BUF(b), *n, F_TYPE(t), *dest, *tag, F_COMM(comm));
}

static void ssend_f(void *b, MPI_Fint *n, MPI_Fint *t, MPI_Fint *dest, MPI_Fint *tag,
                    MPI_Fint *comm, MPI_Fint *ierr) {
  *ierr = MPI_Ssend(F_BUF(b), *n, F_TYPE(t), *dest, *tag, F_COMM(comm));
}

static void recv_f(void *b, MPI_Fint *n, MPI_Fint *t, MPI_Fint *source, MPI_Fint *tag,
                   MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr) {
  MPI_Status c, *cs = c_status(status, &c);
  *ierr = MPI_Recv(F_BUF(b), *n, F_TYPE(t), *source, *tag, F_COMM(comm), cs);
  f_status(*ierr, cs, status);
}

static void sendrecv_f(void *s, MPI_Fint *sn, MPI_Fint *st, MPI_Fint *dest, MPI_Fint *stag,
                       void *r, MPI_Fint *rn, MPI_Fint *rt, MPI_Fint *source, MPI_Fint *rtag,
                       MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr) {
  MPI_Status c, *cs = c_status(status, &c);
  *ierr = MPI_Sendrecv(F_BUF(s), *sn, F_TYPE(st), *dest, *stag, F_BUF(r), *rn, F_TYPE(rt), *source,
                       *rtag, F_COMM(comm), cs);
  f_status(*ierr, cs, status);
}

static void probe_f(MPI_Fint *source, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *status,
                    MPI_Fint *ierr) {
  MPI_Status c, *cs = c_status(status, &c);
  *ierr = MPI_Probe(*source, *tag, F_COMM(comm), cs);
  f_status(*ierr, cs, status);
}

/* ---- the entry points ------------------------------------------------------ */

#define F MPI_Fint *
#define P_IREDUCE (void *s, void *r, F n, F t, F op, F c, F q, F e)
#define A_IREDUCE (s, r, n, t, op, c, q, e)
#define P_IMOVE (void *s, F sn, F st, void *r, F rn, F rt, F c, F q, F e)
#define A_IMOVE (s, sn, st, r, rn, rt, c, q, e)
#define P_IROOTED (void *s, F sn, F st, void *r, F rn, F rt, F root, F c, F q, F e)
#define A_IROOTED (s, sn, st, r, rn, rt, root, c, q, e)
#define P_SEND (void *b, F n, F t, F d, F tag, F c, F e)
#define A_SEND (b, n, t, d, tag, c, e)
#define P_SOME (F n, F q, F out, F idx, F sts, F e)
#define A_SOME (n, q, out, idx, sts, e)

F_ENTRY(MPI_IALLREDUCE, iallreduce, iallreduce_f, P_IREDUCE, A_IREDUCE)
F_ENTRY(MPI_ISCAN, iscan, iscan_f, P_IREDUCE, A_IREDUCE)
F_ENTRY(MPI_IEXSCAN, iexscan, iexscan_f, P_IREDUCE, A_IREDUCE)
F_ENTRY(MPI_IREDUCE_SCATTER_BLOCK, ireduce_scatter_block, ireduce_scatter_block_f, P_IREDUCE,
        A_IREDUCE)
F_ENTRY_IF(MPI_IREDUCE_SCATTER, ireduce_scatter, ireduce_scatter_f, F_INTS_OK, P_IREDUCE,
           A_IREDUCE)
F_ENTRY(MPI_IREDUCE, ireduce, ireduce_f,
        (void *s, void *r, F n, F t, F op, F root, F c, F q, F e), (s, r, n, t, op, root, c, q, e))
F_ENTRY(MPI_IBCAST, ibcast, ibcast_f, (void *b, F n, F t, F root, F c, F q, F e),
        (b, n, t, root, c, q, e))
F_ENTRY(MPI_IALLGATHER, iallgather, iallgather_f, P_IMOVE, A_IMOVE)
F_ENTRY(MPI_IALLTOALL, ialltoall, ialltoall_f, P_IMOVE, A_IMOVE)
F_ENTRY(MPI_ISCATTER, iscatter, iscatter_f, P_IROOTED, A_IROOTED)
F_ENTRY(MPI_IGATHER, igather, igather_f, P_IROOTED, A_IROOTED)
F_ENTRY(MPI_IBARRIER, ibarrier, ibarrier_f, (F c, F q, F e), (c, q, e))
F_ENTRY_IF(MPI_IALLGATHERV, iallgatherv, iallgatherv_f, F_INTS_OK,
           (void *s, F sn, F st, void *r, F rn, F rd, F rt, F c, F q, F e),
           (s, sn, st, r, rn, rd, rt, c, q, e))
F_ENTRY_IF(MPI_IGATHERV, igatherv, igatherv_f, F_INTS_OK,
           (void *s, F sn, F st, void *r, F rn, F rd, F rt, F root, F c, F q, F e),
           (s, sn, st, r, rn, rd, rt, root, c, q, e))
F_ENTRY_IF(MPI_ISCATTERV, iscatterv, iscatterv_f, F_INTS_OK,
           (void *s, F sn, F sd, F st, void *r, F rn, F rt, F root, F c, F q, F e),
           (s, sn, sd, st, r, rn, rt, root, c, q, e))
F_ENTRY_IF(MPI_IALLTOALLV, ialltoallv, ialltoallv_f, F_INTS_OK,
           (void *s, F sn, F sd, F st, void *r, F rn, F rd, F rt, F c, F q, F e),
           (s, sn, sd, st, r, rn, rd, rt, c, q, e))

F_ENTRY(MPI_WAIT, wait, wait_f, (F q, F st, F e), (q, st, e))
F_ENTRY(MPI_TEST, test, test_f, (F q, F flag, F st, F e), (q, flag, st, e))
F_ENTRY(MPI_REQUEST_GET_STATUS, request_get_status, request_get_status_f,
        (F q, F flag, F st, F e), (q, flag, st, e))
F_ENTRY(MPI_REQUEST_FREE, request_free, request_free_f, (F q, F e), (q, e))
F_ENTRY(MPI_CANCEL, cancel, cancel_f, (F q, F e), (q, e))
F_ENTRY(MPI_WAITALL, waitall, waitall_f, (F n, F q, F sts, F e), (n, q, sts, e))
F_ENTRY(MPI_TESTALL, testall, testall_f, (F n, F q, F flag, F sts, F e), (n, q, flag, sts, e))
F_ENTRY(MPI_WAITANY, waitany, waitany_f, (F n, F q, F idx, F st, F e), (n, q, idx, st, e))
F_ENTRY(MPI_TESTANY, testany, testany_f, (F n, F q, F idx, F flag, F st, F e),
        (n, q, idx, flag, st, e))
F_ENTRY(MPI_WAITSOME, waitsome, waitsome_f, P_SOME, A_SOME)
F_ENTRY(MPI_TESTSOME, testsome, testsome_f, P_SOME, A_SOME)

F_ENTRY(MPI_SEND, send, send_f, P_SEND, A_SEND)
F_ENTRY(MPI_SSEND, ssend, ssend_f, P_SEND, A_SEND)
F_ENTRY(MPI_RECV, recv, recv_f, (void *b, F n, F t, F src, F tag, F c, F st, F e),
        (b, n, t, src, tag, c, st, e))
F_ENTRY(MPI_SENDRECV, sendrecv, sendrecv_f,
        (void *s, F sn, F st, F d, F stag, void *r, F rn, F rt, F src, F rtag, F c, F sts, F e),
        (s, sn, st, d, stag, r, rn, rt, src, rtag, c, sts, e))
F_ENTRY(MPI_PROBE, probe, probe_f, (F src, F tag, F c, F st, F e), (src, tag, c, st, e))
