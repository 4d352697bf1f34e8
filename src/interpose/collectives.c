/* collectives.c - the MPI collectives libpccl_mpi.so defines, each in its
 * blocking and its non-blocking form (MPI_I*), written once: it decides its
 * way (interpose.h), then maps MPI's arguments onto the pccl call:
 * collectives that move data move bytes (PCCL_UINT8), reductions use the
 * pccl type of the datatype, and MPI_IN_PLACE becomes pccl's in-place
 * convention for that collective. A non-blocking call's copies and arrays
 * live in its op_t until pccl has finished it (nonblocking.c). */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "interpose.h"

/* The request argument of a blocking call. */
static MPI_Request blocking_request;
#define BLOCKING (&blocking_request)

/* Each call's pccl collective, whether its size counts a block per rank
 * (the MPI_Reduce_scatter of counts of its own is pccl's reduce-scatterv),
 * and the least size at which a non-blocking call below PCCL_MPI_NB_MIN is
 * pccl's where pccl runs it on the node's segment. Open MPI's own
 * MPI_Ibcast of a few bytes costs 0.3 us a call with the program's
 * computation on 2 ranks (pccl-mpibench), its MPI_Iallgather 0.5, its
 * MPI_Ireduce 0.5 and MPI_Iallreduce 0.9. pccl's took 0.45-0.6 us
 * (docs/results/nonblocking-seg) until a call finished while issued (a
 * broadcast's root, a reduce's leaves, the rank that comes last) got a
 * request MPI made complete and its request and record were reused
 * (docs/results/nb-eager): 2 ranks, 8-256 B, MPI_Ibcast 1.00-1.28x Open
 * MPI, MPI_Ireduce 1.41-1.74x, MPI_Iallgather 1.01-1.19x, MPI_Iallreduce
 * 1.53-1.73x; 4 ranks on 2 cores the broadcast and reduce 0.99-1.57x and
 * 1.4-10x, but the all-gather 0.77-0.97x up to 1 KB (every rank waits for
 * every other, and here they take turns on the cores), so it stays MPI's
 * below 512 bytes. MPI_Igather, MPI_Iscatter, MPI_Ialltoall, MPI_Iscan and
 * MPI_Iexscan at 8-256 B: 0.93-2.23x on 2 ranks, 1.05-3.78x on 4, where
 * MPI's own with the interception cost 0.77-1.23x. */
#define NB_SEG_MIN 512
#define NEVER SIZE_MAX /* the barrier (no data: MPI's is faster), the v-calls (no segment form) */
static const struct {
  pccl_coll_t coll;
  int blocks;
  size_t seg_min;
} colls[PCCL_IP_NBLOCKING] = {
    [PCCL_IP_ALLGATHER] = {PCCL_COLL_ALLGATHER, 1, NB_SEG_MIN},
    [PCCL_IP_ALLREDUCE] = {PCCL_COLL_ALLREDUCE, 0, 0},
    [PCCL_IP_REDUCE_SCATTER_BLOCK] = {PCCL_COLL_REDUCE_SCATTER, 1, 0},
    [PCCL_IP_REDUCE_SCATTER] = {PCCL_COLL_REDUCE_SCATTERV, 0, NEVER},
    [PCCL_IP_BCAST] = {PCCL_COLL_BROADCAST, 0, 0},
    [PCCL_IP_REDUCE] = {PCCL_COLL_REDUCE, 0, 0},
    [PCCL_IP_SCATTER] = {PCCL_COLL_SCATTER, 1, 0},
    [PCCL_IP_GATHER] = {PCCL_COLL_GATHER, 1, 0},
    [PCCL_IP_ALLTOALL] = {PCCL_COLL_ALLTOALL, 1, 0},
    [PCCL_IP_BARRIER] = {PCCL_COLL_ALLREDUCE, 0, NEVER},
    [PCCL_IP_SCAN] = {PCCL_COLL_SCAN, 0, 0},
    [PCCL_IP_EXSCAN] = {PCCL_COLL_EXSCAN, 0, 0},
    [PCCL_IP_ALLGATHERV] = {PCCL_COLL_ALLGATHERV, 0, NEVER},
    [PCCL_IP_GATHERV] = {PCCL_COLL_GATHERV, 0, NEVER},
    [PCCL_IP_SCATTERV] = {PCCL_COLL_SCATTERV, 0, NEVER},
    [PCCL_IP_ALLTOALLV] = {PCCL_COLL_ALLTOALLV, 0, NEVER},
};

/* Whether pccl runs a non-blocking call of `bytes` on the node's segment
 * (pccl_comm_algo_for), which needs no message. */
static int on_segment(const pccl_ip_call_t *c, pccl_ip_call_id_t id, size_t bytes) {
  const char *name = NULL;
  size_t count = colls[id].blocks && c->size > 0 ? bytes / (size_t)c->size : bytes;
  return pccl_comm_algo_for(c->pc, colls[id].coll, count, PCCL_UINT8, 1, &name) == PCCL_OK &&
         strcmp(name, "seg") == 0;
}

/* pccl_ip_start for the blocking call `id` or, with a request, its
 * non-blocking form, which is pccl's only on a communicator already
 * attached: attaching one is collective, and would wait for the peers
 * where MPI's call returns at once (a peer may issue its call only after
 * a message this rank sends after issuing its own). It is left to MPI
 * when a NULL request (for MPI to answer) or smaller than
 * PCCL_MPI_NB_MIN, unless pccl runs it on the node's segment (from its
 * seg_min). `bytes` is the call's size as every rank sees it (SIZE_MAX
 * where the ranks do not share it); only read when `why` is
 * PCCL_IP_TAKEN, the arguments then being valid. */
static int start(pccl_ip_call_t *c, pccl_ip_call_id_t id, MPI_Comm comm, pccl_ip_reason_t why,
                 MPI_Request *req, size_t bytes) {
  if (req == BLOCKING) return pccl_ip_start(c, id, comm, why);
  pccl_ip_call_id_t as = (pccl_ip_call_id_t)(id + PCCL_IP_NBLOCKING);
  if (!req) why = PCCL_IP_INVALID;
  if (why != PCCL_IP_TAKEN) return pccl_ip_start(c, as, comm, why);
  if (!pccl_ip_nb_small(bytes)) return pccl_ip_start_attached(c, as, comm, PCCL_IP_FRESH);
  if (bytes < colls[id].seg_min || colls[id].seg_min == NEVER)
    return pccl_ip_start(c, as, comm, PCCL_IP_SMALL);
  if (!pccl_ip_start_attached(c, as, comm, PCCL_IP_SMALL)) return 0;
  if (!on_segment(c, id, bytes)) {
    pccl_ip_decline(c, PCCL_IP_SMALL);
    return 0;
  }
  return 1;
}

/* A non-blocking call's size for start(), computed only for one (the
 * blocking calls' cost stays as it was). */
#define NB_BYTES(req, expr) ((req) == BLOCKING ? 0 : (expr))

/* counts[0..size-1] elements of dt, in bytes, over comm's ranks; the
 * counts have been checked. */
static size_t sum_bytes(const int counts[], MPI_Datatype dt, MPI_Comm comm) {
  int size = 0;
  size_t n = 0;
  if (comm != MPI_COMM_NULL) PMPI_Comm_size(comm, &size);
  for (int i = 0; i < size; i++) n += (size_t)counts[i];
  return pccl_ip_bytes(n, dt);
}

/* `blk` bytes per rank of comm. */
static size_t per_rank(size_t blk, MPI_Comm comm) {
  int size = 0;
  if (comm != MPI_COMM_NULL) PMPI_Comm_size(comm, &size);
  return blk * (size_t)size;
}

/* The pccl call: blocking, or issued with the op's request. */
#define ISSUE(o, coll, ...) \
  ((o)->nb ? pccl_i##coll(__VA_ARGS__, &(o)->pr) : pccl_##coll(__VA_ARGS__))

/* The send and receive buffers of one call, as bytes. */
typedef struct {
  pccl_ip_buf_t send, recv;
  int rc;
} bufs_t;

/* A buffer of a block per rank (counts[i] elements of dt at displs[i]
 * extents from `user`) as bytes: block i is count[i] bytes at base + at[i].
 * With a plain datatype they are the user's own blocks, base the user's
 * buffer moved to the lowest displacement of a nonempty block (MPI lets
 * displacements be negative), NULL when every block is empty. With any
 * other they are packed, in rank order, into a copy that v_open can load
 * and v_store unpacks. */
typedef struct {
  size_t *count, *at;
  char *base, *copy, *user;
  const int *counts, *displs;
  MPI_Datatype dt;
  MPI_Aint extent;
  int n;                /* ranks */
  size_t small[2 * 64]; /* count and at, on up to 64 ranks */
} vside_t;

#define RS_STACK_BYTES 4096 /* an in-place reduce-scatter's scratch this small lives in the op */

/* One call from its buffers' set-up to its end: on the stack for a
 * blocking call; on the heap for a non-blocking one, kept until pccl has
 * finished it. Only the fields op_new sets are read before being written:
 * clearing the arrays would cost a small call as much as its data. */
typedef struct {
  pccl_ip_call_t c;
  bufs_t b;
  vside_t *vout, *vin; /* a v-call's side of a block per rank that pccl writes, reads */
  int store;           /* b.recv is copied back to the user at the end */
  int nb;
  const char *what;    /* names b.rc's error */
  void *result;        /* an in-place reduce-scatter's block, moved into b.recv at the end */
  size_t result_len;
  void *heap;          /* freed at the end */
  size_t *counts;      /* a reduce-scatter's counts, when allocated */
  pccl_request_t *pr;  /* the non-blocking call's request */
  vside_t v[2];
  size_t fixed[64];
  _Alignas(64) unsigned char small[RS_STACK_BYTES];
} op_t;

static const char copy_what[] = "copying a buffer (packing a datatype or aligning)";

/* One freed op of a non-blocking call kept for the next: a loop of
 * non-blocking calls reuses it, where malloc and free of its 4.7 KB took
 * glibc's slower bins every call. */
static _Atomic(op_t *) spare_op;

static op_t *op_alloc(void) {
  op_t *o = atomic_exchange_explicit(&spare_op, NULL, memory_order_acquire);
  return o ? o : malloc(sizeof *o);
}

/* Under AddressSanitizer a freed op goes back to malloc at once, so that a
 * use after free is reported instead of hidden in the spare. */
#if defined(__SANITIZE_ADDRESS__)
enum { KEEP_SPARE = 0 };
#else
enum { KEEP_SPARE = 1 };
#endif

static void op_free(op_t *o) {
  free(KEEP_SPARE ? atomic_exchange_explicit(&spare_op, o, memory_order_acq_rel) : o);
}

/* The op of call c: `local` for a blocking call, else allocated. NULL
 * (after finishing the call with the error) when out of memory. */
static op_t *op_new(op_t *local, pccl_ip_call_t *c, MPI_Request *req) {
  op_t *o = req == BLOCKING ? local : op_alloc();
  if (!o) {
    c->rc = pccl_ip_finish(c, PCCL_OK, MPI_ERR_NO_MEM, "out of memory for a request");
    return NULL;
  }
  o->c = *c;
  /* what op_end reads of a buffer bufs_open leaves unopened (a memset of
   * the 120 bytes compiles to a `rep stos`, most of op_new's time in perf) */
  o->b.rc = MPI_SUCCESS;
  o->b.send.copy = o->b.recv.copy = NULL;
  o->b.send.bytes = o->b.recv.bytes = NULL;
  o->vout = o->vin = NULL;
  o->store = 0;
  o->nb = req != BLOCKING;
  o->what = copy_what;
  o->result = o->heap = NULL;
  o->result_len = 0;
  o->counts = NULL;
  o->pr = NULL;
  return o;
}

/* Views the send buffer (unless `send` is NULL) and the receive buffer
 * (unless `recv` is NULL); `load_recv` when the receive buffer holds input
 * (in place); `align`, for a reduction, its pccl type's alignment (else 1:
 * data moved as bytes). */
static void bufs_open(op_t *o, const void *send, size_t scount, MPI_Datatype stype, void *recv,
                      size_t rcount, MPI_Datatype rtype, int load_recv, size_t align) {
  bufs_t *b = &o->b;
  int reduced = align > 1; /* every pccl type a pair maps to is aligned wider than a byte */
  if (recv && b->rc == MPI_SUCCESS)
    b->rc = pccl_ip_view(&b->recv, recv, rcount, rtype, align, reduced, load_recv, o->c.comm);
  if (send && b->rc == MPI_SUCCESS)
    b->rc = pccl_ip_view(&b->send, send, scount, stype, align, reduced, 1, o->c.comm);
  o->c.copied |= b->send.copy || b->recv.copy;
}

static int v_store(vside_t *v, MPI_Comm comm);
static void v_release(vside_t *v);

/* Once pccl has ended the call with st: on success, the results go where
 * the user wants them; then everything the op holds is released. Returns
 * the MPI code of what went wrong here. */
static int op_end(op_t *o, pccl_status_t st) {
  int rc = o->b.rc;
  if (st == PCCL_OK && rc == MPI_SUCCESS) {
    if (o->result_len) memcpy(o->b.recv.bytes, o->result, o->result_len);
    if (o->vout) rc = v_store(o->vout, o->c.comm);
    if (rc == MPI_SUCCESS && o->store) rc = pccl_ip_store(&o->b.recv, o->c.comm);
  }
  pccl_ip_release(&o->b.send);
  pccl_ip_release(&o->b.recv);
  if (o->vout) v_release(o->vout);
  if (o->vin) v_release(o->vin);
  free(o->heap);
  free(o->counts);
  return rc;
}

/* A non-blocking call, finished (pccl_ip_done_fn). */
static int op_done(void *arg, pccl_status_t st, char *why, size_t len) {
  op_t *o = arg;
  int rc = op_end(o, st);
  int cls = pccl_ip_outcome(&o->c, st, rc, o->what, why, len);
  op_free(o);
  return cls;
}

/* Ends a call whose pccl part returned st (PCCL_OK when it was not made):
 * a blocking one, or one that failed before pccl could take it, ends here
 * with its error; a non-blocking one goes to the completion calls. */
static int op_issued(op_t *o, pccl_status_t st, MPI_Request *req) {
  if (o->nb && st == PCCL_OK && o->b.rc == MPI_SUCCESS)
    return pccl_ip_post(&o->c, o->pr, op_done, o, req);
  int rc = pccl_ip_finish(&o->c, st, op_end(o, st), o->what);
  if (o->nb) {
    *req = MPI_REQUEST_NULL;
    op_free(o);
  }
  return rc;
}

/* ---- a repeated call's short way ---- */

/* The blocking calls a program repeats most (a loop's all-reduce of a
 * residual, broadcast of a step, reduce of a norm, scan of the offsets of
 * each rank's particles): the last one of each
 * kind, on this thread, that pccl ran on the user's own buffers (a plain
 * datatype, aligned: nothing copied). Its repeat with the same arguments
 * maps to the same pccl call on the same communicator (none deleted since:
 * pccl_ip_again), so it goes straight to pccl: no type mapping, views or
 * op. The measurements: docs/mpi-dropin.md. */
typedef enum {
  AGAIN_ALLREDUCE,
  AGAIN_BCAST,
  AGAIN_REDUCE,
  AGAIN_SCAN,
  AGAIN_EXSCAN,
  AGAIN_ALLGATHER,
  AGAIN_ALLTOALL,
  AGAIN_GATHER,
  AGAIN_SCATTER,
  AGAIN_BARRIER,
  AGAIN_KINDS
} again_kind_t;

typedef struct {
  int valid;
  pccl_ip_call_t c; /* as pccl_ip_start made it */
  const void *sendbuf;
  void *recvbuf;
  int count, root;
  MPI_Datatype dt;
  MPI_Op op;
  /* the send side of the calls of two sides (all-gather, all-to-all,
   * gather, scatter; recvbuf's in count, dt); 0 and MPI_DATATYPE_NULL for
   * the others */
  int scount;
  MPI_Datatype stype;
  pccl_dtype_t pd; /* what they mapped to */
  pccl_op_t po;
  size_t bytes;
} again_t;

/* The same for the last MPI_Gatherv and MPI_Scatterv on this thread that
 * pccl ran on the user's own buffers, on up to VAGAIN_RANKS ranks: a
 * repeat with the same arguments, whose arrays at the root hold the same
 * counts and displacements (compared, since a program may change them
 * behind the same pointers), takes the bytes and offsets v_open derived
 * (2 ranks, 8 bytes, callgrind: the wrapper cost about 950 instructions a
 * call at the root, as much as Open MPI's whole call). */
enum { VAGAIN_GATHERV, VAGAIN_SCATTERV, VAGAIN_KINDS, VAGAIN_RANKS = 64 };

typedef struct {
  int valid, at_root;
  pccl_ip_call_t c;
  /* the MPI call's buffer of this rank's block, and (at the root) of a
   * block per rank */
  const void *one;
  int one_count, root;
  MPI_Datatype one_type, many_type;
  const void *many;
  const int *counts, *displs;
  int ucounts[VAGAIN_RANKS], udispls[VAGAIN_RANKS];
  /* what they mapped to: pccl's buffer of one block and its bytes, and
   * (at the root) the v-side's base, byte counts and offsets */
  void *pone;
  size_t pone_len;
  char *base;
  size_t count[VAGAIN_RANKS], at[VAGAIN_RANKS];
} vagain_t;

/* This thread's kept calls, on the heap (about 4 KB), not in initial-exec
 * TLS, whose space a library loaded later may need; freed when a thread
 * other than the main one exits (the main one's lasts to the end). */
typedef struct {
  again_t a[AGAIN_KINDS];
  vagain_t v[VAGAIN_KINDS];
} kept_t;

/* initial-exec as setup.c's depth: the drop-in is preloaded or linked */
static _Thread_local kept_t *kept __attribute__((tls_model("initial-exec")));
static pthread_key_t kept_key; /* frees a thread's table when it exits */
static int kept_key_made;
static pthread_once_t kept_once = PTHREAD_ONCE_INIT;

/* (a later destructor of the exiting thread may still make an MPI call) */
static void kept_free(void *table) {
  free(table);
  kept = NULL;
}

static void kept_key_make(void) { kept_key_made = pthread_key_create(&kept_key, kept_free) == 0; }

/* This thread's table, allocated on first use; NULL when out of memory. */
static kept_t *kept_table(void) {
  if (kept) return kept;
  pthread_once(&kept_once, kept_key_make);
  if (!kept_key_made) return NULL;
  kept_t *t = calloc(1, sizeof *t);
  if (t && pthread_setspecific(kept_key, t) != 0) free(t), t = NULL;
  return kept = t;
}

/* The kept call of kind k if this is its repeat (the caller is then inside
 * pccl, to leave by again_end), else NULL. */
static const again_t *again(again_kind_t k, MPI_Comm comm, const void *sendbuf, void *recvbuf,
                            int count, MPI_Datatype dt, MPI_Op op, int root, int scount,
                            MPI_Datatype stype) {
  const again_t *a = kept ? &kept->a[k] : NULL;
  if (!a || !a->valid || a->c.comm != comm || a->sendbuf != sendbuf || a->recvbuf != recvbuf ||
      a->count != count || a->dt != dt || a->op != op || a->root != root ||
      a->scount != scount || a->stype != stype)
    return NULL;
  return pccl_ip_again(&a->c) ? a : NULL;
}

static int again_end(const pccl_ip_call_t *call, pccl_status_t st) {
  pccl_ip_call_t c = *call;
  return pccl_ip_finish(&c, st, MPI_SUCCESS, copy_what);
}

/* Keeps a blocking call that pccl ran on the user's buffers, before
 * op_issued ends it (`bytes`: a broadcast's size, the block of a call of
 * two sides). */
static void again_keep(again_kind_t k, const op_t *o, pccl_status_t st, const void *sendbuf,
                       void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                       int scount, MPI_Datatype stype, pccl_dtype_t pd, pccl_op_t po,
                       size_t bytes) {
  if (o->nb || st != PCCL_OK || o->b.rc != MPI_SUCCESS || o->c.copied || !kept_table()) return;
  again_t *a = &kept->a[k];
  a->valid = 0;
  /* predefined types only: a derived one freed and made again may come
   * back under the same handle with another layout or size */
  if (!pccl_ip_plain(dt) || (stype != MPI_DATATYPE_NULL && !pccl_ip_plain(stype))) return;
  *a = (again_t){1, o->c, sendbuf, recvbuf, count, root, dt, op, scount, stype, pd, po, bytes};
}

/* ---- a repeated gatherv's or scatterv's short way ---- */

/* The kept call of kind k if this is its repeat (the caller is then inside
 * pccl, to leave by again_end), else NULL. */
static const vagain_t *vagain(int k, MPI_Comm comm, const void *one, int one_count,
                              MPI_Datatype one_type, const void *many, const int counts[],
                              const int displs[], MPI_Datatype many_type, int root) {
  const vagain_t *a = kept ? &kept->v[k] : NULL;
  if (!a || !a->valid || a->c.comm != comm || a->root != root || a->one != one ||
      a->one_count != one_count || a->one_type != one_type)
    return NULL;
  if (a->at_root) {
    if (a->many != many || a->many_type != many_type || a->counts != counts ||
        a->displs != displs)
      return NULL;
    /* a loop, not memcmp: a few ranks' worth, where a call of it cost more */
    for (int i = 0; i < a->c.size; i++)
      if (counts[i] != a->ucounts[i] || displs[i] != a->udispls[i]) return NULL;
  }
  return pccl_ip_again(&a->c) ? a : NULL;
}

/* Keeps a blocking gatherv or scatterv that pccl ran on the user's own
 * buffers (`v`: the root's side of a block per rank, else NULL; `pone`,
 * `pone_len`: what pccl got as the buffer of one block). */
static void vagain_keep(int k, const op_t *o, pccl_status_t st, const void *one, int one_count,
                        MPI_Datatype one_type, const void *many, const int counts[],
                        const int displs[], MPI_Datatype many_type, int root, const vside_t *v,
                        const void *pone, size_t pone_len) {
  if (o->nb || st != PCCL_OK || o->b.rc != MPI_SUCCESS || o->c.copied ||
      o->c.size > VAGAIN_RANKS || !kept_table())
    return;
  vagain_t *a = &kept->v[k];
  a->valid = 0;
  if (!pccl_ip_plain(one_type) || (v && !pccl_ip_plain(many_type))) return;
  size_t n = (size_t)o->c.size;
  *a = (vagain_t){.valid = 1, .at_root = v != NULL, .c = o->c, .one = one, .one_count = one_count,
                  .root = root, .one_type = one_type, .pone = (void *)pone, .pone_len = pone_len};
  if (!v) return;
  a->many = many, a->many_type = many_type, a->counts = counts, a->displs = displs;
  a->base = v->base;
  memcpy(a->ucounts, counts, n * sizeof *counts);
  memcpy(a->udispls, displs, n * sizeof *displs);
  memcpy(a->count, v->count, n * sizeof *a->count);
  memcpy(a->at, v->at, n * sizeof *a->at);
}

/* A call whose send and receive sides disagree in size (an erroneous
 * program, which MPI would answer with MPI_ERR_TRUNCATE). */
static int size_mismatch(pccl_ip_call_t *c) {
  return pccl_ip_finish(c, PCCL_OK, MPI_ERR_TRUNCATE, "send and receive sizes differ");
}

/* An MPI_IN_PLACE where MPI does not allow one. */
static int misplaced_in_place(pccl_ip_call_t *c) {
  return pccl_ip_finish(c, PCCL_OK, MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed on this rank");
}

/* Why a reduction falls back, if it does; sets the pccl type and op if not. */
static pccl_ip_reason_t reduce_reason(int count, MPI_Datatype dt, MPI_Op op, pccl_dtype_t *pd,
                                      pccl_op_t *po) {
  if (count < 0 || dt == MPI_DATATYPE_NULL || op == MPI_OP_NULL) return PCCL_IP_INVALID;
  return pccl_ip_reduction(dt, op, pd, po);
}

/* Why a collective that moves data falls back, if it does. */
static pccl_ip_reason_t move_reason(int n1, MPI_Datatype t1, int n2, MPI_Datatype t2) {
  if (n1 < 0 || t1 == MPI_DATATYPE_NULL || n2 < 0 || t2 == MPI_DATATYPE_NULL)
    return PCCL_IP_INVALID;
  return PCCL_IP_TAKEN;
}

/* Every MPI collective below comes as its blocking entry point and its
 * non-blocking one over one function with a request argument. */
/* A call on `comm` left to MPI. A blocking one first finishes pccl's
 * non-blocking calls on `comm` (pccl_ip_drain): they came first, and a peer
 * may wait on one of them in a call that moves them, which MPI's
 * collective would not do. (Not MPI's non-blocking form polled with them:
 * MPI matches a blocking collective only with blocking ones.) */
#define PMPI_EITHER(req, comm, blocking_call, nb_call) \
  ((req) != BLOCKING ? (nb_call) : (pccl_ip_drain(comm), (blocking_call)))

static int allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                     MPI_Comm comm, MPI_Request *req) {
  const again_t *a = req == BLOCKING ? again(AGAIN_ALLREDUCE, comm, sendbuf, recvbuf, count, dt, op,
                                             0, 0, MPI_DATATYPE_NULL)
                                     : NULL;
  if (a)
    return again_end(&a->c, pccl_allreduce(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, recvbuf,
                                           (size_t)count, a->pd, a->po, a->c.pc));
  pccl_ip_call_t c;
  pccl_dtype_t pd = PCCL_UINT8;
  pccl_op_t po = PCCL_SUM;
  if (!start(&c, PCCL_IP_ALLREDUCE, comm, reduce_reason(count, dt, op, &pd, &po), req,
             NB_BYTES(req, pccl_ip_bytes((size_t)count, dt))))
    return c.rc ? c.rc
                : PMPI_EITHER(req, comm, PMPI_Allreduce(sendbuf, recvbuf, count, dt, op, comm),
                              PMPI_Iallreduce(sendbuf, recvbuf, count, dt, op, comm, req));
  op_t local, *o = op_new(&local, &c, req);
  if (!o) return c.rc;
  int inplace = sendbuf == MPI_IN_PLACE;
  o->store = 1;
  bufs_open(o, inplace ? NULL : sendbuf, (size_t)count, dt, recvbuf, (size_t)count, dt, inplace,
            pccl_dtype_align(pd));
  pccl_status_t st = PCCL_OK;
  if (o->b.rc == MPI_SUCCESS)
    st = ISSUE(o, allreduce, inplace ? o->b.recv.bytes : o->b.send.bytes, o->b.recv.bytes,
               (size_t)count, pd, po, o->c.pc);
  again_keep(AGAIN_ALLREDUCE, o, st, sendbuf, recvbuf, count, dt, op, 0, 0, MPI_DATATYPE_NULL, pd,
             po, 0);
  return op_issued(o, st, req);
}

/* MPI_Scan and MPI_Exscan. In place, the input is taken from recvbuf. An
 * exscan's recvbuf is not significant at rank 0 (MPI 4.0, 6.11.2): it is
 * neither viewed nor written there, so it may be anything, as under MPI. */
static int scan(pccl_ip_call_id_t id, const void *sendbuf, void *recvbuf, int count,
                MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *req) {
  int exclusive = id == PCCL_IP_EXSCAN, inplace = sendbuf == MPI_IN_PLACE;
  again_kind_t kind = exclusive ? AGAIN_EXSCAN : AGAIN_SCAN;
  const again_t *a =
      req == BLOCKING ? again(kind, comm, sendbuf, recvbuf, count, dt, op, 0, 0, MPI_DATATYPE_NULL)
                      : NULL;
  if (a) {
    const void *in = inplace ? recvbuf : sendbuf;
    void *out = exclusive && !inplace && a->c.rank == 0 ? NULL : recvbuf;
    return again_end(&a->c, (exclusive ? pccl_exscan : pccl_scan)(in, out, (size_t)count, a->pd,
                                                                   a->po, a->c.pc));
  }
  pccl_ip_call_t c;
  pccl_dtype_t pd = PCCL_UINT8;
  pccl_op_t po = PCCL_SUM;
  if (!start(&c, id, comm, reduce_reason(count, dt, op, &pd, &po), req,
             NB_BYTES(req, pccl_ip_bytes((size_t)count, dt)))) {
    if (c.rc) return c.rc;
    if (exclusive)
      return PMPI_EITHER(req, comm, PMPI_Exscan(sendbuf, recvbuf, count, dt, op, comm),
                         PMPI_Iexscan(sendbuf, recvbuf, count, dt, op, comm, req));
    return PMPI_EITHER(req, comm, PMPI_Scan(sendbuf, recvbuf, count, dt, op, comm),
                       PMPI_Iscan(sendbuf, recvbuf, count, dt, op, comm, req));
  }
  op_t local, *o = op_new(&local, &c, req);
  if (!o) return c.rc;
  o->store = !(exclusive && c.rank == 0);
  bufs_open(o, inplace ? NULL : sendbuf, (size_t)count, dt,
            o->store || inplace ? recvbuf : NULL, (size_t)count, dt, inplace,
            pccl_dtype_align(pd));
  pccl_status_t st = PCCL_OK;
  const void *in = inplace ? o->b.recv.bytes : o->b.send.bytes;
  void *out = o->store ? o->b.recv.bytes : NULL;
  if (o->b.rc == MPI_SUCCESS && exclusive)
    st = ISSUE(o, exscan, in, inplace ? o->b.recv.bytes : out, (size_t)count, pd, po, o->c.pc);
  else if (o->b.rc == MPI_SUCCESS)
    st = ISSUE(o, scan, in, out, (size_t)count, pd, po, o->c.pc);
  again_keep(kind, o, st, sendbuf, recvbuf, count, dt, op, 0, 0, MPI_DATATYPE_NULL, pd, po, 0);
  return op_issued(o, st, req);
}

/* Reduce-scatter with `count` elements per rank, or counts[r] at rank r
 * (MPI_Reduce_scatter's unequal counts). In place, MPI takes the
 * input from recvbuf and leaves the result at its start, and Open MPI and
 * MPICH leave the rest of recvbuf as it was (programs rely on it). pccl's
 * own in-place form would use the other blocks as scratch, so the call
 * reads recvbuf as its (untouched) input, reduces into a block of
 * scratch, and copies that to the front once every peer is done. */

/* The in-place call's scratch, `bytes` of it, in the op or allocated
 * (o->heap). MPI requires every rank to be in place when one is, so every
 * rank gets here; when the scratch must be allocated the ranks agree (one
 * 8-byte all-reduce) that all of them have it and their buffers, so that a
 * rank that has not returns its error together with the others instead of
 * leaving them to wait out PCCL_TIMEOUT. Returns the scratch, or NULL with
 * the op's error set (o->b.rc and o->what). */
static void *rs_scratch(op_t *o, size_t bytes, size_t largest) {
  /* `largest`, the largest rank's bytes, decides alike on every rank */
  if (largest <= RS_STACK_BYTES) return o->b.rc == MPI_SUCCESS ? o->small : NULL;
  void *heap = NULL;
  int64_t ok = o->b.rc == MPI_SUCCESS && posix_memalign(&heap, 64, bytes ? bytes : 64) == 0;
  if (!ok) heap = NULL;
  int64_t all = ok;
  pccl_status_t st = pccl_allreduce(&all, &all, 1, PCCL_INT64, PCCL_MIN, o->c.pc);
  if (st == PCCL_OK && all) return o->heap = heap;
  free(heap);
  if (st != PCCL_OK) {
    o->b.rc = MPI_ERR_OTHER;
    o->what = pccl_last_error(o->c.pc);
  } else if (o->b.rc == MPI_SUCCESS) {
    o->b.rc = ok ? MPI_ERR_OTHER : MPI_ERR_NO_MEM;
    o->what = ok ? "another rank could not allocate its scratch or copy its buffer for this "
                   "in-place reduce-scatter; nothing was changed"
                 : "out of memory for the in-place reduce-scatter's block of scratch; nothing "
                   "was changed";
  }
  return NULL;
}

static int reduce_scatter_run(op_t *o, const void *sendbuf, void *recvbuf, const int counts[],
                              int count, MPI_Datatype dt, pccl_dtype_t pd, pccl_op_t po,
                              MPI_Request *req) {
  int inplace = sendbuf == MPI_IN_PLACE;
  size_t p = (size_t)o->c.size, es = pccl_dtype_size(pd), *v = NULL;
  size_t n = (size_t)count, total = n * p, largest = n;
  if (counts) { /* unequal: pccl's counts, the sum and the largest */
    if (!(v = p <= 64 ? o->fixed : (o->counts = malloc(p * sizeof *v)))) {
      o->b.rc = MPI_ERR_NO_MEM;
      o->what = "out of memory for the counts";
      return op_issued(o, PCCL_OK, req);
    }
    total = largest = 0;
    for (size_t r = 0; r < p; r++) {
      total += v[r] = (size_t)counts[r];
      largest = v[r] > largest ? v[r] : largest;
    }
    n = v[o->c.rank];
  }
  size_t blk = n * es;
  o->store = 1;
  bufs_open(o, inplace ? NULL : sendbuf, total, dt, recvbuf, inplace ? total : n, dt, inplace,
            pccl_dtype_align(pd));
  void *result = inplace && largest > 0 ? rs_scratch(o, blk, largest * es) : NULL;
  pccl_status_t st = PCCL_OK;
  if (o->b.rc == MPI_SUCCESS && total > 0) {
    const void *in = inplace ? o->b.recv.bytes : o->b.send.bytes;
    void *out = inplace ? result : o->b.recv.bytes;
    st = v ? ISSUE(o, reduce_scatterv, in, out, v, pd, po, o->c.pc)
           : ISSUE(o, reduce_scatter, in, out, n, pd, po, o->c.pc);
    if (inplace) o->result = result, o->result_len = blk;
  }
  return op_issued(o, st, req);
}

static int reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *req) {
  pccl_ip_call_t c;
  pccl_dtype_t pd = PCCL_UINT8;
  pccl_op_t po = PCCL_SUM;
  if (!start(&c, PCCL_IP_REDUCE_SCATTER_BLOCK, comm, reduce_reason(recvcount, dt, op, &pd, &po),
             req, NB_BYTES(req, per_rank(pccl_ip_bytes((size_t)recvcount, dt), comm))))
    return c.rc ? c.rc
                : PMPI_EITHER(req, comm,
                              PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, dt, op, comm),
                              PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, dt, op,
                                                         comm, req));
  op_t local, *o = op_new(&local, &c, req);
  return o ? reduce_scatter_run(o, sendbuf, recvbuf, NULL, recvcount, dt, pd, po, req) : c.rc;
}

/* MPI_Reduce_scatter's reason (recvcounts is the same on every rank, as MPI
 * requires): *equal says whether every count is the first. */
static pccl_ip_reason_t counts_reason(const int recvcounts[], MPI_Comm comm, int *equal) {
  int size = 0;
  if (!recvcounts || comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
    return PCCL_IP_INVALID;
  *equal = 1;
  for (int i = 0; i < size; i++) {
    if (recvcounts[i] < 0) return PCCL_IP_INVALID;
    *equal &= recvcounts[i] == recvcounts[0];
  }
  return PCCL_IP_TAKEN;
}

static int reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                          MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *req) {
  pccl_ip_call_t c;
  pccl_dtype_t pd = PCCL_UINT8;
  pccl_op_t po = PCCL_SUM;
  int equal = 1;
  pccl_ip_reason_t why = counts_reason(recvcounts, comm, &equal);
  if (why == PCCL_IP_TAKEN) why = reduce_reason(recvcounts[0], dt, op, &pd, &po);
  if (!start(&c, PCCL_IP_REDUCE_SCATTER, comm, why, req,
             NB_BYTES(req, why == PCCL_IP_TAKEN ? sum_bytes(recvcounts, dt, comm) : 0)))
    return c.rc ? c.rc
                : PMPI_EITHER(req, comm, PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, dt, op, comm),
                              PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, dt, op, comm,
                                                   req));
  op_t local, *o = op_new(&local, &c, req);
  return o ? reduce_scatter_run(o, sendbuf, recvbuf, equal ? NULL : recvcounts, recvcounts[0], dt,
                                pd, po, req)
           : c.rc;
}

static int reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                  int root, MPI_Comm comm, MPI_Request *req) {
  const again_t *a =
      req == BLOCKING ? again(AGAIN_REDUCE, comm, sendbuf, recvbuf, count, dt, op, root, 0,
                                   MPI_DATATYPE_NULL) : NULL;
  if (a)
    return again_end(&a->c, pccl_reduce(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf,
                                        a->c.rank == root ? recvbuf : NULL, (size_t)count, a->pd,
                                        a->po, root, a->c.pc));
  pccl_ip_call_t c;
  pccl_dtype_t pd = PCCL_UINT8;
  pccl_op_t po = PCCL_SUM;
  if (!start(&c, PCCL_IP_REDUCE, comm, reduce_reason(count, dt, op, &pd, &po), req,
             NB_BYTES(req, pccl_ip_bytes((size_t)count, dt))))
    return c.rc ? c.rc
                : PMPI_EITHER(req, comm, PMPI_Reduce(sendbuf, recvbuf, count, dt, op, root, comm),
                              PMPI_Ireduce(sendbuf, recvbuf, count, dt, op, root, comm, req));
  int at_root = c.rank == root, inplace = sendbuf == MPI_IN_PLACE;
  if (inplace && !at_root) return misplaced_in_place(&c);
  op_t local, *o = op_new(&local, &c, req);
  if (!o) return c.rc;
  o->store = at_root;
  bufs_open(o, inplace ? NULL : sendbuf, (size_t)count, dt, at_root ? recvbuf : NULL,
            (size_t)count, dt, inplace, pccl_dtype_align(pd));
  pccl_status_t st = PCCL_OK;
  if (o->b.rc == MPI_SUCCESS)
    st = ISSUE(o, reduce, inplace ? o->b.recv.bytes : o->b.send.bytes, o->b.recv.bytes,
               (size_t)count, pd, po, root, o->c.pc);
  again_keep(AGAIN_REDUCE, o, st, sendbuf, recvbuf, count, dt, op, root, 0, MPI_DATATYPE_NULL, pd,
             po, 0);
  return op_issued(o, st, req);
}

static int bcast(void *buffer, int count, MPI_Datatype dt, int root, MPI_Comm comm,
                 MPI_Request *req) {
  const again_t *a =
      req == BLOCKING ? again(AGAIN_BCAST, comm, NULL, buffer, count, dt, MPI_OP_NULL, root, 0,
                                  MPI_DATATYPE_NULL) : NULL;
  if (a)
    return again_end(&a->c, pccl_broadcast(buffer, buffer, a->bytes, PCCL_UINT8, root, a->c.pc));
  pccl_ip_call_t c;
  if (!start(&c, PCCL_IP_BCAST, comm, move_reason(count, dt, 0, dt), req,
             NB_BYTES(req, pccl_ip_bytes((size_t)count, dt))))
    return c.rc ? c.rc
                : PMPI_EITHER(req, comm, PMPI_Bcast(buffer, count, dt, root, comm),
                              PMPI_Ibcast(buffer, count, dt, root, comm, req));
  op_t local, *o = op_new(&local, &c, req);
  if (!o) return c.rc;
  int at_root = c.rank == root;
  o->store = !at_root;
  bufs_open(o, NULL, 0, dt, buffer, (size_t)count, dt, at_root, 1);
  pccl_status_t st = PCCL_OK;
  if (o->b.rc == MPI_SUCCESS)
    st = ISSUE(o, broadcast, o->b.recv.bytes, o->b.recv.bytes, o->b.recv.len, PCCL_UINT8, root,
               o->c.pc);
  again_keep(AGAIN_BCAST, o, st, NULL, buffer, count, dt, MPI_OP_NULL, root, 0, MPI_DATATYPE_NULL,
             PCCL_UINT8, PCCL_SUM, o->b.recv.len);
  return op_issued(o, st, req);
}

/* All-gather and all-to-all take the same arguments and the same in-place
 * form (sendbuf MPI_IN_PLACE); they differ in the send buffer's size (one
 * block, or one per rank) and in where pccl finds an in-place input. */
static int everyone(pccl_ip_call_id_t id, const void *sendbuf, int sendcount,
                    MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request *req) {
  int inplace = sendbuf == MPI_IN_PLACE, alltoall = id == PCCL_IP_ALLTOALL;
  again_kind_t kind = alltoall ? AGAIN_ALLTOALL : AGAIN_ALLGATHER;
  const again_t *a = req == BLOCKING ? again(kind, comm, sendbuf, recvbuf, recvcount, recvtype,
                                             MPI_OP_NULL, 0, sendcount, sendtype)
                                     : NULL;
  if (a) {
    char *r = recvbuf;
    const void *own = inplace ? (const void *)(r + (alltoall ? 0 : (size_t)a->c.rank * a->bytes))
                              : sendbuf;
    pccl_status_t (*fn)(const void *, void *, size_t, pccl_dtype_t, pccl_comm_t *) =
        alltoall ? pccl_alltoall : pccl_allgather;
    return again_end(&a->c, fn(own, r, a->bytes, PCCL_UINT8, a->c.pc));
  }
  pccl_ip_call_t c;
  pccl_ip_reason_t why = inplace ? move_reason(recvcount, recvtype, 0, recvtype)
                                 : move_reason(sendcount, sendtype, recvcount, recvtype);
  if (!start(&c, id, comm, why, req,
             NB_BYTES(req, per_rank(pccl_ip_bytes((size_t)recvcount, recvtype), comm)))) {
    if (c.rc) return c.rc;
    if (alltoall)
      return PMPI_EITHER(req, comm, PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                            recvtype, comm),
                         PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                        recvtype, comm, req));
    return PMPI_EITHER(req, comm, PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                           recvtype, comm),
                       PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                       comm, req));
  }
  size_t blk = pccl_ip_bytes((size_t)recvcount, recvtype), n = (size_t)c.size;
  if (!inplace && pccl_ip_bytes((size_t)sendcount, sendtype) != blk) return size_mismatch(&c);
  op_t local, *o = op_new(&local, &c, req);
  if (!o) return c.rc;
  o->store = 1;
  bufs_open(o, inplace ? NULL : sendbuf, (size_t)sendcount * (alltoall ? n : 1), sendtype,
            recvbuf, (size_t)recvcount * n, recvtype, inplace, 1);
  pccl_status_t st = PCCL_OK;
  char *r = o->b.recv.bytes;
  if (o->b.rc == MPI_SUCCESS && alltoall)
    st = ISSUE(o, alltoall, inplace ? r : o->b.send.bytes, r, blk, PCCL_UINT8, o->c.pc);
  else if (o->b.rc == MPI_SUCCESS)
    st = ISSUE(o, allgather, inplace ? r + (size_t)c.rank * blk : o->b.send.bytes, r, blk,
               PCCL_UINT8, o->c.pc);
  again_keep(kind, o, st, sendbuf, recvbuf, recvcount, recvtype, MPI_OP_NULL, 0, sendcount,
             sendtype, PCCL_UINT8, PCCL_SUM, blk);
  return op_issued(o, st, req);
}

/* Scatter and gather mirror each other: the root's `many` buffer holds a
 * block per rank (scatter's send, gather's receive), every rank's `one`
 * buffer holds its own block, absent at the root in place. */
static pccl_ip_reason_t rooted_reason(int at_root, int inplace, int many_n, MPI_Datatype many_t,
                                      int one_n, MPI_Datatype one_t) {
  if (!at_root) return move_reason(one_n, one_t, 0, one_t);
  return inplace ? move_reason(many_n, many_t, 0, many_t)
                 : move_reason(many_n, many_t, one_n, one_t);
}

/* The block size of a scatter or gather, as rooted_reason's arguments give
 * it; 0 (after reporting) when the root's two sides differ. */
static int rooted_block(pccl_ip_call_t *c, int at_root, int inplace, int many_n,
                        MPI_Datatype many_t, int one_n, MPI_Datatype one_t, size_t *blk) {
  *blk = at_root ? pccl_ip_bytes((size_t)many_n, many_t) : pccl_ip_bytes((size_t)one_n, one_t);
  if (at_root && !inplace && pccl_ip_bytes((size_t)one_n, one_t) != *blk) {
    c->rc = size_mismatch(c);
    return 0;
  }
  return 1;
}

static int rank_in(MPI_Comm comm) {
  int rank = -1;
  if (comm != MPI_COMM_NULL) PMPI_Comm_rank(comm, &rank);
  return rank;
}

/* In place, the root's own block stays in its send buffer
 * (pccl's recvbuf == sendbuf + root*blk). */
static int scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                   MPI_Request *req) {
  const again_t *a = req == BLOCKING ? again(AGAIN_SCATTER, comm, sendbuf, recvbuf, recvcount,
                                             recvtype, MPI_OP_NULL, root, sendcount, sendtype)
                                     : NULL;
  if (a) {
    int here = a->c.rank == root;
    const char *many = here ? sendbuf : NULL;
    void *one = here && recvbuf == MPI_IN_PLACE ? (void *)(many + (size_t)root * a->bytes) : recvbuf;
    return again_end(&a->c, pccl_scatter(many, one, a->bytes, PCCL_UINT8, root, a->c.pc));
  }
  pccl_ip_call_t c;
  int at_root = rank_in(comm) == root, inplace = at_root && recvbuf == MPI_IN_PLACE;
  size_t blk;
  if (!start(&c, PCCL_IP_SCATTER, comm,
             rooted_reason(at_root, inplace, sendcount, sendtype, recvcount, recvtype), req,
             NB_BYTES(req, per_rank(at_root ? pccl_ip_bytes((size_t)sendcount, sendtype)
                                            : pccl_ip_bytes((size_t)recvcount, recvtype),
                                    comm))))
    return c.rc ? c.rc
                : PMPI_EITHER(req, comm, PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                                recvtype, root, comm),
                              PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                            recvtype, root, comm, req));
  if (!rooted_block(&c, at_root, inplace, sendcount, sendtype, recvcount, recvtype, &blk))
    return c.rc;
  op_t local, *o = op_new(&local, &c, req);
  if (!o) return c.rc;
  o->store = !inplace;
  bufs_open(o, at_root ? sendbuf : NULL, (size_t)sendcount * (size_t)c.size, sendtype,
            inplace ? NULL : recvbuf, (size_t)recvcount, recvtype, 0, 1);
  pccl_status_t st = PCCL_OK;
  if (o->b.rc == MPI_SUCCESS)
    st = ISSUE(o, scatter, o->b.send.bytes,
               inplace ? o->b.send.bytes + (size_t)root * blk : o->b.recv.bytes, blk, PCCL_UINT8,
               root, o->c.pc);
  again_keep(AGAIN_SCATTER, o, st, sendbuf, recvbuf, recvcount, recvtype, MPI_OP_NULL, root,
             sendcount, sendtype, PCCL_UINT8, PCCL_SUM, blk);
  return op_issued(o, st, req);
}

/* In place, the root's own block is already in its receive buffer
 * (pccl's sendbuf == recvbuf + root*blk). */
static int gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request *req) {
  const again_t *a = req == BLOCKING ? again(AGAIN_GATHER, comm, sendbuf, recvbuf, recvcount,
                                             recvtype, MPI_OP_NULL, root, sendcount, sendtype)
                                     : NULL;
  if (a) {
    char *many = a->c.rank == root ? recvbuf : NULL;
    const void *one = sendbuf == MPI_IN_PLACE ? (const void *)(many + (size_t)root * a->bytes)
                                              : sendbuf;
    return again_end(&a->c, pccl_gather(one, many, a->bytes, PCCL_UINT8, root, a->c.pc));
  }
  pccl_ip_call_t c;
  int at_root = rank_in(comm) == root, inplace = sendbuf == MPI_IN_PLACE;
  size_t blk;
  if (!start(&c, PCCL_IP_GATHER, comm,
             rooted_reason(at_root, inplace, recvcount, recvtype, sendcount, sendtype), req,
             NB_BYTES(req, per_rank(at_root ? pccl_ip_bytes((size_t)recvcount, recvtype)
                                            : pccl_ip_bytes((size_t)sendcount, sendtype),
                                    comm))))
    return c.rc ? c.rc
                : PMPI_EITHER(req, comm, PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                               recvtype, root, comm),
                              PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                           recvtype, root, comm, req));
  if (inplace && !at_root) return misplaced_in_place(&c);
  if (!rooted_block(&c, at_root, inplace, recvcount, recvtype, sendcount, sendtype, &blk))
    return c.rc;
  op_t local, *o = op_new(&local, &c, req);
  if (!o) return c.rc;
  o->store = at_root;
  bufs_open(o, inplace ? NULL : sendbuf, (size_t)sendcount, sendtype, at_root ? recvbuf : NULL,
            (size_t)recvcount * (size_t)c.size, recvtype, inplace, 1);
  pccl_status_t st = PCCL_OK;
  if (o->b.rc == MPI_SUCCESS)
    st = ISSUE(o, gather, inplace ? o->b.recv.bytes + (size_t)root * blk : o->b.send.bytes,
               o->b.recv.bytes, blk, PCCL_UINT8, root, o->c.pc);
  again_keep(AGAIN_GATHER, o, st, sendbuf, recvbuf, recvcount, recvtype, MPI_OP_NULL, root,
             sendcount, sendtype, PCCL_UINT8, PCCL_SUM, blk);
  return op_issued(o, st, req);
}

/* (kept as a call of no bytes of MPI_BYTE: again_keep keeps predefined
 * types only) */
static int barrier(MPI_Comm comm, MPI_Request *req) {
  const again_t *a = req == BLOCKING ? again(AGAIN_BARRIER, comm, NULL, NULL, 0, MPI_BYTE,
                                             MPI_OP_NULL, 0, 0, MPI_DATATYPE_NULL)
                                     : NULL;
  if (a) return again_end(&a->c, pccl_barrier(a->c.pc));
  pccl_ip_call_t c;
  if (!start(&c, PCCL_IP_BARRIER, comm, PCCL_IP_TAKEN, req, 0))
    return c.rc ? c.rc : PMPI_EITHER(req, comm, PMPI_Barrier(comm), PMPI_Ibarrier(comm, req));
  op_t local, *o = op_new(&local, &c, req);
  if (!o) return c.rc;
  pccl_status_t st = ISSUE(o, barrier, o->c.pc);
  again_keep(AGAIN_BARRIER, o, st, NULL, NULL, 0, MPI_BYTE, MPI_OP_NULL, 0, 0, MPI_DATATYPE_NULL,
             PCCL_UINT8, PCCL_MAX, 0);
  return op_issued(o, st, req);
}

/* ---- the v-collectives: a block per rank, each of its own size ---- */

/* Why a buffer of a block per rank makes a v-call fall back, if it does. */
static pccl_ip_reason_t many_reason(const int counts[], const int displs[], MPI_Datatype t,
                                    MPI_Comm comm) {
  int size = 0;
  if (!counts || !displs || t == MPI_DATATYPE_NULL || comm == MPI_COMM_NULL ||
      PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
    return PCCL_IP_INVALID;
  for (int i = 0; i < size; i++)
    if (counts[i] < 0) return PCCL_IP_INVALID;
  return PCCL_IP_TAKEN;
}

/* An all-gatherv's, gatherv's or scatterv's reason, as rooted_reason: the
 * buffer of a block per rank where this rank has it (`many`: every rank of
 * an all-gatherv, the root of the others), then its own block unless that
 * is in place there. All-gatherv's recvcounts are alike on every rank;
 * otherwise only the root sees them, and a negative one is an erroneous
 * program that MPI answers. */
static pccl_ip_reason_t v_reason(int many, int inplace, const int counts[], const int displs[],
                                 MPI_Datatype many_t, int one_n, MPI_Datatype one_t,
                                 MPI_Comm comm) {
  pccl_ip_reason_t why = many ? many_reason(counts, displs, many_t, comm) : PCCL_IP_TAKEN;
  return why != PCCL_IP_TAKEN || (many && inplace) ? why : move_reason(one_n, one_t, 0, one_t);
}

/* Whether n1 elements of t1 and n2 of t2 differ in bytes. */
static int differ(int n1, MPI_Datatype t1, int n2, MPI_Datatype t2) {
  return pccl_ip_bytes((size_t)n1, t1) != pccl_ip_bytes((size_t)n2, t2);
}

enum { LOAD_NONE = -2, LOAD_ALL = -1 }; /* what v_open loads, else one rank's block */

/* Packs block i into the copy, or unpacks it from there. */
static int v_move(vside_t *v, int i, int unpack, MPI_Comm comm) {
  if (!v->counts[i]) return MPI_SUCCESS;
  if (v->count[i] > INT_MAX) return MPI_ERR_COUNT; /* MPI_Pack's int size */
  char *user = v->user + v->displs[i] * v->extent, *copy = v->copy + v->at[i];
  int pos = 0, len = (int)v->count[i];
  int rc = unpack ? PMPI_Unpack(copy, len, &pos, user, v->counts[i], v->dt, comm)
                  : PMPI_Pack(user, v->counts[i], v->dt, copy, len, &pos, comm);
  return rc == MPI_SUCCESS && pos != len ? MPI_ERR_INTERN : rc;
}

/* Sets up the op's side `v` (o->v[0] or o->v[1]) and records it as the
 * side pccl writes (`out`) or reads; `load` is LOAD_NONE, LOAD_ALL or the
 * one rank whose block the copy starts with. Sets o->b.rc (MPI_ERR_COUNT
 * when the bytes overflow); op_end releases `v` either way. */
static void v_open(op_t *o, vside_t *v, int out, const void *user, const int counts[],
                   const int displs[], MPI_Datatype dt, int load) {
  pccl_ip_call_t *c = &o->c;
  size_t p = (size_t)c->size, es = pccl_ip_bytes(1, dt), total = 0;
  int plain = pccl_ip_plain(dt), rc = MPI_SUCCESS;
  MPI_Aint lb = 0;
  v->user = (char *)user, v->counts = counts, v->displs = displs, v->dt = dt, v->n = c->size;
  v->copy = NULL; /* not `*v = (vside_t){...}`, which would clear `small` too */
  v->base = NULL;
  if (!(v->count = p <= 64 ? v->small : malloc(2 * p * sizeof *v->count))) {
    o->b.rc = MPI_ERR_NO_MEM;
    return;
  }
  *(out ? &o->vout : &o->vin) = v;
  v->at = v->count + p;
  if (PMPI_Type_get_extent(dt, &lb, &v->extent) != MPI_SUCCESS || v->extent < 0) {
    o->b.rc = MPI_ERR_TYPE;
    return;
  }
  long long low = 0;
  int any = 0;
  for (int i = 0; i < c->size; i++)
    if (counts[i] && (!any || displs[i] < low)) low = displs[i], any = 1;
  for (size_t i = 0; i < p; i++) {
    size_t n = (size_t)counts[i], d = (size_t)((long long)displs[i] - low);
    if (es && n > SIZE_MAX / es) rc = MPI_ERR_COUNT;
    v->count[i] = n * es;
    if (!plain) { /* packed */
      v->at[i] = total;
      if ((total += v->count[i]) < v->count[i]) rc = MPI_ERR_COUNT;
    } else if (displs[i] < low) { /* an empty block's place is not used */
      v->at[i] = 0;
    } else if (d > SIZE_MAX / es) {
      rc = MPI_ERR_COUNT;
    } else {
      v->at[i] = d * es;
    }
  }
  if (rc == MPI_SUCCESS && plain) { /* an empty side's address may equal the other's, which pccl takes for in place */
    v->base = any ? v->user + low * (long long)es : NULL;
  } else if (rc == MPI_SUCCESS) {
    c->copied = 1;
    if (!(v->base = v->copy = malloc(total ? total : 1))) rc = MPI_ERR_NO_MEM;
    for (int i = 0; i < c->size && rc == MPI_SUCCESS; i++)
      if (load == LOAD_ALL || load == i) rc = v_move(v, i, 0, c->comm);
  }
  o->b.rc = rc;
}

/* Unpacks the copy, if there is one, into the user's buffer. */
static int v_store(vside_t *v, MPI_Comm comm) {
  int rc = MPI_SUCCESS;
  for (int i = 0; v->copy && i < v->n && rc == MPI_SUCCESS; i++) rc = v_move(v, i, 1, comm);
  return rc;
}

static void v_release(vside_t *v) {
  if (v->count != v->small) free(v->count);
  free(v->copy);
}

/* In place, this rank's block is already at recvbuf + displs[rank]. */
static int allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                      MPI_Comm comm, MPI_Request *req) {
  pccl_ip_call_t c;
  int inplace = sendbuf == MPI_IN_PLACE;
  if (!start(&c, PCCL_IP_ALLGATHERV, comm,
             v_reason(1, inplace, recvcounts, displs, recvtype, sendcount, sendtype, comm), req,
             NB_BYTES(req, recvcounts ? sum_bytes(recvcounts, recvtype, comm) : 0)))
    return c.rc ? c.rc
                : PMPI_EITHER(req, comm, PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf,
                                                   recvcounts, displs, recvtype, comm),
                              PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                               displs, recvtype, comm, req));
  if (!inplace && differ(sendcount, sendtype, recvcounts[c.rank], recvtype))
    return size_mismatch(&c);
  op_t local, *o = op_new(&local, &c, req);
  if (!o) return c.rc;
  vside_t *v = &o->v[0];
  v_open(o, v, 1, recvbuf, recvcounts, displs, recvtype, inplace ? c.rank : LOAD_NONE);
  bufs_open(o, inplace ? NULL : sendbuf, (size_t)sendcount, sendtype, NULL, 0, recvtype, 0, 1);
  pccl_status_t st = PCCL_OK;
  if (o->b.rc == MPI_SUCCESS)
    st = ISSUE(o, allgatherv, inplace ? v->base + v->at[c.rank] : o->b.send.bytes, v->base,
               v->count, v->at, PCCL_UINT8, o->c.pc);
  return op_issued(o, st, req);
}

/* Only the root has recvcounts, displs and recvtype. In place, its own
 * block is already at recvbuf + displs[root]. */
static int gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                   MPI_Comm comm, MPI_Request *req) {
  pccl_ip_call_t c;
  int at_root = rank_in(comm) == root, inplace = sendbuf == MPI_IN_PLACE;
  if (!start(&c, PCCL_IP_GATHERV, comm,
             v_reason(at_root, inplace, recvcounts, displs, recvtype, sendcount, sendtype, comm),
             req, SIZE_MAX))
    return c.rc ? c.rc
                : PMPI_EITHER(req, comm, PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                                displs, recvtype, root, comm),
                              PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                            displs, recvtype, root, comm, req));
  if (inplace && !at_root) return misplaced_in_place(&c);
  if (at_root && !inplace && differ(sendcount, sendtype, recvcounts[root], recvtype))
    return size_mismatch(&c);
  op_t local, *o = op_new(&local, &c, req);
  if (!o) return c.rc;
  vside_t *v = &o->v[0];
  v->base = NULL, v->count = v->at = NULL; /* a rank but the root has no such side */
  if (at_root) v_open(o, v, 1, recvbuf, recvcounts, displs, recvtype, inplace ? root : LOAD_NONE);
  bufs_open(o, inplace ? NULL : sendbuf, (size_t)sendcount, sendtype, NULL, 0, sendtype, 0, 1);
  pccl_status_t st = PCCL_OK;
  void *one = NULL;
  size_t one_len = 0;
  if (o->b.rc == MPI_SUCCESS) {
    one = inplace ? v->base + v->at[root] : o->b.send.bytes;
    one_len = inplace ? v->count[root] : o->b.send.len;
    st = ISSUE(o, gatherv, one, one_len, v->base, v->count, v->at, PCCL_UINT8, root, o->c.pc);
  }
  vagain_keep(VAGAIN_GATHERV, o, st, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
              recvtype, root, at_root ? v : NULL, one, one_len);
  return op_issued(o, st, req);
}

/* Only the root has sendcounts, displs and sendtype. In place, its own
 * block stays at sendbuf + displs[root]. */
static int scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                    MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                    int root, MPI_Comm comm, MPI_Request *req) {
  pccl_ip_call_t c;
  int at_root = rank_in(comm) == root, inplace = recvbuf == MPI_IN_PLACE;
  if (!start(&c, PCCL_IP_SCATTERV, comm,
             v_reason(at_root, inplace, sendcounts, displs, sendtype, recvcount, recvtype, comm),
             req, SIZE_MAX))
    return c.rc ? c.rc
                : PMPI_EITHER(req, comm, PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf,
                                                 recvcount, recvtype, root, comm),
                              PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf,
                                             recvcount, recvtype, root, comm, req));
  if (inplace && !at_root) return misplaced_in_place(&c);
  if (at_root && !inplace && differ(recvcount, recvtype, sendcounts[root], sendtype))
    return size_mismatch(&c);
  op_t local, *o = op_new(&local, &c, req);
  if (!o) return c.rc;
  vside_t *v = &o->v[0];
  v->base = NULL, v->count = v->at = NULL; /* a rank but the root has no such side */
  if (at_root) v_open(o, v, 0, sendbuf, sendcounts, displs, sendtype, LOAD_ALL);
  o->store = !inplace;
  bufs_open(o, NULL, 0, recvtype, inplace ? NULL : recvbuf, (size_t)recvcount, recvtype, 0, 1);
  pccl_status_t st = PCCL_OK;
  void *one = NULL;
  size_t one_len = 0;
  if (o->b.rc == MPI_SUCCESS) {
    one = inplace ? v->base + v->at[root] : o->b.recv.bytes;
    one_len = inplace ? v->count[root] : o->b.recv.len;
    st = ISSUE(o, scatterv, v->base, v->count, v->at, one, one_len, PCCL_UINT8, root, o->c.pc);
  }
  /* o->store: the result is copied out of b.recv, so a call that viewed
   * it through a copy is not kept (c.copied) */
  vagain_keep(VAGAIN_SCATTERV, o, st, recvbuf, recvcount, recvtype, sendbuf, sendcounts, displs,
              sendtype, root, at_root ? v : NULL, one, one_len);
  return op_issued(o, st, req);
}

/* In place (sendbuf MPI_IN_PLACE), the blocks sent are recvbuf's own
 * (recvcounts, rdispls, recvtype), replaced by those received: pccl's
 * sendbuf == recvbuf. */
static int alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                     MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                     const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request *req) {
  pccl_ip_call_t c;
  int inplace = sendbuf == MPI_IN_PLACE;
  pccl_ip_reason_t why = many_reason(recvcounts, rdispls, recvtype, comm);
  if (why == PCCL_IP_TAKEN && !inplace) why = many_reason(sendcounts, sdispls, sendtype, comm);
  if (!start(&c, PCCL_IP_ALLTOALLV, comm, why, req, SIZE_MAX))
    return c.rc ? c.rc
                : PMPI_EITHER(req, comm, PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                                  recvcounts, rdispls, recvtype, comm),
                              PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                              recvcounts, rdispls, recvtype, comm, req));
  if (!inplace && differ(sendcounts[c.rank], sendtype, recvcounts[c.rank], recvtype))
    return size_mismatch(&c);
  op_t local, *o = op_new(&local, &c, req);
  if (!o) return c.rc;
  vside_t *r = &o->v[0], *s = &o->v[1], *in = inplace ? r : s;
  v_open(o, r, 1, recvbuf, recvcounts, rdispls, recvtype, inplace ? LOAD_ALL : LOAD_NONE);
  if (o->b.rc == MPI_SUCCESS && !inplace)
    v_open(o, s, 0, sendbuf, sendcounts, sdispls, sendtype, LOAD_ALL);
  pccl_status_t st = PCCL_OK;
  if (o->b.rc == MPI_SUCCESS)
    st = ISSUE(o, alltoallv, in->base, in->count, in->at, r->base, r->count, r->at, PCCL_UINT8,
               o->c.pc);
  return op_issued(o, st, req);
}

/* ---- the entry points ---- */

PCCL_IP_API int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                              MPI_Op op, MPI_Comm comm) {
  return allreduce(sendbuf, recvbuf, count, dt, op, comm, BLOCKING);
}
PCCL_IP_API int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                               MPI_Op op, MPI_Comm comm, MPI_Request *request) {
  return allreduce(sendbuf, recvbuf, count, dt, op, comm, request);
}
PCCL_IP_API int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                         MPI_Comm comm) {
  return scan(PCCL_IP_SCAN, sendbuf, recvbuf, count, dt, op, comm, BLOCKING);
}
PCCL_IP_API int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                          MPI_Op op, MPI_Comm comm, MPI_Request *request) {
  return scan(PCCL_IP_SCAN, sendbuf, recvbuf, count, dt, op, comm, request);
}
PCCL_IP_API int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                           MPI_Op op, MPI_Comm comm) {
  return scan(PCCL_IP_EXSCAN, sendbuf, recvbuf, count, dt, op, comm, BLOCKING);
}
PCCL_IP_API int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                            MPI_Op op, MPI_Comm comm, MPI_Request *request) {
  return scan(PCCL_IP_EXSCAN, sendbuf, recvbuf, count, dt, op, comm, request);
}
PCCL_IP_API int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                         MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
  return reduce_scatter_block(sendbuf, recvbuf, recvcount, dt, op, comm, BLOCKING);
}
PCCL_IP_API int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                          MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                                          MPI_Request *request) {
  return reduce_scatter_block(sendbuf, recvbuf, recvcount, dt, op, comm, request);
}
PCCL_IP_API int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                   MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
  return reduce_scatter(sendbuf, recvbuf, recvcounts, dt, op, comm, BLOCKING);
}
PCCL_IP_API int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                    MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                                    MPI_Request *request) {
  return reduce_scatter(sendbuf, recvbuf, recvcounts, dt, op, comm, request);
}
PCCL_IP_API int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                           MPI_Op op, int root, MPI_Comm comm) {
  return reduce(sendbuf, recvbuf, count, dt, op, root, comm, BLOCKING);
}
PCCL_IP_API int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                            MPI_Op op, int root, MPI_Comm comm, MPI_Request *request) {
  return reduce(sendbuf, recvbuf, count, dt, op, root, comm, request);
}
PCCL_IP_API int MPI_Bcast(void *buffer, int count, MPI_Datatype dt, int root, MPI_Comm comm) {
  return bcast(buffer, count, dt, root, comm, BLOCKING);
}
PCCL_IP_API int MPI_Ibcast(void *buffer, int count, MPI_Datatype dt, int root, MPI_Comm comm,
                           MPI_Request *request) {
  return bcast(buffer, count, dt, root, comm, request);
}
PCCL_IP_API int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, int recvcount, MPI_Datatype recvtype,
                              MPI_Comm comm) {
  return everyone(PCCL_IP_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                  comm, BLOCKING);
}
PCCL_IP_API int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                               MPI_Request *request) {
  return everyone(PCCL_IP_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                  comm, request);
}
PCCL_IP_API int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return everyone(PCCL_IP_ALLTOALL, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                  comm, BLOCKING);
}
PCCL_IP_API int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                              MPI_Request *request) {
  return everyone(PCCL_IP_ALLTOALL, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                  comm, request);
}
PCCL_IP_API int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                            MPI_Comm comm) {
  return scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, BLOCKING);
}
PCCL_IP_API int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                             MPI_Comm comm, MPI_Request *request) {
  return scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
}
PCCL_IP_API int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                           MPI_Comm comm) {
  return gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, BLOCKING);
}
PCCL_IP_API int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                            MPI_Comm comm, MPI_Request *request) {
  return gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
}
PCCL_IP_API int MPI_Barrier(MPI_Comm comm) { return barrier(comm, BLOCKING); }
PCCL_IP_API int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request) {
  return barrier(comm, request);
}
PCCL_IP_API int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, const int recvcounts[], const int displs[],
                               MPI_Datatype recvtype, MPI_Comm comm) {
  return allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                    BLOCKING);
}
PCCL_IP_API int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, const int recvcounts[], const int displs[],
                                MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
  return allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                    request);
}
PCCL_IP_API int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, int root, MPI_Comm comm) {
  /* the short way here, before gatherv's frame (its op is 4.7 KB) is set up */
  const vagain_t *a = vagain(VAGAIN_GATHERV, comm, sendbuf, sendcount, sendtype, recvbuf,
                             recvcounts, displs, recvtype, root);
  if (a)
    return again_end(&a->c, pccl_gatherv(a->pone, a->pone_len, a->base, a->at_root ? a->count : NULL,
                                         a->at_root ? a->at : NULL, PCCL_UINT8, root, a->c.pc));
  return gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
                 BLOCKING);
}
PCCL_IP_API int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, int root, MPI_Comm comm,
                             MPI_Request *request) {
  return gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
                 request);
}
PCCL_IP_API int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                             MPI_Datatype sendtype, void *recvbuf, int recvcount,
                             MPI_Datatype recvtype, int root, MPI_Comm comm) {
  const vagain_t *a = vagain(VAGAIN_SCATTERV, comm, recvbuf, recvcount, recvtype, sendbuf,
                             sendcounts, displs, sendtype, root);
  if (a)
    return again_end(&a->c, pccl_scatterv(a->base, a->at_root ? a->count : NULL,
                                          a->at_root ? a->at : NULL, a->pone, a->pone_len,
                                          PCCL_UINT8, root, a->c.pc));
  return scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
                  BLOCKING);
}
PCCL_IP_API int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                              MPI_Datatype sendtype, void *recvbuf, int recvcount,
                              MPI_Datatype recvtype, int root, MPI_Comm comm,
                              MPI_Request *request) {
  return scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
                  request);
}
PCCL_IP_API int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                              MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                              const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                   comm, BLOCKING);
}
PCCL_IP_API int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                               MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                               const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                               MPI_Request *request) {
  return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                   comm, request);
}
