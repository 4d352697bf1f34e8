/* comm.h - the communicator's private state, shared by the core and coll
 * layers. */
#ifndef PCCL_COMM_H
#define PCCL_COMM_H

#include <mpi.h>
#include <pthread.h>

#include "algo.h"
#include "cache.h"
#include "errmsg.h"
#include "pccl.h"
#include "route.h"
#include "seg.h"
#include "table.h"

struct pccl_comm {
  MPI_Comm mpi; /* pccl's own duplicate, MPI_ERRORS_RETURN */
  int rank, size;
  int node, nnodes, local_rank, local_size;
  pccl_topo_t topo;   /* every rank's node, for hierarchical algorithms */
  pccl_intra_t intra; /* PCCL_HIER_INTRA */
  pccl_choice_t forced[PCCL_COLL_COUNT]; /* algo NULL: automatic selection */
  pccl_algo_set_t excluded; /* automatic selection never picks these (PCCL_ALGO "coll:-name") */
  pccl_tune_table_t tune;                /* PCCL_TUNING_FILE, else the built-in table */
  const pccl_tune_section_t *tune_sec;   /* its rows for this layout; NULL: none */
  struct pccl_sel *sel; /* the rules compiled for it (coll/select.c), on its first call; freed with it */
  /* Per collective, the last call that passed validation and selection
   * (coll/coll.c): a repeat with the same arguments reuses what they
   * derived, while config_gen (bumped by whatever changes selection) is
   * the same. */
  struct pccl_call_memo *memo;
  unsigned config_gen;
  uint8_t barrier_token; /* the barriers' byte (coll.c): the same at every repeat */
  size_t *vblocks; /* an all-gatherv's block offsets and places (coll.c), grown on demand */
  size_t vblocks_cap;
  char last_algo[80];
  pccl_choice_t last_choice; /* what last_algo names */
  char error[PCCL_ERROR_LEN];
  pccl_sched_cache_t cache;
  void *tmp; /* scratch for the schedules' TMP buffer, grown on demand */
  size_t tmp_bytes;
  int tmp_shared; /* tmp is from the shared allocator (else posix_memalign) */
  size_t scratch_limit; /* PCCL_MAX_SCRATCH: scratch + staging one collective may hold */
  pccl_mpi_tp_t tp;
  pccl_shm_tp_t *shm;  /* NULL when no peer shares this node, or shm is off */
  pccl_route_t route;  /* what the executor uses: shm or MPI per peer */
  pccl_route_t route_nb; /* the same for non-blocking calls: shm at every size */
  int shm_all;           /* shm serves every peer: route_nb makes no MPI call */
  pccl_seg_t *seg;     /* the node's shared segment (PCCL_SEG); NULL: none */
  size_t seg_bytes;    /* PCCL_SEG_BYTES */
  char seg_why[128];   /* why there is none */
  char transport[160]; /* what serves the node's peers, and why (pccl_comm_transport) */
  pccl_exec_ws_t exec_ws;
  /* Non-blocking calls (coll/request.c): queued in the order issued, the
   * first one running; a communicator with some is on request.c's list,
   * linked through nb_next, progressed by the thread that issued them. */
  struct pccl_request *nb_head, *nb_tail;
  struct pccl_comm *nb_next;
  pthread_t nb_owner;
  _Atomic int nb_busy; /* a thread is moving its calls along (request.c) */
  /* Set with the first non-blocking call: before the communicator goes,
   * finishes pccl's own outstanding calls and returns PCCL_OK, or
   * PCCL_ERR_INVALID_ARGUMENT while the caller's are outstanding. */
  pccl_status_t (*nb_close)(struct pccl_comm *comm);
  int mpi_threads; /* MPI was initialised with MPI_THREAD_MULTIPLE */
  struct pccl_comm_device *device; /* device calls' resources (coll/device.c); NULL before one */
  /* Frees `device`; set by whoever creates it, so that destroying a
   * communicator needs nothing from the layers above this one. */
  void (*device_free)(struct pccl_comm *comm);
  double timeout;         /* PCCL_TIMEOUT or pccl_comm_set_timeout; 0: none */
  int check;              /* PCCL_CHECK: agree on the arguments before each collective */
  _Atomic int abort_flag; /* pccl_comm_abort */
  pccl_status_t broken;   /* PCCL_OK, or why every call now fails */
  char broken_why[PCCL_ERROR_LEN];
};

/* PCCL_CHECK's default: on in debug builds (CMAKE_BUILD_TYPE=Debug). */
#ifdef PCCL_DEBUG
#define PCCL_CHECK_DEFAULT 1
#else
#define PCCL_CHECK_DEFAULT 0
#endif
#define PCCL_TIMEOUT_DEFAULT 300.0
#define PCCL_MAX_SCRATCH_DEFAULT (256ll << 20)
#define PCCL_MAX_SCRATCH_MIN (64 << 10)
#define PCCL_MAX_SCRATCH_MAX (1ll << 40)
#define PCCL_TIMEOUT_MAX 1e9

/* Frees the scratch buffer, whichever allocator it came from. */
void pccl__comm_free_tmp(pccl_comm_t *comm);

/* Frees the call memos and the arrays they keep (coll/coll.c). */
void pccl__memo_free(pccl_comm_t *comm);

/* Whether `comm` is a live communicator (created and not yet destroyed). */
int pccl__comm_live(const pccl_comm_t *comm);

/* Records an error: on the communicator when it is live, else on the calling
 * thread. `where` names the API call. Returns `status`. */
pccl_status_t pccl__error(const pccl_comm_t *comm, pccl_status_t status, const char *where,
                          const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Clears the communicator's last error at the start of a call. */
void pccl__error_clear(pccl_comm_t *comm);

#endif /* PCCL_COMM_H */
