/* exec.h - the executor: runs one rank's schedule over a transport, posting
 * every step whose dependencies are complete, so independent sends, receives
 * and local work overlap. */
#ifndef PCCL_EXEC_H
#define PCCL_EXEC_H

#include "kernels.h"
#include "schedule.h"

/* How a received message is folded into local data: dst = msg op local, or
 * local op msg with msg_second (the order matters for min/max with NaN). */
typedef struct {
  pccl_reduce_fn fn;
  size_t elem_size;
  int msg_second;
} pccl_reducer_t;

/* dst = msg op local (or local op msg), over `bytes` of each. The one place
 * the operand order is decided, for the executor and every transport. */
static inline void pccl_reducer_apply(const pccl_reducer_t *r, void *dst, const void *msg,
                                      const void *local, size_t bytes) {
  r->fn(dst, r->msg_second ? local : msg, r->msg_second ? msg : local, bytes / r->elem_size);
}

/* A point-to-point transport. Posted operations are named by the step index
 * (`slot`) the executor gives them; poll reports finished slots. */
typedef struct {
  pccl_status_t (*isend)(void *ctx, int peer, int tag, const void *buf, size_t bytes,
                         uint32_t slot);
  pccl_status_t (*irecv)(void *ctx, int peer, int tag, void *buf, size_t bytes, uint32_t slot);
  /* Writes the finished slots into done[] (room for `max`, the number in
   * flight) and their number into *ndone. Never waits: the executor loops,
   * watching the clock (pccl_exec_run). */
  pccl_status_t (*poll)(void *ctx, uint32_t *done, int max, int *ndone);
  /* Optional (may be NULL): receives `bytes` and folds them into `local`,
   * writing `dst`, straight from where the message lies, without landing it
   * in memory first. PCCL_ERR_UNSUPPORTED when this peer or size cannot be
   * served so; the executor then receives into the step's staging region
   * and reduces itself. */
  pccl_status_t (*irecv_reduce)(void *ctx, int peer, int tag, void *dst, const void *local,
                                size_t bytes, pccl_reducer_t fold, uint32_t slot);
  /* Optional (NULL: compressed collectives unsupported): messages whose
   * length only the sender knows (compressed streams). The receive takes up
   * to `cap` bytes and, when it completes, stores the length in *received.
   * Both sides route such messages alike whatever their lengths. */
  pccl_status_t (*isend_var)(void *ctx, int peer, int tag, const void *buf, size_t bytes,
                             uint32_t slot);
  pccl_status_t (*irecv_var)(void *ctx, int peer, int tag, void *buf, size_t cap,
                             size_t *received, uint32_t slot);
} pccl_transport_t;

/* What the COMPRESS / DECOMPRESS steps of a compressed collective use. */
typedef struct {
  pccl_codec_t codec;
  pccl_dtype_t dtype;
  double bound; /* per compression */
} pccl_exec_lossy_t;

/* Memory for the executor's bookkeeping, kept between calls (one per
 * communicator) so a collective allocates nothing once it has run before. */
typedef struct {
  uint32_t *mem;
  size_t cap; /* in uint32_t */
  size_t *zbytes; /* per compressed slot: its stream's length */
  size_t zcap;
} pccl_exec_ws_t;

void pccl_exec_ws_free(pccl_exec_ws_t *ws);

typedef struct pccl_exec pccl_exec_t;

/* The local steps' kernels. The CPU's by default; a device's where the
 * buffers are device memory (pccl_exec_set_device). Each has finished its
 * work when it returns. */
typedef struct {
  pccl_status_t (*reduce)(const pccl_exec_t *x, void *dst, const void *a, const void *b, size_t n);
  pccl_status_t (*copy)(const pccl_exec_t *x, void *dst, const void *src, size_t bytes);
  pccl_status_t (*divide)(const pccl_exec_t *x, void *dst, size_t n, int divisor);
  /* the PERMUTE step st: its cycles at sched->perm[st->tag] */
  pccl_status_t (*permute)(const pccl_exec_t *x, const pccl_step_t *st);
} pccl_exec_local_t;

/* What device buffers' local steps need (src/cuda/gpu.h's kernels). */
typedef struct {
  pccl_dtype_t dtype;
  pccl_op_t op;
  void *stream;         /* cudaStream_t */
  const uint32_t *perm; /* the schedule's perm[] in device memory (NULL if none) */
} pccl_exec_device_t;

struct pccl_exec {
  const pccl_sched_t *sched;
  char *buf[PCCL_BUF_COUNT]; /* base addresses of SEND, RECV, TMP */
  size_t elem_size;
  pccl_reduce_fn reduce;
  pccl_divide_fn divide;
  const pccl_transport_t *tp;
  void *tp_ctx;

  uint32_t *waiting; /* unfinished dependencies per step */
  uint32_t *ready;   /* steps whose dependencies are done, not yet started */
  uint32_t *done;    /* poll's output, room for every message in flight */
  uint32_t *staged;  /* per step: a fused receive that landed in its staging region */
  uint32_t *flying;  /* per step: a message posted and not yet complete */
  size_t *zbytes;    /* per compressed slot: its stream's length */
  const pccl_exec_lossy_t *lossy; /* NULL for schedules without compression */
  uint32_t nready, nfinished, ninflight;
  uint32_t failed_step; /* the step a failure came from, for error messages */
  const pccl_exec_local_t *local;
  const pccl_exec_device_t *device; /* NULL for host buffers */
};

/* Prepares `x` to run `sched`, its bookkeeping in `ws` (grown if needed).
 * `lossy` is needed (non-NULL) when the schedule compresses. */
pccl_status_t pccl_exec_init(pccl_exec_t *x, const pccl_sched_t *sched, void *sendbuf,
                             void *recvbuf, void *tmpbuf, size_t elem_size, pccl_reduce_fn reduce,
                             pccl_divide_fn divide, const pccl_transport_t *tp, void *tp_ctx,
                             pccl_exec_ws_t *ws);
void pccl_exec_set_lossy(pccl_exec_t *x, const pccl_exec_lossy_t *lossy);
/* Runs the local steps on the device (builds with CUDA; else
 * PCCL_ERR_UNSUPPORTED). Compressed schedules are not supported there yet. */
pccl_status_t pccl_exec_set_device(pccl_exec_t *x, const pccl_exec_device_t *device);

/* Starts what is ready and takes what the transport finished, once.
 * *progressed says whether anything happened. */
pccl_status_t pccl_exec_advance(pccl_exec_t *x, int *progressed);

static inline int pccl_exec_done(const pccl_exec_t *x) {
  return x->nfinished == x->sched->nsteps;
}

/* What bounds a run: it gives up with PCCL_ERR_TIMEOUT when nothing
 * progresses for `timeout` seconds (0: never), and with PCCL_ERR_ABORTED as
 * soon as *abort is nonzero (set from another thread). `waited` receives
 * the seconds without progress when it gave up. `idle` (may be NULL) is
 * called while the run waits: it moves the thread's other work along. */
typedef struct {
  double timeout;
  const _Atomic int *abort;
  double waited;
  void (*idle)(void);
} pccl_exec_watch_t;

/* Seconds on a monotonic clock. */
double pccl_exec_clock(void);

/* Runs the whole schedule to completion, polling the transport. */
pccl_status_t pccl_exec_run(pccl_exec_t *x, pccl_exec_watch_t *watch);

/* After a timeout or abort: what the run still waited for. Writes a phrase
 * into buf ("receives from rank(s) 1, 3; sends to rank(s) 2") and returns
 * the earliest message step in flight (the schedule's step count if none). */
uint32_t pccl_exec_pending(const pccl_exec_t *x, char *buf, size_t len);

#endif /* PCCL_EXEC_H */
