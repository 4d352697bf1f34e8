/* fortran.c - the Fortran entry points (mpif.h and `use mpi`) of the
 * collectives pccl runs. Open MPI's own Fortran wrappers call PMPI_* directly, so
 * without these a Fortran program would never reach pccl. Each name is
 * defined in the four usual manglings; handles come through MPI_*_f2c and
 * Fortran's MPI_IN_PLACE / MPI_BOTTOM (addresses of common blocks, whose
 * symbols the MPI library exports) become C's. With MPICH, whose Fortran
 * wrappers reach the C entry points, they pass through (F_ONE). The mpi_f08
 * module calls other entry points and is not intercepted (docs/mpi-dropin.md). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#include "interpose.h"

static pthread_once_t sentinels_once = PTHREAD_ONCE_INIT;
static void *in_place[4], *bottom[4];

static void find_sentinels(void) {
  static const char *const in_place_names[4] = {"mpi_fortran_in_place_", "mpi_fortran_in_place",
                                                "mpi_fortran_in_place__", "MPI_FORTRAN_IN_PLACE"};
  static const char *const bottom_names[4] = {"mpi_fortran_bottom_", "mpi_fortran_bottom",
                                              "mpi_fortran_bottom__", "MPI_FORTRAN_BOTTOM"};
  for (int i = 0; i < 4; i++) {
    in_place[i] = dlsym(RTLD_DEFAULT, in_place_names[i]);
    bottom[i] = dlsym(RTLD_DEFAULT, bottom_names[i]);
  }
}

/* A Fortran buffer argument as C sees it. */
static void *f_buf(void *p) {
  pthread_once(&sentinels_once, find_sentinels);
  for (int i = 0; i < 4; i++) {
    if (p && p == in_place[i]) return MPI_IN_PLACE;
    if (p && p == bottom[i]) return MPI_BOTTOM;
  }
  return p;
}

#define F_TYPE(t) PMPI_Type_f2c(*(t))
#define F_COMM(c) PMPI_Comm_f2c(*(c))

static void allreduce_f(void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *op, MPI_Fint *comm,
                        MPI_Fint *ierr) {
  *ierr = MPI_Allreduce(f_buf(s), f_buf(r), *n, F_TYPE(t), PMPI_Op_f2c(*op), F_COMM(comm));
}

static void scan_f(void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *op, MPI_Fint *comm,
                   MPI_Fint *ierr) {
  *ierr = MPI_Scan(f_buf(s), f_buf(r), *n, F_TYPE(t), PMPI_Op_f2c(*op), F_COMM(comm));
}

static void exscan_f(void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *op, MPI_Fint *comm,
                     MPI_Fint *ierr) {
  *ierr = MPI_Exscan(f_buf(s), f_buf(r), *n, F_TYPE(t), PMPI_Op_f2c(*op), F_COMM(comm));
}

static void reduce_f(void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *op, MPI_Fint *root,
                     MPI_Fint *comm, MPI_Fint *ierr) {
  *ierr = MPI_Reduce(f_buf(s), f_buf(r), *n, F_TYPE(t), PMPI_Op_f2c(*op), *root, F_COMM(comm));
}

static void reduce_scatter_block_f(void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *op,
                                   MPI_Fint *comm, MPI_Fint *ierr) {
  *ierr = MPI_Reduce_scatter_block(f_buf(s), f_buf(r), *n, F_TYPE(t), PMPI_Op_f2c(*op),
                                   F_COMM(comm));
}

/* The Fortran integer arrays a[0..k-1], one entry per rank of c (*size),
 * as C's, one after the other in one block to free; a NULL array (not
 * significant on this rank, where a program may pass anything) becomes
 * zeros. NULL after raising MPI_ERR_NO_MEM. */
static int *f_ints(MPI_Comm c, int k, MPI_Fint *const a[], int *size, MPI_Fint *ierr) {
  if (PMPI_Comm_size(c, size) != MPI_SUCCESS) *size = 0;
  int *v = calloc((size_t)k * (size_t)(*size > 0 ? *size : 1), sizeof(int));
  if (!v) {
    *ierr = MPI_ERR_NO_MEM;
    PMPI_Comm_call_errhandler(c, MPI_ERR_NO_MEM);
    return NULL;
  }
  for (int j = 0; j < k; j++)
    for (int i = 0; a[j] && i < *size; i++) v[j * *size + i] = (int)a[j][i];
  return v;
}

static int f_rank(MPI_Comm c) {
  int rank = -1;
  if (PMPI_Comm_rank(c, &rank) != MPI_SUCCESS) rank = -1;
  return rank;
}

static void reduce_scatter_f(void *s, void *r, MPI_Fint *counts, MPI_Fint *t, MPI_Fint *op,
                             MPI_Fint *comm, MPI_Fint *ierr) {
  MPI_Comm c = F_COMM(comm);
  int size = 0, *v = f_ints(c, 1, (MPI_Fint *[]){counts}, &size, ierr);
  if (!v) return;
  *ierr = MPI_Reduce_scatter(f_buf(s), f_buf(r), v, F_TYPE(t), PMPI_Op_f2c(*op), c);
  free(v);
}

/* MPI_ALLGATHERV, MPI_GATHERV, MPI_SCATTERV and MPI_ALLTOALLV: the counts
 * and displacements, Fortran integers, as C's (a rooted call's at the root
 * only, an in-place all-to-allv's receive side only). */
static void allgatherv_f(void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *counts,
                         MPI_Fint *displs, MPI_Fint *rt, MPI_Fint *comm, MPI_Fint *ierr) {
  MPI_Comm c = F_COMM(comm);
  int size = 0, *v = f_ints(c, 2, (MPI_Fint *[]){counts, displs}, &size, ierr);
  if (!v) return;
  *ierr = MPI_Allgatherv(f_buf(s), *sn, F_TYPE(st), f_buf(r), v, v + size, F_TYPE(rt), c);
  free(v);
}

static void gatherv_f(void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *counts,
                      MPI_Fint *displs, MPI_Fint *rt, MPI_Fint *root, MPI_Fint *comm,
                      MPI_Fint *ierr) {
  MPI_Comm c = F_COMM(comm);
  int at_root = f_rank(c) == *root, size = 0;
  int *v = f_ints(c, 2, (MPI_Fint *[]){at_root ? counts : NULL, at_root ? displs : NULL}, &size,
                  ierr);
  if (!v) return;
  *ierr = MPI_Gatherv(f_buf(s), *sn, F_TYPE(st), f_buf(r), v, v + size, F_TYPE(rt), *root, c);
  free(v);
}

static void scatterv_f(void *s, MPI_Fint *counts, MPI_Fint *displs, MPI_Fint *st, void *r,
                       MPI_Fint *rn, MPI_Fint *rt, MPI_Fint *root, MPI_Fint *comm,
                       MPI_Fint *ierr) {
  MPI_Comm c = F_COMM(comm);
  int at_root = f_rank(c) == *root, size = 0;
  int *v = f_ints(c, 2, (MPI_Fint *[]){at_root ? counts : NULL, at_root ? displs : NULL}, &size,
                  ierr);
  if (!v) return;
  *ierr = MPI_Scatterv(f_buf(s), v, v + size, F_TYPE(st), f_buf(r), *rn, F_TYPE(rt), *root, c);
  free(v);
}

static void alltoallv_f(void *s, MPI_Fint *sc, MPI_Fint *sd, MPI_Fint *st, void *r, MPI_Fint *rc,
                        MPI_Fint *rd, MPI_Fint *rt, MPI_Fint *comm, MPI_Fint *ierr) {
  MPI_Comm c = F_COMM(comm);
  void *send = f_buf(s);
  int inplace = send == MPI_IN_PLACE, size = 0;
  int *v = f_ints(c, 4, (MPI_Fint *[]){inplace ? NULL : sc, inplace ? NULL : sd, rc, rd}, &size,
                  ierr);
  if (!v) return;
  *ierr = MPI_Alltoallv(send, v, v + size, F_TYPE(st), f_buf(r), v + 2 * size, v + 3 * size,
                        F_TYPE(rt), c);
  free(v);
}

static void bcast_f(void *b, MPI_Fint *n, MPI_Fint *t, MPI_Fint *root, MPI_Fint *comm,
                    MPI_Fint *ierr) {
  *ierr = MPI_Bcast(f_buf(b), *n, F_TYPE(t), *root, F_COMM(comm));
}

static void allgather_f(void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *rn, MPI_Fint *rt,
                        MPI_Fint *comm, MPI_Fint *ierr) {
  *ierr = MPI_Allgather(f_buf(s), *sn, F_TYPE(st), f_buf(r), *rn, F_TYPE(rt), F_COMM(comm));
}

static void alltoall_f(void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *rn, MPI_Fint *rt,
                       MPI_Fint *comm, MPI_Fint *ierr) {
  *ierr = MPI_Alltoall(f_buf(s), *sn, F_TYPE(st), f_buf(r), *rn, F_TYPE(rt), F_COMM(comm));
}

static void barrier_f(MPI_Fint *comm, MPI_Fint *ierr) { *ierr = MPI_Barrier(F_COMM(comm)); }

static void scatter_f(void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *rn, MPI_Fint *rt,
                      MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr) {
  *ierr = MPI_Scatter(f_buf(s), *sn, F_TYPE(st), f_buf(r), *rn, F_TYPE(rt), *root, F_COMM(comm));
}

static void gather_f(void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *rn, MPI_Fint *rt,
                     MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr) {
  *ierr = MPI_Gather(f_buf(s), *sn, F_TYPE(st), f_buf(r), *rn, F_TYPE(rt), *root, F_COMM(comm));
}

/* MPICH's Fortran wrappers call the C MPI_ functions, which the drop-in
 * takes already, and it exports none of Open MPI's sentinels: there, each
 * Fortran name goes on to the MPI's own definition (the next in link order),
 * which converts its arguments itself. */
static int fortran_reaches_c(void) {
  pthread_once(&sentinels_once, find_sentinels);
  for (int i = 0; i < 4; i++)
    if (in_place[i]) return 0;
  return 1;
}

/* One mangling of a Fortran name: `impl`, or the MPI's own where it ends in C. */
#define F_ONE(name, impl, PARAMS, ARGS)                                \
  PCCL_IP_API void name PARAMS {                                       \
    static void(*next) PARAMS;                                         \
    if (fortran_reaches_c()) {                                         \
      if (!next) *(void **)(&next) = dlsym(RTLD_NEXT, #name);          \
      if (next) {                                                      \
        next ARGS;                                                     \
        return;                                                        \
      }                                                                \
    }                                                                  \
    impl ARGS;                                                         \
  }
/* The four manglings of one Fortran name. */
#define F_ENTRY(UPPER, lower, impl, PARAMS, ARGS) \
  F_ONE(UPPER, impl, PARAMS, ARGS)                \
  F_ONE(lower, impl, PARAMS, ARGS)                \
  F_ONE(lower##_, impl, PARAMS, ARGS)             \
  F_ONE(lower##__, impl, PARAMS, ARGS)

#define P_REDUCE (void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *op, MPI_Fint *c, MPI_Fint *e)
#define A_REDUCE (s, r, n, t, op, c, e)
#define P_MOVE                                                                             \
  (void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *rn, MPI_Fint *rt, MPI_Fint *c, \
   MPI_Fint *e)
#define A_MOVE (s, sn, st, r, rn, rt, c, e)
#define P_ROOTED                                                                           \
  (void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *rn, MPI_Fint *rt, MPI_Fint *root, \
   MPI_Fint *c, MPI_Fint *e)
#define A_ROOTED (s, sn, st, r, rn, rt, root, c, e)

F_ENTRY(MPI_ALLREDUCE, mpi_allreduce, allreduce_f, P_REDUCE, A_REDUCE)
F_ENTRY(MPI_SCAN, mpi_scan, scan_f, P_REDUCE, A_REDUCE)
F_ENTRY(MPI_EXSCAN, mpi_exscan, exscan_f, P_REDUCE, A_REDUCE)
F_ENTRY(MPI_REDUCE_SCATTER_BLOCK, mpi_reduce_scatter_block, reduce_scatter_block_f, P_REDUCE,
        A_REDUCE)
F_ENTRY(MPI_REDUCE_SCATTER, mpi_reduce_scatter, reduce_scatter_f, P_REDUCE, A_REDUCE)
F_ENTRY(MPI_REDUCE, mpi_reduce, reduce_f,
        (void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *op, MPI_Fint *root, MPI_Fint *c,
         MPI_Fint *e),
        (s, r, n, t, op, root, c, e))
F_ENTRY(MPI_BCAST, mpi_bcast, bcast_f,
        (void *b, MPI_Fint *n, MPI_Fint *t, MPI_Fint *root, MPI_Fint *c, MPI_Fint *e),
        (b, n, t, root, c, e))
F_ENTRY(MPI_ALLGATHER, mpi_allgather, allgather_f, P_MOVE, A_MOVE)
F_ENTRY(MPI_ALLTOALL, mpi_alltoall, alltoall_f, P_MOVE, A_MOVE)
F_ENTRY(MPI_ALLGATHERV, mpi_allgatherv, allgatherv_f,
        (void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *rn, MPI_Fint *rd, MPI_Fint *rt,
         MPI_Fint *c, MPI_Fint *e),
        (s, sn, st, r, rn, rd, rt, c, e))
F_ENTRY(MPI_SCATTER, mpi_scatter, scatter_f, P_ROOTED, A_ROOTED)
F_ENTRY(MPI_GATHER, mpi_gather, gather_f, P_ROOTED, A_ROOTED)
F_ENTRY(MPI_GATHERV, mpi_gatherv, gatherv_f,
        (void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *rn, MPI_Fint *rd, MPI_Fint *rt,
         MPI_Fint *root, MPI_Fint *c, MPI_Fint *e),
        (s, sn, st, r, rn, rd, rt, root, c, e))
F_ENTRY(MPI_SCATTERV, mpi_scatterv, scatterv_f,
        (void *s, MPI_Fint *sn, MPI_Fint *sd, MPI_Fint *st, void *r, MPI_Fint *rn, MPI_Fint *rt,
         MPI_Fint *root, MPI_Fint *c, MPI_Fint *e),
        (s, sn, sd, st, r, rn, rt, root, c, e))
F_ENTRY(MPI_ALLTOALLV, mpi_alltoallv, alltoallv_f,
        (void *s, MPI_Fint *sn, MPI_Fint *sd, MPI_Fint *st, void *r, MPI_Fint *rn, MPI_Fint *rd,
         MPI_Fint *rt, MPI_Fint *c, MPI_Fint *e),
        (s, sn, sd, st, r, rn, rd, rt, c, e))
F_ENTRY(MPI_BARRIER, mpi_barrier, barrier_f, (MPI_Fint * c, MPI_Fint *e), (c, e))
