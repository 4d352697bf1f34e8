/* fortran.h - what the drop-in's Fortran entry points share (fortran.c:
 * the blocking collectives; fortran_nb.c: the non-blocking ones, the calls
 * that complete them and the blocking point-to-point calls): handle and
 * sentinel conversion, and the macros that define one Fortran name in its
 * four manglings and as Open MPI's wrapper, which its mpi_f08 module calls. */
#ifndef PCCL_FORTRAN_H
#define PCCL_FORTRAN_H

#include <dlfcn.h>

#include "interpose.h"

/* A Fortran buffer argument as C sees it: Fortran's MPI_IN_PLACE and
 * MPI_BOTTOM (Open MPI's common blocks) become C's. */
void *pccl_ip_f_buf(void *p);
/* Whether a Fortran status (array) argument is MPI_STATUS_IGNORE
 * (MPI_STATUSES_IGNORE). */
int pccl_ip_f_status_ignored(const void *status);
int pccl_ip_f_statuses_ignored(const void *statuses);
/* The MPI's Fortran wrappers call the C MPI_ functions (MPICH): the
 * Fortran names then go on to the MPI's own. */
int pccl_ip_f_reaches_c(void);

#define F_BUF(p) pccl_ip_f_buf(p)
#define F_TYPE(t) PMPI_Type_f2c(*(t))
#define F_COMM(c) PMPI_Comm_f2c(*(c))

/* One mangling of a Fortran name: `impl`, or the MPI's own where the
 * Fortran calls end in C anyway or where `ours` is false. */
#define F_ONE_IF(name, impl, ours, PARAMS, ARGS)                       \
  PCCL_IP_API void name PARAMS {                                       \
    static void(*next) PARAMS;                                         \
    if (pccl_ip_f_reaches_c() || !(ours)) {                            \
      if (!next) *(void **)(&next) = dlsym(RTLD_NEXT, #name);          \
      if (next) {                                                      \
        next ARGS;                                                     \
        return;                                                        \
      }                                                                \
    }                                                                  \
    impl ARGS;                                                         \
  }
/* Open MPI's mpi_f08 module calls the wrappers behind its Fortran names
 * (ompi_allreduce_f for MPI_ALLREDUCE's), one library over, so these names
 * are taken too: else an mpi_f08 program would reach MPI unintercepted. */
#ifdef OPEN_MPI
#define F_OMPI_IF(name, impl, ours, PARAMS, ARGS) \
  F_ONE_IF(ompi_##name##_f, impl, ours, PARAMS, ARGS)
#else
#define F_OMPI_IF(name, impl, ours, PARAMS, ARGS)
#endif

/* One Fortran name, MPI_<UPPER>, in its four manglings (and Open MPI's
 * wrapper): `name` is the lower-case part after mpi_. */
#define F_ENTRY_IF(UPPER, name, impl, ours, PARAMS, ARGS) \
  F_ONE_IF(UPPER, impl, ours, PARAMS, ARGS)               \
  F_ONE_IF(mpi_##name, impl, ours, PARAMS, ARGS)          \
  F_ONE_IF(mpi_##name##_, impl, ours, PARAMS, ARGS)       \
  F_ONE_IF(mpi_##name##__, impl, ours, PARAMS, ARGS)      \
  F_OMPI_IF(name, impl, ours, PARAMS, ARGS)
#define F_ENTRY(UPPER, name, impl, PARAMS, ARGS) F_ENTRY_IF(UPPER, name, impl, 1, PARAMS, ARGS)

#endif /* PCCL_FORTRAN_H */
