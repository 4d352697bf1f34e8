/* collectives.c - what pccl-bench knows about each collective and how it
 * calls one: the error aborts, the element counts of the send and receive
 * buffers, nccl-tests' reported-size and bus-bandwidth conventions, the
 * algorithms pccl has registered, and one call of a collective through pccl
 * or through MPI's own equivalent (with the MPI datatype and op to use). */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "bench.h"

/* ---- errors ------------------------------------------------------------ */

void abort_on_pccl_error(const pccl_comm_t *comm, pccl_status_t status, const char *what) {
  if (status == PCCL_OK) return;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fprintf(stderr, "pccl-bench: rank %d: %s failed: %s: %s\n", rank, what,
          pccl_status_string(status), pccl_last_error(comm));
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static void abort_out_of_memory(void) {
  fprintf(stderr, "pccl-bench: out of memory\n");
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* ---- collective properties --------------------------------------------- */

bool is_reduction(pccl_coll_t coll) {
  return coll == PCCL_COLL_REDUCE_SCATTER || coll == PCCL_COLL_ALLREDUCE ||
         coll == PCCL_COLL_REDUCE || coll == PCCL_COLL_SCAN || coll == PCCL_COLL_EXSCAN ||
         coll == PCCL_COLL_REDUCE_SCATTERV;
}

bool is_rooted(pccl_coll_t coll) {
  return coll == PCCL_COLL_BROADCAST || coll == PCCL_COLL_REDUCE ||
         coll == PCCL_COLL_SCATTER || coll == PCCL_COLL_GATHER ||
         coll == PCCL_COLL_SCATTERV || coll == PCCL_COLL_GATHERV;
}

bool has_vcounts(pccl_coll_t coll) {
  return coll == PCCL_COLL_ALLGATHERV || coll == PCCL_COLL_REDUCE_SCATTERV ||
         coll == PCCL_COLL_GATHERV || coll == PCCL_COLL_SCATTERV || coll == PCCL_COLL_ALLTOALLV;
}

/* Reported bytes are this many times count*elemsize (nccl-tests' sizes);
 * a v-collective's count is the mean, so its size is the whole buffer of
 * every rank's block, as its fixed-size twin's. */
size_t size_multiplier(pccl_coll_t coll, int nranks) {
  bool per_count = coll == PCCL_COLL_ALLREDUCE || coll == PCCL_COLL_BROADCAST ||
                   coll == PCCL_COLL_REDUCE || coll == PCCL_COLL_SCAN ||
                   coll == PCCL_COLL_EXSCAN;
  return per_count ? 1 : (size_t)nranks;
}

/* nccl-tests' factor from algorithm bandwidth to bus bandwidth. */
double bus_factor(pccl_coll_t coll, int nranks) {
  double n = nranks;
  switch (coll) {
  case PCCL_COLL_ALLREDUCE: return 2.0 * (n - 1.0) / n;
  case PCCL_COLL_BROADCAST:
  case PCCL_COLL_REDUCE:
  case PCCL_COLL_SCAN: /* nccl-tests has none: each rank's vector, once */
  case PCCL_COLL_EXSCAN: return 1.0;
  default: return (n - 1.0) / n;
  }
}

/* Rank r's count of allgatherv_counts (r < p - 1; the last takes the rest). */
static size_t vcount(size_t mean, size_t p, bool heavy, size_t r) {
  return heavy ? mean * p / 2 / (p - 1) : mean * 2 * (r + 1) / (p + 1);
}

void allgatherv_counts(size_t mean, int nranks, bool heavy, size_t *counts) {
  size_t left = mean * (size_t)nranks, p = (size_t)nranks;
  for (size_t r = 0; r + 1 < p; r++) left -= counts[r] = vcount(mean, p, heavy, r);
  counts[p - 1] = left;
}

size_t alltoallv_count(const size_t *counts, int nranks, int from, int to) {
  return counts[(to - from + nranks) % nranks];
}

/* allgatherv_counts' largest, the last: near twice the mean (half the
 * total, heavy), more by up to nranks - 1 for the floors of the others (3
 * of a mean of 1 on 4 ranks). */
static size_t largest_vcount(size_t mean, int nranks, bool heavy) {
  size_t left = mean * (size_t)nranks, p = (size_t)nranks;
  for (size_t r = 0; r + 1 < p; r++) left -= vcount(mean, p, heavy, r);
  return left;
}

size_t send_elements(pccl_coll_t coll, size_t count, int nranks, bool heavy) {
  if (coll == PCCL_COLL_ALLGATHERV || coll == PCCL_COLL_GATHERV)
    return largest_vcount(count, nranks, heavy);
  bool whole = coll == PCCL_COLL_REDUCE_SCATTER || coll == PCCL_COLL_SCATTER ||
               coll == PCCL_COLL_ALLTOALL || coll == PCCL_COLL_REDUCE_SCATTERV ||
               coll == PCCL_COLL_SCATTERV || coll == PCCL_COLL_ALLTOALLV;
  return whole ? (size_t)nranks * count : count;
}

size_t recv_elements(pccl_coll_t coll, size_t count, int nranks, bool heavy) {
  if (coll == PCCL_COLL_REDUCE_SCATTERV || coll == PCCL_COLL_SCATTERV)
    return largest_vcount(count, nranks, heavy);
  bool whole = coll == PCCL_COLL_ALLGATHER || coll == PCCL_COLL_GATHER ||
               coll == PCCL_COLL_ALLTOALL || coll == PCCL_COLL_ALLGATHERV ||
               coll == PCCL_COLL_GATHERV || coll == PCCL_COLL_ALLTOALLV;
  return whole ? (size_t)nranks * count : count;
}

/* MPI's type for `dtype`; float16/bfloat16 move as 16-bit integers and
 * cannot be reduced (MPI_DATATYPE_NULL). */
static MPI_Datatype mpi_datatype(pccl_dtype_t dtype, bool for_reduction) {
  switch (dtype) {
  case PCCL_INT8: return MPI_INT8_T;
  case PCCL_UINT8: return MPI_UINT8_T;
  case PCCL_INT32: return MPI_INT32_T;
  case PCCL_UINT32: return MPI_UINT32_T;
  case PCCL_INT64: return MPI_INT64_T;
  case PCCL_UINT64: return MPI_UINT64_T;
  case PCCL_FLOAT32: return MPI_FLOAT;
  case PCCL_FLOAT64: return MPI_DOUBLE;
  default: return for_reduction ? MPI_DATATYPE_NULL : MPI_UINT16_T; /* float16, bfloat16 */
  }
}

/* MPI's op for `op`; MPI_OP_NULL for avg, which MPI lacks. */
static MPI_Op mpi_op(pccl_op_t op) {
  switch (op) {
  case PCCL_SUM: return MPI_SUM;
  case PCCL_PROD: return MPI_PROD;
  case PCCL_MIN: return MPI_MIN;
  case PCCL_MAX: return MPI_MAX;
  default: return MPI_OP_NULL;
  }
}

/* The algorithms registered for `coll` (free the array, not the names). */
const char **registered_algorithms(pccl_coll_t coll, int *count) {
  const char *unused[1];
  abort_on_pccl_error(NULL, pccl_algo_list(coll, unused, 0, count), "pccl_algo_list");
  const char **names = malloc(sizeof *names * (size_t)(*count > 0 ? *count : 1));
  if (names == NULL) abort_out_of_memory();
  abort_on_pccl_error(NULL, pccl_algo_list(coll, names, *count, count), "pccl_algo_list");
  return names;
}

/* ---- running the collectives -------------------------------------------- */

pccl_status_t run_pccl(const bench_t *b, const bench_case_t *c) {
  const void *send = b->dsend ? b->dsend : b->send;
  void *recv = b->drecv ? b->drecv : b->recv;
  size_t count = c->count;
  pccl_dtype_t dtype = b->opts.dtype;
  pccl_op_t op = b->opts.op;
  int root = b->opts.root;
  switch (c->coll) {
  case PCCL_COLL_ALLGATHER: return pccl_allgather(send, recv, count, dtype, b->comm);
  case PCCL_COLL_REDUCE_SCATTER:
    return pccl_reduce_scatter(send, recv, count, dtype, op, b->comm);
  case PCCL_COLL_ALLREDUCE: return pccl_allreduce(send, recv, count, dtype, op, b->comm);
  /* in place on host buffers, as MPI_Bcast (and the drop-in) runs it: an
   * out-of-place call would add a copy at the root that MPI never makes */
  case PCCL_COLL_BROADCAST:
    return pccl_broadcast(b->dsend ? send : recv, recv, count, dtype, root, b->comm);
  case PCCL_COLL_REDUCE: return pccl_reduce(send, recv, count, dtype, op, root, b->comm);
  case PCCL_COLL_SCATTER: return pccl_scatter(send, recv, count, dtype, root, b->comm);
  case PCCL_COLL_GATHER: return pccl_gather(send, recv, count, dtype, root, b->comm);
  case PCCL_COLL_SCAN: return pccl_scan(send, recv, count, dtype, op, b->comm);
  case PCCL_COLL_EXSCAN: return pccl_exscan(send, recv, count, dtype, op, b->comm);
  case PCCL_COLL_ALLGATHERV: return pccl_allgatherv(send, recv, c->vcounts, NULL, dtype, b->comm);
  case PCCL_COLL_REDUCE_SCATTERV:
    return pccl_reduce_scatterv(send, recv, c->vcounts, dtype, op, b->comm);
  case PCCL_COLL_GATHERV:
    return pccl_gatherv(send, c->vcounts[b->rank], recv, c->vcounts, NULL, dtype, root, b->comm);
  case PCCL_COLL_SCATTERV:
    return pccl_scatterv(send, c->vcounts, NULL, recv, c->vcounts[b->rank], dtype, root, b->comm);
  case PCCL_COLL_ALLTOALLV:
    return pccl_alltoallv(send, c->sendcounts, NULL, recv, c->recvcounts, NULL, dtype, b->comm);
  default: return pccl_alltoall(send, recv, count, dtype, b->comm); /* alltoall */
  }
}

/* MPI_COMM_WORLD keeps MPI's default handler: MPI errors abort the job. */
void run_mpi(const bench_t *b, const bench_case_t *c) {
  void *send = b->msend, *recv = b->mrecv;
  int count = (int)c->count;
  MPI_Datatype type = mpi_datatype(b->opts.dtype, is_reduction(c->coll));
  MPI_Op op = mpi_op(b->opts.op);
  int root = b->opts.root;
  MPI_Comm world = MPI_COMM_WORLD;
  switch (c->coll) {
  case PCCL_COLL_ALLGATHER: MPI_Allgather(send, count, type, recv, count, type, world); break;
  case PCCL_COLL_REDUCE_SCATTER:
    MPI_Reduce_scatter_block(send, recv, count, type, op, world);
    break;
  case PCCL_COLL_ALLREDUCE: MPI_Allreduce(send, recv, count, type, op, world); break;
  case PCCL_COLL_BROADCAST:
    MPI_Bcast(b->rank == root ? send : recv, count, type, root, world);
    break;
  case PCCL_COLL_REDUCE: MPI_Reduce(send, recv, count, type, op, root, world); break;
  case PCCL_COLL_SCATTER:
    MPI_Scatter(send, count, type, recv, count, type, root, world);
    break;
  case PCCL_COLL_GATHER: MPI_Gather(send, count, type, recv, count, type, root, world); break;
  case PCCL_COLL_SCAN: MPI_Scan(send, recv, count, type, op, world); break;
  case PCCL_COLL_EXSCAN: MPI_Exscan(send, recv, count, type, op, world); break;
  case PCCL_COLL_ALLGATHERV:
    MPI_Allgatherv(send, c->mcounts[b->rank], type, recv, c->mcounts, c->mdispls, type, world);
    break;
  case PCCL_COLL_REDUCE_SCATTERV: MPI_Reduce_scatter(send, recv, c->mcounts, type, op, world); break;
  case PCCL_COLL_GATHERV:
    MPI_Gatherv(send, c->mcounts[b->rank], type, recv, c->mcounts, c->mdispls, type, root, world);
    break;
  case PCCL_COLL_SCATTERV:
    MPI_Scatterv(send, c->mcounts, c->mdispls, type, recv, c->mcounts[b->rank], type, root, world);
    break;
  case PCCL_COLL_ALLTOALLV:
    MPI_Alltoallv(send, c->msendcounts, c->msdispls, type, recv, c->mrecvcounts, c->mrdispls, type,
                  world);
    break;
  default: MPI_Alltoall(send, count, type, recv, count, type, world); break; /* alltoall */
  }
}

/* Whether MPI can run the same call: n/a for float16/bfloat16 reductions,
 * avg, and counts beyond an int. */
bool mpi_available(const bench_t *b, const bench_case_t *c) {
  if (!b->opts.with_mpi || c->count > INT_MAX / 2 || (size_t)b->nranks * c->count > INT_MAX) return false;
  if (!is_reduction(c->coll)) return true;
  return mpi_datatype(b->opts.dtype, true) != MPI_DATATYPE_NULL &&
         mpi_op(b->opts.op) != MPI_OP_NULL;
}
