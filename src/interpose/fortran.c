/* fortran.c - the Fortran entry points (mpif.h and `use mpi`) of the
 * blocking collectives pccl runs (the non-blocking ones, and the calls that
 * complete them, are in fortran_nb.c). Open MPI's own Fortran wrappers call
 * PMPI_* directly, so without these a Fortran program would never reach
 * pccl. Each name is defined in the four usual manglings; handles come
 * through MPI_*_f2c and Fortran's MPI_IN_PLACE / MPI_BOTTOM (addresses of
 * common blocks, whose symbols the MPI library exports) become C's. With
 * MPICH, whose Fortran wrappers reach the C entry points, they pass through
 * (F_ONE). Open MPI's mpi_f08 module reaches the same functions through
 * the names of Open MPI's wrappers (fortran.h, F_OMPI_IF). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#include "fortran.h"

static pthread_once_t sentinels_once = PTHREAD_ONCE_INIT;
static void *in_place[4], *bottom[4], *status_ignore[4], *statuses_ignore[4];

static void find_sentinels(void) {
  static const char *const names[4][4] = {
      {"mpi_fortran_in_place_", "mpi_fortran_in_place", "mpi_fortran_in_place__",
       "MPI_FORTRAN_IN_PLACE"},
      {"mpi_fortran_bottom_", "mpi_fortran_bottom", "mpi_fortran_bottom__", "MPI_FORTRAN_BOTTOM"},
      {"mpi_fortran_status_ignore_", "mpi_fortran_status_ignore", "mpi_fortran_status_ignore__",
       "MPI_FORTRAN_STATUS_IGNORE"},
      {"mpi_fortran_statuses_ignore_", "mpi_fortran_statuses_ignore",
       "mpi_fortran_statuses_ignore__", "MPI_FORTRAN_STATUSES_IGNORE"}};
  void **found[4] = {in_place, bottom, status_ignore, statuses_ignore};
  for (int k = 0; k < 4; k++)
    for (int i = 0; i < 4; i++) found[k][i] = dlsym(RTLD_DEFAULT, names[k][i]);
}

static int is_sentinel(void *const set[4], const void *p) {
  pthread_once(&sentinels_once, find_sentinels);
  for (int i = 0; i < 4; i++)
    if (p && p == set[i]) return 1;
  return 0;
}

void *pccl_ip_f_buf(void *p) {
  if (is_sentinel(in_place, p)) return MPI_IN_PLACE;
  if (is_sentinel(bottom, p)) return MPI_BOTTOM;
  return p;
}

int pccl_ip_f_status_ignored(const void *status) { return is_sentinel(status_ignore, status); }
int pccl_ip_f_statuses_ignored(const void *statuses) {
  return is_sentinel(statuses_ignore, statuses);
}

/* MPICH's Fortran wrappers call the C MPI_ functions, which the drop-in
 * takes already, and it exports none of Open MPI's sentinels: there, each
 * Fortran name goes on to the MPI's own definition (the next in link order),
 * which converts its arguments itself. */
int pccl_ip_f_reaches_c(void) {
  pthread_once(&sentinels_once, find_sentinels);
  for (int i = 0; i < 4; i++)
    if (in_place[i]) return 0;
  return 1;
}

static void allreduce_f(void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *op, MPI_Fint *comm,
                        MPI_Fint *ierr) {
  *ierr = MPI_Allreduce(F_BUF(s), F_BUF(r), *n, F_TYPE(t), PMPI_Op_f2c(*op), F_COMM(comm));
}

static void scan_f(void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *op, MPI_Fint *comm,
                   MPI_Fint *ierr) {
  *ierr = MPI_Scan(F_BUF(s), F_BUF(r), *n, F_TYPE(t), PMPI_Op_f2c(*op), F_COMM(comm));
}

static void exscan_f(void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *op, MPI_Fint *comm,
                     MPI_Fint *ierr) {
  *ierr = MPI_Exscan(F_BUF(s), F_BUF(r), *n, F_TYPE(t), PMPI_Op_f2c(*op), F_COMM(comm));
}

static void reduce_f(void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *op, MPI_Fint *root,
                     MPI_Fint *comm, MPI_Fint *ierr) {
  *ierr = MPI_Reduce(F_BUF(s), F_BUF(r), *n, F_TYPE(t), PMPI_Op_f2c(*op), *root, F_COMM(comm));
}

static void reduce_scatter_block_f(void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *op,
                                   MPI_Fint *comm, MPI_Fint *ierr) {
  *ierr = MPI_Reduce_scatter_block(F_BUF(s), F_BUF(r), *n, F_TYPE(t), PMPI_Op_f2c(*op),
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
  *ierr = MPI_Reduce_scatter(F_BUF(s), F_BUF(r), v, F_TYPE(t), PMPI_Op_f2c(*op), c);
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
  *ierr = MPI_Allgatherv(F_BUF(s), *sn, F_TYPE(st), F_BUF(r), v, v + size, F_TYPE(rt), c);
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
  *ierr = MPI_Gatherv(F_BUF(s), *sn, F_TYPE(st), F_BUF(r), v, v + size, F_TYPE(rt), *root, c);
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
  *ierr = MPI_Scatterv(F_BUF(s), v, v + size, F_TYPE(st), F_BUF(r), *rn, F_TYPE(rt), *root, c);
  free(v);
}

static void alltoallv_f(void *s, MPI_Fint *sc, MPI_Fint *sd, MPI_Fint *st, void *r, MPI_Fint *rc,
                        MPI_Fint *rd, MPI_Fint *rt, MPI_Fint *comm, MPI_Fint *ierr) {
  MPI_Comm c = F_COMM(comm);
  void *send = F_BUF(s);
  int inplace = send == MPI_IN_PLACE, size = 0;
  int *v = f_ints(c, 4, (MPI_Fint *[]){inplace ? NULL : sc, inplace ? NULL : sd, rc, rd}, &size,
                  ierr);
  if (!v) return;
  *ierr = MPI_Alltoallv(send, v, v + size, F_TYPE(st), F_BUF(r), v + 2 * size, v + 3 * size,
                        F_TYPE(rt), c);
  free(v);
}

static void bcast_f(void *b, MPI_Fint *n, MPI_Fint *t, MPI_Fint *root, MPI_Fint *comm,
                    MPI_Fint *ierr) {
  *ierr = MPI_Bcast(F_BUF(b), *n, F_TYPE(t), *root, F_COMM(comm));
}

static void allgather_f(void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *rn, MPI_Fint *rt,
                        MPI_Fint *comm, MPI_Fint *ierr) {
  *ierr = MPI_Allgather(F_BUF(s), *sn, F_TYPE(st), F_BUF(r), *rn, F_TYPE(rt), F_COMM(comm));
}

static void alltoall_f(void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *rn, MPI_Fint *rt,
                       MPI_Fint *comm, MPI_Fint *ierr) {
  *ierr = MPI_Alltoall(F_BUF(s), *sn, F_TYPE(st), F_BUF(r), *rn, F_TYPE(rt), F_COMM(comm));
}

static void barrier_f(MPI_Fint *comm, MPI_Fint *ierr) { *ierr = MPI_Barrier(F_COMM(comm)); }

static void scatter_f(void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *rn, MPI_Fint *rt,
                      MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr) {
  *ierr = MPI_Scatter(F_BUF(s), *sn, F_TYPE(st), F_BUF(r), *rn, F_TYPE(rt), *root, F_COMM(comm));
}

static void gather_f(void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *rn, MPI_Fint *rt,
                     MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr) {
  *ierr = MPI_Gather(F_BUF(s), *sn, F_TYPE(st), F_BUF(r), *rn, F_TYPE(rt), *root, F_COMM(comm));
}

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

/* MPI_INIT and MPI_INIT_THREAD: Open MPI's call PMPI_Init, past the C
 * MPI_Init that attaches MPI_COMM_WORLD (setup.c). Its Fortran MPI_INIT
 * passes no arguments on either. */
static void init_f(MPI_Fint *ierr) { *ierr = MPI_Init(NULL, NULL); }

static void init_thread_f(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr) {
  int got = MPI_THREAD_SINGLE;
  *ierr = MPI_Init_thread(NULL, NULL, (int)*required, &got);
  *provided = got;
}

F_ENTRY(MPI_INIT, init, init_f, (MPI_Fint * ierr), (ierr))
F_ENTRY(MPI_INIT_THREAD, init_thread, init_thread_f,
        (MPI_Fint * required, MPI_Fint * provided, MPI_Fint * ierr), (required, provided, ierr))
F_ENTRY(MPI_ALLREDUCE, allreduce, allreduce_f, P_REDUCE, A_REDUCE)
F_ENTRY(MPI_SCAN, scan, scan_f, P_REDUCE, A_REDUCE)
F_ENTRY(MPI_EXSCAN, exscan, exscan_f, P_REDUCE, A_REDUCE)
F_ENTRY(MPI_REDUCE_SCATTER_BLOCK, reduce_scatter_block, reduce_scatter_block_f, P_REDUCE,
        A_REDUCE)
F_ENTRY(MPI_REDUCE_SCATTER, reduce_scatter, reduce_scatter_f, P_REDUCE, A_REDUCE)
F_ENTRY(MPI_REDUCE, reduce, reduce_f,
        (void *s, void *r, MPI_Fint *n, MPI_Fint *t, MPI_Fint *op, MPI_Fint *root, MPI_Fint *c,
         MPI_Fint *e),
        (s, r, n, t, op, root, c, e))
F_ENTRY(MPI_BCAST, bcast, bcast_f,
        (void *b, MPI_Fint *n, MPI_Fint *t, MPI_Fint *root, MPI_Fint *c, MPI_Fint *e),
        (b, n, t, root, c, e))
F_ENTRY(MPI_ALLGATHER, allgather, allgather_f, P_MOVE, A_MOVE)
F_ENTRY(MPI_ALLTOALL, alltoall, alltoall_f, P_MOVE, A_MOVE)
F_ENTRY(MPI_ALLGATHERV, allgatherv, allgatherv_f,
        (void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *rn, MPI_Fint *rd, MPI_Fint *rt,
         MPI_Fint *c, MPI_Fint *e),
        (s, sn, st, r, rn, rd, rt, c, e))
F_ENTRY(MPI_SCATTER, scatter, scatter_f, P_ROOTED, A_ROOTED)
F_ENTRY(MPI_GATHER, gather, gather_f, P_ROOTED, A_ROOTED)
F_ENTRY(MPI_GATHERV, gatherv, gatherv_f,
        (void *s, MPI_Fint *sn, MPI_Fint *st, void *r, MPI_Fint *rn, MPI_Fint *rd, MPI_Fint *rt,
         MPI_Fint *root, MPI_Fint *c, MPI_Fint *e),
        (s, sn, st, r, rn, rd, rt, root, c, e))
F_ENTRY(MPI_SCATTERV, scatterv, scatterv_f,
        (void *s, MPI_Fint *sn, MPI_Fint *sd, MPI_Fint *st, void *r, MPI_Fint *rn, MPI_Fint *rt,
         MPI_Fint *root, MPI_Fint *c, MPI_Fint *e),
        (s, sn, sd, st, r, rn, rt, root, c, e))
F_ENTRY(MPI_ALLTOALLV, alltoallv, alltoallv_f,
        (void *s, MPI_Fint *sn, MPI_Fint *sd, MPI_Fint *st, void *r, MPI_Fint *rn, MPI_Fint *rd,
         MPI_Fint *rt, MPI_Fint *c, MPI_Fint *e),
        (s, sn, sd, st, r, rn, rd, rt, c, e))
F_ENTRY(MPI_BARRIER, barrier, barrier_f, (MPI_Fint * c, MPI_Fint *e), (c, e))
