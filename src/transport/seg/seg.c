/* seg.c - the node segment and the collectives written against it; see
 * seg.h for the protocol. */
#define _GNU_SOURCE /* memfd_create, sched_getaffinity */
#include "seg.h"

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
#include "kernels.h"

#define LINE 64
#define MAX_LOCAL 256  /* ranks of one node the segment serves */
#define SPINS 2000     /* polls before a waiting rank starts yielding its core */
#define CLOCK_EVERY 1024
/* Rounds whose parts fit in SLOT bytes take one of RING head lines and
 * slots in turn, so a rank that only writes (a broadcast's root) runs up to
 * RING rounds ahead of its readers before it must look at their progress;
 * larger parts alternate between the two buffers. The head lines lie
 * together, away from the slots: a call of a few bytes then touches the
 * same few lines over and over. A slot of 4 KiB, not 1: with only two
 * buffers a writer waits for its readers every other round, and 2 ranks'
 * 2 KiB broadcast, reduce and all-reduce took 0.50, 0.53 and 1.11 us in
 * the buffers against 0.40, 0.31-0.39 and 0.86-0.90 in slots (Xeon host,
 * docs/results/slot). Slots of 8 and 16 KiB also sped up the rooted calls
 * of 8-16 KiB, but 256-512 KiB of slots a rank (128 MiB on a node of 256
 * ranks) is much to map for calls this small. */
#define RING 32
#define SLOT 4096
/* A direct call (below) reads and writes its peers' buffers in pieces of
 * this many bytes: the few it holds at once (two peers' parts, this rank's
 * own kept aside in place, a reduce leaf's result) stay in the shared
 * cache, and a piece pins enough pages that the system call's own cost is
 * small beside the copy. That cost differs between hosts: on the Xeon
 * host 64-512 KiB pieces were within the spread of each other (2 ranks,
 * all-reduce of 512 KiB-32 MiB); on the AMD EPYC family 25 host
 * process_vm_writev moved 1 MiB at 8.5, 10.4 and 12.4 GB/s in pieces of
 * 64, 128 and 512 KiB (pccl-cmabench), and 512 KiB pieces against 128
 * cut the 2-rank all-gather of 512 KiB and 2 MiB by 13-14%, the reduce by
 * 7-10%, the all-reduce of 2 MiB by 7%, the rest within the spread
 * (docs/results/piece). */
#define DIRECT_PIECE ((size_t)512 << 10)
/* The size that names the buffers' head lines: a direct call's two rounds
 * publish there, so a peer that runs the same count through the buffers
 * meets the digest check instead of waiting on another line. */
#define BIG SIZE_MAX

/* The first line of a buffer: the round that filled it, the call's digest,
 * and small data. */
typedef struct {
  _Alignas(LINE) _Atomic uint64_t seq;
  uint64_t digest;
  unsigned char data[PCCL_SEG_INLINE];
} head_t;

/* A rank's control line: the last round it finished reading, and the
 * status of the error that made it leave the rounds (0: none). */
typedef struct {
  _Alignas(LINE) _Atomic uint64_t done;
  _Atomic uint32_t failed;
} ctrl_t;

_Static_assert(sizeof(head_t) == LINE && sizeof(ctrl_t) == LINE, "one cache line each");

/* Where a rank's buffers lie, in its own address space (direct calls),
 * and whether it cannot take the call direct (see direct_takes). */
typedef struct {
  uint64_t send, recv, refuses;
} addrs_t;

/* A timed call's size class (bytes rounded down to a power of two): its
 * calls so far, the call that starts its next trials, the calls between
 * its last two, the path it takes between trials, and this rank's best
 * time of each path in the current trials. The trials run each path RUN
 * calls in a row, timing all but the first (which pays for the other
 * path's leftovers in the caches, and on a class's first calls for the
 * buffers' first touch). They come again EARLY calls later while the pick
 * changes, and twice as far each time it stays, up to LATEST: a class's
 * first calls are often not like the rest (a program's set-up between
 * them; pccl-bench's warm-up alternates them with MPI's, which evicts the
 * segment's buffers: the first trial of a 2-rank all-gather of 4 MiB timed
 * the buffers at 394 us against 242 direct, the next at 119 against 168),
 * and this machine changes speed within a run (lines move between its
 * cores fast or several times slower; the buffers' path follows that, the
 * direct one does not; see docs/results/timed); but every trial runs the
 * slower path RUN times, an eighth of a class's calls at one trial per
 * EARLY. */
#define SIZE_CLASSES 64
#define RUN 4
#define EARLY 32
#define LATEST 1024
typedef struct {
  uint32_t calls, next, gap; /* gap 0: no pick yet */
  int direct;
  double best[2];
} timing_t;

struct pccl_seg {
  MPI_Comm node;
  int me, n;            /* this rank's index in the node, ranks in it */
  char *base;           /* the mapping */
  size_t map_bytes;
  size_t region;        /* bytes per rank: control line, RING heads and slots, two buffers */
  size_t cap;           /* bytes of one buffer (whole pages) */
  size_t stride;        /* from one buffer to the next: cap, and a page for a part's offset */
  size_t lines;         /* bytes of a region before its slots: its lines, whole pages */
  uint64_t round;       /* the last round this rank started */
  uint64_t *known;      /* per rank: a round it is known to have finished */
  int yield;            /* more ranks than cores: give the core up at once */
  int cma;              /* every rank may read and write every peer (cross-memory attach) */
  pid_t *pids;          /* per rank, for cross-memory attach */
  addrs_t *peers;       /* per rank: its buffers in the current direct call */
  char *bounce;         /* 4 x DIRECT_PIECE: a direct call's pieces */
  uint64_t probe[2];    /* read, then written, by a peer at creation */
  timing_t timing[PCCL_COLL_COUNT][SIZE_CLASSES];
};

/* ---- layout ---------------------------------------------------------- */


static int small(size_t bytes) { return bytes <= SLOT; }

/* Rank r's region: its lines (control line, RING + 2 head lines) in the
 * first page, then the RING slots, then the two buffers, each on pages of
 * its own: data never shares a page with the lines that readers poll. */
static char *region(const pccl_seg_t *s, int r) { return s->base + (size_t)r * s->region; }

/* The line that announces rank r's part of `bytes` in round `round`. */
static head_t *head(const pccl_seg_t *s, int r, uint64_t round, size_t bytes) {
  head_t *h = (head_t *)(region(s, r) + LINE);
  return small(bytes) ? h + round % RING : h + RING + (round & 1);
}

/* Where that part lies: in the head's line when it fits, in the round's
 * slot when it is small, else in the round's buffer, at the offset its
 * writer chose (head data[0], see fill_part). */
static unsigned char *part(const pccl_seg_t *s, int r, uint64_t round, size_t bytes) {
  head_t *h = head(s, r, round, bytes);
  if (bytes <= PCCL_SEG_INLINE) return h->data;
  unsigned char *data = (unsigned char *)region(s, r) + s->lines;
  if (small(bytes)) return data + round % RING * SLOT;
  return data + RING * SLOT + (round & 1) * s->stride + h->data[0];
}

/* This rank's part of round n, to be filled from `src`: a buffer's part
 * starts as far into a line as src does, so that copying in, and copying
 * out into buffers placed like src (malloc's large blocks all start 16
 * bytes into a page), never meets memcpy's slow distances (copy.h). */
static unsigned char *fill_part(pccl_seg_t *s, uint64_t n, size_t bytes, const void *src) {
  if (bytes > SLOT) head(s, s->me, n, bytes)->data[0] = (unsigned char)((uintptr_t)src % LINE);
  return part(s, s->me, n, bytes);
}

static ctrl_t *ctrl(const pccl_seg_t *s, int r) { return (ctrl_t *)region(s, r); }

/* Whether peer r has left the rounds after an error; if so, this rank's
 * wait ends too: a peer whose call differed makes it PCCL_ERR_MISMATCH,
 * any other failure (a timeout or an abort there) PCCL_ERR_TIMEOUT. Ranks
 * that never read that peer's part (a broadcast's root) learn so at their
 * next wait instead of only after PCCL_TIMEOUT. */
static pccl_status_t peer_failed(const pccl_seg_t *s, int r, uint64_t target, const char *what,
                                 char *why, size_t whylen) {
  uint32_t f = atomic_load_explicit(&ctrl(s, r)->failed, memory_order_acquire);
  if (!f) return PCCL_OK;
  snprintf(why, whylen, "local rank %d left the segment's rounds after an error of its own (%s) "
           "while this rank waited for its %s of round %llu", r, pccl_status_string((pccl_status_t)f),
           what, (unsigned long long)target);
  return f == PCCL_ERR_MISMATCH ? PCCL_ERR_MISMATCH : PCCL_ERR_TIMEOUT;
}

/* ---- waiting ---------------------------------------------------------- */

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

typedef struct {
  const pccl_seg_watch_t *watch;
  char *why;
  size_t whylen;
  /* a non-blocking call's: a wait that would block returns AGAIN (1); or,
   * posting only (POST_ONLY), every wait for a peer's part does */
  int nowait;
} waiter_t;
#define POST_ONLY 2

/* What a wait of a non-blocking call returns instead of waiting: the round
 * is taken again from its start later (see pccl_seg_advance). Never seen
 * outside this file. */
#define AGAIN ((pccl_status_t)0x7fff)

static int reached(const _Atomic uint64_t *word, const _Atomic uint64_t *alt, uint64_t target) {
  return atomic_load_explicit(word, memory_order_acquire) >= target ||
         (alt && atomic_load_explicit(alt, memory_order_acquire) >= target);
}

/* Waits until *word >= target (or *alt, when given). Spins while the ranks
 * have a core each, else yields; watches the clock and the abort flag. */
static pccl_status_t await_either(const pccl_seg_t *s, const _Atomic uint64_t *word,
                                  const _Atomic uint64_t *alt, uint64_t target, const waiter_t *w,
                                  int peer, const char *what) {
  if (reached(word, alt, target)) return PCCL_OK;
  if (w->nowait) { /* the caller watches the clock (pccl_seg_advance) */
    pccl_status_t st = peer_failed(s, peer, target, what, w->why, w->whylen);
    if (st == PCCL_OK && w->watch->abort && atomic_load_explicit(w->watch->abort, memory_order_relaxed)) {
      snprintf(w->why, w->whylen, "pccl_comm_abort ended the wait for local rank %d's %s of round %llu",
               peer, what, (unsigned long long)target);
      st = PCCL_ERR_ABORTED;
    }
    return st != PCCL_OK ? st : AGAIN;
  }
  double start = 0.0;
  for (unsigned long i = 1;; i++) {
    if (reached(word, alt, target)) return PCCL_OK;
    if (s->yield || i > SPINS)
      sched_yield();
    else
      relax();
    if (i % CLOCK_EVERY) continue;
    if (w->watch->idle) w->watch->idle();
    pccl_status_t st = peer_failed(s, peer, target, what, w->why, w->whylen);
    if (st != PCCL_OK) return st;
    if (w->watch->abort && atomic_load_explicit(w->watch->abort, memory_order_relaxed)) {
      snprintf(w->why, w->whylen, "pccl_comm_abort ended the wait for local rank %d's %s of round %llu",
               peer, what, (unsigned long long)target);
      return PCCL_ERR_ABORTED;
    }
    double t = now();
    if (start == 0.0) start = t;
    if (w->watch->timeout > 0 && t - start > w->watch->timeout) {
      snprintf(w->why, w->whylen,
               "no progress for %.1f s waiting for local rank %d's %s of round %llu: a peer skipped "
               "this collective, died or is stuck", t - start, peer, what, (unsigned long long)target);
      return PCCL_ERR_TIMEOUT;
    }
  }
}

static pccl_status_t await(const pccl_seg_t *s, const _Atomic uint64_t *word, uint64_t target,
                           const waiter_t *w, int peer, const char *what) {
  return await_either(s, word, NULL, target, w, peer, what);
}

/* Before this rank fills its part of `bytes` for round n: every rank has
 * finished the last round that could have used the same place. This one
 * too: a call begun early (pccl_seg_post) may come while this rank's
 * earlier call still reads its own part of that round; a blocking call
 * never does (its rank finished the rounds before). */
static pccl_status_t wait_free(pccl_seg_t *s, uint64_t n, size_t bytes, const waiter_t *w) {
  uint64_t back = small(bytes) ? RING : 2;
  if (n <= back) return PCCL_OK;
  if (atomic_load_explicit(&ctrl(s, s->me)->done, memory_order_relaxed) < n - back) {
    if (w->nowait) return AGAIN;
    snprintf(w->why, w->whylen, "round %llu began before this rank finished round %llu (a bug "
             "in pccl: please report it)", (unsigned long long)n, (unsigned long long)(n - back));
    return PCCL_ERR_INTERNAL;
  }
  for (int r = 0; r < s->n; r++) {
    if (r == s->me || s->known[r] >= n - back) continue;
    pccl_status_t st = await(s, &ctrl(s, r)->done, n - back, w, r, "reading");
    if (st != PCCL_OK) return st;
    s->known[r] = atomic_load_explicit(&ctrl(s, r)->done, memory_order_relaxed);
  }
  return PCCL_OK;
}

/* In a head's digest (whose top bit digest_of leaves clear): the writer
 * published this round before finishing the one before it (a
 * non-blocking call begun behind another, the split all-reduce's second
 * round), so its readers learn nothing of its progress from it. */
#define AHEAD (1ull << 63)

static void publish(pccl_seg_t *s, uint64_t n, size_t bytes, uint64_t digest) {
  head_t *h = head(s, s->me, n, bytes);
  uint64_t done = atomic_load_explicit(&ctrl(s, s->me)->done, memory_order_relaxed);
  h->digest = digest | (done + 1 < n ? AHEAD : 0);
  atomic_store_explicit(&h->seq, n, memory_order_release);
}

/* Waits for rank r's part of round n and checks that it is the same call. */
static pccl_status_t wait_part(pccl_seg_t *s, int r, uint64_t n, size_t bytes, uint64_t digest,
                               const waiter_t *w) {
  if (w->nowait == POST_ONLY) return AGAIN;
  head_t *h = head(s, r, n, bytes);
  pccl_status_t st = await(s, &h->seq, n, w, r, "data");
  if (st != PCCL_OK) return st;
  if ((h->digest & ~AHEAD) != digest) {
    snprintf(w->why, w->whylen,
             "local rank %d made a different call (collective, count, datatype, operation or root) "
             "in round %llu", r, (unsigned long long)n);
    return PCCL_ERR_MISMATCH;
  }
  /* it filled round n only after finishing n - 1, unless ahead */
  if (!(h->digest & AHEAD) && s->known[r] < n - 1) s->known[r] = n - 1;
  return PCCL_OK;
}

static void finish(pccl_seg_t *s, uint64_t n) {
  atomic_store_explicit(&ctrl(s, s->me)->done, n, memory_order_release);
}

/* ---- the collectives --------------------------------------------------- */

typedef struct {
  pccl_seg_t *s;
  const pccl_seg_call_t *c;
  size_t es;
  uint64_t digest;
  pccl_reduce_fn fn;
  waiter_t w;
  int in_step; /* the call failed, but every rank took its rounds (pccl_seg_run) */
  uint64_t posted; /* the last round whose part contribute() published */
  int refused;     /* a direct call some rank refused (direct_takes): it goes through the buffers */
} run_t;

/* The bytes at element `off` of a buffer. */
static const char *in_at(const run_t *x, const void *buf, size_t off) {
  return (const char *)buf + off * x->es;
}
static char *out_at(const run_t *x, void *buf, size_t off) { return (char *)buf + off * x->es; }

/* dst = part 0 op part 1 op ... op part nparts - 1 in rank order, so every
 * rank that reduces gets the same bits; waits for each part as it goes.
 * This rank's own part is read from `mine` when given (a reduce's root does
 * not copy it in). AVG divides by nparts. */
static pccl_status_t reduce_first(run_t *x, uint64_t n, int nparts, size_t part_bytes, size_t skip,
                                  void *dst, size_t elems, const void *mine) {
  pccl_seg_t *s = x->s;
  const unsigned char *first = NULL;
  for (int r = 0; r < nparts; r++) {
    pccl_status_t st = r == s->me ? PCCL_OK : wait_part(s, r, n, part_bytes, x->digest, &x->w);
    if (st != PCCL_OK) return st;
    const unsigned char *p = r == s->me && mine ? mine : part(s, r, n, part_bytes) + skip;
    if (r == 0)
      first = p;
    else
      x->fn(dst, r == 1 ? first : dst, p, elems);
  }
  if (nparts == 1 && first != dst) pccl_copy(dst, first, elems * x->es);
  if (x->c->op == PCCL_AVG && nparts > 1) pccl_kernel_divide(x->c->dtype)(dst, elems, nparts);
  return PCCL_OK;
}

/* The same over every rank's part. */
static pccl_status_t reduce_parts(run_t *x, uint64_t n, size_t part_bytes, size_t skip, void *dst,
                                  size_t elems, const void *mine) {
  return reduce_first(x, n, x->s->n, part_bytes, skip, dst, elems, mine);
}

/* Fills this rank's part of round n with `blocks` pieces of `bytes`, piece b
 * from src + b * stride; once: a non-blocking call's round taken again
 * finds it published. */
static pccl_status_t contribute(run_t *x, uint64_t n, const char *src, size_t bytes, size_t blocks,
                                size_t stride) {
  if (x->posted == n) return PCCL_OK;
  pccl_status_t st = wait_free(x->s, n, bytes * blocks, &x->w);
  if (st != PCCL_OK) return st;
  unsigned char *dst = fill_part(x->s, n, bytes * blocks, src);
  for (size_t b = 0; b < blocks; b++) pccl_copy(dst + b * bytes, src + b * stride, bytes);
  publish(x->s, n, bytes * blocks, x->digest);
  x->posted = n;
  return PCCL_OK;
}

/* Loads every line of each peer's part of round n in a slot, before the
 * waits for their heads. A reader that trails its writers (a reduce's or a
 * gather's root: the other ranks run rounds ahead of it) then takes each
 * part in one transfer between cores instead of two in a row (the head,
 * then the data it announces): 2 ranks, reduce of 128-256 B 0.16-0.19 ->
 * 0.10-0.11 us. Not for readers that run beside their writers (all-reduce,
 * reduce-scatter): there it pulls lines away from a writer still filling
 * them (2 ranks, reduce-scatter of 512 B-1 KiB 0.31-0.50 -> 0.38-0.67 us);
 * nor for a non-blocking call, which takes its round again at every test
 * and would pull the lines each time. A line read early and then
 * overwritten is simply read again; the loads are atomic (relaxed) since
 * a peer may be writing the line, and their values go unused. */
static void touch_parts(const run_t *x, uint64_t n, size_t bytes) {
  const pccl_seg_t *s = x->s;
  if (x->w.nowait || bytes <= PCCL_SEG_INLINE || !small(bytes)) return;
  for (int r = 0; r < s->n; r++) {
    const unsigned char *p = part(s, r, n, bytes);
    for (size_t at = 0; r != s->me && at < bytes; at += LINE)
      (void)__atomic_load_n(p + at, __ATOMIC_RELAXED);
  }
}

/* One round of a collective: elements [off, off + m) of each block. */
typedef pccl_status_t (*round_fn)(run_t *x, uint64_t n, size_t off, size_t m);

static pccl_status_t allreduce_round(run_t *x, uint64_t n, size_t off, size_t m) {
  const pccl_seg_call_t *c = x->c;
  pccl_status_t st = contribute(x, n, in_at(x, c->sendbuf, off), m * x->es, 1, 0);
  return st == PCCL_OK ? reduce_parts(x, n, m * x->es, 0, out_at(x, c->recvbuf, off), m, NULL) : st;
}

/* Rank r's slice of a round of m elements: [m r / p, m (r + 1) / p). */
static size_t slice_at(size_t m, int p, int r) { return m * (size_t)r / (size_t)p; }

/* A larger all-reduce takes two rounds: in round n each rank copies in its
 * vector, less the slice it reduces itself, which it reads from its input;
 * it reduces that slice out of every part and publishes the result as its
 * part of round n + 1, from where the others copy it. Every element is then
 * reduced once on the node, not once per rank. In place, a rank other than
 * local rank 0 copies its slice in too: its result overwrites that input
 * before the rank-order reduction reaches it; so does every rank of a
 * non-blocking call, whose reduction may be taken again. Taken again, a
 * round skips what it published: round n's part, and once its slice's
 * result is out (round n + 1), the reduction too. */
static pccl_status_t allreduce_split_first(run_t *x, uint64_t n, size_t off, size_t m) {
  const pccl_seg_call_t *c = x->c;
  pccl_seg_t *s = x->s;
  size_t es = x->es, lo = slice_at(m, s->n, s->me), hi = slice_at(m, s->n, s->me + 1);
  const char *src = in_at(x, c->sendbuf, off);
  char *dst = out_at(x, c->recvbuf, off);
  int whole = (c->inplace && s->me != 0) || x->w.nowait;
  pccl_status_t st;
  if (x->posted < n) {
    if ((st = wait_free(s, n, m * es, &x->w)) != PCCL_OK) return st;
    unsigned char *in = fill_part(s, n, m * es, src);
    if (whole) {
      pccl_copy(in, src, m * es);
    } else {
      pccl_copy(in, src, lo * es);
      pccl_copy(in + hi * es, src + hi * es, (m - hi) * es);
    }
    publish(s, n, m * es, x->digest);
    x->posted = n;
  }
  st = reduce_parts(x, n, m * es, lo * es, dst + lo * es, hi - lo, whole ? NULL : src + lo * es);
  if (st != PCCL_OK) return st;
  /* round n's parts stay until this rank has published round n + 1: a
   * reduction taken again reads them over */
  if ((st = contribute(x, n + 1, dst + lo * es, (hi - lo) * es, 1, 0)) != PCCL_OK) return st;
  finish(s, n);
  return PCCL_OK;
}

static pccl_status_t allreduce_split_round(run_t *x, uint64_t n, size_t off, size_t m) {
  const pccl_seg_call_t *c = x->c;
  pccl_seg_t *s = x->s;
  size_t es = x->es;
  char *dst = out_at(x, c->recvbuf, off);
  pccl_status_t st = x->posted > n ? PCCL_OK : allreduce_split_first(x, n, off, m);
  for (int r = 0; r < s->n && st == PCCL_OK; r++) {
    size_t rlo = slice_at(m, s->n, r), bytes = (slice_at(m, s->n, r + 1) - rlo) * es;
    if (r == s->me || (st = wait_part(s, r, n + 1, bytes, x->digest, &x->w)) != PCCL_OK) continue;
    pccl_copy(dst + rlo * es, part(s, r, n + 1, bytes), bytes);
  }
  return st;
}

/* The root reads its own part from its input: nobody else does, so it
 * copies nothing in and only reduces while the others copy. In place, a
 * root other than local rank 0 copies it in after all: the partial sums of
 * the lower ranks overwrite its input before its turn comes; so does a
 * non-blocking call's root, whose round may be taken again after it wrote
 * some of its result. */
static pccl_status_t reduce_round(run_t *x, uint64_t n, size_t off, size_t m) {
  const pccl_seg_call_t *c = x->c;
  const char *mine = in_at(x, c->sendbuf, off);
  int copy_in = x->s->me != c->root || (c->inplace && x->s->me != 0) || x->w.nowait;
  pccl_status_t st = copy_in ? contribute(x, n, mine, m * x->es, 1, 0) : PCCL_OK;
  if (st != PCCL_OK || x->s->me != c->root) return st;
  touch_parts(x, n, m * x->es);
  return reduce_parts(x, n, m * x->es, 0, out_at(x, c->recvbuf, off), m, copy_in ? NULL : mine);
}

/* Every rank gives its chunk of every block; rank r reduces block r's. */
static pccl_status_t reduce_scatter_round(run_t *x, uint64_t n, size_t off, size_t m) {
  const pccl_seg_call_t *c = x->c;
  size_t bytes = m * x->es, p = (size_t)x->s->n;
  pccl_status_t st = contribute(x, n, in_at(x, c->sendbuf, off), bytes, p, c->count * x->es);
  if (st != PCCL_OK) return st;
  return reduce_parts(x, n, bytes * p, (size_t)x->s->me * bytes, out_at(x, c->recvbuf, off), m,
                      NULL);
}

static pccl_status_t allgather_round(run_t *x, uint64_t n, size_t off, size_t m) {
  const pccl_seg_call_t *c = x->c;
  pccl_seg_t *s = x->s;
  size_t bytes = m * x->es;
  const char *mine = in_at(x, c->sendbuf, off);
  pccl_status_t st = contribute(x, n, mine, bytes, 1, 0);
  if (st != PCCL_OK) return st;
  if (!c->inplace) pccl_copy(out_at(x, c->recvbuf, (size_t)s->me * c->count + off), mine, bytes);
  for (int r = 0; r < s->n && st == PCCL_OK; r++) {
    if (r == s->me || (st = wait_part(s, r, n, bytes, x->digest, &x->w)) != PCCL_OK) continue;
    pccl_copy(out_at(x, c->recvbuf, (size_t)r * c->count + off), part(s, r, n, bytes), bytes);
  }
  return st;
}

/* Elements [off, off + m) of a block of `count`: how many it has there. */
static size_t within(size_t count, size_t off, size_t m) {
  return count <= off ? 0 : count - off < m ? count - off : m;
}

/* The all-gather's round over blocks of their own sizes: each rank's part
 * holds what its block has of elements [off, off + m), which may be
 * nothing; every part is published and waited for all the same, so the
 * rounds stay in step on every rank. */
static pccl_status_t allgatherv_round(run_t *x, uint64_t n, size_t off, size_t m) {
  const pccl_seg_call_t *c = x->c;
  pccl_seg_t *s = x->s;
  size_t bytes = within(c->counts[s->me], off, m) * x->es;
  const char *mine = in_at(x, c->sendbuf, off);
  pccl_status_t st = contribute(x, n, mine, bytes, 1, 0);
  if (st != PCCL_OK) return st;
  if (!c->inplace && bytes) pccl_copy(out_at(x, c->recvbuf, c->places[s->me] + off), mine, bytes);
  for (int r = 0; r < s->n && st == PCCL_OK; r++) {
    bytes = within(c->counts[r], off, m) * x->es;
    if (r == s->me || (st = wait_part(s, r, n, bytes, x->digest, &x->w)) != PCCL_OK) continue;
    if (bytes) pccl_copy(out_at(x, c->recvbuf, c->places[r] + off), part(s, r, n, bytes), bytes);
  }
  return st;
}

/* The reduce-scatter's round over blocks of their own sizes: a rank's part
 * holds what each block has of elements [off, off + m), back to back, and
 * rank r reduces block r's piece out of every part. */
static pccl_status_t reduce_scatterv_round(run_t *x, uint64_t n, size_t off, size_t m) {
  const pccl_seg_call_t *c = x->c;
  pccl_seg_t *s = x->s;
  size_t es = x->es, bytes = 0, skip = 0;
  for (int b = 0; b < s->n; b++) {
    if (b == s->me) skip = bytes;
    bytes += within(c->counts[b], off, m) * es;
  }
  pccl_status_t st = wait_free(s, n, bytes, &x->w);
  if (st != PCCL_OK) return st;
  unsigned char *dst = fill_part(s, n, bytes, c->sendbuf);
  size_t at = 0;
  for (int b = 0; b < s->n; b++) {
    size_t len = within(c->counts[b], off, m) * es;
    pccl_copy(dst + at, in_at(x, c->sendbuf, c->places[b] + off), len);
    at += len;
  }
  publish(s, n, bytes, x->digest);
  return reduce_parts(x, n, bytes, skip, out_at(x, c->recvbuf, off), within(c->counts[s->me], off, m),
                      NULL);
}

static pccl_status_t broadcast_round(run_t *x, uint64_t n, size_t off, size_t m) {
  const pccl_seg_call_t *c = x->c;
  pccl_seg_t *s = x->s;
  size_t bytes = m * x->es;
  char *dst = out_at(x, c->recvbuf, off);
  if (s->me == c->root) {
    const char *src = in_at(x, c->sendbuf, off);
    pccl_status_t st = contribute(x, n, src, bytes, 1, 0);
    if (st == PCCL_OK && src != dst) pccl_copy(dst, src, bytes);
    return st;
  }
  pccl_status_t st = wait_part(s, c->root, n, bytes, x->digest, &x->w);
  if (st == PCCL_OK) pccl_copy(dst, part(s, c->root, n, bytes), bytes);
  return st;
}

/* Every rank but the root copies its block's piece in; the root copies
 * each peer's out to its place (its own from its input, unless in place). */
static pccl_status_t gather_round(run_t *x, uint64_t n, size_t off, size_t m) {
  const pccl_seg_call_t *c = x->c;
  pccl_seg_t *s = x->s;
  size_t bytes = m * x->es;
  const char *mine = in_at(x, c->sendbuf, off);
  if (s->me != c->root) return contribute(x, n, mine, bytes, 1, 0);
  touch_parts(x, n, bytes);
  if (!c->inplace) pccl_copy(out_at(x, c->recvbuf, (size_t)s->me * c->count + off), mine, bytes);
  pccl_status_t st = PCCL_OK;
  for (int r = 0; r < s->n && st == PCCL_OK; r++) {
    if (r == s->me || (st = wait_part(s, r, n, bytes, x->digest, &x->w)) != PCCL_OK) continue;
    pccl_copy(out_at(x, c->recvbuf, (size_t)r * c->count + off), part(s, r, n, bytes), bytes);
  }
  return st;
}

/* The root copies in the piece of every block; each other rank copies its
 * own block's piece out. */
static pccl_status_t scatter_round(run_t *x, uint64_t n, size_t off, size_t m) {
  const pccl_seg_call_t *c = x->c;
  pccl_seg_t *s = x->s;
  size_t bytes = m * x->es, p = (size_t)s->n;
  char *dst = out_at(x, c->recvbuf, off);
  if (s->me == c->root) {
    pccl_status_t st = contribute(x, n, in_at(x, c->sendbuf, off), bytes, p, c->count * x->es);
    if (st == PCCL_OK && !c->inplace)
      pccl_copy(dst, in_at(x, c->sendbuf, (size_t)s->me * c->count + off), bytes);
    return st;
  }
  pccl_status_t st = wait_part(s, c->root, n, bytes * p, x->digest, &x->w);
  if (st == PCCL_OK) pccl_copy(dst, part(s, c->root, n, bytes * p) + (size_t)s->me * bytes, bytes);
  return st;
}

/* Every rank copies in the piece of each of its blocks; each copies out of
 * every peer's part the piece meant for it. In place, the input's pieces
 * are in the segment before the results overwrite them. */
static pccl_status_t alltoall_round(run_t *x, uint64_t n, size_t off, size_t m) {
  const pccl_seg_call_t *c = x->c;
  pccl_seg_t *s = x->s;
  size_t bytes = m * x->es, p = (size_t)s->n, me = (size_t)s->me;
  pccl_status_t st = contribute(x, n, in_at(x, c->sendbuf, off), bytes, p, c->count * x->es);
  if (st != PCCL_OK) return st;
  if (!c->inplace)
    pccl_copy(out_at(x, c->recvbuf, me * c->count + off), in_at(x, c->sendbuf, me * c->count + off),
              bytes);
  for (int r = 0; r < s->n && st == PCCL_OK; r++) {
    if (r == s->me || (st = wait_part(s, r, n, bytes * p, x->digest, &x->w)) != PCCL_OK) continue;
    pccl_copy(out_at(x, c->recvbuf, (size_t)r * c->count + off),
              part(s, r, n, bytes * p) + me * bytes, bytes);
  }
  return st;
}

/* Rank r reduces the parts of ranks 0..r (scan) or 0..r-1 (exscan), its
 * own read from its input; the last rank's part is read by nobody, so it
 * copies nothing in. In place a rank copies its part in all the same: its
 * result overwrites its input before the rank-order reduction reaches it. */
static pccl_status_t scan_round(run_t *x, uint64_t n, size_t off, size_t m) {
  const pccl_seg_call_t *c = x->c;
  pccl_seg_t *s = x->s;
  int inclusive = c->coll == PCCL_COLL_SCAN, nparts = s->me + inclusive;
  const char *mine = in_at(x, c->sendbuf, off);
  int copy_in = s->me < s->n - 1 || (inclusive && c->inplace);
  pccl_status_t st = copy_in ? contribute(x, n, mine, m * x->es, 1, 0) : PCCL_OK;
  if (st != PCCL_OK || nparts == 0) return st;
  return reduce_first(x, n, nparts, m * x->es, 0, out_at(x, c->recvbuf, off), m,
                      c->inplace ? NULL : mine);
}

/* ---- gatherv, scatterv, all-to-allv: one round ---------------------------- *
 *
 * A rank of these knows only its own counts (a rooted call's root: all of
 * them), so the ranks can agree neither on how many rounds a call takes
 * nor on the size of a peer's part. Each call is therefore one round, even
 * for a rank with nothing to give (the round numbers stay in step). A rank
 * that gives data publishes the count of each block it gives and either
 * the blocks, packed behind the counts, when they fit a buffer, or where
 * they lie in its own memory, for its readers to read by cross-memory
 * attach (these collectives run only where the node's ranks allow it); it
 * then waits until its readers have finished the round. A reader finds a
 * part whose size it does not know under either of the round's head lines
 * (a slot's or a buffer's: the size picks one), which says the size, and
 * checks the count meant for it against the one it expects. */

#define VREMOTE (1ull << 63) /* in a v-part's head: the blocks lie in the writer's memory */
/* A v-part of this many bytes (counts and blocks) or more stays in its
 * writer's memory, read (or, a gatherv's, written) there once, where one
 * in the buffers is copied twice. From 16 KiB up Open MPI's single copy
 * had overtaken the buffers' two: 2 ranks, 32-128 KB (all ranks' blocks
 * together) gatherv 0.61-0.96x, scatterv 0.68-1.03x, all-to-allv
 * 0.56-0.78x Open MPI with parts in the buffers up to their 128 KiB;
 * 1.21-1.48x with this bound, and 1.02-10.3x on 4 ranks, where 4 KiB lost
 * (all-to-allv 0.64-0.73x) and 32 or 64 KiB lost on 2 ranks (pccl-mpibench
 * -b 4K -e 512K -c gatherv,scatterv,alltoallv under the drop-in, the Xeon
 * VM, 2026-11-30). */
#define VREMOTE_MIN ((size_t)16 << 10)

/* Whether a v-part of `bytes` stays in its writer's memory, from `from`
 * bytes on (VREMOTE_MIN; 0: always), and always when it does not fit a
 * buffer. */
static int vremote(const pccl_seg_t *s, size_t bytes, size_t from) {
  return bytes > s->cap || bytes >= from;
}
static pccl_status_t cma_failed(run_t *x, int peer, uint64_t n);
#define VINLINE (PCCL_SEG_INLINE - 8)

/* Where rank r's v-part of round n, of `bytes`, lies: in the head's line
 * behind its size when it fits there, else in the slot or the buffer. */
static unsigned char *vpart_at(const pccl_seg_t *s, int r, uint64_t n, size_t bytes) {
  head_t *h = head(s, r, n, bytes);
  if (bytes <= VINLINE) return h->data + 8;
  unsigned char *data = (unsigned char *)region(s, r) + s->lines;
  return small(bytes) ? data + n % RING * SLOT : data + RING * SLOT + (n & 1) * s->stride;
}

/* This rank's v-part of round n: `k` blocks, block i of counts[i] elements
 * at base + places[i] elements. Packed below `remote_from` bytes (vremote);
 * else the counts, the blocks' byte offsets and base, and *remote is set.
 * Block `own` (-1: none) is this rank's, which no peer reads: a packed
 * part gives it as empty (a scatterv's root copied it for nobody). */
static pccl_status_t vpublish(run_t *x, uint64_t n, int k, const size_t *counts,
                              const size_t *places, const char *base, int own,
                              size_t remote_from, int *remote) {
  pccl_seg_t *s = x->s;
  size_t total = 0;
  for (int i = 0; i < k; i++) total += i == own ? 0 : counts[i] * x->es;
  size_t table = (size_t)k * sizeof(uint64_t), bytes = table + total;
  *remote = vremote(s, bytes, remote_from);
  if (*remote) bytes = 2 * table + sizeof(uint64_t);
  pccl_status_t st = wait_free(s, n, bytes, &x->w);
  if (st != PCCL_OK) return st;
  unsigned char *at = vpart_at(s, s->me, n, bytes), *data = at + table;
  for (int i = 0; i < k; i++) {
    uint64_t c = i == own && !*remote ? 0 : counts[i], off = (uint64_t)(places[i] * x->es);
    memcpy(at + (size_t)i * sizeof c, &c, sizeof c);
    if (*remote) {
      memcpy(data + (size_t)i * sizeof off, &off, sizeof off);
    } else if (c) {
      pccl_copy(data, base + off, c * x->es);
      data += c * x->es;
    }
  }
  if (*remote) {
    uint64_t b = (uint64_t)(uintptr_t)base;
    memcpy(at + 2 * table, &b, sizeof b);
  }
  head_t *h = head(s, s->me, n, bytes);
  uint64_t meta = (uint64_t)bytes | (*remote ? VREMOTE : 0);
  memcpy(h->data, &meta, sizeof meta);
  publish(s, n, bytes, x->digest);
  return PCCL_OK;
}

/* Block i of a v-part as its reader finds it: packed in the part at
 * `data`, or (remote) at the address `addr` in the writer's memory. */
typedef struct {
  int remote;
  const unsigned char *data;
  uint64_t addr;
} vblock_t;

/* Waits for rank r's v-part of round n and finds block i (of k) in it,
 * checking that it holds `want` elements. */
static pccl_status_t vfind(run_t *x, uint64_t n, int r, int k, int i, size_t want, vblock_t *b) {
  pccl_seg_t *s = x->s;
  head_t *slot = head(s, r, n, 1), *buf = head(s, r, n, SLOT + 1);
  pccl_status_t st = await_either(s, &slot->seq, &buf->seq, n, &x->w, r, "data");
  if (st != PCCL_OK) return st;
  head_t *h = atomic_load_explicit(&slot->seq, memory_order_acquire) >= n ? slot : buf;
  if ((h->digest & ~AHEAD) != x->digest) {
    snprintf(x->w.why, x->w.whylen, "local rank %d made a different call (collective, datatype "
             "or root) in round %llu", r, (unsigned long long)n);
    return PCCL_ERR_MISMATCH;
  }
  if (!(h->digest & AHEAD) && s->known[r] < n - 1) s->known[r] = n - 1;
  uint64_t meta, count = 0, off = 0;
  memcpy(&meta, h->data, sizeof meta);
  size_t bytes = (size_t)(meta & ~VREMOTE), table = (size_t)k * sizeof(uint64_t);
  const unsigned char *at = vpart_at(s, r, n, bytes);
  for (int j = 0; j <= i; j++) {
    memcpy(&count, at + (size_t)j * sizeof count, sizeof count);
    if (j < i) off += count * x->es;
  }
  if (count != want) {
    snprintf(x->w.why, x->w.whylen, "local rank %d gives %llu elements where this rank expects "
             "%zu (its counts differ) in round %llu", r, (unsigned long long)count, want,
             (unsigned long long)n);
    x->in_step = 1; /* the round itself went as every rank expects */
    return PCCL_ERR_MISMATCH;
  }
  b->remote = (meta & VREMOTE) != 0;
  b->data = at + table + off;
  if (b->remote) {
    uint64_t base;
    memcpy(&off, at + table + (size_t)i * sizeof off, sizeof off);
    memcpy(&base, at + 2 * table, sizeof base);
    b->addr = base + off;
  }
  return PCCL_OK;
}

/* Reads block i (of k) of rank r's v-part of round n into dst, which takes
 * `want` elements: copied from the part, or read from r's memory. */
static pccl_status_t vread(run_t *x, uint64_t n, int r, int k, int i, void *dst, size_t want) {
  vblock_t b;
  pccl_status_t st = vfind(x, n, r, k, i, want, &b);
  if (st != PCCL_OK || !want) return st;
  if (!b.remote) {
    pccl_copy(dst, b.data, want * x->es);
    return PCCL_OK;
  }
  return pccl_cma_read(x->s->pids[r], dst, b.addr, want * x->es) ? PCCL_OK : cma_failed(x, r, n);
}

/* After a remote v-part: this rank has finished round n, and waits until
 * the ranks that read it (all but itself) have. */
static pccl_status_t vrelease(run_t *x, uint64_t n) {
  pccl_seg_t *s = x->s;
  finish(s, n);
  for (int r = 0; r < s->n; r++) {
    if (r == s->me) continue;
    pccl_status_t st = await(s, &ctrl(s, r)->done, n, &x->w, r, "reading");
    if (st != PCCL_OK) return st;
  }
  return PCCL_OK;
}

static const size_t zero_place = 0;

/* Where rank r's block lands in this rank's output (none when empty: the
 * output may then be NULL). */
static void *vdst(const run_t *x, int r) {
  return x->c->counts[r] ? out_at(x, x->c->recvbuf, x->c->places[r]) : NULL;
}

/* A gatherv's rank whose block does not fit a buffer writes it into the
 * root's output itself, by cross-memory attach, while the root copies its
 * own block and the other ranks' (the root reading every large block in
 * turn ran at 0.90-0.94x Open MPI's speed on 2 ranks at 2-8 MiB, 0.57x on
 * 4 ranks at 8-16 MiB): its part says so (remote), the root then
 * publishes where every block goes (its output's base and places, as a
 * remote part of its own), and waits until each such rank has finished
 * the round. */
static pccl_status_t gatherv_push(run_t *x, uint64_t n) {
  const pccl_seg_call_t *c = x->c;
  pccl_seg_t *s = x->s;
  int remote = 0;
  pccl_status_t st =
      vpublish(x, n, 1, &c->count, &zero_place, c->sendbuf, -1, VREMOTE_MIN, &remote);
  if (st != PCCL_OK || !remote) return st;
  vblock_t b;
  if ((st = vfind(x, n, c->root, s->n, s->me, c->count, &b)) != PCCL_OK) return st;
  /* a root that gave up waiting (timeout, abort) has its output back: its
   * failure is published before it returns (run_path), so a writer late
   * by a whole PCCL_TIMEOUT stops here unless it lost that race too */
  if ((st = peer_failed(s, c->root, n, "table", x->w.why, x->w.whylen)) != PCCL_OK) return st;
  if (!b.remote) {
    snprintf(x->w.why, x->w.whylen, "the root's table of round %llu is not remote (the ranks' "
             "PCCL_SEG_BYTES differ?)", (unsigned long long)n);
    return PCCL_ERR_INTERNAL;
  }
  return pccl_cma_write(s->pids[c->root], b.addr, c->sendbuf, c->count * x->es)
             ? PCCL_OK
             : cma_failed(x, c->root, n);
}

/* Whether rank r's block of a gatherv is one it writes into the root's
 * output (gatherv_push), by the root's counts. */
static int pushes(const run_t *x, int r) {
  return r != x->s->me && vremote(x->s, sizeof(uint64_t) + x->c->counts[r] * x->es, VREMOTE_MIN);
}

static pccl_status_t gatherv_round(run_t *x, uint64_t n, size_t off, size_t m) {
  (void)off, (void)m; /* one round */
  const pccl_seg_call_t *c = x->c;
  pccl_seg_t *s = x->s;
  if (s->me != c->root) return gatherv_push(x, n);
  pccl_status_t st = PCCL_OK;
  int table = 0, remote; /* the table gives places, never blocks (remote from 0 bytes) */
  for (int r = 0; r < s->n && st == PCCL_OK; r++) {
    vblock_t b;
    if (r == s->me || (st = vfind(x, n, r, 1, 0, c->counts[r], &b)) != PCCL_OK || !c->counts[r])
      continue;
    if (!b.remote) {
      pccl_copy(vdst(x, r), b.data, c->counts[r] * x->es);
    } else if (!table) { /* the first large block: where they all go */
      st = vpublish(x, n, s->n, c->counts, c->places, c->recvbuf, -1, 0, &remote);
      table = st == PCCL_OK;
    }
  }
  /* a rank whose count differs from the root's (an error in step) may
   * wait for the table: it learns the root's count there */
  if (st != PCCL_OK && x->in_step && !table)
    table = vpublish(x, n, s->n, c->counts, c->places, c->recvbuf, -1, 0, &remote) == PCCL_OK;
  size_t me = (size_t)s->me;
  if (st == PCCL_OK && !c->inplace && c->counts[me])
    pccl_copy(out_at(x, c->recvbuf, c->places[me]), c->sendbuf, c->counts[me] * x->es);
  /* the writers have finished before the output is the caller's again,
   * whatever went wrong here; a writer that did not finish leaves the
   * round out of step */
  for (int r = 0; r < s->n && table; r++) {
    if (!pushes(x, r)) continue;
    pccl_status_t done = await(s, &ctrl(s, r)->done, n, &x->w, r, "writing");
    if (done == PCCL_OK) PCCL_PEER_WROTE(vdst(x, r), c->counts[r] * x->es);
    else if (st == PCCL_OK || x->in_step) st = done, x->in_step = 0;
  }
  return st;
}

static pccl_status_t scatterv_round(run_t *x, uint64_t n, size_t off, size_t m) {
  (void)off, (void)m;
  const pccl_seg_call_t *c = x->c;
  pccl_seg_t *s = x->s;
  if (s->me != c->root) return vread(x, n, c->root, s->n, s->me, c->recvbuf, c->count);
  int remote = 0;
  pccl_status_t st =
      vpublish(x, n, s->n, c->counts, c->places, c->sendbuf, s->me, VREMOTE_MIN, &remote);
  size_t me = (size_t)s->me;
  if (st == PCCL_OK && !c->inplace && c->counts[me])
    pccl_copy(c->recvbuf, in_at(x, c->sendbuf, c->places[me]), c->counts[me] * x->es);
  return st == PCCL_OK && remote ? vrelease(x, n) : st;
}

/* In place, the blocks a remote part gives are read from a copy: the
 * results overwrite them while the peers read. */
static pccl_status_t alltoallv_round(run_t *x, uint64_t n, size_t off, size_t m) {
  (void)off, (void)m;
  const pccl_seg_call_t *c = x->c;
  pccl_seg_t *s = x->s;
  size_t p = (size_t)s->n, me = (size_t)s->me, total = 0, *packed = NULL;
  const char *base = c->sendbuf;
  const size_t *places = c->splaces;
  char *copy = NULL;
  for (size_t i = 0; i < p; i++) total += c->scounts[i];
  /* in place a part stays packed while it fits a buffer (no copy, within
   * any PCCL_MAX_SCRATCH); its own block is counted too: at least what
   * vpublish finds remote */
  size_t from = c->inplace ? SIZE_MAX : VREMOTE_MIN;
  if (c->inplace && vremote(s, total * x->es + p * sizeof(uint64_t), from)) {
    if (total * x->es > c->scratch_limit) {
      snprintf(x->w.why, x->w.whylen, "an in-place all-to-allv of %zu bytes to send needs a copy of "
               "them here, more than PCCL_MAX_SCRATCH (%zu bytes): raise it, or choose "
               "PCCL_ALGO=alltoallv:pairwise", total * x->es, c->scratch_limit);
      return PCCL_ERR_UNSUPPORTED;
    }
    copy = malloc(total * x->es + 1);
    packed = malloc(p * sizeof *packed);
    if (!copy || !packed) {
      free(copy), free(packed);
      snprintf(x->w.why, x->w.whylen, "out of memory for a copy of the input (%zu bytes)",
               total * x->es);
      return PCCL_ERR_NO_MEMORY;
    }
    for (size_t i = 0, at = 0; i < p; at += c->scounts[i++]) {
      packed[i] = at;
      pccl_copy(copy + at * x->es, in_at(x, c->sendbuf, c->splaces[i]), c->scounts[i] * x->es);
    }
    base = copy, places = packed;
  }
  int remote = 0;
  pccl_status_t st = vpublish(x, n, s->n, c->scounts, places, base, s->me, from, &remote);
  if (st == PCCL_OK && !c->inplace && c->counts[me])
    pccl_copy(out_at(x, c->recvbuf, c->places[me]), in_at(x, c->sendbuf, c->splaces[me]),
              c->counts[me] * x->es);
  for (int r = 0; r < s->n && st == PCCL_OK; r++)
    if (r != s->me) st = vread(x, n, r, s->n, s->me, vdst(x, r), c->counts[r]);
  if (remote && (st == PCCL_OK || x->in_step)) { /* its readers may still read its blocks */
    pccl_status_t released = vrelease(x, n);
    if (released != PCCL_OK) st = released, x->in_step = 0;
  }
  free(copy), free(packed);
  return st;
}

/* ---- direct calls ------------------------------------------------------- *
 *
 * A large call on ordinary memory need not pass through the segment at all:
 * in round n every rank publishes where its buffers lie, and each then
 * reads its peers' inputs and writes into their outputs with cross-memory
 * attach, folding a reduction into the read; in round n + 1 it says it has
 * finished (or failed) and waits until every peer has, so nobody returns
 * while a peer still uses its buffers. Each byte then crosses between
 * processes once, where the buffers' rounds copy it in and out again. */

static int direct_takes(const pccl_seg_call_t *c);

/* Round n: publishes this rank's buffers and learns every peer's, having
 * checked that each makes the same call; *refused when some rank cannot
 * take it direct. */
static pccl_status_t exchange_addrs(run_t *x, uint64_t n, addrs_t *peers, int *refused) {
  pccl_seg_t *s = x->s;
  pccl_status_t st = wait_free(s, n, BIG, &x->w);
  if (st != PCCL_OK) return st;
  const pccl_seg_call_t *c = x->c;
  /* an all-gather's block in place lies in the output */
  const void *src = c->inplace && c->coll == PCCL_COLL_ALLGATHER
                        ? (const char *)c->recvbuf + (size_t)s->me * c->count * x->es
                        : c->sendbuf;
  addrs_t mine = {(uint64_t)(uintptr_t)src, (uint64_t)(uintptr_t)c->recvbuf, !direct_takes(c)};
  memcpy(head(s, s->me, n, BIG)->data, &mine, sizeof mine);
  publish(s, n, BIG, x->digest);
  *refused = (int)mine.refuses;
  for (int r = 0; r < s->n; r++) {
    if (r == s->me) continue;
    if ((st = wait_part(s, r, n, BIG, x->digest, &x->w)) != PCCL_OK) return st;
    memcpy(&peers[r], head(s, r, n, BIG)->data, sizeof peers[r]);
    *refused |= (int)peers[r].refuses;
  }
  return PCCL_OK;
}

/* Round n + 1: this rank is done with its peers' buffers, `mine` saying
 * whether it failed; waits until every peer is done with this rank's. A
 * failure anywhere fails the call on every rank. */
static pccl_status_t direct_done(run_t *x, uint64_t n, pccl_status_t mine) {
  pccl_seg_t *s = x->s;
  pccl_status_t st = wait_free(s, n, BIG, &x->w);
  if (st != PCCL_OK) return st;
  uint32_t code = (uint32_t)mine;
  memcpy(head(s, s->me, n, BIG)->data, &code, sizeof code);
  publish(s, n, BIG, x->digest);
  for (int r = 0; r < s->n; r++) {
    if (r == s->me) continue;
    if ((st = wait_part(s, r, n, BIG, x->digest, &x->w)) != PCCL_OK) return st;
    memcpy(&code, head(s, r, n, BIG)->data, sizeof code);
    if (code != PCCL_OK && mine == PCCL_OK) {
      snprintf(x->w.why, x->w.whylen, "local rank %d could not reach a peer's buffers by "
               "cross-memory attach in round %llu", r, (unsigned long long)n);
      mine = (pccl_status_t)code;
    }
  }
  return mine;
}

static pccl_status_t cma_failed(run_t *x, int peer, uint64_t n) {
  snprintf(x->w.why, x->w.whylen, "cross-memory attach to local rank %d's buffers failed in round "
           "%llu (%s)", peer, (unsigned long long)n, strerror(errno));
  return PCCL_ERR_INTERNAL;
}

/* Reduces elements [at, at + k) of every rank's input into `out`, in rank
 * order (every rank's result then has the same bits as the buffers'
 * form): each peer's piece is read into the bounce buffer, this rank's own
 * from `own`. */
static pccl_status_t reduce_piece(run_t *x, uint64_t n, size_t at, size_t k, char *out,
                                  const char *own) {
  pccl_seg_t *s = x->s;
  size_t bytes = k * x->es;
  const char *prev = NULL;
  for (int r = 0; r < s->n; r++) {
    const char *p = own;
    if (r != s->me) {
      char *into = s->bounce + (r == 0 ? 0 : DIRECT_PIECE);
      if (!pccl_cma_read(s->pids[r], into, s->peers[r].send + at * x->es, bytes))
        return cma_failed(x, r, n);
      p = into;
    }
    if (r == 0)
      prev = p;
    else
      x->fn(out, r == 1 ? prev : out, p, k);
  }
  if (x->c->op == PCCL_AVG) pccl_kernel_divide(x->c->dtype)(out, k, s->n);
  return PCCL_OK;
}

/* This rank's own piece at element `at`: read in place, or, in place on a
 * rank other than local rank 0, kept aside first (the partial result
 * overwrites it before the rank order reaches it). */
static const char *own_piece(run_t *x, size_t at, size_t bytes) {
  const char *own = in_at(x, x->c->sendbuf, at);
  return x->c->inplace && x->s->me != 0 ? pccl_copy(x->s->bounce + 2 * DIRECT_PIECE, own, bytes) : own;
}

/* Where rank r's slice starts when the results go to `root` alone: the
 * root reads its peers' pieces of its slice, each other rank reads them and
 * then writes the result into the root's output, one transfer more per
 * element; so the root takes p shares of the vector to the others' p - 1
 * each, and every rank moves about as many bytes. Even slices when
 * root < 0. */
static size_t rooted_slice_at(size_t m, int p, int root, int r) {
  if (root < 0) return slice_at(m, p, r);
  size_t before = (size_t)r * (size_t)(p - 1) + (r > root ? 1 : 0);
  size_t total = (size_t)p * (size_t)(p - 1) + 1; /* m before / total, without overflow */
  return m / total * before + m % total * before / total;
}

/* Rank r reduces slice r of the vector piece by piece and writes each
 * finished piece, still in cache, into the output of `root`, or of every
 * peer when root < 0 (all-reduce); a rank without an output of its own (a
 * reduce's leaves) reduces into the bounce buffer. */
static pccl_status_t reduce_slices(run_t *x, uint64_t n, size_t m, int root) {
  pccl_seg_t *s = x->s;
  pccl_status_t mine = PCCL_OK;
  int keeps = root < 0 || root == s->me;
  size_t es = x->es, step = DIRECT_PIECE / es;
  size_t lo = rooted_slice_at(m, s->n, root, s->me), hi = rooted_slice_at(m, s->n, root, s->me + 1);
  for (size_t at = lo; at < hi && mine == PCCL_OK; at += step) {
    size_t k = hi - at < step ? hi - at : step, bytes = k * es;
    char *out = keeps ? out_at(x, x->c->recvbuf, at) : s->bounce + 3 * DIRECT_PIECE;
    mine = reduce_piece(x, n, at, k, out, own_piece(x, at, bytes));
    for (int r = 0; r < s->n && mine == PCCL_OK; r++)
      if (r != s->me && (root < 0 || r == root) &&
          !pccl_cma_write(s->pids[r], s->peers[r].recv + at * es, out, bytes))
        mine = cma_failed(x, r, n);
  }
  return mine;
}

static pccl_status_t allreduce_move(run_t *x, uint64_t n, size_t m) {
  return reduce_slices(x, n, m, -1);
}

/* Every rank reduces its slice and writes it into the root's output, so
 * every core works, not the root's alone. */
static pccl_status_t reduce_move(run_t *x, uint64_t n, size_t m) {
  return reduce_slices(x, n, m, x->c->root);
}

/* Every rank but the root reads the root's vector, all but its first
 * share: the root, which would otherwise only wait, writes that share into
 * every reader's output meanwhile. A share of 1/p of the vector gives the
 * root as many bytes to move as each reader ((p - 1)/p; out of place it
 * also copies its own). 2 ranks, pccl-bench -c broadcast -a cma, malloc
 * buffers, two runs each way: 64 KiB 4.1-5.2 us read alone, 3.8-3.9
 * shared; 1 MiB 80.4-80.5 against 31.6-34.8; 3 ranks (2 cores), 1 MiB
 * 180-204 against 130-136 (docs/results/bcast-share). */
static size_t broadcast_share(const run_t *x, size_t m) { return m / (size_t)x->s->n * x->es; }

static pccl_status_t broadcast_move(run_t *x, uint64_t n, size_t m) {
  const pccl_seg_call_t *c = x->c;
  pccl_seg_t *s = x->s;
  int root = c->root;
  size_t bytes = m * x->es, share = broadcast_share(x, m);
  if (s->me != root)
    return pccl_cma_read(s->pids[root], (char *)c->recvbuf + share, s->peers[root].send + share,
                         bytes - share)
               ? PCCL_OK
               : cma_failed(x, root, n);
  if (c->sendbuf != c->recvbuf) pccl_copy(c->recvbuf, c->sendbuf, bytes);
  /* a reader that gave up waiting for a late root (timeout, abort) has its
   * output back: its failure is published before it returns (run_path),
   * so a root late by a whole PCCL_TIMEOUT stops here, as a gatherv's
   * writer does, unless it lost that race too */
  pccl_status_t st = PCCL_OK;
  for (int k = 1; k < s->n && share && st == PCCL_OK; k++) {
    int r = (root + k) % s->n;
    if ((st = peer_failed(s, r, n, "output", x->w.why, x->w.whylen)) == PCCL_OK &&
        !pccl_cma_write(s->pids[r], s->peers[r].recv, c->sendbuf, share))
      st = cma_failed(x, r, n);
  }
  return st;
}

/* Rank r copies its own block into its output and writes it into every
 * peer's, a piece at a time: each piece comes from memory once and then
 * from cache, where reading every peer's block would bring each block from
 * memory once per reader as well as once for its own copy. */
static pccl_status_t allgather_move(run_t *x, uint64_t n, size_t m) {
  pccl_seg_t *s = x->s;
  const pccl_seg_call_t *c = x->c;
  size_t bytes = m * x->es, mine = (size_t)s->me * bytes;
  const char *src = c->inplace ? (const char *)c->recvbuf + mine : c->sendbuf;
  for (size_t at = 0; at < bytes; at += DIRECT_PIECE) {
    size_t k = bytes - at < DIRECT_PIECE ? bytes - at : DIRECT_PIECE;
    if (!c->inplace) pccl_copy((char *)c->recvbuf + mine + at, src + at, k);
    for (int r = 0; r < s->n; r++)
      if (r != s->me && !pccl_cma_write(s->pids[r], s->peers[r].recv + mine + at, src + at, k))
        return cma_failed(x, r, n);
  }
  return PCCL_OK;
}

/* Scatter and gather mirror each other: the root copies its own block
 * between its two buffers (unless in place), and every other rank moves
 * its block between its own buffer and the root's by cross-memory attach,
 * all of them at once, reading it (scatter) or writing it (gather): each
 * byte crosses once, where the buffers copy it in and out. */
static pccl_status_t rooted_move(run_t *x, uint64_t n, size_t m) {
  const pccl_seg_call_t *c = x->c;
  pccl_seg_t *s = x->s;
  size_t bytes = m * x->es, mine = (size_t)s->me * bytes;
  int gather = c->coll == PCCL_COLL_GATHER;
  if (s->me == c->root) {
    if (!c->inplace)
      pccl_copy((char *)c->recvbuf + (gather ? mine : 0),
                (const char *)c->sendbuf + (gather ? 0 : mine), bytes);
    return PCCL_OK;
  }
  pid_t pid = s->pids[c->root];
  int moved = gather ? pccl_cma_write(pid, s->peers[c->root].recv + mine, c->sendbuf, bytes)
                     : pccl_cma_read(pid, c->recvbuf, s->peers[c->root].send + mine, bytes);
  return moved ? PCCL_OK : cma_failed(x, c->root, n);
}

/* Every rank copies its own block and writes block r of its input into
 * rank r's output, starting with the next rank up so that the ranks write
 * to different peers at a time. Never in place (direct_takes): a rank's
 * input block for r lies where r's block for it must go, and r may not
 * have sent it yet. */
static pccl_status_t alltoall_move(run_t *x, uint64_t n, size_t m) {
  const pccl_seg_call_t *c = x->c;
  pccl_seg_t *s = x->s;
  size_t bytes = m * x->es, mine = (size_t)s->me * bytes;
  const char *in = c->sendbuf;
  pccl_copy((char *)c->recvbuf + mine, in + mine, bytes);
  for (int k = 1; k < s->n; k++) {
    int r = (s->me + k) % s->n;
    if (!pccl_cma_write(s->pids[r], s->peers[r].recv + mine, in + (size_t)r * bytes, bytes))
      return cma_failed(x, r, n);
  }
  return PCCL_OK;
}

/* What a direct call does between its two handshakes, and what its peers
 * then have written into this rank's output (Valgrind is told). */
typedef enum { WROTE_NONE, WROTE_ALL, WROTE_ROOT, WROTE_LEAVES } wrote_t;
typedef struct {
  pccl_status_t (*move)(run_t *x, uint64_t n, size_t m);
  wrote_t peers_write; /* into every rank's output, the root's only, or all but the root's */
  int blocks;          /* the output holds a block per rank */
  size_t crowded_min;  /* with more ranks than cores, direct from this many bytes (below) */
} direct_t;

/* With more ranks than cores a timed call goes direct from a size (a
 * rank's block, or the vector), through the buffers below, untimed (see
 * pccl_seg_run). Ranks there take turns on the cores, and which ranks
 * share one is the scheduler's choice, fixed for a while: on the AMD EPYC
 * family 25 host one launch of 4 ranks had the buffers ahead of the
 * direct calls at every size, the next one behind. The direct calls' worst
 * is the better: 4 ranks on 2 cores, pccl-bench -a seg,cma -b 128K -e 32M
 * -f 4, two launches each (docs/results/zen4): all-reduce seg 0.73-3.10x
 * Open MPI, cma 0.90-3.58x; all-gather seg 0.68-3.14x, cma 0.98-2.18x;
 * reduce seg 0.48-5.95x, cma 0.86-4.64x; broadcast from 512 KiB seg
 * 0.53-0.95x, cma 1.12-2.78x. On the Xeon host the buffers were ahead for
 * the all-reduce and all-gather but the direct calls never under 1.02x
 * and 1.09x (docs/results/push), and the scatter, gather and all-to-all of
 * 128 KiB blocks went 0.65x, 0.94x and 0.72x through the buffers against
 * 1.10x, 1.44x and 1.22x direct (docs/results/rooted-cma). Blocks of 64
 * KiB that are only moved go direct too (zen4, three launches: scatter,
 * gather, all-to-all seg 0.33-1.65x, cma 0.95-1.27x); reductions of 64 KiB
 * stay on the buffers (the reduce seg 0.85-1.65x, cma 0.71-1.45x; at 128
 * and 256 KiB cma 1.10x or more). */
#define CROWDED_MOVE_MIN ((size_t)64 << 10)
#define CROWDED_REDUCE_MIN (((size_t)64 << 10) + 1)

static const direct_t directs[PCCL_COLL_COUNT] = {
    [PCCL_COLL_ALLREDUCE] = {allreduce_move, WROTE_ALL, 0, CROWDED_REDUCE_MIN},
    [PCCL_COLL_ALLGATHER] = {allgather_move, WROTE_ALL, 1, CROWDED_MOVE_MIN},
    [PCCL_COLL_BROADCAST] = {broadcast_move, WROTE_LEAVES, 0, CROWDED_MOVE_MIN},
    [PCCL_COLL_REDUCE] = {reduce_move, WROTE_ROOT, 0, CROWDED_REDUCE_MIN},
    [PCCL_COLL_SCATTER] = {rooted_move, WROTE_NONE, 0, CROWDED_MOVE_MIN},
    [PCCL_COLL_GATHER] = {rooted_move, WROTE_ROOT, 1, CROWDED_MOVE_MIN},
    [PCCL_COLL_ALLTOALL] = {alltoall_move, WROTE_ALL, 1, CROWDED_MOVE_MIN},
};

/* Whether the direct form takes this call on this rank (see
 * alltoall_move). Ranks may differ (pccl tells an in-place call by its
 * pointers, on each rank), so a direct call that any rank refuses runs
 * through the buffers on every rank after its two rounds, the refusal
 * learnt in the first (run_path). */
static int direct_takes(const pccl_seg_call_t *c) {
  return !(c->coll == PCCL_COLL_ALLTOALL && c->inplace);
}


static int crowded_direct(const pccl_seg_call_t *c, size_t es) {
  return c->count * es >= directs[c->coll].crowded_min; /* timed calls all have a direct form */
}

/* A direct call: round n publishes the buffers, the data move, round n + 1
 * says every rank is done with its peers'. */
static pccl_status_t direct_round(run_t *x, uint64_t n, size_t off, size_t m) {
  (void)off; /* a direct call runs whole */
  const direct_t *d = &directs[x->c->coll];
  pccl_status_t st = exchange_addrs(x, n, x->s->peers, &x->refused);
  if (st == PCCL_OK) st = direct_done(x, n + 1, x->refused ? PCCL_OK : d->move(x, n, m));
  if (x->refused) return st;
  int root = x->s->me == x->c->root;
  int written = d->peers_write == WROTE_ALL || (d->peers_write == WROTE_ROOT && root) ||
                (d->peers_write == WROTE_LEAVES && !root);
  size_t blocks = d->blocks ? (size_t)x->s->n : 1;
  if (st == PCCL_OK && written) PCCL_PEER_WROTE(x->c->recvbuf, blocks * m * x->es);
  return st;
}

/* The collectives: a round, whether a rank's part of it holds a chunk of
 * every block (reduce-scatter) or of one vector, and how many round numbers
 * it takes. */
typedef struct {
  round_fn round;
  int all_blocks;
  int rounds;
  int whole;    /* one pass over the whole call, its data not in the buffers */
  size_t piece; /* rounds of at most this many bytes per block (0: a buffer's worth) */
} seg_coll_t;

/* A reduce's rounds are short (while every rank has a core of its own,
 * see run_rounds): its root only reduces while the others copy in, so it
 * reduces one piece while they copy the next (two buffers: one round
 * ahead). 2 ranks, pccl-bench -c reduce -a seg, float32, 16 KiB-1
 * MiB, twice each way alternately: 8 KiB pieces 1.1-2.7x faster than one
 * 128 KiB round at 16-256 KiB in both pairs of runs, mixed above (the
 * direct path takes most of those); broadcast's the same way came out
 * slower. Pieces of a slot's size go through the ring of slots, up to 32
 * rounds ahead of the root instead of one: 8-128 KiB 0.89-0.96 / 1.79-1.94
 * / 3.80-3.96 / 7.5-8.1 / 14.9-16.7 us against 1.13-1.15 / 2.28-2.29 /
 * 4.49-4.73 / 9.3-9.4 / 18.6-19.2 with 8 KiB pieces; 2 KiB pieces were
 * slower than either (Xeon host, two runs each). */
#define REDUCE_PIECE SLOT

static const seg_coll_t colls[PCCL_COLL_COUNT] = {
    [PCCL_COLL_ALLREDUCE] = {allreduce_round, 0, 1},
    [PCCL_COLL_ALLGATHER] = {allgather_round, 0, 1},
    [PCCL_COLL_REDUCE_SCATTER] = {reduce_scatter_round, 1, 1},
    [PCCL_COLL_BROADCAST] = {broadcast_round, 0, 1},
    [PCCL_COLL_REDUCE] = {reduce_round, 0, 1, 0, REDUCE_PIECE},
    [PCCL_COLL_GATHER] = {gather_round, 0, 1},
    [PCCL_COLL_SCATTER] = {scatter_round, 1, 1},
    [PCCL_COLL_ALLTOALL] = {alltoall_round, 1, 1},
    [PCCL_COLL_SCAN] = {scan_round, 0, 1},
    [PCCL_COLL_EXSCAN] = {scan_round, 0, 1},
    [PCCL_COLL_ALLGATHERV] = {allgatherv_round, 0, 1},
    [PCCL_COLL_GATHERV] = {gatherv_round, 0, 1, 1, 0},
    [PCCL_COLL_SCATTERV] = {scatterv_round, 0, 1, 1, 0},
    [PCCL_COLL_ALLTOALLV] = {alltoallv_round, 0, 1, 1, 0},
    [PCCL_COLL_REDUCE_SCATTERV] = {reduce_scatterv_round, 1, 1},
};
static const seg_coll_t allreduce_split = {allreduce_split_round, 0, 2, 0, 0};
static const seg_coll_t direct = {direct_round, 0, 2, 1, 0};

/* From this size the split all-reduce's second round costs less than
 * reducing the whole vector on every rank. pccl-bench -a seg, float32,
 * every size split or not, medians of 7 rounds: on 2 ranks the whole vector
 * wins at 64 KiB (9.2 against 11.9 us), the split from 128 KiB (15.4
 * against 17.7 us; 1.13-1.24x faster at 256 KiB-16 MiB); on 4 ranks they
 * tie at 16-32 KiB and the split wins from 64 KiB (21.1 against 23.3 us;
 * 1.3-1.45x faster at 256 KiB-16 MiB). */
static size_t split_min(int nranks) { return nranks == 2 ? (size_t)128 << 10 : (size_t)32 << 10; }

static const seg_coll_t *coll_of(const pccl_seg_t *s, const pccl_seg_call_t *c, size_t es,
                                 int direct_call) {
  if (direct_call) return &direct;
  if (c->coll == PCCL_COLL_ALLREDUCE && s->n > 1 && c->count * es >= split_min(s->n))
    return &allreduce_split;
  return &colls[c->coll];
}

/* The elements of each block a round of the call takes: as many as a
 * buffer holds (the segment's least size holds at least one element of
 * every block), or a piece's worth. */
static size_t round_elems(const run_t *x, const seg_coll_t *k) {
  size_t blocks = k->all_blocks ? (size_t)x->s->n : 1;
  /* pieces only while every rank has a core: with more ranks than cores a
   * round's waits yield the core, and 4 ranks on 2 cores made the reduce of
   * 32 KiB-2 MiB 0.94-1.78x faster than Open MPI in pieces against
   * 2.14-3.28x in whole buffers (docs/results/repeat against
   * docs/results/timed) */
  size_t piece = x->s->yield ? 0 : k->piece;
  size_t round_bytes = piece && piece * blocks < x->s->cap ? piece * blocks : x->s->cap;
  size_t count = x->c->count, chunk = count;
  /* only calls of several rounds divide: a 64-bit division cost a seventh
   * of an 8-byte broadcast's time in the segment (perf) */
  if (!k->whole && count * x->es * blocks > round_bytes) {
    chunk = round_bytes / (x->es * blocks);
    if (chunk == 0) chunk = 1;
  }
  return chunk;
}

/* Runs the call as rounds of round_elems() each. */
static pccl_status_t run_rounds(run_t *x, const seg_coll_t *k) {
  size_t count = x->c->count, chunk = round_elems(x, k);
  /* a whole call takes its round even when it is empty here (the
   * v-collectives: a rank with no data of its own still keeps the rounds
   * in step) */
  for (size_t off = 0; off < count || (k->whole && off == 0); off += chunk ? chunk : 1) {
    uint64_t n = x->s->round + 1;
    x->s->round += (uint64_t)k->rounds;
    pccl_status_t st = k->round(x, n, off, count - off < chunk ? count - off : chunk);
    if (st != PCCL_OK && x->in_step) finish(x->s, x->s->round);
    if (st != PCCL_OK) return st;
    finish(x->s, x->s->round);
  }
  return PCCL_OK;
}

int pccl_seg_needs_cma(pccl_coll_t coll) {
  return coll == PCCL_COLL_GATHERV || coll == PCCL_COLL_SCATTERV || coll == PCCL_COLL_ALLTOALLV;
}

int pccl_seg_runs_cma(const pccl_seg_t *s, pccl_coll_t coll) {
  return pccl_seg_runs_direct(s, coll) || (s && s->cma && pccl_seg_needs_cma(coll));
}

int pccl_seg_runs(pccl_coll_t coll) { return (unsigned)coll < PCCL_COLL_COUNT && colls[coll].round; }

int pccl_seg_runs_direct(const pccl_seg_t *s, pccl_coll_t coll) {
  return s && s->cma && (unsigned)coll < PCCL_COLL_COUNT && directs[coll].move;
}

/* Everything a peer's call must agree with, in 64 bits. */
static uint64_t digest_of(const pccl_seg_call_t *c, int nranks) {
  pccl_coll_t k = c->coll;
  /* gatherv, scatterv, all-to-allv: each rank knows only its own counts,
   * which their round checks block by block instead */
  int own_counts = k == PCCL_COLL_GATHERV || k == PCCL_COLL_SCATTERV || k == PCCL_COLL_ALLTOALLV;
  uint64_t reduces = k == PCCL_COLL_ALLREDUCE || k == PCCL_COLL_REDUCE_SCATTER ||
                     k == PCCL_COLL_REDUCE || k == PCCL_COLL_SCAN || k == PCCL_COLL_EXSCAN ||
                     k == PCCL_COLL_REDUCE_SCATTERV;
  uint64_t rooted = k == PCCL_COLL_BROADCAST || k == PCCL_COLL_REDUCE || k == PCCL_COLL_GATHER ||
                    k == PCCL_COLL_SCATTER || k == PCCL_COLL_GATHERV || k == PCCL_COLL_SCATTERV;
  uint64_t h = (uint64_t)(own_counts ? 0 : c->count) * 0x9E3779B97F4A7C15ull;
  h ^= ((uint64_t)c->coll << 56) | ((uint64_t)c->dtype << 48) |
       ((reduces ? (uint64_t)c->op : 0xff) << 40) | (rooted ? (uint32_t)c->root : 0);
  for (int r = 0; c->counts && !own_counts && r < nranks; r++)
    h = (h ^ c->counts[r]) * 0x100000001B3ull; /* the counts, which every rank passes alike */
  return h & ~AHEAD;
}

void pccl_seg_prepare(const pccl_seg_t *s, pccl_seg_call_t *call) {
  call->digest = digest_of(call, s->n);
  call->prepared = 1;
}

/* Runs a call one way; after an error the segment is out of step: the
 * peers are told, whose waits would otherwise last until their own
 * timeout. */
static pccl_status_t run_path(pccl_seg_t *s, const pccl_seg_call_t *call, int direct_call,
                              const pccl_seg_watch_t *watch, char *why, size_t whylen,
                              int *in_step) {
  /* the path in the digest (bits 32-39 hold nothing else): ranks that took
   * different paths get an error */
  run_t x = {s, call, pccl_dtype_size(call->dtype),
             (call->prepared ? call->digest : digest_of(call, s->n)) ^ ((uint64_t)direct_call << 32),
             pccl_kernel_reduce(call->dtype, call->op), {watch, why, whylen, 0}, 0, 0, 0};
  pccl_status_t st = run_rounds(&x, coll_of(s, call, x.es, direct_call));
  if (st == PCCL_OK && x.refused) st = run_rounds(&x, coll_of(s, call, x.es, 0));
  *in_step = st != PCCL_OK && x.in_step;
  if (st != PCCL_OK && !*in_step)
    atomic_store_explicit(&ctrl(s, s->me)->failed, (uint32_t)st, memory_order_release);
  return st;
}

/* The path the node picks for a timed class: the one whose best time on
 * the slowest rank was lower (an all-reduce of the best times, MAX); every
 * rank gets the same numbers, so every rank places the next trials alike. */
static pccl_status_t pick_path(pccl_seg_t *s, timing_t *t, const pccl_seg_watch_t *watch,
                               char *why, size_t whylen) {
  double slowest[2];
  pccl_seg_call_t c = {.coll = PCCL_COLL_ALLREDUCE, .sendbuf = t->best, .recvbuf = slowest,
                       .count = 2, .dtype = PCCL_FLOAT64, .op = PCCL_MAX};
  int in_step;
  pccl_status_t st = run_path(s, &c, 0, watch, why, whylen, &in_step);
  int was = t->direct;
  t->direct = st == PCCL_OK && slowest[1] < slowest[0];
  t->gap = t->gap && t->direct == was ? (t->gap < LATEST / 2 ? 2 * t->gap : LATEST) : EARLY;
  t->next += t->gap;
  return st;
}

static int size_class(size_t bytes) {
  int k = 0;
  while (bytes >>= 1) k++;
  return k;
}

static pccl_status_t run_timed(pccl_seg_t *s, const pccl_seg_call_t *call,
                               const pccl_seg_watch_t *watch, char *why, size_t whylen) {
  timing_t *t = &s->timing[call->coll][size_class(call->count * pccl_dtype_size(call->dtype))];
  uint32_t phase = t->calls++ - t->next; /* modulo 2^32: huge before the trials */
  int in_step; /* never set: no timed collective has counts of its own */
  if (phase >= 2 * RUN) return run_path(s, call, t->direct, watch, why, whylen, &in_step);
  int direct_call = phase >= RUN, nth = (int)(phase % RUN);
  double start = now();
  pccl_status_t st = run_path(s, call, direct_call, watch, why, whylen, &in_step);
  if (st != PCCL_OK || nth == 0) return st;
  double took = now() - start;
  if (nth == 1 || took < t->best[direct_call]) t->best[direct_call] = took;
  return phase == 2 * RUN - 1 ? pick_path(s, t, watch, why, whylen) : PCCL_OK;
}

pccl_status_t pccl_seg_run(pccl_seg_t *s, const pccl_seg_call_t *call,
                           const pccl_seg_watch_t *watch, char *why, size_t whylen, int *in_step) {
  *in_step = 0;
  if (!pccl_seg_runs(call->coll) ||
      (call->path != PCCL_SEG_BUFFERS && !pccl_seg_runs_direct(s, call->coll))) {
    snprintf(why, whylen, "the node segment does not run %s%s", pccl_coll_name(call->coll),
             call->path != PCCL_SEG_BUFFERS ? " by cross-memory attach" : "");
    return PCCL_ERR_UNSUPPORTED;
  }
  if (pccl_seg_needs_cma(call->coll) && !s->cma) {
    snprintf(why, whylen, "the node segment runs %s only where the node's ranks may read each "
             "other's memory (cross-memory attach refused here)", pccl_coll_name(call->coll));
    return PCCL_ERR_UNSUPPORTED;
  }
  /* With more ranks than cores (alike on every rank: s->yield is the
   * node's) untimed: trials timed while ranks take turns on a core pick
   * by chance; large calls go direct, the rest through the buffers
   * (crowded_direct). */
  if (call->path == PCCL_SEG_TIMED && s->yield)
    return run_path(s, call, crowded_direct(call, pccl_dtype_size(call->dtype)), watch, why,
                    whylen, in_step);
  if (call->path == PCCL_SEG_TIMED) return run_timed(s, call, watch, why, whylen);
  return run_path(s, call, call->path == PCCL_SEG_DIRECT, watch, why, whylen, in_step);
}

/* ---- non-blocking calls ------------------------------------------------ *
 *
 * A non-blocking call runs the same rounds, moved along by whatever pccl
 * call its rank makes next: a wait that would block returns AGAIN instead,
 * and the round is taken again from its start next time, its part already
 * published (contribute() publishes a round once). Taking a round again
 * must give the same result: the collectives below read only their
 * peers' parts and their own input, which their result never overwrites
 * before the round's last wait (a reduce's root and the split all-reduce
 * copy their own part in for that; see reduce_round and
 * allreduce_split_round). The v-collectives (rounds published outside
 * contribute(), arrays that may not outlive the call) are not among
 * them. */

int pccl_seg_takes_nb(const pccl_seg_t *s, pccl_coll_t coll) {
  switch (coll) {
  case PCCL_COLL_ALLREDUCE:
  case PCCL_COLL_ALLGATHER:
  case PCCL_COLL_REDUCE_SCATTER:
  case PCCL_COLL_BROADCAST:
  case PCCL_COLL_REDUCE:
  case PCCL_COLL_GATHER:
  case PCCL_COLL_SCATTER:
  case PCCL_COLL_ALLTOALL:
  case PCCL_COLL_SCAN:
  case PCCL_COLL_EXSCAN: return s != NULL;
  default: return 0;
  }
}

pccl_status_t pccl_seg_start(pccl_seg_t *s, const pccl_seg_call_t *call, pccl_seg_op_t *op,
                             char *why, size_t whylen) {
  if (call->path != PCCL_SEG_BUFFERS || !pccl_seg_takes_nb(s, call->coll)) {
    snprintf(why, whylen, "the node segment runs non-blocking %s%s", pccl_coll_name(call->coll),
             call->path != PCCL_SEG_BUFFERS ? " only through its buffers" : " not at all");
    return PCCL_ERR_UNSUPPORTED;
  }
  *op = (pccl_seg_op_t){.call = *call, .digest = digest_of(call, s->n)};
  return PCCL_OK;
}

/* The error that ends a non-blocking call: the peers are told, as
 * run_path tells them. */
static pccl_status_t nb_failed(pccl_seg_t *s, pccl_status_t st) {
  atomic_store_explicit(&ctrl(s, s->me)->failed, (uint32_t)st, memory_order_release);
  return st;
}

/* The elements of op's current round, numbering it if it has not begun
 * (rounds are numbered as they begin, as run_rounds numbers them). */
static size_t take_round(pccl_seg_t *s, pccl_seg_op_t *op, const run_t *x, const seg_coll_t *k) {
  size_t chunk = round_elems(x, k), left = op->call.count - op->off, m = left < chunk ? left : chunk;
  if (!op->round) {
    op->round = s->round + 1;
    s->round += (uint64_t)k->rounds;
    op->last = m == left;
  }
  return m;
}

static run_t nb_run(pccl_seg_t *s, pccl_seg_op_t *op, const pccl_seg_watch_t *watch, char *why,
                    size_t whylen, int nowait) {
  const pccl_seg_call_t *c = &op->call;
  return (run_t){s, c, pccl_dtype_size(c->dtype), op->digest, pccl_kernel_reduce(c->dtype, c->op),
                 {watch, why, whylen, nowait}, 0, op->posted, 0};
}

pccl_status_t pccl_seg_post(pccl_seg_t *s, pccl_seg_op_t *op, const pccl_seg_watch_t *watch,
                            char *why, size_t whylen) {
  run_t x = nb_run(s, op, watch, why, whylen, POST_ONLY);
  const seg_coll_t *k = coll_of(s, &op->call, x.es, 0);
  size_t m = take_round(s, op, &x, k);
  pccl_status_t st = k->round(&x, op->round, op->off, m);
  op->posted = x.posted;
  return st == PCCL_OK || st == AGAIN ? PCCL_OK : nb_failed(s, st);
}

int pccl_seg_settled(const pccl_seg_op_t *op) { return op->round && op->last; }

pccl_status_t pccl_seg_advance(pccl_seg_t *s, pccl_seg_op_t *op, const pccl_seg_watch_t *watch,
                               char *why, size_t whylen, int *done) {
  const pccl_seg_call_t *c = &op->call;
  run_t x = nb_run(s, op, watch, why, whylen, 1);
  const seg_coll_t *k = coll_of(s, c, x.es, 0);
  int moved = 0;
  pccl_status_t st = PCCL_OK;
  *done = 0;
  while (op->off < c->count) {
    size_t m = take_round(s, op, &x, k);
    st = k->round(&x, op->round, op->off, m);
    moved |= x.posted != op->posted;
    op->posted = x.posted;
    if (st != PCCL_OK) break;
    finish(s, op->round + (uint64_t)k->rounds - 1);
    op->round = 0;
    op->off += m;
    moved = 1;
  }
  if (st == PCCL_OK) {
    *done = 1;
    return PCCL_OK;
  }
  if (st != AGAIN) return nb_failed(s, st);
  /* with more ranks than cores the peer this rank waits for may need its
   * core, as in a blocking wait (await_either) */
  if (s->yield && !moved) sched_yield();
  double t = moved ? 0.0 : now(); /* the clock only while nothing moves */
  if (moved || op->idle_since == 0.0) op->idle_since = t;
  if (watch->timeout <= 0 || t - op->idle_since <= watch->timeout) return PCCL_OK;
  snprintf(why, whylen, "no progress for %.1f s in round %llu of the node segment: a peer skipped "
           "this collective, died or is stuck", t - op->idle_since, (unsigned long long)op->round);
  return nb_failed(s, PCCL_ERR_TIMEOUT);
}

/* ---- creation ---------------------------------------------------------- */

/* Cores the node's ranks may run on together: the union of their
 * affinity masks (each rank is often bound to one core of its own). */
static int node_cores(MPI_Comm node) {
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  int ok = sched_getaffinity(0, sizeof set, &set) == 0;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, node);
  if (ok) {
    MPI_Allreduce(MPI_IN_PLACE, &set, (int)sizeof set, MPI_BYTE, MPI_BOR, node);
    return CPU_COUNT(&set);
  }
#endif
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

/* The first rank creates the file; the others map it through /proc. */
static int map_segment(pccl_seg_t *s, char *why, size_t whylen) {
#if defined(__linux__)
  long ident[2] = {(long)getpid(), -1};
  int fd = -1;
  if (s->me == 0) {
    fd = memfd_create("pccl-seg", MFD_CLOEXEC);
    if (fd >= 0 && ftruncate(fd, (off_t)s->map_bytes) != 0) {
      close(fd);
      fd = -1;
    }
    ident[1] = fd;
  }
  MPI_Bcast(ident, 2, MPI_LONG, 0, s->node);
  if (ident[1] < 0) {
    snprintf(why, whylen, "the node's first rank could not create a memfd");
    return 0;
  }
  if (s->me != 0) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/fd/%ld", ident[0], ident[1]);
    fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) snprintf(why, whylen, "cannot open the first rank's memfd through /proc");
  }
  void *p = MAP_FAILED;
  if (fd >= 0) {
    p = mmap(NULL, s->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) snprintf(why, whylen, "cannot map %zu bytes of segment", s->map_bytes);
  }
  /* every peer has opened the file before the first rank closes it */
  int ok = p != MAP_FAILED;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, s->node);
  if (fd >= 0) close(fd);
  if (!ok) {
    if (p != MAP_FAILED) munmap(p, s->map_bytes);
    if (!why[0]) snprintf(why, whylen, "a peer could not map the node segment");
    return 0;
  }
  s->base = p;
  return 1;
#else
  snprintf(why, whylen, "the node segment needs Linux (memfd)");
  return 0;
#endif
}

/* Whether every rank of the node may read and write every peer's memory
 * (direct calls): each rank reads its successor's probe word, then writes
 * the word after it. Containers and hardened kernels may forbid either. */
static int probe_cma(pccl_seg_t *s) {
  pccl_cma_allow();
  const uint64_t magic = 0x7063636c736567ull; /* "pcclseg" */
  s->probe[0] = magic ^ (uint64_t)s->me;
  uint64_t mine[2] = {(uint64_t)getpid(), (uint64_t)(uintptr_t)s->probe};
  uint64_t *all = malloc(2 * sizeof(uint64_t) * (size_t)s->n);
  s->pids = malloc(sizeof(pid_t) * (size_t)s->n);
  s->peers = malloc(sizeof(addrs_t) * (size_t)s->n);
  s->bounce = malloc(4 * DIRECT_PIECE);
  int ok = all && s->pids && s->peers && s->bounce;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, s->node);
  if (ok && MPI_Allgather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, s->node) == MPI_SUCCESS) {
    for (int r = 0; r < s->n; r++) s->pids[r] = (pid_t)all[2 * r];
    int next = (s->me + 1) % s->n;
    uint64_t got = 0, addr = all[2 * next + 1];
    ok = pccl_cma_read(s->pids[next], &got, addr, sizeof got) && got == (magic ^ (uint64_t)next) &&
         pccl_cma_write(s->pids[next], addr + sizeof got, &got, sizeof got);
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, s->node);
  } else {
    ok = 0;
  }
  free(all);
  return ok;
}

pccl_status_t pccl_seg_create(MPI_Comm comm, int group, size_t bytes, pccl_seg_t **out,
                              char *why, size_t whylen) {
  *out = NULL;
  why[0] = '\0';
  pccl_seg_t *s = calloc(1, sizeof *s);
  if (!s) return PCCL_ERR_NO_MEMORY;
  int rank;
  MPI_Comm_rank(comm, &rank);
  if (MPI_Comm_split(comm, group, rank, &s->node) != MPI_SUCCESS) {
    free(s);
    return PCCL_ERR_MPI;
  }
  MPI_Comm_rank(s->node, &s->me);
  MPI_Comm_size(s->node, &s->n);
  long page = sysconf(_SC_PAGESIZE);
  size_t pg = (size_t)page;
  s->cap = bytes / 2 / pg * pg;
  if (s->cap < pg) s->cap = pg; /* at least a page: one element of every block of 256 ranks */
  s->lines = (LINE * (1 + RING + 2) + pg - 1) / pg * pg;
  /* a page-aligned region per rank: each rank's writes stay off its peers' lines */
  s->stride = s->cap + pg;
  s->region = s->lines + (RING * SLOT + pg - 1) / pg * pg + 2 * s->stride;
  s->map_bytes = s->region * (size_t)s->n;
  s->known = calloc((size_t)s->n, sizeof *s->known);
  s->yield = s->n > node_cores(s->node);
  int usable = s->known != NULL;
  if (s->n > MAX_LOCAL) snprintf(why, whylen, "more than %d ranks on the node", MAX_LOCAL);
  usable = usable && s->n > 1 && s->n <= MAX_LOCAL;
  MPI_Allreduce(MPI_IN_PLACE, &usable, 1, MPI_INT, MPI_MIN, s->node);
  if (!usable || !map_segment(s, why, whylen)) {
    if (!why[0]) snprintf(why, whylen, s->n > 1 ? "out of memory" : "one rank on the node");
    MPI_Comm_free(&s->node);
    free(s->known);
    free(s);
    return PCCL_ERR_UNSUPPORTED;
  }
  s->cma = probe_cma(s);
  *out = s;
  return PCCL_OK;
}

void pccl_seg_destroy(pccl_seg_t *s, int peers_alive) {
  if (!s) return;
#if defined(__linux__)
  munmap(s->base, s->map_bytes);
#endif
  if (peers_alive) MPI_Comm_free(&s->node);
  free(s->known);
  free(s->pids);
  free(s->peers);
  free(s->bounce);
  free(s);
}
