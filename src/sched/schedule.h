/* schedule.h - the schedule: one rank's part of a collective as a list of steps
 * (send, recv, fused recv-reduce, reduce, copy, divide, permute) over three buffers,
 * with dependencies.
 *
 * Generators (src/algo/) write a rank's steps as a sequential program through
 * the builder below; the builder derives the dependencies itself from the
 * regions each step reads and writes (read-after-write, write-after-read,
 * write-after-write), so independent steps may run concurrently and
 * compositions of generators (reduce-scatter then all-gather, sub-groups) need
 * no hand-written joins. The executor runs a schedule; the simulator will read
 * the same structure. */
#ifndef PCCL_SCHEDULE_H
#define PCCL_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

#include "pccl.h"

/* Buffers a region can name. SEND and RECV are the user's; TMP is scratch the
 * executor provides (sched->tmp_elems elements). */
typedef enum { PCCL_BUF_SEND = 0, PCCL_BUF_RECV = 1, PCCL_BUF_TMP = 2, PCCL_BUF_COUNT } pccl_buf_t;

/* A range of elements of one buffer. */
typedef struct {
  uint32_t buf; /* pccl_buf_t */
  size_t off;   /* first element */
  size_t len;   /* number of elements */
} pccl_region_t;

typedef enum {
  PCCL_STEP_SEND = 0,   /* send src to peer */
  PCCL_STEP_RECV = 1,   /* receive from peer into dst */
  PCCL_STEP_REDUCE = 2, /* dst = src op src2 (dst may equal either exactly) */
  /* dst = src. With arg > 1, arg blocks of dst.len elements (dst and src
   * name the first): block i is copied from src.off + i * src_stride to
   * dst.off + i * dst_stride, the strides at sched->stride[2 tag + 1] and
   * [2 tag] (a shuffle's run of blocks as one step). */
  PCCL_STEP_COPY = 3,
  PCCL_STEP_DIVIDE = 4, /* dst = dst / arg (the AVG op's last step) */
  /* dst = message op src2 (src2 op message with PCCL_STEP_MSG_SECOND): a
   * receive fused with its reduction. src is the staging region the message
   * lands in when the transport cannot reduce straight from it; afterwards
   * staging holds nothing useful unless it is dst. */
  PCCL_STEP_RECV_REDUCE = 5,
  /* dst's arg equal blocks reordered in place by the cycles stored at
   * sched->perm[tag + 1 ..] (perm[tag] words of them, pccl_perm_cycles's
   * format); src is one block of scratch for the rotation. */
  PCCL_STEP_PERMUTE = 6,
  /* Lossy compression (compressed collectives only). A slot is a TMP region
   * sized for the compressed form of `count` elements, plus a number
   * (pccl_step_t.slot) under which the executor keeps the stream's length,
   * known only once it is written. COMPRESS: slot dst = codec(src).
   * DECOMPRESS: dst = decode(slot src). */
  PCCL_STEP_COMPRESS = 7,
  PCCL_STEP_DECOMPRESS = 8,
  /* The whole collective `arg` (pccl_coll_t) run by the ranks of one node
   * on their shared segment (src/transport/seg): src is what this rank
   * contributes, dst what it gets. Every rank of the node takes part. */
  PCCL_STEP_NODE = 9
} pccl_step_kind_t;

enum {
  PCCL_STEP_MSG_SECOND = 1, /* pccl_step_t.flags: RECV_REDUCE */
  PCCL_STEP_VARLEN = 2      /* SEND/RECV of a slot: the length is the slot's at run time */
};

typedef struct {
  uint16_t kind;  /* pccl_step_kind_t */
  uint16_t flags; /* PCCL_STEP_MSG_SECOND, PCCL_STEP_VARLEN */
  int32_t arg;    /* SEND/RECV/RECV_REDUCE: peer rank; DIVIDE: divisor */
  int32_t tag;    /* SEND/RECV/RECV_REDUCE: message number between the two ranks */
  uint32_t ndeps; /* steps that must complete first: deps[dep_off .. +ndeps) */
  size_t dep_off;
  uint32_t slot; /* COMPRESS, DECOMPRESS, VARLEN messages: the slot's number */
  pccl_region_t dst, src, src2;
} pccl_step_t;

typedef struct {
  pccl_step_t *steps;
  uint32_t nsteps;
  uint32_t *deps;   /* dependency lists, indices of earlier steps */
  uint32_t *succ;   /* successor lists (the reverse of deps) */
  size_t *succ_off; /* successors of step i: succ[succ_off[i] .. succ_off[i+1]) */
  size_t tmp_elems; /* TMP buffer the schedule needs, in elements */
  uint32_t *perm;   /* the PERMUTE steps' cycles */
  size_t nperm;
  size_t *stride;   /* the block COPY steps' strides: dst, src */
  uint32_t nslots;  /* compressed slots */
  uint32_t lossy_stages; /* compressions that can feed one result element */
} pccl_sched_t;

void pccl_sched_free(pccl_sched_t *s);

/* ---- builder ---------------------------------------------------------- */

typedef struct pccl_sb pccl_sb_t;

/* Starts a schedule for `rank` of `nranks`. With `aliased`, SEND and RECV
 * overlap as in the in-place layouts: SEND element i is RECV element
 * i + send_in_recv (negative when RECV lies inside SEND), so hazards between
 * the two are seen. Messages longer than max_msg_bytes are split. */
pccl_status_t pccl_sb_create(int nranks, int rank, size_t elem_size, int aliased,
                             long long send_in_recv, size_t max_msg_bytes, pccl_sb_t **sb);

/* Finishes: on success moves the schedule into *out and frees the builder.
 * Returns the first error any step ran into (out of memory, bad peer). */
pccl_status_t pccl_sb_finish(pccl_sb_t *sb, pccl_sched_t *out);
void pccl_sb_destroy(pccl_sb_t *sb);

int pccl_sb_rank(const pccl_sb_t *sb);
size_t pccl_sb_elem_size(const pccl_sb_t *sb); /* bytes of one element */
int pccl_sb_nranks(const pccl_sb_t *sb);

/* Steps. Errors are sticky and reported by pccl_sb_finish. Empty regions and
 * copies onto themselves add nothing. */
void pccl_sb_send(pccl_sb_t *sb, int peer, pccl_region_t src);
void pccl_sb_recv(pccl_sb_t *sb, int peer, pccl_region_t dst);
void pccl_sb_reduce(pccl_sb_t *sb, pccl_region_t dst, pccl_region_t a, pccl_region_t b);
/* Receives from peer and reduces: dst = message op local, or local op
 * message with `msg_second`. Same as a receive into `staging` followed by a
 * reduce, but a transport that can reads the message only once (shm: from
 * the sender's buffer). dst may be staging or local exactly. */
void pccl_sb_recv_reduce(pccl_sb_t *sb, int peer, pccl_region_t dst, pccl_region_t staging,
                         pccl_region_t local, int msg_second);
void pccl_sb_copy(pccl_sb_t *sb, pccl_region_t dst, pccl_region_t src);
/* Copies nblocks blocks of dst.len elements, block i from src.off + i *
 * src_stride to dst.off + i * dst_stride (dst and src name block 0). The
 * blocks of each side must not overlap one another (stride >= length). */
void pccl_sb_copy_blocks(pccl_sb_t *sb, pccl_region_t dst, size_t dst_stride, pccl_region_t src,
                         size_t src_stride, uint32_t nblocks);
void pccl_sb_divide(pccl_sb_t *sb, pccl_region_t dst, int divisor);
/* Reorders the nblocks equal blocks of dst in place so that block x is the
 * one now at src_of[x]; scratch is one block of TMP. */
void pccl_sb_permute(pccl_sb_t *sb, pccl_region_t dst, pccl_region_t scratch, uint32_t nblocks,
                     const uint32_t *src_of);

/* The collective `coll` on the node's shared segment (PCCL_STEP_NODE). */
void pccl_sb_node(pccl_sb_t *sb, pccl_coll_t coll, pccl_region_t dst, pccl_region_t src);

/* Compressed slots (see PCCL_STEP_COMPRESS). The stream of a slot holding
 * n elements needs at most pccl_sb_slot_elems(sb, n) elements of TMP. */
typedef struct {
  uint32_t id;
  pccl_region_t at; /* the TMP region */
  size_t count;     /* elements it decodes to */
} pccl_slot_t;

size_t pccl_sb_slot_elems(const pccl_sb_t *sb, size_t count);
/* Compresses src into a new slot. */
pccl_slot_t pccl_sb_compress(pccl_sb_t *sb, pccl_region_t src);
/* dst (slot.count elements) = the slot decoded. */
void pccl_sb_decompress(pccl_sb_t *sb, pccl_region_t dst, pccl_slot_t slot);
/* Sends a slot's stream (its length at run time) / receives one into a new
 * slot for `count` elements. A slot must fit in one message. */
void pccl_sb_send_slot(pccl_sb_t *sb, int peer, pccl_slot_t slot);
pccl_slot_t pccl_sb_recv_slot(pccl_sb_t *sb, int peer, size_t count);

/* Records how many compressions can feed one element of the result in the
 * worst case (the generator's own count; the last call stands). */
void pccl_sb_lossy_stages(pccl_sb_t *sb, uint32_t stages);

/* Reserves `len` elements of TMP and returns the first one. */
size_t pccl_sb_tmp(pccl_sb_t *sb, size_t len);

/* Scratch memory that lives until the builder is finished (for a generator's
 * own tables); NULL on failure, which also makes pccl_sb_finish fail. */
void *pccl_sb_scratch(pccl_sb_t *sb, size_t bytes);

/* ---- hazards: the steps an access to a buffer waits for (hazard.c) ------- */

/* Grows *v (of *cap elements of elem bytes) to hold need, doubling; 0 when
 * out of memory (v unchanged). Shared by the builder and its hazard maps. */
int pccl_sched_grow(void **v, size_t *cap, size_t need, size_t elem);

typedef struct pccl_hazards pccl_hazards_t;
typedef void (*pccl_hazard_fn)(void *ctx, uint32_t step);
pccl_hazards_t *pccl_hazards_create(void); /* NULL when out of memory */
void pccl_hazards_destroy(pccl_hazards_t *h);
/* Records step's read or write of elements [off, end) and calls fn with each
 * earlier step it must follow: for a read, the last writer of each element;
 * for a write, also the readers since. A step may be named more than once,
 * or be `step` itself. Returns 0 when out of memory (h is then unusable). */
int pccl_hazards_access(pccl_hazards_t *h, size_t off, size_t end, uint32_t step, int write,
                        pccl_hazard_fn fn, void *ctx);
/* The same for nblocks blocks of len elements every stride from off on; it
 * may also name steps that a later write hid (still earlier ones). */
int pccl_hazards_access_blocks(pccl_hazards_t *h, size_t off, size_t len, size_t stride, uint32_t nblocks,
                               uint32_t step, int write, pccl_hazard_fn fn, void *ctx);
/* The number of spans the map holds, or SIZE_MAX when its tree is broken
 * (spans out of order, overlapping or empty; the heap order lost), and the
 * tree's depth in *depth: for tests/unit/test_hazard.c. */
size_t pccl_hazards_check(const pccl_hazards_t *h, size_t *depth);

/* ---- memo: tables shared by the ranks of one call (memo.c) --------------- */

typedef struct pccl_memo pccl_memo_t;
pccl_memo_t *pccl_memo_create(void); /* NULL when out of memory */
void pccl_memo_destroy(pccl_memo_t *m);
/* The zeroed block of `bytes` first made for this key (*fresh 1: this call
 * made it, fill it), or the one made before (*fresh 0); NULL when out of
 * memory. */
void *pccl_memo_get(pccl_memo_t *m, const void *key, size_t keylen, size_t bytes, int *fresh);
int pccl_memo_owns(const pccl_memo_t *m, const void *p);

/* Lets the builder take tables from m (not owned; NULL: none), which must
 * outlive it. */
void pccl_sb_set_memo(pccl_sb_t *sb, pccl_memo_t *m);
/* A table whose content depends on the key alone, the same for every rank:
 * with a memo, the memo's block (*fresh 0 where an earlier rank filled it);
 * without, scratch (*fresh 1). The caller fills it when *fresh. A key may
 * hold pointers only to blocks for which pccl_sb_is_shared holds (or to
 * data that outlives the memo), never to scratch, whose address a later
 * rank's scratch may reuse. NULL on failure, as pccl_sb_scratch. */
void *pccl_sb_shared(pccl_sb_t *sb, const void *key, size_t keylen, size_t bytes, int *fresh);
/* Whether p came from the memo through pccl_sb_shared. */
int pccl_sb_is_shared(const pccl_sb_t *sb, const void *p);

static inline pccl_region_t pccl_rg(pccl_buf_t buf, size_t off, size_t len) {
  pccl_region_t r = {(uint32_t)buf, off, len};
  return r;
}

#endif /* PCCL_SCHEDULE_H */
