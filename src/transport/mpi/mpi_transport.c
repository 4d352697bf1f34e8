/* mpi_transport.c - the executor's transport between processes: MPI_Isend /
 * MPI_Irecv of bytes, completions gathered with MPI_Testsome. It calls the
 * PMPI_ names, so that an MPI interposer (the drop-in's completion calls
 * among them) never sees pccl's own messages.
 * The communicator is pccl's own duplicate with MPI_ERRORS_RETURN, so MPI
 * failures come back as codes. Messages are at most INT_MAX bytes (the
 * builder splits longer ones). */
#include "mpi_transport.h"

#include <limits.h>
#include <stdlib.h>

pccl_status_t pccl_mpi_tp_reserve(pccl_mpi_tp_t *t, uint32_t n) {
  if ((int)n <= t->cap) return PCCL_OK;
  if (n > INT_MAX) return PCCL_ERR_NO_MEMORY;
  MPI_Request *r = realloc(t->reqs, n * sizeof(*r));
  if (r) t->reqs = r;
  uint32_t *s = realloc(t->slots, n * sizeof(*s));
  if (s) t->slots = s;
  int *ix = realloc(t->indices, n * sizeof(*ix));
  if (ix) t->indices = ix;
  MPI_Status *st = realloc(t->statuses, n * sizeof(*st));
  if (st) t->statuses = st;
  size_t **rv = realloc(t->received, n * sizeof(*rv));
  if (rv) t->received = rv;
  if (!r || !s || !ix || !st || !rv) return PCCL_ERR_NO_MEMORY;
  t->cap = (int)n;
  return PCCL_OK;
}

void pccl_mpi_tp_reset(pccl_mpi_tp_t *t) {
  for (int i = 0; i < t->nactive; i++) {
    if (t->reqs[i] == MPI_REQUEST_NULL) continue;
    PMPI_Cancel(&t->reqs[i]);
    PMPI_Request_free(&t->reqs[i]);
  }
  t->nactive = 0;
}

void pccl_mpi_tp_fini(pccl_mpi_tp_t *t) {
  pccl_mpi_tp_reset(t);
  free(t->reqs);
  free(t->slots);
  free(t->indices);
  free(t->statuses);
  free(t->received);
  t->received = NULL;
  t->statuses = NULL;
  t->reqs = NULL;
  t->slots = NULL;
  t->indices = NULL;
  t->cap = 0;
}

static pccl_status_t check(pccl_mpi_tp_t *t, int rc) {
  if (rc == MPI_SUCCESS) return PCCL_OK;
  t->last_mpi_error = rc;
  return PCCL_ERR_MPI;
}

static pccl_status_t post(pccl_mpi_tp_t *t, int rc, uint32_t slot, size_t *received) {
  if (rc != MPI_SUCCESS) return check(t, rc);
  t->received[t->nactive] = received;
  t->slots[t->nactive++] = slot;
  return PCCL_OK;
}

static pccl_status_t mpi_isend(void *ctx, int peer, int tag, const void *buf, size_t bytes,
                               uint32_t slot) {
  pccl_mpi_tp_t *t = ctx;
  if (t->nactive >= t->cap || bytes > INT_MAX) return PCCL_ERR_INTERNAL;
  int rc = PMPI_Isend(buf, (int)bytes, MPI_BYTE, peer, tag, t->comm, &t->reqs[t->nactive]);
  return post(t, rc, slot, NULL);
}

static pccl_status_t mpi_irecv_var(void *ctx, int peer, int tag, void *buf, size_t cap,
                                   size_t *received, uint32_t slot) {
  pccl_mpi_tp_t *t = ctx;
  if (t->nactive >= t->cap || cap > INT_MAX) return PCCL_ERR_INTERNAL;
  int rc = PMPI_Irecv(buf, (int)cap, MPI_BYTE, peer, tag, t->comm, &t->reqs[t->nactive]);
  return post(t, rc, slot, received);
}

static pccl_status_t mpi_irecv(void *ctx, int peer, int tag, void *buf, size_t bytes,
                               uint32_t slot) {
  return mpi_irecv_var(ctx, peer, tag, buf, bytes, NULL, slot);
}

static pccl_status_t mpi_poll(void *ctx, uint32_t *done, int max, int *ndone) {
  pccl_mpi_tp_t *t = ctx;
  *ndone = 0;
  if (t->nactive == 0) return PCCL_OK;
  int outcount = 0;
  /* Real statuses rather than MPI_STATUSES_IGNORE: MPICH's sentinel for the
   * latter trips GCC's buffer-size checks. */
  int rc = PMPI_Testsome(t->nactive, t->reqs, &outcount, t->indices, t->statuses);
  if (rc != MPI_SUCCESS) return check(t, rc);
  if (outcount == MPI_UNDEFINED) outcount = 0;
  if (outcount > max) return PCCL_ERR_INTERNAL; /* the executor sizes done[] for all */
  for (int i = 0; i < outcount; i++) {
    int at = t->indices[i], n = 0;
    if (t->received[at]) {
      rc = PMPI_Get_count(&t->statuses[i], MPI_BYTE, &n);
      if (rc != MPI_SUCCESS) return check(t, rc);
      *t->received[at] = (size_t)n;
    }
    done[i] = t->slots[at];
    t->slots[at] = UINT32_MAX;
  }
  /* Compact: keep only the requests still in flight. */
  int w = 0;
  for (int i = 0; i < t->nactive; i++) {
    if (t->slots[i] == UINT32_MAX) continue;
    t->reqs[w] = t->reqs[i];
    t->slots[w] = t->slots[i];
    t->received[w] = t->received[i];
    w++;
  }
  t->nactive = w;
  *ndone = outcount;
  return PCCL_OK;
}

/* No fused receive-reduce: MPI lands the message, then the executor reduces.
 * MPI receives shorter messages than posted natively: that is the
 * variable-length pair. */
const pccl_transport_t pccl_mpi_transport = {mpi_isend, mpi_irecv, mpi_poll, NULL,
                                             mpi_isend, mpi_irecv_var};
