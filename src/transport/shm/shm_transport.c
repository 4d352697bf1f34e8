/* shm_transport.c - single-copy intra-node transport; see shm_transport.h.
 *
 * Shared state: every rank owns, inside one MPI shared-memory window, a row
 * of NSLOT descriptors per peer of its group (its outbox). A descriptor moves
 * FREE -> POSTED (sender: buffer address, length, tag) -> DONE (receiver,
 * after copying) -> FREE (sender, completing its send), or to MISMATCH when
 * the two sides disagree on the length. Only the owner of a state writes the
 * next one, so no locks are needed; release/acquire orders the fields.
 *
 * The receiver copies with cross-memory attach, or, when the send buffer lies
 * in memory from pccl_mem_alloc (shared_mem.h), with memcpy from its own
 * mapping of the sender's allocation: mapped once, kept in a small cache, and
 * about twice as fast as the system call. A fused receive-reduce folds the
 * message into the local operand straight from that mapping, reading each
 * byte once; without a mapping it goes through a small bounce buffer that
 * stays in cache, chunk by chunk.
 *
 * A large message without a mapping is moved by both sides at once: the
 * receiver publishes where it goes (and, for a fused receive-reduce, its
 * local operand and the reduction) and moves the descriptor to SHARED;
 * from then on each side claims pieces from a counter in the descriptor,
 * half of what is left each time (at least 128 KiB, at most 1 MiB, 256
 * KiB for a fused receive).
 * The receiver reads a chunk with process_vm_readv (folding it in through
 * the bounce buffer); the sender, which would otherwise only wait, writes
 * it with process_vm_writev, after reading the receiver's operand and
 * folding its own chunk in. The receiver marks the descriptor DONE once
 * every chunk is counted finished, so the sender's buffer is free again
 * when it sees DONE. A broadcast's root, a reduce's leaves and every idle
 * sender thereby lend their core to the work. */
#include "shm_transport.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <fcntl.h>
#include <sys/mman.h>
#endif

#include "cma.h"
#include "copy.h"
#include "shared_mem.h"

#define NSLOT 16 /* descriptors per (sender, receiver) pair */
#define NMAP 32  /* peers' allocations kept mapped */
#define BOUNCE_BYTES ((size_t)1 << 20) /* per call, cross-memory attach pins pages: big chunks amortise it */

/* A shared copy's least claim: half the message, at most SHARE_CHUNK
 * (claims start larger, see claim()). Smaller messages than SHARE_MIN are
 * copied by the receiver alone: the hand-over costs more than the copy
 * there. Measured on 2 ranks (broadcast, 16 KiB - 16 MiB, malloc buffers):
 * halves gain from 64 KiB on, quarters and units of 8-16 KiB lose, 128 KiB
 * units beat 64 and 256 KiB ones. */
#define SHARE_MIN ((size_t)64 << 10)
#define SHARE_CHUNK ((size_t)128 << 10)
/* A fused piece passes through the bounce buffer beside the operand and
 * the result: larger than this it leaves the cache. 2 ranks, binomial
 * reduce of 8 MiB, two runs: 1.63x Open MPI with 1 MiB pieces, 1.76-2.01x
 * with 256 KiB, 1.85-1.90x with fixed 128 KiB chunks. */
#define FOLD_MAX ((size_t)256 << 10)
_Static_assert(SHARE_CHUNK <= FOLD_MAX && FOLD_MAX <= BOUNCE_BYTES,
               "a fused piece passes through the bounce buffer");

enum { D_FREE = 0, D_POSTED = 1, D_DONE = 2, D_MISMATCH = 3, D_SHARED = 4 };

typedef struct {
  _Alignas(64) _Atomic uint32_t state; /* a line apart from the next descriptor: no false sharing */
  int32_t tag;
  uint64_t addr;  /* in the sender's address space */
  uint64_t bytes;
  int32_t fd;     /* >= 0: the buffer lies in the sender's shared allocation */
  uint64_t id, off, size; /* that allocation (shared_mem.h) */
  /* A shared copy, set by the receiver before SHARED; on a line of its own,
   * which both sides write while the state line is polled. */
  _Alignas(64) uint64_t dst; /* in the receiver's address space */
  uint64_t chunk;          /* the least claim */
  _Atomic uint64_t next;   /* the first byte not yet claimed */
  _Atomic uint64_t done;   /* bytes finished (copied or failed) */
  _Atomic uint32_t failed; /* chunks that could not be copied */
  uint64_t local;          /* a fused receive's operand (receiver's address), else 0 */
  int32_t dtype, op;       /* its reduction, as kernel-table indices (not a pointer: */
  int32_t msg_second;      /* the two processes may map the library apart) */
} desc_t;

typedef struct {
  int lpeer;
  uint64_t id;
  char *base;
  size_t size;
} mapping_t;

typedef struct {
  char *buf;
  size_t bytes;
  uint32_t slot; /* the executor's name for it */
  int lpeer;     /* peer's index in the group */
  int tag;
  int is_send;
  int desc;          /* send: descriptor index once posted, -1 before; receive: the
                        descriptor of a shared copy under way, -1 otherwise */
  const char *local; /* fused receive-reduce: buf = message op local */
  pccl_reducer_t fold;
} op_t;

struct pccl_shm_tp {
  MPI_Comm group;
  MPI_Win win;
  int lrank, lsize;
  int *local_of;   /* global rank -> index in the group, or -1 */
  pid_t *pids;     /* per group index */
  desc_t **outbox; /* per group index: that rank's [lsize][NSLOT] descriptors */
  op_t *ops;
  int nops, cap;
  mapping_t maps[NMAP];
  int nmaps, next_evict;
  int *unmappable; /* per group index: its allocations could not be mapped */
  char *bounce;    /* BOUNCE_BYTES for fused receives without a mapping */
  int share;       /* every rank of the group may write into its peers (process_vm_writev) */
};

/* The line after a rank's rows: the probe words of set-up, and how the rank
 * leaves (see agree_free); rank 0's also holds the group's decision. */
typedef struct {
  _Alignas(64) uint64_t probe[2]; /* read, then written, by the predecessor */
  _Atomic uint32_t leave;         /* LEAVE_* */
  _Atomic uint32_t decision;      /* FREE_*, rank 0's only */
} tail_t;
_Static_assert(sizeof(tail_t) <= sizeof(desc_t), "the tail fits in the spare descriptor");

enum { LEAVE_NOT_YET = 0, LEAVE_HEALTHY = 1, LEAVE_BROKEN = 2 };
enum { FREE_UNDECIDED = 0, FREE_ALL = 1, FREE_NONE = 2 };

static tail_t *tail_of(const pccl_shm_tp_t *t, int l) {
  return (tail_t *)(t->outbox[l] + (size_t)t->lsize * NSLOT);
}

static desc_t *channel(const pccl_shm_tp_t *t, int sender, int receiver) {
  return t->outbox[sender] + (size_t)receiver * NSLOT;
}

int pccl_shm_tp_serves(const pccl_shm_tp_t *t, int peer) {
  return t && t->local_of[peer] >= 0;
}

int pccl_shm_tp_active(const pccl_shm_tp_t *t) { return t ? t->nops : 0; }

pccl_status_t pccl_shm_tp_reserve(pccl_shm_tp_t *t, uint32_t n) {
  if ((int)n <= t->cap) return PCCL_OK;
  op_t *ops = realloc(t->ops, n * sizeof(*ops));
  if (!ops) return PCCL_ERR_NO_MEMORY;
  t->ops = ops;
  t->cap = (int)n;
  return PCCL_OK;
}

/* Publishes a send in a free descriptor of its channel; 0 when all are taken. */
static int try_post(pccl_shm_tp_t *t, op_t *op) {
  desc_t *ch = channel(t, t->lrank, op->lpeer);
  for (int i = 0; i < NSLOT; i++) {
    if (atomic_load_explicit(&ch[i].state, memory_order_acquire) != D_FREE) continue;
    ch[i].tag = op->tag;
    ch[i].addr = (uint64_t)(uintptr_t)op->buf;
    ch[i].bytes = op->bytes;
    pccl_shmem_ref_t ref;
    int shared = pccl__shmem_find(op->buf, op->bytes, &ref);
    ch[i].fd = shared ? ref.fd : -1;
    ch[i].id = shared ? ref.id : 0;
    ch[i].off = shared ? ref.off : 0;
    ch[i].size = shared ? ref.size : 0;
    atomic_store_explicit(&ch[i].state, D_POSTED, memory_order_release);
    op->desc = i;
    return 1;
  }
  return 0;
}

static pccl_status_t add_op(pccl_shm_tp_t *t, int peer, op_t op) {
  if (t->nops >= t->cap || t->local_of[peer] < 0) return PCCL_ERR_INTERNAL;
  op.lpeer = t->local_of[peer];
  op.desc = -1;
  t->ops[t->nops] = op;
  if (op.is_send) try_post(t, &t->ops[t->nops]);
  t->nops++;
  return PCCL_OK;
}

static pccl_status_t shm_isend(void *ctx, int peer, int tag, const void *buf, size_t bytes,
                               uint32_t slot) {
  return add_op(ctx, peer, (op_t){.buf = (char *)buf, .bytes = bytes, .slot = slot, .tag = tag,
                                  .is_send = 1});
}

static pccl_status_t shm_irecv(void *ctx, int peer, int tag, void *buf, size_t bytes,
                               uint32_t slot) {
  return add_op(ctx, peer, (op_t){.buf = buf, .bytes = bytes, .slot = slot, .tag = tag});
}

static pccl_status_t shm_irecv_reduce(void *ctx, int peer, int tag, void *dst, const void *local,
                                      size_t bytes, pccl_reducer_t fold, uint32_t slot) {
  return add_op(ctx, peer, (op_t){.buf = dst, .bytes = bytes, .slot = slot, .tag = tag,
                                  .local = local, .fold = fold});
}

#if defined(__linux__)
/* This process's view of the sender's allocation named by d, or NULL when it
 * cannot be mapped (the caller then uses cross-memory attach). */
static const char *peer_mapping(pccl_shm_tp_t *t, int lpeer, const desc_t *d) {
  for (int i = 0; i < t->nmaps; i++)
    if (t->maps[i].lpeer == lpeer && t->maps[i].id == d->id) return t->maps[i].base;
  if (t->unmappable[lpeer]) return NULL;
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)t->pids[lpeer], (int)d->fd);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  void *base = fd < 0 ? MAP_FAILED : mmap(NULL, d->size, PROT_READ, MAP_SHARED, fd, 0);
  if (fd >= 0) close(fd);
  if (base == MAP_FAILED) {
    t->unmappable[lpeer] = 1; /* one failed attempt per peer, not one per message */
    return NULL;
  }
  mapping_t *m;
  if (t->nmaps < NMAP) {
    m = &t->maps[t->nmaps++];
  } else { /* full: the oldest goes */
    m = &t->maps[t->next_evict];
    t->next_evict = (t->next_evict + 1) % NMAP;
    munmap(m->base, m->size);
  }
  *m = (mapping_t){lpeer, d->id, base, d->size};
  return base;
}
#endif

/* Copies the message that descriptor d of group member lpeer announces. */
static int copy_message(pccl_shm_tp_t *t, int lpeer, const desc_t *d, void *dst) {
#if defined(__linux__)
  if (d->fd >= 0) {
    const char *base = peer_mapping(t, lpeer, d);
    if (base) {
      pccl_copy(dst, base + d->off, d->bytes);
      return 1;
    }
  }
#endif
  return pccl_cma_read(t->pids[lpeer], dst, d->addr, d->bytes);
}

/* Folds the message of descriptor d into op's local operand: from the
 * mapping of the sender's allocation in one pass, or through the bounce
 * buffer a cache-sized chunk at a time. */
static int fold_message(pccl_shm_tp_t *t, const op_t *op, const desc_t *d) {
#if defined(__linux__)
  if (d->fd >= 0) {
    const char *base = peer_mapping(t, op->lpeer, d);
    if (base) {
      pccl_reducer_apply(&op->fold, op->buf, base + d->off, op->local, d->bytes);
      return 1;
    }
  }
#endif
  size_t chunk = BOUNCE_BYTES / op->fold.elem_size * op->fold.elem_size;
  for (size_t at = 0; at < d->bytes; at += chunk) {
    size_t n = d->bytes - at < chunk ? d->bytes - at : chunk;
    if (!pccl_cma_read(t->pids[op->lpeer], t->bounce, d->addr + at, n)) return 0;
    pccl_reducer_apply(&op->fold, op->buf + at, t->bounce, op->local + at, n);
  }
  return 1;
}

/* The kernel-table indices of a fused receive's reduction; 0 when it is
 * none of the table's (it is then not shared). */
static int reduction_of(const op_t *op, int32_t *dtype, int32_t *rop) {
  for (int d = 0; d < PCCL_DTYPE_COUNT; d++)
    for (int o = 0; o < PCCL_OP_COUNT; o++)
      if (pccl_kernel_reduce((pccl_dtype_t)d, (pccl_op_t)o) == op->fold.fn) {
        *dtype = d, *rop = o;
        return 1;
      }
  return 0;
}

/* Whether a message is moved by both sides (see the top of the file):
 * large, and not readable through a mapping. Fills in the descriptor's
 * reduction when it is. */
static int shareable(const pccl_shm_tp_t *t, const op_t *op, desc_t *d) {
  return t->share && d->bytes >= SHARE_MIN && (d->fd < 0 || t->unmappable[op->lpeer]) &&
         (!op->local || reduction_of(op, &d->dtype, &d->op));
}

/* One chunk of shared work d, [at, at + n) of the message. */
static int move_chunk(pccl_shm_tp_t *t, const desc_t *d, pid_t peer, int receiving, size_t at,
                      size_t n) {
  char *dst = (char *)(uintptr_t)d->dst + at;
  const char *mine = (const char *)(uintptr_t)d->addr + at; /* the sender's */
  if (!d->local)
    return receiving ? pccl_cma_read(peer, dst, d->addr + at, n)
                     : pccl_cma_write(peer, d->dst + at, mine, n);
  pccl_reducer_t fold = {pccl_kernel_reduce((pccl_dtype_t)d->dtype, (pccl_op_t)d->op),
                         pccl_dtype_size((pccl_dtype_t)d->dtype), d->msg_second};
  if (receiving) {
    if (!pccl_cma_read(peer, t->bounce, d->addr + at, n)) return 0;
    pccl_reducer_apply(&fold, dst, t->bounce, (const char *)(uintptr_t)d->local + at, n);
    return 1;
  }
  if (!pccl_cma_read(peer, t->bounce, d->local + at, n)) return 0;
  pccl_reducer_apply(&fold, t->bounce, mine, t->bounce, n);
  return pccl_cma_write(peer, d->dst + at, t->bounce, n);
}

/* Claims the next piece of shared work d: half of what is left (whole
 * lines, at most a bounce buffer's worth, FOLD_MAX when folded), at least
 * d->chunk. Pieces that
 * shrink as the work runs out cost a system call each: a receiver whose
 * sender never helps (both sides of an exchange are busy) makes a few
 * large ones, where fixed chunks made 64 for 8 MiB; a helper still finds
 * small ones near the end. Returns the piece's length, 0 when none is left. */
static size_t claim(desc_t *d, size_t *at) {
  uint64_t most = d->local ? FOLD_MAX : BOUNCE_BYTES;
  uint64_t off = atomic_load_explicit(&d->next, memory_order_relaxed);
  for (;;) {
    if (off >= d->bytes) return 0;
    uint64_t left = d->bytes - off, n = left / 2 / 64 * 64;
    if (n > most) n = most;
    if (n < d->chunk) n = left < d->chunk ? left : d->chunk;
    if (atomic_compare_exchange_weak_explicit(&d->next, &off, off + n, memory_order_relaxed,
                                              memory_order_relaxed)) {
      *at = (size_t)off;
      return (size_t)n;
    }
  }
}

/* Claims and moves pieces of shared work d until none is left: the
 * receiver reads from the sender (`peer`), the sender writes to the
 * receiver. */
static void copy_chunks(pccl_shm_tp_t *t, desc_t *d, pid_t peer, int receiving) {
  size_t at, n;
  while ((n = claim(d, &at)) > 0) {
    if (!move_chunk(t, d, peer, receiving, at, n))
      atomic_fetch_add_explicit(&d->failed, 1, memory_order_relaxed);
    /* release: the copy is complete before it is counted */
    atomic_fetch_add_explicit(&d->done, n, memory_order_release);
  }
}

/* The receiver's side of a shared copy: 1 when every chunk is in (the
 * descriptor is then DONE), 0 while the sender still copies one. */
static int finish_shared(pccl_shm_tp_t *t, op_t *op) {
  desc_t *d = &channel(t, op->lpeer, t->lrank)[op->desc];
  if (atomic_load_explicit(&d->done, memory_order_acquire) < d->bytes) return 0;
  int failed = atomic_load_explicit(&d->failed, memory_order_relaxed) != 0;
  if (!failed) PCCL_PEER_WROTE((void *)(uintptr_t)d->dst, d->bytes);
  atomic_store_explicit(&d->state, failed ? D_MISMATCH : D_DONE, memory_order_release);
  op->desc = -1;
  return failed ? -(int)PCCL_ERR_INTERNAL : 1;
}

/* One step of an operation: 1 finished, 0 not yet, or a failure status < 0.
 * A sender lends a hand to a shared copy only when it has no receive of its
 * own in flight: two ranks that exchange (a ring's step) are both busy
 * already, and helping each other only adds system calls (2 ranks, 128-512
 * KiB all-gather: 0.86-0.88x Open MPI with help, about 1.05x without). */
static int progress_send(pccl_shm_tp_t *t, op_t *op, int idle) {
  if (op->desc < 0) {
    try_post(t, op); /* its channel was full when it was posted */
    return 0;
  }
  desc_t *d = &channel(t, t->lrank, op->lpeer)[op->desc];
  uint32_t s = atomic_load_explicit(&d->state, memory_order_acquire);
  if (s == D_SHARED && idle) copy_chunks(t, d, t->pids[op->lpeer], 0);
  if (s == D_POSTED || s == D_SHARED) return 0;
  atomic_store_explicit(&d->state, D_FREE, memory_order_release);
  return s == D_DONE ? 1 : -(int)PCCL_ERR_INVALID_ARGUMENT;
}

static int progress_recv(pccl_shm_tp_t *t, op_t *op) {
  if (op->desc >= 0) return finish_shared(t, op);
  desc_t *ch = channel(t, op->lpeer, t->lrank);
  for (int i = 0; i < NSLOT; i++) {
    if (atomic_load_explicit(&ch[i].state, memory_order_acquire) != D_POSTED) continue;
    if (ch[i].tag != op->tag) continue;
    if (ch[i].bytes != op->bytes) {
      /* The ranks disagree on the size: both sides fail instead of
       * truncating or reading past the sender's buffer. */
      atomic_store_explicit(&ch[i].state, D_MISMATCH, memory_order_release);
      return -(int)PCCL_ERR_INVALID_ARGUMENT;
    }
    if (shareable(t, op, &ch[i])) {
      desc_t *d = &ch[i];
      d->dst = (uint64_t)(uintptr_t)op->buf;
      d->local = (uint64_t)(uintptr_t)op->local;
      d->msg_second = op->fold.msg_second;
      /* whole lines: a multiple of every element size */
      d->chunk = (d->bytes / 2 < SHARE_CHUNK ? d->bytes / 2 : SHARE_CHUNK) / 64 * 64;
      atomic_store_explicit(&d->next, 0, memory_order_relaxed);
      atomic_store_explicit(&d->done, 0, memory_order_relaxed);
      atomic_store_explicit(&d->failed, 0, memory_order_relaxed);
      atomic_store_explicit(&d->state, D_SHARED, memory_order_release);
      op->desc = i;
      copy_chunks(t, d, t->pids[op->lpeer], 1);
      return finish_shared(t, op);
    }
    int ok = op->local ? fold_message(t, op, &ch[i]) : copy_message(t, op->lpeer, &ch[i], op->buf);
    if (!ok) {
      atomic_store_explicit(&ch[i].state, D_MISMATCH, memory_order_release);
      return -(int)PCCL_ERR_INTERNAL;
    }
    atomic_store_explicit(&ch[i].state, D_DONE, memory_order_release);
    return 1;
  }
  return 0;
}

static pccl_status_t shm_poll(void *ctx, uint32_t *done, int max, int *ndone) {
  pccl_shm_tp_t *t = ctx;
  *ndone = 0;
  /* A finished operation cannot be undone, so done[] must hold them all. */
  if (t->nops > max) return PCCL_ERR_INTERNAL;
  int idle = 1;
  for (int i = 0; i < t->nops && idle; i++) idle = t->ops[i].is_send;
  int w = 0;
  for (int i = 0; i < t->nops; i++) {
    op_t *op = &t->ops[i];
    int r = op->is_send ? progress_send(t, op, idle) : progress_recv(t, op);
    if (r < 0) return (pccl_status_t)-r;
    if (r > 0)
      done[(*ndone)++] = op->slot;
    else
      t->ops[w++] = *op;
  }
  t->nops = w;
  return PCCL_OK;
}

const pccl_transport_t pccl_shm_transport = {shm_isend, shm_irecv, shm_poll, shm_irecv_reduce,
                                             NULL, NULL}; /* compressed streams go by MPI */

void pccl_shm_tp_reset(pccl_shm_tp_t *t) {
  if (!t) return;
  for (int i = 0; i < t->nops; i++) {
    op_t *op = &t->ops[i];
    if (!op->is_send || op->desc < 0) continue;
    uint32_t posted = D_POSTED;
    desc_t *d = &channel(t, t->lrank, op->lpeer)[op->desc];
    /* Withdraw what no receiver took; a finished one just becomes free. */
    if (!atomic_compare_exchange_strong(&d->state, &posted, D_FREE))
      atomic_store(&d->state, D_FREE);
  }
  t->nops = 0;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Whether the group frees its window, the same answer on every rank that
 * asks. MPI_Win_free waits for the whole group, and a rank whose
 * communicator broke leaves without it (its peers may be gone), so a peer
 * that called it would wait forever; a rank may also never come. Each rank
 * posts how it leaves, and the first to know decides for all, once (compare
 * and swap on rank 0's line): free when every rank has come healthy, not
 * when one comes broken or the wait passes `timeout` seconds (0: no limit).
 * A window not freed stays until the process ends. */
static int agree_free(const pccl_shm_tp_t *t, int healthy, double timeout) {
  atomic_store_explicit(&tail_of(t, t->lrank)->leave, healthy ? LEAVE_HEALTHY : LEAVE_BROKEN,
                        memory_order_release);
  _Atomic uint32_t *decision = &tail_of(t, 0)->decision;
  double start = now();
  for (;;) {
    uint32_t d = atomic_load_explicit(decision, memory_order_acquire);
    if (d != FREE_UNDECIDED) return d == FREE_ALL;
    uint32_t want = FREE_ALL;
    for (int l = 0; l < t->lsize && want != FREE_NONE; l++) {
      uint32_t v = atomic_load_explicit(&tail_of(t, l)->leave, memory_order_acquire);
      if (v == LEAVE_BROKEN) want = FREE_NONE;
      if (v == LEAVE_NOT_YET) want = FREE_UNDECIDED;
    }
    if (want == FREE_UNDECIDED && timeout > 0 && now() - start > timeout)
      want = FREE_NONE;
    if (want == FREE_UNDECIDED) {
      sched_yield();
      continue;
    }
    uint32_t undecided = FREE_UNDECIDED;
    atomic_compare_exchange_strong_explicit(decision, &undecided, want, memory_order_acq_rel,
                                            memory_order_acquire);
  }
}

/* Frees this rank's memory and, with `together` (every rank of the group
 * does the same), the window and the group's communicator. */
static void release(pccl_shm_tp_t *t, int together) {
  if (together) {
    if (t->win != MPI_WIN_NULL) {
      MPI_Win_unlock_all(t->win);
      MPI_Win_free(&t->win);
    }
    MPI_Comm_free(&t->group);
  }
#if defined(__linux__)
  for (int i = 0; i < t->nmaps; i++) munmap(t->maps[i].base, t->maps[i].size);
#endif
  free(t->unmappable);
  free(t->bounce);
  free(t->local_of);
  free(t->pids);
  free(t->outbox);
  free(t->ops);
  free(t);
}

void pccl_shm_tp_destroy(pccl_shm_tp_t *t, int healthy, double timeout) {
  if (!t) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  /* a window not agreed on stays: MPI_Win_free would wait for a rank that
   * does not come (after MPI_Finalize it is gone already) */
  release(t, !finalized && (t->win != MPI_WIN_NULL ? agree_free(t, healthy, timeout) : healthy));
}

/* Every rank of the group reads its successor's probe word; the group uses
 * the transport only if all of them could. */
static int probe_cross_memory(pccl_shm_tp_t *t, const uint64_t *probe_addr, char *why,
                              size_t whylen) {
  int next = (t->lrank + 1) % t->lsize;
  uint64_t got = 0, want = 0x7063636c73686dull ^ (uint64_t)next; /* "pcclshm" ^ index */
  int ok = pccl_cma_read(t->pids[next], &got, probe_addr[next], sizeof got) && got == want;
  int err = ok ? 0 : errno;
  /* Writing (shared copies) is probed on the word after the probe. */
  int flags[2] = {ok, ok && pccl_cma_write(t->pids[next], probe_addr[next] + sizeof got, &want,
                                           sizeof want)};
  MPI_Allreduce(MPI_IN_PLACE, flags, 2, MPI_INT, MPI_MIN, t->group);
  int all = flags[0];
  t->share = flags[1];
  if (!all)
    snprintf(why, whylen, "cross-memory attach (process_vm_readv) is not permitted here: %s",
             err ? strerror(err) : "another rank of the node could not use it");
  return all;
}

static desc_t *align_line(void *p) {
  uintptr_t a = ((uintptr_t)p + sizeof(desc_t) - 1) / sizeof(desc_t) * sizeof(desc_t);
  return (desc_t *)a;
}

#if defined(__linux__)
static pccl_status_t setup_group(pccl_shm_tp_t *t, MPI_Comm comm, char *why, size_t whylen) {
  int size;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(t->group, &t->lrank);
  MPI_Comm_size(t->group, &t->lsize);
  t->local_of = malloc((size_t)size * sizeof(int));
  t->pids = malloc((size_t)t->lsize * sizeof(pid_t));
  t->outbox = malloc((size_t)t->lsize * sizeof(desc_t *));
  t->unmappable = calloc((size_t)t->lsize, sizeof(int));
  t->bounce = malloc(BOUNCE_BYTES);
  uint64_t *probe_addr = malloc((size_t)t->lsize * sizeof(uint64_t));
  int *globals = malloc((size_t)t->lsize * sizeof(int));
  if (!t->local_of || !t->pids || !t->outbox || !t->unmappable || !t->bounce || !probe_addr ||
      !globals) {
    free(probe_addr);
    free(globals);
    return PCCL_ERR_NO_MEMORY;
  }
  pccl_cma_allow();

  const size_t rows = (size_t)t->lsize * NSLOT;
  desc_t *mine = NULL;
  pccl_status_t st = PCCL_ERR_MPI;
  /* One descriptor more than needed: MPI only promises a small alignment of
   * each segment, and descriptors are aligned up to their cache line. */
  if (MPI_Win_allocate_shared((MPI_Aint)((rows + 2) * sizeof(desc_t)), 1, MPI_INFO_NULL,
                              t->group, &mine, &t->win) != MPI_SUCCESS)
    goto out;
  MPI_Win_lock_all(MPI_MODE_NOCHECK, t->win);
  mine = align_line(mine);
  memset(mine, 0, (rows + 1) * sizeof(desc_t));
  /* The extra descriptor at the end holds the probe words (tail_t). */
  uint64_t *probe = &((tail_t *)&mine[rows])->probe[0];
  *probe = 0x7063636c73686dull ^ (uint64_t)t->lrank;
  pid_t pid = getpid();
  uint64_t addr = (uint64_t)(uintptr_t)probe;
  int rank;
  MPI_Comm_rank(comm, &rank);
  if (MPI_Allgather(&pid, (int)sizeof pid, MPI_BYTE, t->pids, (int)sizeof pid, MPI_BYTE,
                    t->group) != MPI_SUCCESS ||
      MPI_Allgather(&addr, 1, MPI_UINT64_T, probe_addr, 1, MPI_UINT64_T, t->group) !=
          MPI_SUCCESS ||
      MPI_Allgather(&rank, 1, MPI_INT, globals, 1, MPI_INT, t->group) != MPI_SUCCESS)
    goto out;
  for (int r = 0; r < size; r++) t->local_of[r] = -1;
  for (int l = 0; l < t->lsize; l++) {
    t->local_of[globals[l]] = l;
    MPI_Aint wsize;
    int disp;
    if (MPI_Win_shared_query(t->win, l, &wsize, &disp, &t->outbox[l]) != MPI_SUCCESS) goto out;
    t->outbox[l] = align_line(t->outbox[l]);
  }
  st = probe_cross_memory(t, probe_addr, why, whylen) ? PCCL_OK : PCCL_ERR_UNSUPPORTED;
out:
  free(probe_addr);
  free(globals);
  return st;
}
#endif

pccl_status_t pccl_shm_tp_create(MPI_Comm comm, int group, pccl_shm_tp_t **out, char *why,
                                 size_t whylen) {
  *out = NULL;
  MPI_Comm node;
  int rank;
  MPI_Comm_rank(comm, &rank);
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) != MPI_SUCCESS)
    return PCCL_ERR_MPI;
  pccl_shm_tp_t *t = calloc(1, sizeof(*t));
  int rc = t ? MPI_Comm_split(node, group, rank, &t->group) : MPI_SUCCESS;
  MPI_Comm_free(&node);
  if (!t) return PCCL_ERR_NO_MEMORY;
  if (rc != MPI_SUCCESS) {
    free(t);
    return PCCL_ERR_MPI;
  }
  t->win = MPI_WIN_NULL;
  int lsize;
  MPI_Comm_size(t->group, &lsize);
#if defined(__linux__)
  pccl_status_t st = lsize > 1 ? setup_group(t, comm, why, whylen) : PCCL_ERR_UNSUPPORTED;
  if (lsize <= 1) snprintf(why, whylen, "no other rank shares this node");
#else
  pccl_status_t st = PCCL_ERR_UNSUPPORTED;
  snprintf(why, whylen, "cross-memory attach needs Linux");
#endif
  if (st != PCCL_OK) {
    release(t, 1); /* every rank of the group fails set-up alike */
    return st;
  }
  *out = t;
  return PCCL_OK;
}
