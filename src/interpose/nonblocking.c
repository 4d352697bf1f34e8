/* nonblocking.c - the MPI requests of the non-blocking collectives pccl
 * runs, and the MPI calls that complete them.
 *
 * The program gets a generalized request (MPI_Grequest_start): a real MPI
 * request, which every MPI call accepts, with pccl's request behind it in
 * the list here. MPI completes a generalized request only when told to, and
 * pccl's calls move only inside pccl calls, so the calls that wait for or
 * test requests are interposed too (MPI_Wait, MPI_Test, their -all, -any
 * and -some forms, MPI_Request_get_status), and so are the blocking
 * point-to-point calls (MPI_Send, MPI_Ssend, MPI_Recv, MPI_Sendrecv,
 * MPI_Probe), in which a peer's progress may depend on ours: while any of
 * pccl's requests is outstanding, each of them polls pccl and MPI in turn
 * instead of blocking inside MPI, and marks a generalized request complete
 * once pccl has finished its call, after which MPI completes it as usual.
 * With none outstanding they are MPI's own calls after one load. A call
 * pccl finished while issuing it needs none of this: its request is one
 * MPI made complete (post_finished).
 *
 * A failure (a timeout, a peer's mismatch under PCCL_CHECK) is raised
 * through the communicator's error handler by the call that completes the
 * request, as MPI does; an array call then returns MPI_ERR_IN_STATUS with
 * each status's MPI_ERROR set. MPI_Request_free and MPI_Cancel on such a
 * request are erroneous in MPI (4.0, 6.12) and are answered with
 * MPI_ERR_REQUEST while pccl's call is in flight (a call finished at issue
 * has MPI's own completed request, which MPI frees). */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interpose.h"

typedef struct ip_req {
  MPI_Request handle; /* the generalized request the program holds */
  pccl_request_t *pr;
  pccl_ip_call_t call;
  pccl_ip_done_fn *done;
  void *arg;
  int finished; /* pccl's call ended, `done` ran, the handle was marked complete */
  int own_only; /* pccl_comm_progress refused its communicator: moved by the program's calls */
  int cls;      /* the outcome's MPI error class */
  char why[PCCL_IP_WHY_LEN];
  struct ip_req *next;
} ip_req_t;

/* The outstanding requests in the order issued, under `lock`, which the
 * completion calls hold while they poll so that no handle is reused
 * between MPI completing it and the list forgetting it. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static ip_req_t *head, *tail;
static atomic_int outstanding;

/* Polls between yields of the core (ranks may share cores), as pccl's own
 * waits do. */
#define YIELD_EVERY 64

static int query_fn(void *extra, MPI_Status *status) {
  (void)extra;
  PMPI_Status_set_elements(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_ANY_SOURCE;
  status->MPI_TAG = MPI_ANY_TAG;
  return MPI_SUCCESS;
}
static int free_fn(void *extra) { return (void)extra, MPI_SUCCESS; }
static int cancel_fn(void *extra, int complete) { return (void)extra, (void)complete, MPI_SUCCESS; }

/* Whether the calls here must poll: some request is outstanding and the
 * caller is not pccl itself. */
static int active(void) {
  return atomic_load_explicit(&outstanding, memory_order_acquire) > 0 && !pccl_ip_inside();
}

/* Moves r's call along once; when pccl has finished it, finishes the call
 * and marks the handle complete. Under `lock`, inside pccl. */
static void advance(ip_req_t *r) {
  if (r->finished) return;
  int done = 0;
  pccl_status_t st = pccl_test(&r->pr, &done);
  if (!done) return;
  r->cls = r->done(r->arg, st, r->why, sizeof r->why);
  r->finished = 1;
  PMPI_Grequest_complete(r->handle);
  pccl_ip_unhold(r->call.entry);
}

/* A polling pass begins: every outstanding call moved along. The caller
 * then tests MPI's requests and ends the pass. */
static void pass_begin(void) {
  pccl_ip_enter();
  pthread_mutex_lock(&lock);
  for (ip_req_t *r = head; r; r = r->next) advance(r);
}

static void pass_end(unsigned pass) {
  pthread_mutex_unlock(&lock);
  pccl_ip_exit();
  if (pass % YIELD_EVERY == 0) sched_yield();
}

/* MPI has completed the request that was `handle`: if it was one of ours,
 * it leaves the list, and its failure is raised. Returns MPI_SUCCESS or
 * the failure's code. Under `lock`. */
static int settle(MPI_Request handle) {
  ip_req_t **p = &head, *prev = NULL;
  while (*p && (*p)->handle != handle) prev = *p, p = &(*p)->next;
  ip_req_t *r = *p;
  if (!r) return MPI_SUCCESS;
  *p = r->next;
  if (tail == r) tail = prev;
  atomic_fetch_sub_explicit(&outstanding, 1, memory_order_release);
  int code = r->cls == MPI_SUCCESS ? MPI_SUCCESS : pccl_ip_raise(r->call.comm, r->cls, r->why);
  free(r);
  return code;
}

/* settle for each request of an array call that MPI has just completed
 * (its handle became MPI_REQUEST_NULL): `at[k]` is the index of status k
 * (NULL: k itself), `rc` what MPI returned. A failure of ours makes it
 * MPI_ERR_IN_STATUS, with every status's MPI_ERROR set where there are
 * statuses. */
static int settle_array(int n, const MPI_Request *before, const MPI_Request *now, const int *at,
                        MPI_Status *statuses, int rc) {
  int failed = 0;
  for (int k = 0; k < n; k++) {
    int i = at ? at[k] : k;
    if (before[i] == MPI_REQUEST_NULL || now[i] != MPI_REQUEST_NULL) continue;
    int code = settle(before[i]);
    if (code == MPI_SUCCESS) continue;
    if (!failed && rc == MPI_SUCCESS && statuses != MPI_STATUSES_IGNORE)
      for (int j = 0; j < n; j++) statuses[j].MPI_ERROR = MPI_SUCCESS;
    failed = 1;
    if (statuses != MPI_STATUSES_IGNORE) statuses[k].MPI_ERROR = code;
  }
  return failed ? MPI_ERR_IN_STATUS : rc;
}

/* A call pccl finished while issuing it (a small call on the node's
 * segment whose peers had come first, a broadcast's root, a reduce's
 * leaf): it ends here, and the program gets a request MPI made complete, a
 * receive from MPI_PROC_NULL, which costs MPI a few instructions to make
 * and to wait for, where a generalized request costs it an object and two
 * callbacks, and the completion calls here a pass. A failure is raised
 * now, by the call that started it, as MPI allows. */
static int post_finished(pccl_ip_call_t *call, pccl_status_t st, pccl_ip_done_fn *done, void *arg,
                         MPI_Request *request) {
  char why[PCCL_IP_WHY_LEN];
  int rc = pccl_ip_ended(call, done(arg, st, why, sizeof why), why);
  if (rc != MPI_SUCCESS) {
    *request = MPI_REQUEST_NULL;
    return rc;
  }
  return PMPI_Irecv(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, call->comm, request);
}

int pccl_ip_post(pccl_ip_call_t *given, pccl_request_t *pr, pccl_ip_done_fn *done, void *arg,
                 MPI_Request *request) {
  /* `given` may live in `arg`, which `done` frees */
  pccl_ip_call_t kept = *given, *call = &kept;
  /* not pccl_test, which would move the call along again and, with more
   * ranks than cores, give up the core when nothing moved */
  if (pccl_request_finished(pr)) return post_finished(call, pccl_wait(&pr), done, arg, request);
  pccl_ip_issued(call);
  ip_req_t *r = malloc(sizeof *r);
  int rc = r ? PMPI_Grequest_start(query_fn, free_fn, cancel_fn, NULL, &r->handle)
             : MPI_ERR_NO_MEM;
  if (rc != MPI_SUCCESS) { /* no request to hand out: the call ends here */
    char why[PCCL_IP_WHY_LEN];
    pccl_ip_enter();
    done(arg, pccl_wait(&pr), why, sizeof why);
    pccl_ip_exit();
    pccl_ip_unhold(call->entry);
    free(r);
    *request = MPI_REQUEST_NULL;
    return pccl_ip_raise(call->comm, rc == MPI_ERR_NO_MEM ? rc : MPI_ERR_INTERN,
                         "cannot make the MPI request of a non-blocking collective: it was "
                         "completed before returning");
  }
  *r = (ip_req_t){.handle = r->handle, .pr = pr, .call = *call, .done = done, .arg = arg};
  pthread_mutex_lock(&lock);
  if (tail) tail->next = r;
  else head = r;
  tail = r;
  atomic_fetch_add(&outstanding, 1); /* before the progress thread's idle flag is read */
  pthread_mutex_unlock(&lock);
  pccl_ip_progress_start();
  *request = r->handle;
  return MPI_SUCCESS;
}

int pccl_ip_pending(void) { return atomic_load(&outstanding) > 0; }

/* The progress thread's poll (progress.c), while no program thread is
 * inside pccl: moves the calls along, as pass_begin does, but ends none
 * (that needs MPI calls, which are the program's to make). */
int pccl_ip_nudge(void) {
  int left = 0;
  pthread_mutex_lock(&lock);
  for (ip_req_t *r = head; r; r = r->next) {
    if (r->finished || r->own_only || pccl_request_finished(r->pr)) continue;
    if (pccl_comm_progress(r->call.pc) != PCCL_OK) r->own_only = 1;
    else left |= !pccl_request_finished(r->pr);
  }
  pthread_mutex_unlock(&lock);
  return left;
}

/* ---- completing requests ---- */

static int wait_one(MPI_Request *request, MPI_Status *status) {
  MPI_Request before = *request;
  for (unsigned pass = 1;; pass++) {
    int flag = 0;
    pass_begin();
    int rc = PMPI_Test(request, &flag, status);
    if (flag && rc == MPI_SUCCESS) rc = settle(before);
    pass_end(pass);
    if (flag || rc != MPI_SUCCESS) return rc;
  }
}

void pccl_ip_drain(MPI_Comm comm) {
  if (!active()) return;
  for (unsigned pass = 1;; pass++) {
    pass_begin();
    int left = 0, flag = 0;
    for (ip_req_t *r = head; r && !left; r = r->next) left = r->call.comm == comm && !r->finished;
    /* MPI moves the program's own requests too, as MPI_Wait's passes do
     * (a peer may wait on one of them before it reaches these calls) */
    if (left) PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, MPI_STATUS_IGNORE);
    pass_end(pass);
    if (!left) return;
  }
}

PCCL_IP_API int MPI_Wait(MPI_Request *request, MPI_Status *status) {
  if (!active() || !request) return PMPI_Wait(request, status);
  return wait_one(request, status);
}

PCCL_IP_API int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status) {
  if (!active() || !request || !flag) return PMPI_Test(request, flag, status);
  MPI_Request before = *request;
  pass_begin();
  int rc = PMPI_Test(request, flag, status);
  if (*flag && rc == MPI_SUCCESS) rc = settle(before);
  pass_end(1);
  return rc;
}

PCCL_IP_API int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status) {
  if (!active()) return PMPI_Request_get_status(request, flag, status);
  pass_begin();
  int rc = PMPI_Request_get_status(request, flag, status);
  pass_end(1);
  return rc;
}

/* The handles of an array call before MPI changes them. */
typedef struct {
  MPI_Request *h, small[64];
} snapshot_t;

static int snap(snapshot_t *s, int n, const MPI_Request *reqs) {
  s->h = n <= 64 ? s->small : malloc((size_t)n * sizeof *s->h);
  if (s->h) memcpy(s->h, reqs, (size_t)n * sizeof *s->h);
  return s->h != NULL;
}

static void snap_free(snapshot_t *s) {
  if (s->h != s->small) free(s->h);
}

static int no_memory(void) {
  return pccl_ip_raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM,
                       "out of memory for the handles of a completion call");
}

/* MPI_Testall's pass (wait: until all completed, else once). */
static int testall(int n, MPI_Request reqs[], int *flag, MPI_Status statuses[], int wait) {
  snapshot_t s;
  if (!snap(&s, n, reqs)) return no_memory();
  int rc;
  for (unsigned pass = 1;; pass++) {
    *flag = 0;
    pass_begin();
    rc = PMPI_Testall(n, reqs, flag, statuses);
    if (*flag || rc != MPI_SUCCESS) rc = settle_array(n, s.h, reqs, NULL, statuses, rc);
    pass_end(pass);
    if (!wait || *flag || rc != MPI_SUCCESS) break;
  }
  snap_free(&s);
  return rc;
}

PCCL_IP_API int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (!active() || count <= 0 || !requests) return PMPI_Waitall(count, requests, statuses);
  int flag;
  return testall(count, requests, &flag, statuses, 1);
}

PCCL_IP_API int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]) {
  if (!active() || count <= 0 || !requests || !flag)
    return PMPI_Testall(count, requests, flag, statuses);
  return testall(count, requests, flag, statuses, 0);
}

/* MPI_Testany's pass (wait: until one completed or none is active). */
static int testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status,
                   int wait) {
  snapshot_t s;
  if (!snap(&s, n, reqs)) return no_memory();
  int rc;
  for (unsigned pass = 1;; pass++) {
    *flag = 0;
    pass_begin();
    rc = PMPI_Testany(n, reqs, index, flag, status);
    if (*flag && rc == MPI_SUCCESS && *index != MPI_UNDEFINED) rc = settle(s.h[*index]);
    pass_end(pass);
    if (!wait || *flag || rc != MPI_SUCCESS) break;
  }
  snap_free(&s);
  return rc;
}

PCCL_IP_API int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status) {
  if (!active() || count <= 0 || !requests || !index)
    return PMPI_Waitany(count, requests, index, status);
  int flag;
  return testany(count, requests, index, &flag, status, 1);
}

PCCL_IP_API int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag,
                            MPI_Status *status) {
  if (!active() || count <= 0 || !requests || !index || !flag)
    return PMPI_Testany(count, requests, index, flag, status);
  return testany(count, requests, index, flag, status, 0);
}

/* MPI_Testsome's pass (wait: until some completed or none is active). */
static int testsome(int n, MPI_Request reqs[], int *outcount, int indices[],
                    MPI_Status statuses[], int wait) {
  snapshot_t s;
  if (!snap(&s, n, reqs)) return no_memory();
  int rc;
  for (unsigned pass = 1;; pass++) {
    *outcount = 0;
    pass_begin();
    rc = PMPI_Testsome(n, reqs, outcount, indices, statuses);
    if (*outcount > 0)
      rc = settle_array(*outcount, s.h, reqs, indices, statuses, rc);
    pass_end(pass);
    if (!wait || *outcount != 0 || rc != MPI_SUCCESS) break;
  }
  snap_free(&s);
  return rc;
}

PCCL_IP_API int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                             MPI_Status statuses[]) {
  if (!active() || incount <= 0 || !requests || !outcount || !indices)
    return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
  return testsome(incount, requests, outcount, indices, statuses, 1);
}

PCCL_IP_API int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                             MPI_Status statuses[]) {
  if (!active() || incount <= 0 || !requests || !outcount || !indices)
    return PMPI_Testsome(incount, requests, outcount, indices, statuses);
  return testsome(incount, requests, outcount, indices, statuses, 0);
}

/* MPI_Request_free and MPI_Cancel: refused on a collective's request. */
static int refuse(MPI_Request request, const char *call) {
  if (!active() || request == MPI_REQUEST_NULL) return 0;
  pthread_mutex_lock(&lock);
  ip_req_t *r = head;
  while (r && r->handle != request) r = r->next;
  MPI_Comm comm = r ? r->call.comm : MPI_COMM_NULL;
  pthread_mutex_unlock(&lock);
  if (!r) return 0;
  char why[200];
  snprintf(why, sizeof why,
           "%s on the request of a non-blocking collective, which MPI makes erroneous: complete "
           "it with MPI_Wait or MPI_Test",
           call);
  return pccl_ip_raise(comm, MPI_ERR_REQUEST, why);
}

PCCL_IP_API int MPI_Request_free(MPI_Request *request) {
  int rc = request ? refuse(*request, "MPI_Request_free") : 0;
  return rc ? rc : PMPI_Request_free(request);
}

PCCL_IP_API int MPI_Cancel(MPI_Request *request) {
  int rc = request ? refuse(*request, "MPI_Cancel") : 0;
  return rc ? rc : PMPI_Cancel(request);
}

/* ---- blocking point-to-point calls: started, then waited for as above ---- */

PCCL_IP_API int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                         MPI_Comm comm) {
  if (!active()) return PMPI_Send(buf, count, dt, dest, tag, comm);
  MPI_Request q;
  int rc = PMPI_Isend(buf, count, dt, dest, tag, comm, &q);
  return rc == MPI_SUCCESS ? wait_one(&q, MPI_STATUS_IGNORE) : rc;
}

PCCL_IP_API int MPI_Ssend(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                          MPI_Comm comm) {
  if (!active()) return PMPI_Ssend(buf, count, dt, dest, tag, comm);
  MPI_Request q;
  int rc = PMPI_Issend(buf, count, dt, dest, tag, comm, &q);
  return rc == MPI_SUCCESS ? wait_one(&q, MPI_STATUS_IGNORE) : rc;
}

PCCL_IP_API int MPI_Recv(void *buf, int count, MPI_Datatype dt, int source, int tag,
                         MPI_Comm comm, MPI_Status *status) {
  if (!active()) return PMPI_Recv(buf, count, dt, source, tag, comm, status);
  MPI_Request q;
  int rc = PMPI_Irecv(buf, count, dt, source, tag, comm, &q);
  return rc == MPI_SUCCESS ? wait_one(&q, status) : rc;
}

PCCL_IP_API int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                             int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                             int source, int recvtag, MPI_Comm comm, MPI_Status *status) {
  if (!active())
    return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                         recvtype, source, recvtag, comm, status);
  MPI_Request r, s;
  int rc = PMPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &r);
  if (rc != MPI_SUCCESS) return rc;
  rc = PMPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &s);
  int rrc = wait_one(&r, status); /* the receive is waited for either way: it is posted */
  if (rc == MPI_SUCCESS) rc = wait_one(&s, MPI_STATUS_IGNORE);
  return rrc != MPI_SUCCESS ? rrc : rc;
}

PCCL_IP_API int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status) {
  if (!active()) return PMPI_Probe(source, tag, comm, status);
  for (unsigned pass = 1;; pass++) {
    int flag = 0;
    pass_begin();
    int rc = PMPI_Iprobe(source, tag, comm, &flag, status);
    pass_end(pass);
    if (flag || rc != MPI_SUCCESS) return rc;
  }
}
