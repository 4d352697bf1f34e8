/* seg.h - the node segment: collectives of the ranks of one node written
 * against one shared memory segment instead of point-to-point messages.
 *
 * Each rank owns two buffers in the segment (used alternately by successive
 * rounds) and a control line. A round is one exchange: the ranks that
 * contribute copy their part into their buffer and publish the round's
 * sequence number in the buffer's first cache line, which also carries a
 * digest of the call (so ranks that disagree get an error, not a wrong
 * answer) and, for parts of at most PCCL_SEG_INLINE bytes, the data itself:
 * a small collective then moves one cache line per rank. Readers wait for
 * that number and reduce or copy straight out of every peer's buffer into
 * their own result. A call longer than a buffer runs as several rounds, and
 * since a rank may fill one buffer while its peers still read the other,
 * the rounds pipeline. A buffer is refilled only once every peer has
 * finished the round that last used it: a rank knows this either from
 * having seen the peer publish a later round, or from the peer's control
 * line, where each rank records the last round it finished.
 *
 * A direct call (algorithm cma) uses two rounds for handshakes only: the
 * ranks publish where their buffers lie, move the data with cross-memory
 * attach, and say when they are done with their peers' buffers.
 *
 * The segment is a memfd created by the node's first rank and mapped by the
 * others through /proc/<pid>/fd: no name in any file system, readable only
 * by processes of this user, gone when the last process of the job exits. */
#ifndef PCCL_SEG_H
#define PCCL_SEG_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "pccl.h"

#define PCCL_SEG_INLINE 48 /* bytes of data that ride in the flag's cache line */
#define PCCL_SEG_BYTES_DEFAULT ((size_t)256 << 10)
#define PCCL_SEG_BYTES_MIN ((size_t)8 << 10)
#define PCCL_SEG_BYTES_MAX ((size_t)1 << 30)

typedef struct pccl_seg pccl_seg_t;

/* What bounds a wait: the communicator's timeout (seconds, 0: none) and
 * abort flag. */
typedef struct {
  double timeout;
  const _Atomic int *abort;
  void (*idle)(void); /* may be NULL: called now and then while waiting */
} pccl_seg_watch_t;

/* Collective over `comm`: ranks with equal `group` form a node. `bytes` is
 * what each rank owns for its two buffers (PCCL_SEG_BYTES). On
 * PCCL_ERR_UNSUPPORTED (decided alike on every rank of the node) `why` says
 * what was missing and *out is NULL. */
pccl_status_t pccl_seg_create(MPI_Comm comm, int group, size_t bytes, pccl_seg_t **out,
                              char *why, size_t whylen);
/* With peers_alive (collective over the node) the node's communicator is
 * freed too; without (a broken communicator) only this rank's memory. */
void pccl_seg_destroy(pccl_seg_t *s, int peers_alive);

/* How a call moves its data: through the segment's buffers; directly by
 * cross-memory attach, the segment carrying only the handshakes (see
 * pccl_seg_runs_direct); or by whichever of the two this node timed faster
 * for the call's collective and size class (see pccl_seg_run). */
typedef enum { PCCL_SEG_BUFFERS, PCCL_SEG_DIRECT, PCCL_SEG_TIMED } pccl_seg_path_t;

/* One call on the segment. Counts follow pccl.h; `op` and `root` are read
 * only by the collectives that take them. */
typedef struct {
  pccl_coll_t coll;
  const void *sendbuf;
  void *recvbuf;
  size_t count;
  pccl_dtype_t dtype;
  pccl_op_t op;
  int root;
  int inplace; /* sendbuf is the in-place part of recvbuf */
  /* all-gatherv and reduce-scatterv: every rank's count and the place of
   * its block (in recvbuf, or in sendbuf; elements); count is then the
   * largest of the counts. Gatherv and scatterv: the same at the root (its
   * own count in count), NULL elsewhere (count: the rank's own block).
   * All-to-allv: the blocks received; scounts and splaces the blocks sent.
   * NULL otherwise. */
  const size_t *counts, *places;
  const size_t *scounts, *splaces;
  /* the most heap memory the call may take (PCCL_MAX_SCRATCH): an in-place
   * all-to-allv whose blocks do not fit a buffer copies them */
  size_t scratch_limit;
  pccl_seg_path_t path;
  /* set by pccl_seg_prepare: the call's digest (what a peer's call must
   * agree with), derived once for a call kept for its repeats */
  int prepared;
  uint64_t digest;
} pccl_seg_call_t;

/* Derives once what every run of `call` on s would derive again (its
 * digest). A call changed afterwards must be prepared again, or have
 * `prepared` cleared. */
void pccl_seg_prepare(const pccl_seg_t *s, pccl_seg_call_t *call);

/* Whether the segment runs this collective at all. */
int pccl_seg_runs(pccl_coll_t coll);
/* Whether it runs it only where the node's ranks may read and write each
 * other's memory (gatherv, scatterv, all-to-allv: large blocks are read
 * where they lie, or, a gatherv's, written into the root's output; see
 * seg.c). */
int pccl_seg_needs_cma(pccl_coll_t coll);
/* Whether it runs the collective reading peers' memory here: a direct
 * form (pccl_seg_runs_direct) or one that needs it. */
int pccl_seg_runs_cma(const pccl_seg_t *s, pccl_coll_t coll);
/* Whether it runs it direct: every rank of the node may read and write its
 * peers' memory (cross-memory attach, probed at creation) and the
 * collective has a direct form. Alike on every rank of the node. */
int pccl_seg_runs_direct(const pccl_seg_t *s, pccl_coll_t coll);

/* Runs a call (every rank of the node must make the same one). A timed
 * call (PCCL_SEG_TIMED) takes its size class's trials at the same calls on
 * every rank, since they count the same calls: a few calls alternating
 * the two paths, then a small all-reduce over the node of each path's
 * best time, which picks the path for the class alike everywhere until
 * the next trials. Errors:
 * PCCL_ERR_MISMATCH when a peer's call differs, PCCL_ERR_TIMEOUT and
 * PCCL_ERR_ABORTED from `watch`; `why` then says which peer and round. After
 * an error the segment's rounds are out of step and the segment must not be
 * used again, except where *in_step says otherwise: a gatherv, scatterv or
 * all-to-allv whose counts disagree between ranks fails on the rank that
 * reads the block (PCCL_ERR_MISMATCH) after every rank took the call's
 * round, so the next call finds the rounds in step. */
pccl_status_t pccl_seg_run(pccl_seg_t *s, const pccl_seg_call_t *call,
                           const pccl_seg_watch_t *watch, char *why, size_t whylen, int *in_step);

/* A non-blocking call on the segment (pccl_i*): the same rounds as
 * pccl_seg_run's, moved along by pccl_seg_advance without waiting. The
 * caller keeps the call's buffers, and runs no other call on the segment
 * until this one is done (rounds are numbered in the order calls take
 * them, alike on every rank). */
typedef struct {
  pccl_seg_call_t call;
  uint64_t digest;
  uint64_t round;    /* the round under way (0: the next not begun) */
  uint64_t posted;   /* the last round whose part this rank published */
  size_t off;        /* the first element of that round */
  int last;          /* that round is the call's last */
  double idle_since; /* when advancing last moved nothing (0: it moved) */
} pccl_seg_op_t;

/* Whether the segment runs non-blocking calls of this collective through
 * its buffers: every collective of one vector or of equal blocks, not the
 * v-collectives. Alike on every rank of the node. */
int pccl_seg_takes_nb(const pccl_seg_t *s, pccl_coll_t coll);

/* Sets up *op; moves nothing. PCCL_ERR_UNSUPPORTED (with `why`) for a call
 * pccl_seg_takes_nb refuses or one not through the buffers. */
pccl_status_t pccl_seg_start(pccl_seg_t *s, const pccl_seg_call_t *call, pccl_seg_op_t *op,
                             char *why, size_t whylen);

/* Numbers *op's first round and publishes this rank's part of it (what it
 * can without waiting for a peer), nothing more: a call behind an
 * unfinished one on the segment (pccl_seg_settled) may begin so, so that
 * its peers need none of this rank's later calls to finish a call of one
 * round. pccl_seg_advance takes it on from there. */
pccl_status_t pccl_seg_post(pccl_seg_t *s, pccl_seg_op_t *op, const pccl_seg_watch_t *watch,
                            char *why, size_t whylen);
/* Whether *op has numbered all its rounds (it is in its last): the next
 * call's rounds may then be numbered. */
int pccl_seg_settled(const pccl_seg_op_t *op);

/* Moves *op along as far as it goes without waiting for a peer; *done
 * when it has finished. Errors as pccl_seg_run's (the segment is then out
 * of step); PCCL_ERR_TIMEOUT when nothing moved for watch->timeout
 * seconds over the calls that advanced it. */
pccl_status_t pccl_seg_advance(pccl_seg_t *s, pccl_seg_op_t *op, const pccl_seg_watch_t *watch,
                               char *why, size_t whylen, int *done);

#endif /* PCCL_SEG_H */
