/* interpose.h - internals of libpccl_mpi.so, the PMPI interposer that lets
 * unmodified MPI programs run their collectives on pccl (docs/mpi-dropin.md).
 *
 * Every intercepted call goes one of three ways: pccl runs it, it goes to
 * the PMPI_* function unchanged (the fallback), or it fails through the
 * communicator's MPI error handler. The way is chosen only from what MPI
 * makes every rank of the communicator agree on (the communicator, the op,
 * a reduction's datatype, the counts of a reduce-scatter), never from what
 * one rank alone sees (its buffers' addresses, a movement collective's
 * datatype), so all ranks take the same way and none waits for a peer that
 * went the other. What only one rank sees is handled on that rank by
 * copying: misaligned buffers into aligned ones, non-contiguous datatypes
 * packed into bytes. */
#ifndef PCCL_INTERPOSE_H
#define PCCL_INTERPOSE_H

#include <mpi.h>
#include <stddef.h>

#include "pccl.h"
#include "pccl_mpi.h"

#define PCCL_IP_API __attribute__((visibility("default")))
/* Room for an error's message kept until the program completes a request. */
#define PCCL_IP_WHY_LEN 512

/* The collectives the interposer defines, each with its non-blocking form:
 * the blocking call's id plus PCCL_IP_NBLOCKING is the other's. */
#define PCCL_IP_CALL_MAP(X)                                                         \
  X(ALLGATHER, "MPI_Allgather", "MPI_Iallgather")                                   \
  X(ALLREDUCE, "MPI_Allreduce", "MPI_Iallreduce")                                   \
  X(REDUCE_SCATTER_BLOCK, "MPI_Reduce_scatter_block", "MPI_Ireduce_scatter_block")  \
  X(REDUCE_SCATTER, "MPI_Reduce_scatter", "MPI_Ireduce_scatter")                    \
  X(BCAST, "MPI_Bcast", "MPI_Ibcast")                                               \
  X(REDUCE, "MPI_Reduce", "MPI_Ireduce")                                            \
  X(SCATTER, "MPI_Scatter", "MPI_Iscatter")                                         \
  X(GATHER, "MPI_Gather", "MPI_Igather")                                            \
  X(ALLTOALL, "MPI_Alltoall", "MPI_Ialltoall")                                      \
  X(BARRIER, "MPI_Barrier", "MPI_Ibarrier")                                         \
  X(SCAN, "MPI_Scan", "MPI_Iscan")                                                  \
  X(EXSCAN, "MPI_Exscan", "MPI_Iexscan")                                            \
  X(ALLGATHERV, "MPI_Allgatherv", "MPI_Iallgatherv")                                \
  X(GATHERV, "MPI_Gatherv", "MPI_Igatherv")                                         \
  X(SCATTERV, "MPI_Scatterv", "MPI_Iscatterv")                                      \
  X(ALLTOALLV, "MPI_Alltoallv", "MPI_Ialltoallv")

typedef enum {
#define PCCL_IP_CALL_ENUM(id, name, iname) PCCL_IP_##id,
  PCCL_IP_CALL_MAP(PCCL_IP_CALL_ENUM)
#undef PCCL_IP_CALL_ENUM
  PCCL_IP_NBLOCKING,
  PCCL_IP_NCALLS = 2 * PCCL_IP_NBLOCKING
} pccl_ip_call_id_t;

/* Why a call went where it went; the stats print one count per reason.
 * TAKEN and COPIED are pccl's, the rest are fallbacks. */
#define PCCL_IP_REASON_MAP(X)                                                            \
  X(TAKEN, "pccl", "run by pccl")                                                        \
  X(COPIED, "copied", "run by pccl through a copy (misaligned buffer, derived datatype)") \
  X(OFF, "off", "PCCL_MPI=off")                                                          \
  X(INVALID, "invalid", "arguments left to MPI to check (null handle, negative count)")  \
  X(INTERCOMM, "intercomm", "inter-communicator")                                        \
  X(DATATYPE, "datatype", "a reduction on a datatype pccl has not (derived, long double, complex, ...)") \
  X(OP, "op", "an op pccl has not (user-defined, MPI_REPLACE, MPI_NO_OP)")               \
  X(UNDEFINED, "undefined", "an op MPI does not define on the datatype (left to MPI to answer)") \
  X(SMALL, "small", "a non-blocking call below PCCL_MPI_NB_MIN bytes that pccl would not run on the node's segment, or one whose size the ranks do not share (MPI_Igatherv, MPI_Iscatterv, MPI_Ialltoallv) while it is not 0") \
  X(FRESH, "fresh", "a non-blocking call on a communicator no blocking collective has brought to pccl yet (bringing it is collective, and would wait for the peers where MPI's call returns)")

typedef enum {
#define PCCL_IP_REASON_ENUM(id, key, text) PCCL_IP_##id,
  PCCL_IP_REASON_MAP(PCCL_IP_REASON_ENUM)
#undef PCCL_IP_REASON_ENUM
  PCCL_IP_NREASONS
} pccl_ip_reason_t;

/* One intercepted call on its way. */
typedef struct {
  pccl_ip_call_id_t id;
  MPI_Comm comm;
  pccl_comm_t *pc; /* the communicator's pccl twin, once pccl_ip_start said RUN */
  void *entry;     /* the interposer's record of the communicator (setup.c) */
  int rank, size;
  int copied;      /* a buffer went through a copy */
  int rc;          /* the MPI error to return when pccl_ip_start failed it */
  unsigned gen;    /* communicators deleted before pccl_ip_start took it (setup.c) */
} pccl_ip_call_t;

/* ---- setup.c: the way a call takes, communicators, errors ---- */

/* Decides the way of a call. `reason` is the call's own reason to fall back
 * (PCCL_IP_TAKEN when it has none). Returns 1 when pccl runs it: call->pc,
 * rank and size are set, and the caller is inside pccl until it calls
 * pccl_ip_finish. Returns 0 otherwise: with call->rc an MPI error (already
 * through the error handler) to return, or MPI_SUCCESS to call PMPI. */
int pccl_ip_start(pccl_ip_call_t *call, pccl_ip_call_id_t id, MPI_Comm comm,
                  pccl_ip_reason_t reason);

/* pccl_ip_start for a call pccl may take only on a communicator it has
 * attached already (in MPI_Init, or by an earlier blocking collective:
 * alike on every rank, which make their collectives in the same order): on
 * another, the call goes to MPI for `reason` without attaching it, which
 * would wait for the peers. */
int pccl_ip_start_attached(pccl_ip_call_t *call, pccl_ip_call_id_t id, MPI_Comm comm,
                           pccl_ip_reason_t reason);

/* nonblocking.c: moves pccl's outstanding non-blocking calls until those
 * on `comm` have finished (their requests complete in MPI's eyes); at
 * once when none is outstanding. */
void pccl_ip_drain(MPI_Comm comm);

/* Leaves to MPI, for `reason`, a call pccl_ip_start took (before anything
 * of it moved): the caller is outside pccl again and calls PMPI. */
void pccl_ip_decline(pccl_ip_call_t *call, pccl_ip_reason_t reason);

/* For the repeat of a call pccl_ip_start took (`call` as it made it, kept
 * by collectives.c): 1 when pccl still runs it, no communicator having been
 * deleted since and MPI not finalising; the caller is then inside pccl
 * until pccl_ip_finish, as after pccl_ip_start. */
int pccl_ip_again(const pccl_ip_call_t *call);

/* Ends a RUN: counts it, and turns a pccl error into an MPI one through the
 * communicator's error handler. `mpi_rc` is an MPI error the interposer met
 * itself (MPI_SUCCESS if none); `what` names it. Returns the MPI code. */
int pccl_ip_finish(pccl_ip_call_t *call, pccl_status_t st, int mpi_rc, const char *what);

/* The two halves of pccl_ip_finish, for a non-blocking call that pccl has
 * taken: pccl_ip_issued when it has been issued (counts it, leaves pccl,
 * and keeps the communicator's pccl twin alive until pccl_ip_unhold);
 * pccl_ip_outcome when pccl has finished it: the MPI error class of the
 * outcome (MPI_SUCCESS) with its message in why[len], raised later by
 * pccl_ip_raise when the program completes the request. */
void pccl_ip_issued(pccl_ip_call_t *call);
int pccl_ip_outcome(const pccl_ip_call_t *call, pccl_status_t st, int mpi_rc, const char *what,
                    char *why, size_t len);
void pccl_ip_unhold(void *entry);
/* A non-blocking call that pccl finished while it was being issued: counts
 * it, leaves pccl, and raises `cls` (unless MPI_SUCCESS) with `why`;
 * returns the code. */
int pccl_ip_ended(pccl_ip_call_t *call, int cls, const char *why);
/* Raises an error of class `cls` on `comm` through its error handler;
 * returns the code. */
int pccl_ip_raise(MPI_Comm comm, int cls, const char *msg);

/* Whether a non-blocking call of `bytes` (alike on every rank; SIZE_MAX
 * for a call whose size the ranks do not share) is left to MPI because of
 * PCCL_MPI_NB_MIN. */
int pccl_ip_nb_small(size_t bytes);

/* Whether this thread is inside pccl, whose own MPI calls go straight to
 * MPI; pccl_ip_enter and pccl_ip_exit bracket a call into pccl made from
 * outside a collective (the completion calls progressing requests). */
int pccl_ip_inside(void);
void pccl_ip_enter(void);
void pccl_ip_exit(void);
/* The progress thread is inside pccl for good, without passing the gate:
 * the MPI calls pccl makes from it (under MPI_THREAD_MULTIPLE) go straight
 * to MPI. */
void pccl_ip_inside_for_good(void);

/* ---- progress.c: the progress thread ---- */

/* PCCL_MPI_PROGRESS: how long, in microseconds, the program may stay away
 * from pccl with a non-blocking call outstanding before the thread moves
 * it; 0: no thread. */
extern long pccl_ip_progress_us;
/* A program thread enters pccl (its depth goes from 0 to 1), or leaves it:
 * the gate the thread and the program pass one at a time. */
void pccl_ip_gate_enter(void);
void pccl_ip_gate_leave(void);
/* Under MPI_THREAD_MULTIPLE: every entry is counted from the start. */
void pccl_ip_gate_count_all(void);
/* A generalized request was handed out: the thread starts, once. */
void pccl_ip_progress_start(void);
/* MPI_Finalize: the thread ends. */
void pccl_ip_progress_stop(void);

/* ---- nonblocking.c: pccl's requests behind MPI requests ---- */

/* The progress thread's poll: moves along every outstanding call that
 * pccl_comm_progress takes; returns whether one of them is unfinished. */
int pccl_ip_nudge(void);
/* Whether a generalized request is outstanding. */
int pccl_ip_pending(void);

/* Finishes a non-blocking call once pccl has: writes its copies back, frees
 * what it held, and returns the outcome as pccl_ip_outcome does. */
typedef int pccl_ip_done_fn(void *arg, pccl_status_t st, char *why, size_t len);

/* Hands an issued call to the completion calls: *request becomes a
 * generalized MPI request that completes once pccl's request `pr` has and
 * `done(arg, ...)` has run; or, when pccl has finished the call already,
 * `done` runs now and *request is one MPI made complete (a failure is then
 * raised here). Returns an MPI code; when no request can be made the call
 * is waited for and finished here (the program still gets the error). */
int pccl_ip_post(pccl_ip_call_t *call, pccl_request_t *pr, pccl_ip_done_fn *done, void *arg,
                 MPI_Request *request);

/* ---- stats.c ---- */
void pccl_ip_count(pccl_ip_call_id_t id, pccl_ip_reason_t reason);
/* Prints this rank's counts to stderr (PCCL_MPI_STATS). */
void pccl_ip_stats_print(int world_rank, int world_size);

/* ---- datatype.c: what pccl can reduce, and buffers seen as bytes ---- */

/* Whether pccl reduces dt with op: PCCL_IP_TAKEN with the pccl type and op
 * set, else why not (PCCL_IP_OP, PCCL_IP_DATATYPE, PCCL_IP_UNDEFINED). */
pccl_ip_reason_t pccl_ip_reduction(MPI_Datatype dt, MPI_Op op, pccl_dtype_t *pd, pccl_op_t *po);

/* `count` elements of `dt` at `user`, as one contiguous run of bytes at
 * `bytes`, aligned to `align`: the user's buffer itself when it already is
 * (a predefined datatype without holes, aligned), else a copy. */
typedef struct {
  char *bytes;
  size_t len;
  void *copy;       /* the copy, or NULL */
  void *user;
  size_t count;
  MPI_Datatype dt;
  int packed;       /* the copy is MPI_Pack's (derived datatype) rather than memcpy's */
} pccl_ip_buf_t;

/* Sets up `b`; with `load` the copy starts as the user's data; `reduced`:
 * for a reduction (a padded pair type's elements whole, at its extent;
 * else packed, to its size). Returns an MPI code; on error `b` holds
 * nothing to release. */
int pccl_ip_view(pccl_ip_buf_t *b, const void *user, size_t count, MPI_Datatype dt, size_t align,
                 int reduced, int load, MPI_Comm comm);
/* Writes a copy back to the user's buffer; returns an MPI code. */
int pccl_ip_store(pccl_ip_buf_t *b, MPI_Comm comm);
void pccl_ip_release(pccl_ip_buf_t *b);
/* Bytes of `count` elements of `dt`; 0 on an invalid datatype. */
size_t pccl_ip_bytes(size_t count, MPI_Datatype dt);
/* Whether elements of dt lie back to back as their bytes (a predefined
 * type without padding), so that counts and displacements scale to bytes. */
int pccl_ip_plain(MPI_Datatype dt);

#endif /* PCCL_INTERPOSE_H */
