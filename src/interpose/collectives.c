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
  c->copied |= b->send.copy || b->recv.copy;
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

/* ---- the v-collectives: a block per rank, each of its own size ---- */

/* Why a buffer of a block per rank makes a v-call fall back, if it does. */
static pccl_ip_reason_t many_reason(const int counts[], const int displs[], MPI_Datatype t,
                                    MPI_Comm comm) {
  int size = 0;
  if (!counts || !displs || t == MPI_DATATYPE_NULL || comm == MPI_COMM_NULL ||
      PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
    return PCCL_IP_INVALID;
  for (int i = 0; i < size; i++)
    if (counts[i] < 0) return PCCL_IP_INVALID;
  return PCCL_IP_TAKEN;
}

/* An all-gatherv's, gatherv's or scatterv's reason, as rooted_reason: the
 * buffer of a block per rank where this rank has it (`many`: every rank of
 * an all-gatherv, the root of the others), then its own block unless that
 * is in place there. All-gatherv's recvcounts are alike on every rank;
 * otherwise only the root sees them, and a negative one is an erroneous
 * program that MPI answers. */
static pccl_ip_reason_t v_reason(int many, int inplace, const int counts[], const int displs[],
                                 MPI_Datatype many_t, int one_n, MPI_Datatype one_t,
                                 MPI_Comm comm) {
  pccl_ip_reason_t why = many ? many_reason(counts, displs, many_t, comm) : PCCL_IP_TAKEN;
  return why != PCCL_IP_TAKEN || (many && inplace) ? why : move_reason(one_n, one_t, 0, one_t);
}

/* Whether n1 elements of t1 and n2 of t2 differ in bytes. */
static int differ(int n1, MPI_Datatype t1, int n2, MPI_Datatype t2) {
  return pccl_ip_bytes((size_t)n1, t1) != pccl_ip_bytes((size_t)n2, t2);
}

/* A buffer of a block per rank (counts[i] elements of dt at displs[i]
 * extents from `user`) as bytes: block i is count[i] bytes at base + at[i].
 * With a plain datatype they are the user's own blocks, base the user's
 * buffer moved to the lowest displacement of a nonempty block (MPI lets
 * displacements be negative), NULL when every block is empty. With any
 * other they are packed, in rank order, into a copy that v_open can load
 * and v_store unpacks. */
typedef struct {
  size_t *count, *at;
  char *base, *copy, *user;
  const int *counts, *displs;
  MPI_Datatype dt;
  MPI_Aint extent;
  int n;                /* ranks */
  size_t small[2 * 64]; /* count and at, on up to 64 ranks */
} vside_t;

enum { LOAD_NONE = -2, LOAD_ALL = -1 }; /* what v_open loads, else one rank's block */

/* Packs block i into the copy, or unpacks it from there. */
static int v_move(vside_t *v, int i, int unpack, MPI_Comm comm) {
  if (!v->counts[i]) return MPI_SUCCESS;
  if (v->count[i] > INT_MAX) return MPI_ERR_COUNT; /* MPI_Pack's int size */
  char *user = v->user + v->displs[i] * v->extent, *copy = v->copy + v->at[i];
  int pos = 0, len = (int)v->count[i];
  int rc = unpack ? PMPI_Unpack(copy, len, &pos, user, v->counts[i], v->dt, comm)
                  : PMPI_Pack(user, v->counts[i], v->dt, copy, len, &pos, comm);
  return rc == MPI_SUCCESS && pos != len ? MPI_ERR_INTERN : rc;
}

/* Sets up `v`; `load` is LOAD_NONE, LOAD_ALL or the one rank whose block
 * the copy starts with. Returns an MPI code (MPI_ERR_COUNT when the bytes
 * overflow); v_release releases `v` either way. */
static int v_open(pccl_ip_call_t *c, vside_t *v, const void *user, const int counts[],
                  const int displs[], MPI_Datatype dt, int load) {
  size_t p = (size_t)c->size, es = pccl_ip_bytes(1, dt), total = 0;
  int plain = pccl_ip_plain(dt), rc = MPI_SUCCESS;
  MPI_Aint lb = 0;
  v->user = (char *)user, v->counts = counts, v->displs = displs, v->dt = dt, v->n = c->size;
  v->copy = NULL; /* not `*v = (vside_t){...}`, which would clear `small` too */
  if (!(v->count = p <= 64 ? v->small : malloc(2 * p * sizeof *v->count))) return MPI_ERR_NO_MEM;
  v->at = v->count + p;
  if (PMPI_Type_get_extent(dt, &lb, &v->extent) != MPI_SUCCESS || v->extent < 0)
    return MPI_ERR_TYPE;
  long long low = 0;
  int any = 0;
  for (int i = 0; i < c->size; i++)
    if (counts[i] && (!any || displs[i] < low)) low = displs[i], any = 1;
  for (size_t i = 0; i < p; i++) {
    size_t n = (size_t)counts[i], d = (size_t)((long long)displs[i] - low);
    if (es && n > SIZE_MAX / es) return MPI_ERR_COUNT;
    v->count[i] = n * es;
    if (!plain) { /* packed */
      v->at[i] = total;
      if ((total += v->count[i]) < v->count[i]) return MPI_ERR_COUNT;
    } else if (displs[i] < low) { /* an empty block's place is not used */
      v->at[i] = 0;
    } else if (d > SIZE_MAX / es) {
      return MPI_ERR_COUNT;
    } else {
      v->at[i] = d * es;
    }
  }
  if (plain) { /* an empty side's address may equal the other's, which pccl takes for in place */
    v->base = any ? v->user + low * (long long)es : NULL;
    return MPI_SUCCESS;
  }
  c->copied = 1;
  if (!(v->base = v->copy = malloc(total ? total : 1))) return MPI_ERR_NO_MEM;
  for (int i = 0; i < c->size && rc == MPI_SUCCESS; i++)
    if (load == LOAD_ALL || load == i) rc = v_move(v, i, 0, c->comm);
  return rc;
}

/* Unpacks the copy, if there is one, into the user's buffer. */
static int v_store(vside_t *v, MPI_Comm comm) {
  int rc = MPI_SUCCESS;
  for (int i = 0; v->copy && i < v->n && rc == MPI_SUCCESS; i++) rc = v_move(v, i, 1, comm);
  return rc;
}

/* A side this rank does not have (a gatherv's or scatterv's rank but the
 * root): nothing to release. Only the pointers are set: clearing `small`
 * would cost a small call as much as its data. */
static void v_none(vside_t *v) { v->count = v->at = NULL, v->base = v->copy = NULL; }

static void v_release(vside_t *v) {
  if (v->count != v->small) free(v->count);
  free(v->copy);
}

/* Ends a v-call: unpacks `out` (the side pccl wrote, or NULL) if pccl
 * succeeded, releases `out` and `in`, and ends as bufs_close. */
static int v_close(pccl_ip_call_t *c, vside_t *out, vside_t *in, bufs_t *b, pccl_status_t st,
                   int store) {
  if (out && st == PCCL_OK && b->rc == MPI_SUCCESS) b->rc = v_store(out, c->comm);
  if (out) v_release(out);
  if (in) v_release(in);
  return bufs_close(c, b, st, store);
}

/* In place, this rank's block is already at recvbuf + displs[rank]. */
PCCL_IP_API int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, const int recvcounts[], const int displs[],
                               MPI_Datatype recvtype, MPI_Comm comm) {
  pccl_ip_call_t c;
  int inplace = sendbuf == MPI_IN_PLACE;
  if (!pccl_ip_start(&c, PCCL_IP_ALLGATHERV, comm,
                     v_reason(1, inplace, recvcounts, displs, recvtype, sendcount, sendtype, comm)))
    return c.rc ? c.rc : PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                         recvtype, comm);
  if (!inplace && differ(sendcount, sendtype, recvcounts[c.rank], recvtype))
    return size_mismatch(&c);
  vside_t v;
  bufs_t b = {.rc = v_open(&c, &v, recvbuf, recvcounts, displs, recvtype,
                           inplace ? c.rank : LOAD_NONE)};
  if (b.rc == MPI_SUCCESS)
    bufs_open(&c, &b, inplace ? NULL : sendbuf, (size_t)sendcount, sendtype, NULL, 0, recvtype, 0, 1);
  pccl_status_t st = PCCL_OK;
  if (b.rc == MPI_SUCCESS)
    st = pccl_allgatherv(inplace ? v.base + v.at[c.rank] : b.send.bytes, v.base, v.count, v.at,
                         PCCL_UINT8, c.pc);
  return v_close(&c, &v, NULL, &b, st, 0);
}

/* Only the root has recvcounts, displs and recvtype. In place, its own
 * block is already at recvbuf + displs[root]. */
PCCL_IP_API int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, int root, MPI_Comm comm) {
  pccl_ip_call_t c;
  int at_root = rank_in(comm) == root, inplace = sendbuf == MPI_IN_PLACE;
  if (!pccl_ip_start(&c, PCCL_IP_GATHERV, comm, v_reason(at_root, inplace, recvcounts, displs,
                                                         recvtype, sendcount, sendtype, comm)))
    return c.rc ? c.rc : PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                      recvtype, root, comm);
  if (inplace && !at_root) return misplaced_in_place(&c);
  if (at_root && !inplace && differ(sendcount, sendtype, recvcounts[root], recvtype))
    return size_mismatch(&c);
  vside_t v;
  v_none(&v);
  bufs_t b = {.rc = at_root ? v_open(&c, &v, recvbuf, recvcounts, displs, recvtype,
                                     inplace ? root : LOAD_NONE)
                            : MPI_SUCCESS};
  if (b.rc == MPI_SUCCESS)
    bufs_open(&c, &b, inplace ? NULL : sendbuf, (size_t)sendcount, sendtype, NULL, 0, sendtype, 0,
              1);
  pccl_status_t st = PCCL_OK;
  if (b.rc == MPI_SUCCESS)
    st = pccl_gatherv(inplace ? v.base + v.at[root] : b.send.bytes,
                      inplace ? v.count[root] : b.send.len, v.base, v.count, v.at, PCCL_UINT8, root,
                      c.pc);
  return v_close(&c, &v, NULL, &b, st, 0);
}

/* Only the root has sendcounts, displs and sendtype. In place, its own
 * block stays at sendbuf + displs[root]. */
PCCL_IP_API int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                             MPI_Datatype sendtype, void *recvbuf, int recvcount,
                             MPI_Datatype recvtype, int root, MPI_Comm comm) {
  pccl_ip_call_t c;
  int at_root = rank_in(comm) == root, inplace = recvbuf == MPI_IN_PLACE;
  if (!pccl_ip_start(&c, PCCL_IP_SCATTERV, comm, v_reason(at_root, inplace, sendcounts, displs,
                                                          sendtype, recvcount, recvtype, comm)))
    return c.rc ? c.rc : PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                       recvtype, root, comm);
  if (inplace && !at_root) return misplaced_in_place(&c);
  if (at_root && !inplace && differ(recvcount, recvtype, sendcounts[root], sendtype))
    return size_mismatch(&c);
  vside_t v;
  v_none(&v);
  bufs_t b = {.rc = at_root ? v_open(&c, &v, sendbuf, sendcounts, displs, sendtype, LOAD_ALL)
                            : MPI_SUCCESS};
  if (b.rc == MPI_SUCCESS)
    bufs_open(&c, &b, NULL, 0, recvtype, inplace ? NULL : recvbuf, (size_t)recvcount, recvtype, 0,
              1);
  pccl_status_t st = PCCL_OK;
  if (b.rc == MPI_SUCCESS)
    st = pccl_scatterv(v.base, v.count, v.at, inplace ? v.base + v.at[root] : b.recv.bytes,
                       inplace ? v.count[root] : b.recv.len, PCCL_UINT8, root, c.pc);
  return v_close(&c, NULL, &v, &b, st, !inplace);
}

/* In place (sendbuf MPI_IN_PLACE), the blocks sent are recvbuf's own
 * (recvcounts, rdispls, recvtype), replaced by those received: pccl's
 * sendbuf == recvbuf. */
PCCL_IP_API int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                              MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                              const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  pccl_ip_call_t c;
  int inplace = sendbuf == MPI_IN_PLACE;
  pccl_ip_reason_t why = many_reason(recvcounts, rdispls, recvtype, comm);
  if (why == PCCL_IP_TAKEN && !inplace) why = many_reason(sendcounts, sdispls, sendtype, comm);
  if (!pccl_ip_start(&c, PCCL_IP_ALLTOALLV, comm, why))
    return c.rc ? c.rc : PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                        rdispls, recvtype, comm);
  if (!inplace && differ(sendcounts[c.rank], sendtype, recvcounts[c.rank], recvtype))
    return size_mismatch(&c);
  vside_t r, s, *in = inplace ? &r : &s;
  v_none(&s);
  bufs_t b = {.rc = v_open(&c, &r, recvbuf, recvcounts, rdispls, recvtype,
                           inplace ? LOAD_ALL : LOAD_NONE)};
  if (b.rc == MPI_SUCCESS && !inplace)
    b.rc = v_open(&c, &s, sendbuf, sendcounts, sdispls, sendtype, LOAD_ALL);
  pccl_status_t st = PCCL_OK;
  if (b.rc == MPI_SUCCESS)
    st = pccl_alltoallv(in->base, in->count, in->at, r.base, r.count, r.at, PCCL_UINT8, c.pc);
  return v_close(&c, &r, &s, &b, st, 0);
}

/* ---- calls pccl does not take: counted, then MPI's ---- */

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
