/* exec.c - runs a schedule: a step starts once its dependencies finished;
 * sends and receives go to the transport non-blocking, local steps (reduce,
 * copy, divide) run at once on the calling thread. A fused receive-reduce
 * goes to the transport whole when it can fold the message in itself;
 * otherwise the message lands in the step's staging region and the executor
 * reduces it when the receive completes. */
#include "exec.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void pccl_exec_ws_free(pccl_exec_ws_t *ws) {
  free(ws->mem);
  free(ws->zbytes);
  memset(ws, 0, sizeof(*ws));
}

void pccl_exec_set_lossy(pccl_exec_t *x, const pccl_exec_lossy_t *lossy) { x->lossy = lossy; }

/* ---- the CPU's local kernels ---- */

static pccl_status_t host_reduce(const pccl_exec_t *x, void *dst, const void *a, const void *b,
                                 size_t n) {
  x->reduce(dst, a, b, n);
  return PCCL_OK;
}

static pccl_status_t host_copy(const pccl_exec_t *x, void *dst, const void *src, size_t bytes) {
  (void)x;
  memmove(dst, src, bytes);
  return PCCL_OK;
}

static pccl_status_t host_divide(const pccl_exec_t *x, void *dst, size_t n, int divisor) {
  x->divide(dst, n, divisor);
  return PCCL_OK;
}

static char *addr(const pccl_exec_t *x, pccl_region_t r) {
  return x->buf[r.buf] + r.off * x->elem_size;
}

static pccl_status_t host_permute(const pccl_exec_t *x, const pccl_step_t *st) {
  pccl_permute_cycles(addr(x, st->dst), st->src.len * x->elem_size, x->sched->perm + st->tag + 1,
                      x->sched->perm[st->tag], addr(x, st->src));
  return PCCL_OK;
}

static const pccl_exec_local_t host_local = {host_reduce, host_copy, host_divide, host_permute};

#ifdef PCCL_HAVE_CUDA
extern const pccl_exec_local_t pccl__exec_cuda_local;
#endif

pccl_status_t pccl_exec_set_device(pccl_exec_t *x, const pccl_exec_device_t *device) {
#ifdef PCCL_HAVE_CUDA
  x->device = device;
  x->local = &pccl__exec_cuda_local;
  return x->sched->nslots ? PCCL_ERR_UNSUPPORTED : PCCL_OK;
#else
  (void)x, (void)device;
  return PCCL_ERR_UNSUPPORTED;
#endif
}

pccl_status_t pccl_exec_init(pccl_exec_t *x, const pccl_sched_t *sched, void *sendbuf,
                             void *recvbuf, void *tmpbuf, size_t elem_size, pccl_reduce_fn reduce,
                             pccl_divide_fn divide, const pccl_transport_t *tp, void *tp_ctx,
                             pccl_exec_ws_t *ws) {
  memset(x, 0, sizeof(*x));
  x->sched = sched;
  x->buf[PCCL_BUF_SEND] = sendbuf;
  x->buf[PCCL_BUF_RECV] = recvbuf;
  x->buf[PCCL_BUF_TMP] = tmpbuf;
  x->elem_size = elem_size;
  x->reduce = reduce;
  x->divide = divide;
  x->tp = tp;
  x->tp_ctx = tp_ctx;
  x->local = &host_local;
  size_t need = 5 * (size_t)(sched->nsteps ? sched->nsteps : 1);
  if (need > ws->cap) {
    uint32_t *mem = realloc(ws->mem, need * sizeof(uint32_t));
    if (!mem) return PCCL_ERR_NO_MEMORY;
    ws->mem = mem;
    ws->cap = need;
  }
  x->waiting = ws->mem;
  x->ready = x->waiting + need / 5;
  x->done = x->ready + need / 5;
  x->staged = x->done + need / 5;
  x->flying = x->staged + need / 5;
  memset(x->flying, 0, need / 5 * sizeof(uint32_t));
  if (sched->nslots > ws->zcap) {
    size_t *z = realloc(ws->zbytes, sched->nslots * sizeof(size_t));
    if (!z) return PCCL_ERR_NO_MEMORY;
    ws->zbytes = z;
    ws->zcap = sched->nslots;
  }
  x->zbytes = ws->zbytes;
  for (uint32_t i = 0; i < sched->nsteps; i++) {
    x->waiting[i] = sched->steps[i].ndeps;
    if (x->waiting[i] == 0) x->ready[x->nready++] = i;
  }
  return PCCL_OK;
}

static void finish(pccl_exec_t *x, uint32_t step) {
  const pccl_sched_t *s = x->sched;
  x->nfinished++;
  for (size_t i = s->succ_off[step]; i < s->succ_off[step + 1]; i++)
    if (--x->waiting[s->succ[i]] == 0) x->ready[x->nready++] = s->succ[i];
}

static pccl_reducer_t reducer_of(const pccl_exec_t *x, const pccl_step_t *st) {
  pccl_reducer_t f = {x->reduce, x->elem_size, (st->flags & PCCL_STEP_MSG_SECOND) != 0};
  return f;
}

/* Posts a fused receive-reduce: whole to the transport if it can take it,
 * else as a plain receive into staging (reduced in complete()). */
static pccl_status_t start_recv_reduce(pccl_exec_t *x, uint32_t id, const pccl_step_t *st) {
  size_t bytes = st->dst.len * x->elem_size;
  x->ninflight++;
  x->staged[id] = 0;
  if (x->tp->irecv_reduce && !x->device) {
    pccl_status_t rc = x->tp->irecv_reduce(x->tp_ctx, st->arg, st->tag, addr(x, st->dst),
                                           addr(x, st->src2), bytes, reducer_of(x, st), id);
    if (rc != PCCL_ERR_UNSUPPORTED) return rc;
  }
  x->staged[id] = 1;
  return x->tp->irecv(x->tp_ctx, st->arg, st->tag, addr(x, st->src), bytes, id);
}

/* A message step the transport reports finished. */
static pccl_status_t complete(pccl_exec_t *x, uint32_t id) {
  const pccl_step_t *st = &x->sched->steps[id];
  x->ninflight--;
  x->flying[id] = 0;
  if (st->kind == PCCL_STEP_RECV_REDUCE && x->staged[id]) {
    int second = (st->flags & PCCL_STEP_MSG_SECOND) != 0;
    const char *msg = addr(x, st->src), *local = addr(x, st->src2);
    pccl_status_t rc = x->local->reduce(x, addr(x, st->dst), second ? local : msg,
                                        second ? msg : local, st->dst.len);
    if (rc != PCCL_OK) {
      x->failed_step = id;
      return rc;
    }
  }
  finish(x, id);
  return PCCL_OK;
}

static pccl_status_t start_compress(pccl_exec_t *x, const pccl_step_t *st) {
  if (!x->lossy) return PCCL_ERR_INTERNAL;
  return pccl_compress(x->lossy->codec, addr(x, st->src), st->src.len, x->lossy->dtype,
                       x->lossy->bound, addr(x, st->dst), st->dst.len * x->elem_size,
                       &x->zbytes[st->slot]);
}

static pccl_status_t start_decompress(pccl_exec_t *x, const pccl_step_t *st) {
  if (!x->lossy) return PCCL_ERR_INTERNAL;
  return pccl_decompress(addr(x, st->src), x->zbytes[st->slot], addr(x, st->dst), st->dst.len,
                         x->lossy->dtype);
}

/* A message whose length is the slot's: sent as written, received up to
 * the slot's capacity. */
static pccl_status_t start_varlen(pccl_exec_t *x, uint32_t id, const pccl_step_t *st) {
  if (!x->tp->isend_var || !x->tp->irecv_var) return PCCL_ERR_UNSUPPORTED;
  x->ninflight++;
  if (st->kind == PCCL_STEP_SEND)
    return x->tp->isend_var(x->tp_ctx, st->arg, st->tag, addr(x, st->src), x->zbytes[st->slot], id);
  return x->tp->irecv_var(x->tp_ctx, st->arg, st->tag, addr(x, st->dst), st->dst.len * x->elem_size,
                          &x->zbytes[st->slot], id);
}

/* A COPY step: one run, or arg blocks at the strides the schedule keeps. */
static pccl_status_t copy_blocks(pccl_exec_t *x, const pccl_step_t *st) {
  size_t bytes = st->dst.len * x->elem_size;
  if (st->arg <= 1) return x->local->copy(x, addr(x, st->dst), addr(x, st->src), bytes);
  const size_t *stride = x->sched->stride + 2 * (size_t)st->tag;
  char *dst = addr(x, st->dst);
  const char *src = addr(x, st->src);
  pccl_status_t rc = PCCL_OK;
  for (int32_t i = 0; i < st->arg && rc == PCCL_OK; i++)
    rc = x->local->copy(x, dst + (size_t)i * stride[0] * x->elem_size,
                        src + (size_t)i * stride[1] * x->elem_size, bytes);
  return rc;
}

/* Starts one step; local steps also finish here. */
static pccl_status_t start(pccl_exec_t *x, uint32_t id) {
  const pccl_step_t *st = &x->sched->steps[id];
  pccl_status_t rc = PCCL_OK;
  if (st->flags & PCCL_STEP_VARLEN) return start_varlen(x, id, st);
  switch ((pccl_step_kind_t)st->kind) {
    case PCCL_STEP_SEND:
      x->ninflight++;
      return x->tp->isend(x->tp_ctx, st->arg, st->tag, addr(x, st->src),
                          st->src.len * x->elem_size, id);
    case PCCL_STEP_RECV:
      x->ninflight++;
      return x->tp->irecv(x->tp_ctx, st->arg, st->tag, addr(x, st->dst),
                          st->dst.len * x->elem_size, id);
    case PCCL_STEP_RECV_REDUCE:
      return start_recv_reduce(x, id, st);
    case PCCL_STEP_REDUCE:
      rc = x->local->reduce(x, addr(x, st->dst), addr(x, st->src), addr(x, st->src2), st->dst.len);
      break;
    case PCCL_STEP_COPY:
      rc = copy_blocks(x, st);
      break;
    case PCCL_STEP_DIVIDE:
      rc = x->local->divide(x, addr(x, st->dst), st->dst.len, st->arg);
      break;
    case PCCL_STEP_PERMUTE:
      rc = x->local->permute(x, st);
      break;
    case PCCL_STEP_COMPRESS:
      rc = start_compress(x, st);
      break;
    case PCCL_STEP_DECOMPRESS:
      rc = start_decompress(x, st);
      break;
    default:
      rc = PCCL_ERR_INTERNAL;
  }
  if (rc == PCCL_OK) finish(x, id);
  return rc;
}

static int is_message(const pccl_exec_t *x, uint32_t id) {
  uint32_t k = x->sched->steps[id].kind;
  return k == PCCL_STEP_SEND || k == PCCL_STEP_RECV || k == PCCL_STEP_RECV_REDUCE;
}

/* Removes and returns the earliest ready step. Local steps run in the order
 * the generator wrote them, which is the order their results are needed in
 * (compress the chunk that is sent first, first). */
static uint32_t take_first_ready(pccl_exec_t *x) {
  uint32_t at = 0;
  for (uint32_t i = 1; i < x->nready; i++)
    if (x->ready[i] < x->ready[at]) at = i;
  uint32_t id = x->ready[at];
  x->ready[at] = x->ready[--x->nready];
  return id;
}

/* Takes what the transport finished, once. */
static pccl_status_t take_completions(pccl_exec_t *x, int *progressed) {
  if (x->ninflight == 0) return PCCL_OK;
  int ndone = 0;
  pccl_status_t rc = x->tp->poll(x->tp_ctx, x->done, (int)x->ninflight, &ndone);
  if (rc != PCCL_OK) return rc;
  if (ndone > 0) *progressed = 1;
  for (int i = 0; i < ndone; i++)
    if ((rc = complete(x, x->done[i])) != PCCL_OK) return rc;
  return PCCL_OK;
}

pccl_status_t pccl_exec_advance(pccl_exec_t *x, int *progressed) {
  *progressed = 0;
  /* Messages first, so data moves while local steps run; then one local step
   * at a time, since each may make more messages ready. Between local steps
   * the transport is polled: a long run of them (compressing chunk after
   * chunk) must not keep MPI from progressing what is in flight. */
  while (x->nready > 0) {
    /* Messages start in the order they became ready, which for the sends
     * to one peer is their order in the schedule: a transport with a few
     * slots per peer (shm) then holds the first ones, which a receiver
     * that takes them in order needs. Starting the last ready first filled
     * the slots with late pieces and deadlocked a piecewise swap. Local
     * steps stay in the list, in order. */
    uint32_t kept = 0;
    for (uint32_t i = 0; i < x->nready; i++) {
      uint32_t id = x->ready[i];
      if (!is_message(x, id)) {
        x->ready[kept++] = id;
        continue;
      }
      x->flying[id] = 1;
      pccl_status_t rc = start(x, id);
      *progressed = 1;
      if (rc != PCCL_OK) {
        while (++i < x->nready) x->ready[kept++] = x->ready[i];
        x->nready = kept;
        x->failed_step = id;
        return rc;
      }
    }
    x->nready = kept;
    if (x->nready == 0) break;
    uint32_t id = take_first_ready(x);
    pccl_status_t rc = start(x, id);
    *progressed = 1;
    if (rc != PCCL_OK) {
      x->failed_step = id;
      return rc;
    }
    rc = take_completions(x, progressed);
    if (rc != PCCL_OK) return rc;
  }
  return take_completions(x, progressed);
}

double pccl_exec_clock(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Polls instead of blocking in the transport, so that the clock and the
 * abort flag are looked at while waiting. MPI's progress yields the core
 * when idle where it is told to (mpi_yield_when_idle); the shm transport
 * does not, so this loop yields every PCCL_EXEC_YIELD_EVERY idle polls for
 * ranks that share cores: yielding on every one made small all-reduces on
 * 4 oversubscribed ranks several times slower here, every 64th costs nothing
 * measurable (docs/results/reliability/executor-poll-np4.txt). */
#ifndef PCCL_EXEC_YIELD_EVERY
#define PCCL_EXEC_YIELD_EVERY 64
#endif

pccl_status_t pccl_exec_run(pccl_exec_t *x, pccl_exec_watch_t *watch) {
  double last = 0.0;
  unsigned idle = 0;
  while (!pccl_exec_done(x)) {
    int progressed;
    pccl_status_t rc = pccl_exec_advance(x, &progressed);
    if (rc != PCCL_OK) return rc;
    if (progressed) {
      idle = 0;
      continue;
    }
    if (x->ninflight == 0 && x->nready == 0) return PCCL_ERR_INTERNAL;
    if (watch->abort && *watch->abort) return PCCL_ERR_ABORTED;
    double now = pccl_exec_clock();
    if (idle++ == 0) last = now;
    if (watch->timeout > 0 && now - last > watch->timeout) {
      watch->waited = now - last;
      return PCCL_ERR_TIMEOUT;
    }
    if (idle % PCCL_EXEC_YIELD_EVERY == 0) {
      if (watch->idle) watch->idle();
      sched_yield();
    }
  }
  return PCCL_OK;
}

/* Appends " ranks a, b, c" (or " rank a") for the peers of unfinished
 * message steps of one direction, each peer once. */
static size_t list_peers(const pccl_exec_t *x, int sends, char *buf, size_t len, size_t used) {
  int n = 0;
  for (uint32_t i = 0; i < x->sched->nsteps && used < len; i++) {
    const pccl_step_t *st = &x->sched->steps[i];
    if (!x->flying[i] || (st->kind == PCCL_STEP_SEND) != sends) continue;
    int seen = 0;
    for (uint32_t j = 0; j < i && !seen; j++)
      seen = x->flying[j] && x->sched->steps[j].arg == st->arg &&
             (x->sched->steps[j].kind == PCCL_STEP_SEND) == sends;
    if (seen) continue;
    used += (size_t)snprintf(buf + used, len - used, "%s%d", n++ ? ", " : " ", st->arg);
  }
  return used;
}

uint32_t pccl_exec_pending(const pccl_exec_t *x, char *buf, size_t len) {
  uint32_t first = x->sched->nsteps;
  int recvs = 0, sends = 0;
  for (uint32_t i = 0; i < x->sched->nsteps; i++) {
    if (!x->flying[i]) continue;
    if (first == x->sched->nsteps) first = i;
    if (x->sched->steps[i].kind == PCCL_STEP_SEND) sends++;
    else recvs++;
  }
  size_t used = (size_t)snprintf(buf, len, "%s", recvs ? "receives from rank(s)" : "");
  if (recvs) used = list_peers(x, 0, buf, len, used);
  if (sends && used < len)
    used += (size_t)snprintf(buf + used, len - used, "%ssends to rank(s)", recvs ? "; " : "");
  if (sends) used = list_peers(x, 1, buf, len, used);
  if (!recvs && !sends) snprintf(buf, len, "no message in flight");
  return first;
}
