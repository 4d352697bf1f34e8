/* bitand.c - the AND-allreduce of the engine's bitvector, the one
 * collective of a cached cycle.
 *
 * Ranks of one node meet in a small shared segment: each writes its vector
 * into its slot and counts itself in; the node's AND is formed once all are
 * in, the node leaders (local rank 0) AND their nodes' results through MPI,
 * and the result is published with a generation number that waiters sleep
 * on (futex). A waiting rank uses no CPU and is woken the moment the answer
 * exists. MPI's own collective, waited for with polls and naps, left 16
 * ranks sharing 2 cores 1-6 ms apart on leaving it, and each cycle started
 * as far apart as the last one ended.
 *
 * On one node the rank that completes the count forms the AND and
 * publishes it; with several nodes it hands over to its leader. Slots,
 * counts and results alternate between two sets by round parity: a rank can
 * start round r + 1 before a slow one has read round r's result, but not
 * round r + 2, which needs every rank to have arrived at r + 1.
 *
 * A rank whose node has no segment (PCCL_SHM=0, no peer on its node, no
 * Linux, or setting up failed anywhere on the node) is a node of its own. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#endif

#include "comm.h"
#include "engine.h"

#define SPINS 256                   /* polls before sleeping: cheap when cores are free */
#define SLICE_NS 50000000L          /* longest sleep between looks at the clock */

typedef struct {
  _Alignas(64) _Atomic uint32_t gen; /* rounds published; the futex waiters sleep on */
  _Alignas(64) _Atomic uint32_t arrived[2];
  int32_t rc[2]; /* the round's outcome, MPI's code or PCCL_CTL_TIMEOUT */
  struct timespec at[2]; /* when it was published (CLOCK_MONOTONIC: one clock per machine) */
} header_t;

struct pccl_bitand {
  MPI_Comm leaders;     /* local rank 0 of every node; MPI_COMM_NULL elsewhere */
  int nleaders;         /* on every rank */
  int lrank, lsize;     /* lsize 1: no segment */
  size_t words;
  header_t *hdr;        /* the segment: header, then per parity lsize slots and a result */
  uint64_t *sets[2];
  size_t bytes;
  uint32_t round;
};

#if defined(__linux__)
static void futex_wait(_Atomic uint32_t *w, uint32_t expected) {
  struct timespec ts = {0, SLICE_NS};
  syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT, expected, &ts, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *w) {
  syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE, 0x7fffffff, NULL, NULL, 0);
}

/* Waits until *w differs from `old`; PCCL_CTL_TIMEOUT after the engine's timeout. */
static int wait_change(const pccl_engine_t *e, _Atomic uint32_t *w, uint32_t old) {
  for (int i = 0; i < SPINS; i++)
    if (atomic_load_explicit(w, memory_order_acquire) != old) return MPI_SUCCESS;
  double start = MPI_Wtime();
  while (atomic_load_explicit(w, memory_order_acquire) == old) {
    if (e->ctl_timeout > 0 && MPI_Wtime() - start > e->ctl_timeout) return PCCL_CTL_TIMEOUT;
    futex_wait(w, old);
  }
  return MPI_SUCCESS;
}

/* Local rank 0 makes the segment (a memfd); the others map it through
 * /proc. 0 when this rank could not. */
static int map_segment(pccl_bitand_t *b, MPI_Comm node) {
  struct { int pid, fd; } at = {getpid(), -1};
  if (b->lrank == 0) {
    at.fd = memfd_create("pccl-engine", MFD_CLOEXEC);
    if (at.fd >= 0 && ftruncate(at.fd, (off_t)b->bytes) != 0) close(at.fd), at.fd = -1;
  }
  if (MPI_Bcast(&at, 2, MPI_INT, 0, node) != MPI_SUCCESS || at.fd < 0) return 0;
  int fd = at.fd;
  if (b->lrank != 0) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", at.pid, at.fd);
    fd = open(path, O_RDWR | O_CLOEXEC);
  }
  void *p = fd < 0 ? MAP_FAILED : mmap(NULL, b->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (b->lrank != 0 && fd >= 0) close(fd);
  if (p == MAP_FAILED) return 0;
  b->hdr = p; /* a new memfd reads as zeros: round 0, nobody arrived */
  return 1;
}
#endif

/* This rank's node: ranks sharing memory and pccl's node number (which
 * PCCL_RANKS_PER_NODE may split), when the engine's communicator uses shm. */
static int join_node(pccl_engine_t *e, pccl_bitand_t *b) {
  b->lrank = 0, b->lsize = 1;
#if defined(__linux__)
  int rank = e->rank, rc, ok;
  MPI_Comm shared, node;
  if (MPI_Comm_split_type(e->ctl, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared) != MPI_SUCCESS)
    return 0;
  rc = MPI_Comm_split(shared, e->comm->shm ? e->comm->node : MPI_UNDEFINED, rank, &node);
  MPI_Comm_free(&shared);
  if (rc != MPI_SUCCESS) return 0;
  if (node == MPI_COMM_NULL) return 1; /* shm is off: a node of one */
  MPI_Comm_rank(node, &b->lrank);
  MPI_Comm_size(node, &b->lsize);
  b->bytes = sizeof(header_t) + 2 * ((size_t)b->lsize + 1) * b->words * 8;
  ok = b->lsize > 1 && map_segment(b, node);
  rc = MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, node);
  MPI_Comm_free(&node);
  if (rc != MPI_SUCCESS) return 0;
  if (!ok) { /* the whole node goes without */
    if (b->hdr) munmap(b->hdr, b->bytes);
    b->hdr = NULL;
    b->lrank = 0, b->lsize = 1;
    return 1;
  }
  uint64_t *base = (uint64_t *)(b->hdr + 1);
  b->sets[0] = base;
  b->sets[1] = base + ((size_t)b->lsize + 1) * b->words;
  return 1;
#else
  (void)e;
  return 1;
#endif
}

pccl_bitand_t *pccl_bitand_new(size_t words) {
  pccl_bitand_t *b = calloc(1, sizeof(*b));
  if (!b) return NULL;
  b->words = words;
  b->leaders = MPI_COMM_NULL;
  b->lsize = 1;
  return b;
}

pccl_status_t pccl_bitand_setup(pccl_engine_t *e, pccl_bitand_t *b) {
  int ok = join_node(e, b);
  b->nleaders = b->lrank == 0; /* summed: every rank knows how many nodes there are */
  ok = ok &&
       MPI_Comm_split(e->ctl, b->lrank == 0 ? 0 : MPI_UNDEFINED, e->rank, &b->leaders) == MPI_SUCCESS &&
       MPI_Allreduce(MPI_IN_PLACE, &b->nleaders, 1, MPI_INT, MPI_SUM, e->ctl) == MPI_SUCCESS;
  return ok ? PCCL_OK : PCCL_ERR_MPI;
}

/* Local: no collective, so an engine whose peers died can still let go. */
void pccl_bitand_destroy(pccl_bitand_t *b) {
  if (!b) return;
#if defined(__linux__)
  if (b->hdr) munmap(b->hdr, b->bytes);
#endif
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && b->leaders != MPI_COMM_NULL) MPI_Comm_free(&b->leaders);
  free(b);
}

static int between_nodes(const pccl_engine_t *e, const pccl_bitand_t *b, uint64_t *bits) {
  if (b->nleaders <= 1) return MPI_SUCCESS;
  MPI_Request req;
  return pccl_ctl_wait(e, PMPI_Iallreduce(MPI_IN_PLACE, bits, (int)b->words, MPI_UINT64_T, MPI_BAND,
                                         b->leaders, &req), &req);
}

#if defined(__linux__)
/* The node's AND into the round's result, the nodes' AND through the
 * leaders, then the answer for everyone. */
static void publish(const pccl_engine_t *e, pccl_bitand_t *b, int par) {
  uint64_t *set = b->sets[par], *res = set + (size_t)b->lsize * b->words;
  memcpy(res, set, b->words * 8);
  for (int l = 1; l < b->lsize; l++)
    for (size_t w = 0; w < b->words; w++) res[w] &= set[(size_t)l * b->words + w];
  b->hdr->rc[par] = between_nodes(e, b, res);
  clock_gettime(CLOCK_MONOTONIC, &b->hdr->at[par]);
  atomic_store_explicit(&b->hdr->arrived[par], 0, memory_order_relaxed);
  atomic_store_explicit(&b->hdr->gen, b->round + 1, memory_order_release);
  futex_wake(&b->hdr->gen);
}

static int in_node(const pccl_engine_t *e, pccl_bitand_t *b, uint64_t *bits, struct timespec *done) {
  int par = (int)(b->round & 1);
  uint64_t *set = b->sets[par];
  memcpy(set + (size_t)b->lrank * b->words, bits, b->words * 8);
  _Atomic uint32_t *arrived = &b->hdr->arrived[par];
  uint32_t n = atomic_fetch_add_explicit(arrived, 1, memory_order_acq_rel) + 1;
  int rc = MPI_SUCCESS;
  int multi = b->nleaders > 1;
  if (n == (uint32_t)b->lsize && (b->lrank == 0 || !multi)) {
    publish(e, b, par);
  } else if (b->lrank == 0 && multi) { /* other nodes wait on this one: collect, then publish */
    for (uint32_t seen = n; rc == MPI_SUCCESS && seen < (uint32_t)b->lsize;
         seen = atomic_load_explicit(arrived, memory_order_acquire))
      rc = wait_change(e, arrived, seen);
    if (rc != MPI_SUCCESS) return rc;
    publish(e, b, par);
  } else {
    if (n == (uint32_t)b->lsize && multi) futex_wake(arrived); /* the leader sleeps on the count */
    rc = wait_change(e, &b->hdr->gen, b->round);
    if (rc != MPI_SUCCESS) return rc;
  }
  b->round++;
  memcpy(bits, set + (size_t)b->lsize * b->words, b->words * 8);
  *done = b->hdr->at[par];
  return b->hdr->rc[par];
}
#endif

int pccl_bitand_run(const pccl_engine_t *e, pccl_bitand_t *b, uint64_t *bits, struct timespec *done) {
#if defined(__linux__)
  if (b->lsize > 1) return in_node(e, b, bits, done);
#endif
  int rc = between_nodes(e, b, bits);
  clock_gettime(CLOCK_MONOTONIC, done);
  return rc;
}
