/* call.h - one collective call as coll.c validates and runs it, and the
 * step-by-step form of running it that the non-blocking calls
 * (request.c) use. Private to the coll layer. */
#ifndef PCCL_CALL_H
#define PCCL_CALL_H

#include "agree.h"
#include "comm.h"
#include "exec.h"

typedef struct {
  pccl_coll_t coll;
  const char *api; /* the public call's name when it is not the collective's own */
  const void *sendbuf;
  void *recvbuf;
  size_t count;
  pccl_dtype_t dtype;
  pccl_op_t op;
  int root;
  pccl_lossy_t *lossy; /* a pccl_*_lossy call's options */
  int lossy_call;
  int piece; /* one piece of a streamed call (stream.c): runs as it is */
  int nonblocking; /* a pccl_i* call: never waits for another rank (no segment, no streaming) */
  int internal; /* pccl's own (an agreement): PCCL_ALGO's forcing is not for it */
  pccl_choice_t chosen; /* a non-blocking call's algorithm, chosen as it was issued */
  pccl_status_t refused; /* PCCL_CHECK's internal request: the call was refused when issued */
  int token; /* a barrier: the buffers are the communicator's one byte */
  /* the v-collectives' (the caller's arrays): the counts of the buffer that
   * holds every rank's block (the all-to-allv's receive side), and the
   * all-to-allv's send side */
  const size_t *counts, *displs;
  const size_t *scounts, *sdispls;
  /* derived by validation */
  /* v-collectives: boff (nranks + 1), then displs unless packed; the
   * all-to-allv's: scounts | sdispls | rcounts | rdispls */
  const size_t *blocks;
  size_t nblocks;
  size_t esize, send_elems, recv_elems;
  int use_send, use_recv, inplace;
  long long send_in_recv;
  int device; /* the buffers are device memory */
} pccl_call_t;

/* Where a call's schedule runs: scratch, transport and (for device
 * buffers) the executor's device settings. */
typedef struct {
  void *tmp;
  const pccl_transport_t *tp;
  void *tp_ctx;
  pccl_exec_device_t dev;
} pccl_placement_t;

/* A call run step by step. Its phases: PCCL_CHECK's agreement (with
 * PCCL_CHECK only), the ranks' vote on the largest scratch (large calls
 * only, as the blocking call's), then the call itself. */
typedef enum { PCCL_PHASE_CHECK, PCCL_PHASE_VOTE, PCCL_PHASE_MAIN, PCCL_PHASE_DONE } pccl_phase_t;

typedef struct {
  pccl_phase_t phase;
  pccl_exec_t x;
  pccl_placement_t where;
  const pccl_sched_t *sched; /* the one running */
  const pccl_sched_t *main;  /* the call's own */
  pccl_choice_t choice;      /* its algorithm */
  int on_seg;                /* the call runs on the node segment (seg), not a schedule */
  pccl_seg_op_t seg;
  /* the agreement or the vote: an all-reduce with MIN of aux[] */
  pccl_call_t aux_call;
  int64_t aux[PCCL_AGREE_NVALUES];
  pccl_call_t given;            /* the call as issued, validated again after the agreement */
  pccl_agree_t agree;           /* this rank's fields, for the agreement's message */
  pccl_status_t local;          /* this rank's own validation */
  char own[PCCL_ERROR_LEN];     /* and its message */
  double idle_since; /* when advancing last made no progress after some did (0: it did) */
} pccl_call_run_t;

/* Checks a call's arguments as the blocking call does, before anything
 * moves: the error a pccl_i* call returns at once. */
pccl_status_t pccl__call_validate(pccl_comm_t *comm, pccl_call_t *c);

/* Starts a validated non-blocking call (c->nonblocking) on `comm`, whose
 * earlier calls have all finished. r->phase is PCCL_PHASE_DONE when
 * nothing is left to move. On failure the communicator's error says why. */
pccl_status_t pccl__call_begin(pccl_comm_t *comm, pccl_call_t *c, pccl_call_run_t *r);

/* Moves a begun call along without waiting; PCCL_PHASE_DONE when it has
 * finished. Fails with PCCL_ERR_TIMEOUT when it made no progress for the
 * communicator's timeout (the communicator is then broken), as the
 * blocking call does. */
pccl_status_t pccl__call_advance(pccl_comm_t *comm, pccl_call_t *c, pccl_call_run_t *r);

/* Begins a validated non-blocking call that runs on the node segment while
 * an earlier one is still running there (pccl__call_settled): numbers its
 * first round and publishes this rank's part (pccl_seg_post); *begun says
 * whether it did (not without a segment, under PCCL_CHECK, or when the call
 * runs elsewhere), pccl__call_advance then taking it on in its turn. */
pccl_status_t pccl__call_prepost(pccl_comm_t *comm, pccl_call_t *c, pccl_call_run_t *r,
                                 int *begun);
/* Whether a begun call runs on the node segment and has numbered all its
 * rounds, so that the next call may begin behind it. */
int pccl__call_settled(const pccl_call_run_t *r);

/* Whether moving the issued non-blocking call c makes no MPI call, so that
 * a thread that must not call MPI may move it (pccl_comm_progress): on host
 * buffers, without compression or PCCL_CHECK (whose agreement's report
 * is not a non-blocking call's), a call on the node segment, or any call of
 * a communicator inside one node with shm up (a non-blocking call's
 * messages take shm at every size there, comm->route_nb). */
int pccl__call_without_mpi(const pccl_comm_t *comm, const pccl_call_t *c);

/* request.c: the non-blocking side */

/* Queues a validated call on comm behind its earlier non-blocking calls
 * and returns its request in *req. With req NULL (PCCL_CHECK, a call that
 * failed validation) the call takes part in the agreement only, so the
 * peers get PCCL_ERR_MISMATCH; nobody waits for it, and it frees itself. */
pccl_status_t pccl__request_post(pccl_comm_t *comm, const pccl_call_t *c, pccl_request_t **req);

/* Runs comm's outstanding non-blocking calls to their end, as a blocking
 * call on comm must first (collectives run in the order issued). */
pccl_status_t pccl__request_drain(pccl_comm_t *comm);

/* Progresses the calling thread's outstanding non-blocking calls on every
 * communicator, once: what a blocking call does while it waits, so a peer
 * that waits for one of them is never left waiting on this rank. */
void pccl__request_idle(void);

#endif /* PCCL_CALL_H */
