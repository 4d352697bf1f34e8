/* collectives.c - the MPI collectives libpccl_mpi.so defines. Each decides
 * its way (interpose.h), then maps MPI's arguments onto the pccl call:
 * collectives that move data move bytes (PCCL_UINT8), reductions use the
 * pccl type of the datatype, and MPI_IN_PLACE becomes pccl's in-place
 * convention for that collective. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "interpose.h"

/* The send and receive buffers of one call, as bytes. */
typedef struct {
  pccl_ip_buf_t send, recv;
  int rc;
} bufs_t;

/* Views the send buffer (unless `send` is NULL) and the receive buffer
 * (unless `recv` is NULL); `load_recv` when the receive buffer holds input
 * (in place). */
static void bufs_open(pccl_ip_call_t *c, bufs_t *b, const void *send, size_t scount,
                      MPI_Datatype stype, void *recv, size_t rcount, MPI_Datatype rtype,
                      int load_recv, size_t align) {
  memset(b, 0, sizeof *b);
  if (recv) b->rc = pccl_ip_view(&b->recv, recv, rcount, rtype, align, load_recv, c->comm);
  if (send && b->rc == MPI_SUCCESS)
    b->rc = pccl_ip_view(&b->send, send, scount, stype, align, 1, c->comm);
  c->copied = b->send.copy || b->recv.copy;
}

/* Ends the call: stores the receive buffer if pccl succeeded and `store`. */
static int bufs_close(pccl_ip_call_t *c, bufs_t *b, pccl_status_t st, int store) {
  if (st == PCCL_OK && b->rc == MPI_SUCCESS && store) b->rc = pccl_ip_store(&b->recv, c->comm);
  pccl_ip_release(&b->send);
  pccl_ip_release(&b->recv);
  return pccl_ip_finish(c, st, b->rc, "copying a buffer (packing a datatype or aligning)");
}

/* A call whose send and receive sides disagree in size (an erroneous
 * program, which MPI would answer with MPI_ERR_TRUNCATE). */
static int size_mismatch(pccl_ip_call_t *c) {
  return pccl_ip_finish(c, PCCL_OK, MPI_ERR_TRUNCATE, "send and receive sizes differ");
}

/* An MPI_IN_PLACE where MPI does not allow one. */
static int misplaced_in_place(pccl_ip_call_t *c) {
  return pccl_ip_finish(c, PCCL_OK, MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed on this rank");
}

/* Why a reduction falls back, if it does; sets the pccl type and op if not. */
static pccl_ip_reason_t reduce_reason(int count, MPI_Datatype dt, MPI_Op op, pccl_dtype_t *pd,
                                      pccl_op_t *po) {
  if (count < 0 || dt == MPI_DATATYPE_NULL || op == MPI_OP_NULL) return PCCL_IP_INVALID;
  return pccl_ip_reduction(dt, op, pd, po);
}

/* Why a collective that moves data falls back, if it does. */
static pccl_ip_reason_t move_reason(int n1, MPI_Datatype t1, int n2, MPI_Datatype t2) {
  if (n1 < 0 || t1 == MPI_DATATYPE_NULL || n2 < 0 || t2 == MPI_DATATYPE_NULL)
    return PCCL_IP_INVALID;
  return PCCL_IP_TAKEN;
}

PCCL_IP_API int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                              MPI_Op op, MPI_Comm comm) {
  pccl_ip_call_t c;
  pccl_dtype_t pd = PCCL_UINT8;
  pccl_op_t po = PCCL_SUM;
  if (!pccl_ip_start(&c, PCCL_IP_ALLREDUCE, comm, reduce_reason(count, dt, op, &pd, &po)))
    return c.rc ? c.rc : PMPI_Allreduce(sendbuf, recvbuf, count, dt, op, comm);
  int inplace = sendbuf == MPI_IN_PLACE;
  bufs_t b;
  bufs_open(&c, &b, inplace ? NULL : sendbuf, (size_t)count, dt, recvbuf, (size_t)count, dt,
            inplace, pccl_dtype_align(pd));
  pccl_status_t st = PCCL_OK;
  if (b.rc == MPI_SUCCESS)
    st = pccl_allreduce(inplace ? b.recv.bytes : b.send.bytes, b.recv.bytes, (size_t)count, pd,
                        po, c.pc);
  return bufs_close(&c, &b, st, 1);
}

/* MPI_Scan and MPI_Exscan. In place, the input is taken from recvbuf. An
 * exscan's recvbuf is not significant at rank 0 (MPI 4.0, 6.11.2): it is
 * neither viewed nor written there, so it may be anything, as under MPI. */
static int scan_run(pccl_ip_call_t *c, int exclusive, const void *sendbuf, void *recvbuf,
                    int count, MPI_Datatype dt, pccl_dtype_t pd, pccl_op_t po) {
  int inplace = sendbuf == MPI_IN_PLACE, store = !(exclusive && c->rank == 0);
  bufs_t b;
  bufs_open(c, &b, inplace ? NULL : sendbuf, (size_t)count, dt,
            store || inplace ? recvbuf : NULL, (size_t)count, dt, inplace, pccl_dtype_align(pd));
  pccl_status_t st = PCCL_OK;
  const void *in = inplace ? b.recv.bytes : b.send.bytes;
  void *out = store ? b.recv.bytes : NULL;
  if (b.rc == MPI_SUCCESS)
    st = exclusive ? pccl_exscan(in, inplace ? b.recv.bytes : out, (size_t)count, pd, po, c->pc)
                   : pccl_scan(in, out, (size_t)count, pd, po, c->pc);
  return bufs_close(c, &b, st, store);
}

PCCL_IP_API int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                         MPI_Comm comm) {
  pccl_ip_call_t c;
  pccl_dtype_t pd = PCCL_UINT8;
  pccl_op_t po = PCCL_SUM;
  if (!pccl_ip_start(&c, PCCL_IP_SCAN, comm, reduce_reason(count, dt, op, &pd, &po)))
    return c.rc ? c.rc : PMPI_Scan(sendbuf, recvbuf, count, dt, op, comm);
  return scan_run(&c, 0, sendbuf, recvbuf, count, dt, pd, po);
}

PCCL_IP_API int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                           MPI_Op op, MPI_Comm comm) {
  pccl_ip_call_t c;
  pccl_dtype_t pd = PCCL_UINT8;
  pccl_op_t po = PCCL_SUM;
  if (!pccl_ip_start(&c, PCCL_IP_EXSCAN, comm, reduce_reason(count, dt, op, &pd, &po)))
    return c.rc ? c.rc : PMPI_Exscan(sendbuf, recvbuf, count, dt, op, comm);
  return scan_run(&c, 1, sendbuf, recvbuf, count, dt, pd, po);
}

/* Reduce-scatter with `count` elements per rank, or counts[r] at rank r
 * (MPI_Reduce_scatter's unequal counts). In place, MPI takes the
 * input from recvbuf and leaves the result at its start, and Open MPI and
 * MPICH leave the rest of recvbuf as it was (programs rely on it). pccl's
 * own in-place form would use the other blocks as scratch, so the call
 * reads recvbuf as its (untouched) input, reduces into a block of
 * scratch, and copies that to the front once every peer is done. */
#define RS_STACK_BYTES 4096 /* scratch this small lives on the stack */

/* The in-place call's scratch, `bytes` of it, in `small` or allocated
 * (*heap). MPI requires every rank to be in place when one is, so every
 * rank gets here; when the scratch must be allocated the ranks agree (one
 * 8-byte all-reduce) that all of them have it and their buffers, so that a
 * rank that has not returns its error together with the others instead of
 * leaving them to wait out PCCL_TIMEOUT. Returns the scratch, or NULL with
 * *rc set: the MPI error of this rank's call. */
static void *rs_scratch(pccl_ip_call_t *c, const bufs_t *b, size_t bytes, size_t largest,
                        void *small, void **heap, int *rc, const char **why) {
  *heap = NULL;
  /* `largest`, the largest rank's bytes, decides alike on every rank */
  if (largest <= RS_STACK_BYTES) return b->rc == MPI_SUCCESS ? small : NULL;
  int64_t ok = b->rc == MPI_SUCCESS && posix_memalign(heap, 64, bytes ? bytes : 64) == 0;
  if (b->rc == MPI_SUCCESS && !ok) *heap = NULL;
  int64_t all = ok;
  pccl_status_t st = pccl_allreduce(&all, &all, 1, PCCL_INT64, PCCL_MIN, c->pc);
  if (st == PCCL_OK && all) return *heap;
  free(*heap);
  *heap = NULL;
  if (st != PCCL_OK) {
    *rc = MPI_ERR_OTHER;
    *why = pccl_last_error(c->pc);
  } else if (b->rc == MPI_SUCCESS) {
    *rc = ok ? MPI_ERR_OTHER : MPI_ERR_NO_MEM;
    *why = ok ? "another rank could not allocate its scratch or copy its buffer for this "
                "in-place reduce-scatter; nothing was changed"
              : "out of memory for the in-place reduce-scatter's block of scratch; nothing was "
                "changed";
  }
  return NULL;
}

static int reduce_scatter_run(pccl_ip_call_t *c, const void *sendbuf, void *recvbuf,
                              const int counts[], int count, MPI_Datatype dt, pccl_dtype_t pd,
                              pccl_op_t po) {
  int inplace = sendbuf == MPI_IN_PLACE;
  size_t p = (size_t)c->size, es = pccl_dtype_size(pd), fixed[64], *v = NULL;
  size_t n = (size_t)count, total = n * p, largest = n;
  if (counts) { /* unequal: pccl's counts, the sum and the largest */
    if (!(v = p <= 64 ? fixed : malloc(p * sizeof *v)))
      return pccl_ip_finish(c, PCCL_OK, MPI_ERR_NO_MEM, "out of memory for the counts");
    total = largest = 0;
    for (size_t r = 0; r < p; r++) {
      total += v[r] = (size_t)counts[r];
      largest = v[r] > largest ? v[r] : largest;
    }
    n = v[c->rank];
  }
  size_t blk = n * es;
  bufs_t b;
  bufs_open(c, &b, inplace ? NULL : sendbuf, total, dt, recvbuf, inplace ? total : n, dt,
            inplace, pccl_dtype_align(pd));
  _Alignas(64) unsigned char small[RS_STACK_BYTES];
  void *result = NULL, *heap = NULL;
  int rc = MPI_SUCCESS;
  const char *why = NULL;
  if (inplace && largest > 0) result = rs_scratch(c, &b, blk, largest * es, small, &heap, &rc, &why);
  pccl_status_t st = PCCL_OK;
  if (rc == MPI_SUCCESS && b.rc == MPI_SUCCESS && total > 0) {
    const void *in = inplace ? b.recv.bytes : b.send.bytes;
    void *out = inplace ? result : b.recv.bytes;
    st = v ? pccl_reduce_scatterv(in, out, v, pd, po, c->pc) : pccl_reduce_scatter(in, out, n, pd, po, c->pc);
    if (st == PCCL_OK && inplace && blk) memcpy(b.recv.bytes, result, blk);
  }
  free(heap);
  if (v != fixed) free(v);
  if (rc != MPI_SUCCESS) {
    pccl_ip_release(&b.send);
    pccl_ip_release(&b.recv);
    return pccl_ip_finish(c, PCCL_OK, rc, why);
  }
  return bufs_close(c, &b, st, 1);
}

PCCL_IP_API int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                         MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
  pccl_ip_call_t c;
  pccl_dtype_t pd = PCCL_UINT8;
  pccl_op_t po = PCCL_SUM;
  if (!pccl_ip_start(&c, PCCL_IP_REDUCE_SCATTER_BLOCK, comm,
                     reduce_reason(recvcount, dt, op, &pd, &po)))
    return c.rc ? c.rc : PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, dt, op, comm);
  return reduce_scatter_run(&c, sendbuf, recvbuf, NULL, recvcount, dt, pd, po);
}

/* MPI_Reduce_scatter's reason (recvcounts is the same on every rank, as MPI
 * requires): *equal says whether every count is the first. */
static pccl_ip_reason_t counts_reason(const int recvcounts[], MPI_Comm comm, int *equal) {
  int size = 0;
  if (!recvcounts || comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
    return PCCL_IP_INVALID;
  *equal = 1;
  for (int i = 0; i < size; i++) {
    if (recvcounts[i] < 0) return PCCL_IP_INVALID;
    *equal &= recvcounts[i] == recvcounts[0];
  }
  return PCCL_IP_TAKEN;
}

PCCL_IP_API int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                   MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
  pccl_ip_call_t c;
  pccl_dtype_t pd = PCCL_UINT8;
  pccl_op_t po = PCCL_SUM;
  int equal = 1;
  pccl_ip_reason_t why = counts_reason(recvcounts, comm, &equal);
  if (why == PCCL_IP_TAKEN) why = reduce_reason(recvcounts[0], dt, op, &pd, &po);
  if (!pccl_ip_start(&c, PCCL_IP_REDUCE_SCATTER, comm, why))
    return c.rc ? c.rc : PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, dt, op, comm);
  return reduce_scatter_run(&c, sendbuf, recvbuf, equal ? NULL : recvcounts, recvcounts[0], dt, pd, po);
}

PCCL_IP_API int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                           MPI_Op op, int root, MPI_Comm comm) {
  pccl_ip_call_t c;
  pccl_dtype_t pd = PCCL_UINT8;
  pccl_op_t po = PCCL_SUM;
  if (!pccl_ip_start(&c, PCCL_IP_REDUCE, comm, reduce_reason(count, dt, op, &pd, &po)))
    return c.rc ? c.rc : PMPI_Reduce(sendbuf, recvbuf, count, dt, op, root, comm);
  int at_root = c.rank == root, inplace = sendbuf == MPI_IN_PLACE;
  if (inplace && !at_root) return misplaced_in_place(&c);
  bufs_t b;
  bufs_open(&c, &b, inplace ? NULL : sendbuf, (size_t)count, dt, at_root ? recvbuf : NULL,
            (size_t)count, dt, inplace, pccl_dtype_align(pd));
  pccl_status_t st = PCCL_OK;
  if (b.rc == MPI_SUCCESS)
    st = pccl_reduce(inplace ? b.recv.bytes : b.send.bytes, b.recv.bytes, (size_t)count, pd, po,
                     root, c.pc);
  return bufs_close(&c, &b, st, at_root);
}

PCCL_IP_API int MPI_Bcast(void *buffer, int count, MPI_Datatype dt, int root, MPI_Comm comm) {
  pccl_ip_call_t c;
  if (!pccl_ip_start(&c, PCCL_IP_BCAST, comm, move_reason(count, dt, 0, dt)))
    return c.rc ? c.rc : PMPI_Bcast(buffer, count, dt, root, comm);
  int at_root = c.rank == root;
  bufs_t b;
  bufs_open(&c, &b, NULL, 0, dt, buffer, (size_t)count, dt, at_root, 1);
  pccl_status_t st = PCCL_OK;
  if (b.rc == MPI_SUCCESS)
    st = pccl_broadcast(b.recv.bytes, b.recv.bytes, b.recv.len, PCCL_UINT8, root, c.pc);
  return bufs_close(&c, &b, st, !at_root);
}

/* All-gather and all-to-all take the same arguments and the same in-place
 * form (sendbuf MPI_IN_PLACE); they differ in the send buffer's size (one
 * block, or one per rank) and in where pccl finds an in-place input. */
typedef int pmpi_everyone_fn(const void *, int, MPI_Datatype, void *, int, MPI_Datatype,
                             MPI_Comm);

static int everyone(pccl_ip_call_id_t id, pmpi_everyone_fn *pmpi, const void *sendbuf,
                    int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                    MPI_Datatype recvtype, MPI_Comm comm) {
  pccl_ip_call_t c;
  int inplace = sendbuf == MPI_IN_PLACE, alltoall = id == PCCL_IP_ALLTOALL;
  pccl_ip_reason_t why = inplace ? move_reason(recvcount, recvtype, 0, recvtype)
                                 : move_reason(sendcount, sendtype, recvcount, recvtype);
  if (!pccl_ip_start(&c, id, comm, why))
    return c.rc ? c.rc : pmpi(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  size_t blk = pccl_ip_bytes((size_t)recvcount, recvtype), n = (size_t)c.size;
  if (!inplace && pccl_ip_bytes((size_t)sendcount, sendtype) != blk) return size_mismatch(&c);
  bufs_t b;
  bufs_open(&c, &b, inplace ? NULL : sendbuf, (size_t)sendcount * (alltoall ? n : 1), sendtype,
            recvbuf, (size_t)recvcount * n, recvtype, inplace, 1);
  pccl_status_t st = PCCL_OK;
  if (b.rc == MPI_SUCCESS && alltoall)
    st = pccl_alltoall(inplace ? b.recv.bytes : b.send.bytes, b.recv.bytes, blk, PCCL_UINT8,
                       c.pc);
  else if (b.rc == MPI_SUCCESS)
    st = pccl_allgather(inplace ? b.recv.bytes + (size_t)c.rank * blk : b.send.bytes,
                        b.recv.bytes, blk, PCCL_UINT8, c.pc);
  return bufs_close(&c, &b, st, 1);
}

PCCL_IP_API int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, int recvcount, MPI_Datatype recvtype,
                              MPI_Comm comm) {
  return everyone(PCCL_IP_ALLGATHER, PMPI_Allgather, sendbuf, sendcount, sendtype, recvbuf,
                  recvcount, recvtype, comm);
}

PCCL_IP_API int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return everyone(PCCL_IP_ALLTOALL, PMPI_Alltoall, sendbuf, sendcount, sendtype, recvbuf,
                  recvcount, recvtype, comm);
}

/* Scatter and gather mirror each other: the root's `many` buffer holds a
 * block per rank (scatter's send, gather's receive), every rank's `one`
 * buffer holds its own block, absent at the root in place. */
static pccl_ip_reason_t rooted_reason(int at_root, int inplace, int many_n, MPI_Datatype many_t,
                                      int one_n, MPI_Datatype one_t) {
  if (!at_root) return move_reason(one_n, one_t, 0, one_t);
  return inplace ? move_reason(many_n, many_t, 0, many_t)
                 : move_reason(many_n, many_t, one_n, one_t);
}

/* The block size of a scatter or gather, as rooted_reason's arguments give
 * it; 0 (after reporting) when the root's two sides differ. */
static int rooted_block(pccl_ip_call_t *c, int at_root, int inplace, int many_n,
                        MPI_Datatype many_t, int one_n, MPI_Datatype one_t, size_t *blk) {
  *blk = at_root ? pccl_ip_bytes((size_t)many_n, many_t) : pccl_ip_bytes((size_t)one_n, one_t);
  if (at_root && !inplace && pccl_ip_bytes((size_t)one_n, one_t) != *blk) {
    c->rc = size_mismatch(c);
    return 0;
  }
  return 1;
}

static int rank_in(MPI_Comm comm) {
  int rank = -1;
  if (comm != MPI_COMM_NULL) PMPI_Comm_rank(comm, &rank);
  return rank;
}

/* In place, the root's own block stays in its send buffer
 * (pccl's recvbuf == sendbuf + root*blk). */
PCCL_IP_API int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                            MPI_Comm comm) {
  pccl_ip_call_t c;
  int at_root = rank_in(comm) == root, inplace = at_root && recvbuf == MPI_IN_PLACE;
  size_t blk;
  if (!pccl_ip_start(&c, PCCL_IP_SCATTER, comm,
                     rooted_reason(at_root, inplace, sendcount, sendtype, recvcount, recvtype)))
    return c.rc ? c.rc
                : PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                               comm);
  if (!rooted_block(&c, at_root, inplace, sendcount, sendtype, recvcount, recvtype, &blk))
    return c.rc;
  bufs_t b;
  bufs_open(&c, &b, at_root ? sendbuf : NULL, (size_t)sendcount * (size_t)c.size, sendtype,
            inplace ? NULL : recvbuf, (size_t)recvcount, recvtype, 0, 1);
  pccl_status_t st = PCCL_OK;
  if (b.rc == MPI_SUCCESS)
    st = pccl_scatter(b.send.bytes,
                      inplace ? b.send.bytes + (size_t)root * blk : b.recv.bytes, blk,
                      PCCL_UINT8, root, c.pc);
  return bufs_close(&c, &b, st, !inplace);
}

/* In place, the root's own block is already in its receive buffer
 * (pccl's sendbuf == recvbuf + root*blk). */
PCCL_IP_API int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                           MPI_Comm comm) {
  pccl_ip_call_t c;
  int at_root = rank_in(comm) == root, inplace = sendbuf == MPI_IN_PLACE;
  size_t blk;
  if (!pccl_ip_start(&c, PCCL_IP_GATHER, comm,
                     rooted_reason(at_root, inplace, recvcount, recvtype, sendcount, sendtype)))
    return c.rc ? c.rc
                : PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                              comm);
  if (inplace && !at_root) return misplaced_in_place(&c);
  if (!rooted_block(&c, at_root, inplace, recvcount, recvtype, sendcount, sendtype, &blk))
    return c.rc;
  bufs_t b;
  bufs_open(&c, &b, inplace ? NULL : sendbuf, (size_t)sendcount, sendtype,
            at_root ? recvbuf : NULL, (size_t)recvcount * (size_t)c.size, recvtype, inplace, 1);
  pccl_status_t st = PCCL_OK;
  if (b.rc == MPI_SUCCESS)
    st = pccl_gather(inplace ? b.recv.bytes + (size_t)root * blk : b.send.bytes, b.recv.bytes,
                     blk, PCCL_UINT8, root, c.pc);
  return bufs_close(&c, &b, st, at_root);
}

PCCL_IP_API int MPI_Barrier(MPI_Comm comm) {
  pccl_ip_call_t c;
  if (!pccl_ip_start(&c, PCCL_IP_BARRIER, comm, PCCL_IP_TAKEN)) return c.rc ? c.rc : PMPI_Barrier(comm);
  return pccl_ip_finish(&c, pccl_barrier(c.pc), MPI_SUCCESS, NULL);
}

/* ---- MPI_Allgatherv ---- */

/* The way of an all-gatherv is decided from recvcounts and recvtype, which
 * MPI makes alike on every rank (displs may differ from rank to rank). */
static pccl_ip_reason_t v_reason(const int counts[], const int displs[], MPI_Datatype t,
                                 MPI_Comm comm) {
  int size = 0;
  if (!counts || !displs || t == MPI_DATATYPE_NULL || comm == MPI_COMM_NULL ||
      PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
    return PCCL_IP_INVALID;
  for (int i = 0; i < size; i++)
    if (counts[i] < 0) return PCCL_IP_INVALID;
  return PCCL_IP_TAKEN;
}

/* An all-gatherv in bytes: each rank's block size, and where it lands
 * relative to `base` (the lowest displacement, which MPI lets be negative). */
typedef struct {
  size_t *count, *at; /* per rank, bytes */
  char *base;
  size_t mine;        /* this rank's block: count[rank] */
} vbytes_t;

/* Scales MPI's counts and displacements (elements of `esize` bytes placed
 * `extent` bytes apart) to bytes; MPI_ERR_COUNT when they overflow. */
static int v_bytes(vbytes_t *v, int p, int rank, const int counts[], const int displs[], void *recv,
                   size_t esize, size_t extent) {
  long long low = 0;
  for (int i = 0; i < p; i++)
    if (i == 0 || displs[i] < low) low = displs[i];
  for (int i = 0; i < p; i++) {
    size_t n = (size_t)counts[i], d = (size_t)((long long)displs[i] - low);
    if ((esize && n > SIZE_MAX / esize) || (extent && d > SIZE_MAX / extent)) return MPI_ERR_COUNT;
    v->count[i] = n * esize;
    v->at[i] = d * extent;
  }
  v->base = (char *)recv + low * (long long)extent;
  v->mine = v->count[rank];
  return MPI_SUCCESS;
}

/* A receive type that is not plain: the blocks are gathered packed into a
 * copy, then each is unpacked at its displacement (in place, this rank's
 * block is packed in first). */
static pccl_status_t v_through_copy(pccl_ip_call_t *c, const vbytes_t *v, const void *send,
                                    void *recvbuf, const int counts[], const int displs[],
                                    MPI_Datatype t, MPI_Aint extent, int *rc) {
  size_t total = 0, mine_at = 0;
  for (int i = 0; i < c->size; i++) {
    if (i == c->rank) mine_at = total;
    total += v->count[i];
  }
  char *copy = malloc(total ? total : 1);
  if (!copy) return *rc = MPI_ERR_NO_MEM, PCCL_OK;
  int pos = 0;
  if (!send && v->mine > INT_MAX) *rc = MPI_ERR_COUNT;
  else if (!send && v->mine)
    *rc = PMPI_Pack((char *)recvbuf + displs[c->rank] * extent, counts[c->rank], t, copy + mine_at,
                    (int)v->mine, &pos, c->comm);
  pccl_status_t st = PCCL_OK;
  if (*rc == MPI_SUCCESS)
    st = pccl_allgatherv(send ? send : copy + mine_at, copy, v->count, NULL, PCCL_UINT8, c->pc);
  size_t off = 0;
  for (int i = 0; st == PCCL_OK && *rc == MPI_SUCCESS && i < c->size; off += v->count[i++]) {
    pos = 0;
    if (counts[i] && v->count[i] > INT_MAX) *rc = MPI_ERR_COUNT; /* PMPI_Unpack's int size */
    else if (counts[i])
      *rc = PMPI_Unpack(copy + off, (int)v->count[i], &pos, (char *)recvbuf + displs[i] * extent,
                        counts[i], t, c->comm);
  }
  free(copy);
  return st;
}

PCCL_IP_API int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, const int recvcounts[], const int displs[],
                               MPI_Datatype recvtype, MPI_Comm comm) {
  pccl_ip_call_t c;
  int inplace = sendbuf == MPI_IN_PLACE;
  pccl_ip_reason_t why = v_reason(recvcounts, displs, recvtype, comm);
  if (why == PCCL_IP_TAKEN && !inplace) why = move_reason(sendcount, sendtype, 0, recvtype);
  if (!pccl_ip_start(&c, PCCL_IP_ALLGATHERV, comm, why))
    return c.rc ? c.rc : PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                         recvtype, comm);
  MPI_Aint lb = 0, extent = 0;
  size_t esize = pccl_ip_bytes(1, recvtype), p = (size_t)c.size;
  int plain = pccl_ip_plain(recvtype);
  if (PMPI_Type_get_extent(recvtype, &lb, &extent) != MPI_SUCCESS || extent < 0)
    return pccl_ip_finish(&c, PCCL_OK, MPI_ERR_TYPE, "recvtype has no extent");
  size_t small[2 * 64], *arrays = p <= 64 ? small : malloc(2 * p * sizeof *arrays);
  if (!arrays) return pccl_ip_finish(&c, PCCL_OK, MPI_ERR_NO_MEM, "out of memory");
  vbytes_t v = {arrays, arrays + p, NULL, 0};
  int rc = v_bytes(&v, c.size, c.rank, recvcounts, displs, recvbuf, esize,
                   plain ? esize : (size_t)extent);
  bufs_t b = {.rc = rc};
  pccl_status_t st = PCCL_OK;
  if (rc == MPI_SUCCESS && !inplace && pccl_ip_bytes((size_t)sendcount, sendtype) != v.mine) {
    if (arrays != small) free(arrays);
    return size_mismatch(&c);
  }
  if (rc == MPI_SUCCESS)
    bufs_open(&c, &b, inplace ? NULL : sendbuf, (size_t)sendcount, sendtype, NULL, 0, recvtype, 0, 1);
  if (b.rc == MPI_SUCCESS && plain)
    st = pccl_allgatherv(inplace ? v.base + v.at[c.rank] : b.send.bytes, v.base, v.count, v.at,
                         PCCL_UINT8, c.pc);
  else if (b.rc == MPI_SUCCESS)
    c.copied = 1, st = v_through_copy(&c, &v, inplace ? NULL : b.send.bytes, recvbuf, recvcounts,
                                      displs, recvtype, extent, &b.rc);
  if (arrays != small) free(arrays);
  return bufs_close(&c, &b, st, 0);
}

/* ---- calls pccl does not take: counted, then MPI's ---- */

PCCL_IP_API int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, int root, MPI_Comm comm) {
  pccl_ip_pass(PCCL_IP_GATHERV);
  return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                      comm);
}

PCCL_IP_API int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                             MPI_Datatype sendtype, void *recvbuf, int recvcount,
                             MPI_Datatype recvtype, int root, MPI_Comm comm) {
  pccl_ip_pass(PCCL_IP_SCATTERV);
  return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                       comm);
}

PCCL_IP_API int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                              MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                              const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  pccl_ip_pass(PCCL_IP_ALLTOALLV);
  return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                        recvtype, comm);
}

PCCL_IP_API int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                               MPI_Op op, MPI_Comm comm, MPI_Request *request) {
  pccl_ip_pass(PCCL_IP_IALLREDUCE);
  return PMPI_Iallreduce(sendbuf, recvbuf, count, dt, op, comm, request);
}

PCCL_IP_API int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                               MPI_Request *request) {
  pccl_ip_pass(PCCL_IP_IALLGATHER);
  return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                         request);
}

PCCL_IP_API int MPI_Ibcast(void *buffer, int count, MPI_Datatype dt, int root, MPI_Comm comm,
                           MPI_Request *request) {
  pccl_ip_pass(PCCL_IP_IBCAST);
  return PMPI_Ibcast(buffer, count, dt, root, comm, request);
}
