/* pccl.h - public API of pccl, a library of collective communication.
 *
 * pccl runs all-gather, reduce-scatter, all-reduce, broadcast, reduce, scatter,
 * gather and all-to-all over MPI between processes, choosing an algorithm per
 * call. Every function returns a pccl_status_t; on failure the communicator's
 * last-error string (pccl_last_error) says what was wrong and where.
 *
 * Buffers and counts follow NCCL's conventions:
 *   - counts are in elements of the given datatype;
 *   - all-gather: `count` elements in, nranks*count out;
 *   - reduce-scatter: nranks*count in, `count` out (equal blocks);
 *   - all-reduce, broadcast, reduce: `count` elements in and out;
 *   - scatter / gather: `count` elements per rank (root holds nranks*count);
 *   - all-to-all: `count` elements to and from each rank.
 * In-place calls are recognised by pointer, as in NCCL: all-reduce, broadcast
 * and reduce with sendbuf == recvbuf; all-gather with
 * sendbuf == recvbuf + rank*count; reduce-scatter with
 * recvbuf == sendbuf + rank*count; all-to-all with sendbuf == recvbuf;
 * scatter with recvbuf == sendbuf + rank*count at the root, gather with
 * sendbuf == recvbuf + rank*count at the root.
 * Buffers must be aligned to their element size (a pair type's: its C
 * struct's alignment). Any other overlap between
 * the send and receive buffers is an error (PCCL_ERR_INVALID_ARGUMENT).
 *
 * A communicator is used by one thread at a time, like an MPI communicator.
 */
#ifndef PCCL_H
#define PCCL_H

#include <stddef.h>
#include <stdint.h>

#include "pccl_version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define PCCL_API
#else
#define PCCL_API __attribute__((visibility("default")))
#endif

/* Status codes. Values are fixed forever; new codes are only appended. */
typedef enum {
  PCCL_OK = 0,
  PCCL_ERR_INVALID_ARGUMENT = 1, /* NULL/misaligned/overlapping buffer, bad root, ... */
  PCCL_ERR_INVALID_DTYPE = 2,    /* unknown datatype */
  PCCL_ERR_INVALID_OP = 3,       /* unknown reduction operation */
  PCCL_ERR_OVERFLOW = 4,         /* count x nranks x element size > PTRDIFF_MAX */
  PCCL_ERR_NO_MEMORY = 5,        /* an allocation failed */
  PCCL_ERR_MPI = 6,              /* the MPI library returned an error */
  PCCL_ERR_INVALID_COMM = 7,     /* NULL or already destroyed communicator */
  PCCL_ERR_CONFIG = 8,           /* malformed environment variable or setting */
  PCCL_ERR_UNSUPPORTED = 9,      /* valid request this build or algorithm cannot do */
  PCCL_ERR_INTERNAL = 10,        /* a bug in pccl: please report it */
  PCCL_ERR_CORRUPT = 11,         /* compressed data truncated, corrupted or not pccl's */
  PCCL_ERR_TIMEOUT = 12,         /* no progress for the communicator's timeout: a peer
                                    skipped the call, died or is stuck; the communicator
                                    is broken */
  PCCL_ERR_MISMATCH = 13,        /* ranks called with different arguments (PCCL_CHECK) */
  PCCL_ERR_ABORTED = 14          /* pccl_comm_abort ended the call; the communicator is
                                    broken */
} pccl_status_t;

/* Datatypes. Values are fixed; new ones are only appended. The pair types
 * are the C structs below (value first, then an int32 index, with the
 * padding C gives them); they reduce with PCCL_MAXLOC and PCCL_MINLOC only.
 * PCCL_BOOL is C's bool (one byte holding 0 or 1). */
typedef enum {
  PCCL_INT8 = 0,
  PCCL_UINT8 = 1,
  PCCL_INT32 = 2,
  PCCL_UINT32 = 3,
  PCCL_INT64 = 4,
  PCCL_UINT64 = 5,
  PCCL_FLOAT16 = 6,  /* IEEE 754 binary16 */
  PCCL_BFLOAT16 = 7, /* bfloat16 */
  PCCL_FLOAT32 = 8,
  PCCL_FLOAT64 = 9,
  PCCL_INT16 = 10,
  PCCL_UINT16 = 11,
  PCCL_BOOL = 12,
  PCCL_FLOAT_INT = 13,  /* pccl_float_int_t, as MPI_FLOAT_INT */
  PCCL_DOUBLE_INT = 14, /* pccl_double_int_t, as MPI_DOUBLE_INT */
  PCCL_INT64_INT = 15,  /* pccl_int64_int_t, as MPI_LONG_INT where long has 64 bits */
  PCCL_INT32_INT = 16,  /* pccl_int32_int_t, as MPI_2INT */
  PCCL_INT16_INT = 17,  /* pccl_int16_int_t, as MPI_SHORT_INT */
  PCCL_DTYPE_COUNT
} pccl_dtype_t;

/* The (value, index) pairs of PCCL_MAXLOC / PCCL_MINLOC. */
typedef struct { float value; int32_t index; } pccl_float_int_t;
typedef struct { double value; int32_t index; } pccl_double_int_t;
typedef struct { int64_t value; int32_t index; } pccl_int64_int_t;
typedef struct { int32_t value; int32_t index; } pccl_int32_int_t;
typedef struct { int16_t value; int32_t index; } pccl_int16_int_t;

/* Reductions, and the datatypes each is defined on (any other pair is
 * PCCL_ERR_INVALID_OP):
 * - SUM, PROD, MIN, MAX, AVG: integers and floats. Integer sum and prod wrap
 *   around in two's complement. float16/bfloat16 are reduced through
 *   float32, rounded to nearest even. AVG is the sum divided by the number
 *   of ranks (integer division for integer types). MIN/MAX of equal zeros
 *   or with a NaN operand give one of the operands or a NaN, unspecified
 *   which.
 * - LAND, LOR, LXOR: integers and PCCL_BOOL; an element is true when it is
 *   not zero, and the result is 1 or 0.
 * - BAND, BOR, BXOR: integers, bit by bit.
 * - MAXLOC, MINLOC: the pair types; the largest (smallest) value, and of
 *   equal values the smallest index, as MPI defines them. With a NaN value
 *   the result is one of the operands, unspecified which. */
typedef enum {
  PCCL_SUM = 0,
  PCCL_PROD = 1,
  PCCL_MIN = 2,
  PCCL_MAX = 3,
  PCCL_AVG = 4,
  PCCL_LAND = 5,
  PCCL_LOR = 6,
  PCCL_LXOR = 7,
  PCCL_BAND = 8,
  PCCL_BOR = 9,
  PCCL_BXOR = 10,
  PCCL_MAXLOC = 11,
  PCCL_MINLOC = 12,
  PCCL_OP_COUNT
} pccl_op_t;

typedef enum {
  PCCL_COLL_ALLGATHER = 0,
  PCCL_COLL_REDUCE_SCATTER = 1,
  PCCL_COLL_ALLREDUCE = 2,
  PCCL_COLL_BROADCAST = 3,
  PCCL_COLL_REDUCE = 4,
  PCCL_COLL_SCATTER = 5,
  PCCL_COLL_GATHER = 6,
  PCCL_COLL_ALLTOALL = 7,
  PCCL_COLL_SCAN = 8,
  PCCL_COLL_EXSCAN = 9,
  PCCL_COLL_ALLGATHERV = 10,
  PCCL_COLL_REDUCE_SCATTERV = 11,
  PCCL_COLL_GATHERV = 12,
  PCCL_COLL_SCATTERV = 13,
  PCCL_COLL_ALLTOALLV = 14,
  PCCL_COLL_COUNT
} pccl_coll_t;

/* Opaque communicator. */
typedef struct pccl_comm pccl_comm_t;

/* ---- library ---------------------------------------------------------- */

/* Runtime version as PCCL_VERSION_NUMBER encodes it (major*10000+minor*100+patch). */
PCCL_API uint32_t pccl_version(void);

/* Human-readable name of a status code; never NULL. */
PCCL_API const char *pccl_status_string(pccl_status_t status);

/* Detail of the last error on `comm`: collective, rank and what was wrong.
 * With comm NULL (or not a live communicator) it returns the calling
 * thread's last error from a call that had no valid communicator.
 * Never NULL; empty when there was no error. Valid until the next call. */
PCCL_API const char *pccl_last_error(const pccl_comm_t *comm);

/* Name of a datatype / op / collective ("float32", "sum", "allgather");
 * "unknown" for out-of-range values. */
PCCL_API const char *pccl_dtype_name(pccl_dtype_t dtype);
PCCL_API const char *pccl_op_name(pccl_op_t op);
PCCL_API const char *pccl_coll_name(pccl_coll_t coll);

/* Size in bytes of one element; 0 for an unknown datatype. */
PCCL_API size_t pccl_dtype_size(pccl_dtype_t dtype);

/* The alignment buffers of dtype need: its size, but a pair type's C struct
 * alignment (8 for pccl_double_int_t); 0 for an unknown datatype. */
PCCL_API size_t pccl_dtype_align(pccl_dtype_t dtype);

/* 1 when op is defined on dtype (see pccl_op_t), else 0. */
PCCL_API int pccl_op_supported(pccl_dtype_t dtype, pccl_op_t op);

/* ---- memory ------------------------------------------------------------ */

/* Memory that the other ranks of a node can read directly. Collectives work
 * on any buffer; on buffers from pccl_mem_alloc the ranks of a node copy and
 * reduce each other's data with plain loads (memcpy speed) instead of one
 * cross-memory-attach system call per message. Page-aligned and zeroed.
 * pccl_mem_alloc returns PCCL_ERR_INVALID_ARGUMENT (ptr NULL, size 0 or too
 * large), PCCL_ERR_NO_MEMORY or PCCL_ERR_UNSUPPORTED (not Linux); *ptr is
 * NULL on failure. pccl_mem_free(NULL) does nothing; any pointer that
 * pccl_mem_alloc did not return is PCCL_ERR_INVALID_ARGUMENT. Thread-safe;
 * errors are reported by pccl_last_error(NULL). */
PCCL_API pccl_status_t pccl_mem_alloc(void **ptr, size_t size);
PCCL_API pccl_status_t pccl_mem_free(void *ptr);

/* ---- communicators ---------------------------------------------------- */

/* Creates a communicator over MPI_COMM_WORLD, initialising MPI first when
 * the caller has not (pccl_finalize then finalises it). For an existing MPI
 * communicator see pccl_comm_create_mpi in pccl_mpi.h.
 * Returns PCCL_OK, PCCL_ERR_INVALID_ARGUMENT (comm NULL), PCCL_ERR_MPI,
 * PCCL_ERR_NO_MEMORY, PCCL_ERR_CONFIG (malformed PCCL_* environment). */
PCCL_API pccl_status_t pccl_comm_create_world(pccl_comm_t **comm);

/* Creates a communicator over `nranks` ranks of `parent`, listed in
 * `ranks` (distinct, each in [0, size of parent)); the new communicator's
 * rank i is parent rank ranks[i]. Collective over the listed ranks only:
 * the others do not call it, and the parent may be used again once it
 * returns. Every member must pass the same list; a different order of the
 * same ranks is PCCL_ERR_MISMATCH (a different set is undefined, as in MPI).
 * Returns PCCL_OK, PCCL_ERR_INVALID_COMM (parent), PCCL_ERR_INVALID_ARGUMENT
 * (comm or ranks NULL, nranks out of range, a rank out of range or listed
 * twice, the caller not listed), PCCL_ERR_MISMATCH, PCCL_ERR_MPI,
 * PCCL_ERR_NO_MEMORY, PCCL_ERR_CONFIG. */
PCCL_API pccl_status_t pccl_comm_create_group(pccl_comm_t *parent, int nranks, const int *ranks,
                                              pccl_comm_t **comm);

/* Frees the communicator and everything it holds. NULL is accepted.
 * Returns PCCL_ERR_INVALID_COMM for a pointer that is not a live
 * communicator, and PCCL_ERR_INVALID_ARGUMENT (keeping it) while non-blocking
 * calls on it are outstanding. With PCCL_CHECK=1 it first finishes the
 * agreements of non-blocking calls that failed their checks, which waits
 * for the peers to destroy theirs. The node's shared window is freed with
 * the peers of the node: a rank waits for them up to the communicator's
 * timeout (pccl_comm_set_timeout); when one does not come by then, or comes
 * with its communicator broken (a timeout or pccl_comm_abort there), no rank
 * of the node waits any longer, and the window stays until the process ends. */
PCCL_API pccl_status_t pccl_comm_destroy(pccl_comm_t *comm);

/* Finalises MPI if pccl_comm_create_world initialised it; otherwise does
 * nothing. Call after destroying every communicator. */
PCCL_API pccl_status_t pccl_finalize(void);

/* Rank and size; node id (0..nnodes-1), rank inside the node, ranks on this
 * node and number of nodes. Nodes come from MPI's shared-memory split, or
 * from PCCL_RANKS_PER_NODE=M (consecutive ranks in groups of M).
 * Each returns PCCL_ERR_INVALID_COMM or PCCL_ERR_INVALID_ARGUMENT (NULL out). */
PCCL_API pccl_status_t pccl_comm_rank(const pccl_comm_t *comm, int *rank);
PCCL_API pccl_status_t pccl_comm_size(const pccl_comm_t *comm, int *size);
PCCL_API pccl_status_t pccl_comm_node(const pccl_comm_t *comm, int *node);
PCCL_API pccl_status_t pccl_comm_nnodes(const pccl_comm_t *comm, int *nnodes);
PCCL_API pccl_status_t pccl_comm_local_rank(const pccl_comm_t *comm, int *local_rank);
PCCL_API pccl_status_t pccl_comm_local_size(const pccl_comm_t *comm, int *local_size);

/* Forces the algorithm of one collective on this communicator, overriding
 * the PCCL_ALGO environment variable and the default selection. `name` is an
 * algorithm name as pccl_algo_list prints them; NULL or "auto" restores
 * automatic selection. Returns PCCL_ERR_INVALID_ARGUMENT for an unknown name. */
PCCL_API pccl_status_t pccl_comm_set_algo(pccl_comm_t *comm, pccl_coll_t coll,
                                          const char *name);

/* Name of the algorithm the last collective on `comm` ran ("ring", ...), or
 * "none" before the first. Valid for the communicator's lifetime. */
PCCL_API const char *pccl_comm_last_algo(const pccl_comm_t *comm);

/* The algorithm a call would run, without running it: *name is the name
 * (as pccl_algo_list gives it; pccl_comm_last_algo adds the k of a
 * parameterized one as ":k") that selection picks for
 * collective `coll` of `count` elements of `dtype` on host buffers of
 * `comm`, blocking or, with `nonblocking`, a pccl_i* call; "none" when
 * PCCL_ALGO excludes every algorithm or count is 0 (nothing runs). Nothing
 * moves and no peer takes part. "seg" means the node's shared-memory
 * segment, which serves a non-blocking call without messages
 * (docs/seg.md). PCCL_ERR_UNSUPPORTED for the v-collectives (their choice
 * depends on their counts) and for a non-blocking call that PCCL_ALGO
 * forces onto a path that runs blocking calls only (the call would be
 * refused); other errors: PCCL_ERR_INVALID_COMM, PCCL_ERR_INVALID_ARGUMENT
 * (unknown collective, NULL name), PCCL_ERR_INVALID_DTYPE,
 * PCCL_ERR_OVERFLOW. */
PCCL_API pccl_status_t pccl_comm_algo_for(pccl_comm_t *comm, pccl_coll_t coll, size_t count,
                                          pccl_dtype_t dtype, int nonblocking, const char **name);

/* A function pccl calls, on the calling thread, now and then while one of
 * its blocking collectives waits for peers (every 64 to 1024 polls without
 * progress, depending on the path): for work of the program's own that
 * must move meanwhile because a peer may be waiting on it, such as MPI's
 * progress for the program's non-blocking MPI calls (the MPI drop-in sets
 * one). Process-wide; NULL removes it. Set it before collectives run:
 * a call already waiting may still use the one before. Returns PCCL_OK. */
PCCL_API pccl_status_t pccl_set_wait_hook(void (*hook)(void *arg), void *arg);

/* Seconds a collective may go without progress before it gives up with
 * PCCL_ERR_TIMEOUT (PCCL_TIMEOUT, default 300); 0 waits forever. The
 * last-error message then names the collective, the algorithm, the step,
 * the peers still awaited and how long. Returns PCCL_ERR_INVALID_COMM or
 * PCCL_ERR_INVALID_ARGUMENT (negative, NaN or over 1e9). */
PCCL_API pccl_status_t pccl_comm_set_timeout(pccl_comm_t *comm, double seconds);

/* Ends the collective running on `comm` in another thread, which returns
 * PCCL_ERR_ABORTED; with none running, the next one does. Either way the
 * communicator is broken: every later collective on it fails at once with
 * the same status and cause, until pccl_comm_destroy (which then frees only
 * what needs no peer: a broken communicator's peers may be gone). The one
 * call that may be made on a communicator another thread is using.
 * Returns PCCL_ERR_INVALID_COMM for a communicator that is not live. */
PCCL_API pccl_status_t pccl_comm_abort(pccl_comm_t *comm);

/* How this rank reaches its peers: "shm (...) in node, mpi between nodes",
 * or "mpi (...)" with the reason shm is not used (PCCL_SHM=0, no peer on
 * the node, cross-memory attach not permitted). */
PCCL_API const char *pccl_comm_transport(const pccl_comm_t *comm);

/* Names of the algorithms registered for `coll`, in table order: writes up to
 * `max` pointers to static strings into `names` and the total into `count`. */
PCCL_API pccl_status_t pccl_algo_list(pccl_coll_t coll, const char **names, int max,
                                      int *count);

/* ---- error-bounded lossy compression ------------------------------------ */
/* Codecs for float32, float64, float16 and bfloat16 arrays. Every decoded
 * element differs from the original by at most the absolute bound given to
 * pccl_compress; NaN stays NaN (payload kept), +-Inf stays +-Inf, and values
 * the codec cannot bound (huge against the bound) are stored bit-exact.
 * The compressed form is self-describing: a 24-byte header (magic, format
 * version, codec, datatype, element count, bound), then the codec's stream
 * (docs/compression.md). Errors carry a detail in pccl_last_error(NULL).
 * Thread-safe: no state outside the arguments. */
typedef enum {
  PCCL_CODEC_SZP = 0, /* pccl's own: fixed-size blocks, in-block prediction, bit packing */
  PCCL_CODEC_ZFP = 1, /* ZFP's fixed-accuracy mode, only where built with libzfp:
                         float32/float64 without NaN, Inf or subnormals, and bounds ZFP
                         can meet on the data (checked by decoding; else
                         PCCL_ERR_UNSUPPORTED) */
  PCCL_CODEC_SZI = 2, /* pccl's own for float32/float64 arrays of up to three dimensions
                         (pccl_compress_3d): multilevel cubic interpolation across the
                         array, szp's bit packing; float16/bfloat16 are
                         PCCL_ERR_UNSUPPORTED */
  PCCL_CODEC_COUNT
} pccl_codec_t;

/* "szp", "zfp", "szi"; "unknown" for out-of-range values. */
PCCL_API const char *pccl_codec_name(pccl_codec_t codec);

/* 1 when this build has the codec, else 0. */
PCCL_API int pccl_codec_available(pccl_codec_t codec);

/* Capacity pccl_compress needs at most for `count` elements, header
 * included; 0 for an unknown or unavailable codec, a datatype the codec does
 * not take (zfp, szi: float16, bfloat16; every codec: non-float types), or a
 * size that does not fit in size_t. */
PCCL_API size_t pccl_compress_bound(pccl_codec_t codec, size_t count, pccl_dtype_t dtype);

/* Compresses `count` elements of `src` (aligned to the element size) into
 * dst[0 .. dst_capacity) with every element's error at most abs_bound
 * (finite, > 0); *compressed_size receives the bytes written. Returns
 * PCCL_OK; PCCL_ERR_INVALID_ARGUMENT (NULL or misaligned src with count > 0,
 * NULL dst or compressed_size, bad bound, dst_capacity too small: pass
 * pccl_compress_bound); PCCL_ERR_INVALID_DTYPE (not a float type);
 * PCCL_ERR_UNSUPPORTED (codec not in this build, or one that cannot code
 * this datatype or data); PCCL_ERR_OVERFLOW;
 * PCCL_ERR_NO_MEMORY. */
PCCL_API pccl_status_t pccl_compress(pccl_codec_t codec, const void *src, size_t count,
                                     pccl_dtype_t dtype, double abs_bound, void *dst,
                                     size_t dst_capacity, size_t *compressed_size);

/* pccl_compress of an nx x ny x nz array (x fastest; ny = nz = 1 for 1-D,
 * nz = 1 for 2-D): count = nx * ny * nz, and pccl_compress_bound and
 * pccl_decompress take that count. szi predicts along every dimension;
 * szp and zfp see the array as count elements, as pccl_compress does.
 * PCCL_ERR_OVERFLOW when the product does not fit in size_t; otherwise the
 * errors of pccl_compress. pccl_compress(c, src, n, ...) is
 * pccl_compress_3d(c, src, n, 1, 1, ...). */
PCCL_API pccl_status_t pccl_compress_3d(pccl_codec_t codec, const void *src, size_t nx,
                                        size_t ny, size_t nz, pccl_dtype_t dtype,
                                        double abs_bound, void *dst, size_t dst_capacity,
                                        size_t *compressed_size);

/* Decodes src[0 .. src_size) into `count` elements of `dtype` at dst
 * (aligned to the element size). Reads no byte outside src and writes no
 * byte outside dst[0 .. count x element size). Returns PCCL_OK;
 * PCCL_ERR_CORRUPT (truncated, damaged or foreign data);
 * PCCL_ERR_INVALID_ARGUMENT (NULL or misaligned buffers, or count / dtype
 * other than the stream's); PCCL_ERR_UNSUPPORTED (codec not in this build);
 * PCCL_ERR_NO_MEMORY. dst's contents are unspecified after an error. */
PCCL_API pccl_status_t pccl_decompress(const void *src, size_t src_size, void *dst,
                                       size_t count, pccl_dtype_t dtype);

/* Reads a compressed stream's header; any output pointer may be NULL.
 * Returns PCCL_OK, PCCL_ERR_CORRUPT or PCCL_ERR_INVALID_ARGUMENT (src NULL). */
PCCL_API pccl_status_t pccl_compressed_info(const void *src, size_t src_size,
                                            pccl_codec_t *codec, size_t *count,
                                            pccl_dtype_t *dtype, double *abs_bound);

/* ---- collectives (blocking) -------------------------------------------- */
/* Each returns PCCL_OK; PCCL_ERR_INVALID_COMM; PCCL_ERR_INVALID_ARGUMENT
 * (NULL buffer with count > 0, misaligned or overlapping buffers, root out of
 * range); PCCL_ERR_INVALID_DTYPE; PCCL_ERR_INVALID_OP; PCCL_ERR_OVERFLOW
 * (count x nranks x element size exceeds PTRDIFF_MAX); PCCL_ERR_NO_MEMORY; PCCL_ERR_MPI;
 * PCCL_ERR_TIMEOUT and PCCL_ERR_ABORTED (see pccl_comm_set_timeout and
 * pccl_comm_abort; a broken communicator returns them again at once);
 * PCCL_ERR_MISMATCH (with PCCL_CHECK=1: ranks passed different collective,
 * count, datatype, op, root or algorithm, or some rank rejected its
 * arguments; the last error names the fields and ranks).
 * A call that fails validation writes nothing to recvbuf. count == 0 is a
 * no-op that returns PCCL_OK (with PCCL_CHECK=1 it still takes part in the
 * check, so that a rank passing 0 where others pass more is caught).
 *
 * In builds with CUDA the buffers may be device memory (cudaMalloc or
 * managed): a call's buffers must then both be on the device
 * (PCCL_ERR_INVALID_ARGUMENT otherwise). The call waits for the work already
 * queued on the device, and returns with the result in place; results are
 * bit for bit those on host buffers. Compressed calls on device buffers are
 * PCCL_ERR_UNSUPPORTED (docs/gpu.md). A malformed PCCL_CUDA is PCCL_ERR_CONFIG
 * at communicator creation. */

PCCL_API pccl_status_t pccl_allgather(const void *sendbuf, void *recvbuf, size_t count,
                                      pccl_dtype_t dtype, pccl_comm_t *comm);

PCCL_API pccl_status_t pccl_reduce_scatter(const void *sendbuf, void *recvbuf,
                                           size_t count, pccl_dtype_t dtype, pccl_op_t op,
                                           pccl_comm_t *comm);

PCCL_API pccl_status_t pccl_allreduce(const void *sendbuf, void *recvbuf, size_t count,
                                      pccl_dtype_t dtype, pccl_op_t op, pccl_comm_t *comm);

/* sendbuf is read at the root only; recvbuf is written on every rank. */
PCCL_API pccl_status_t pccl_broadcast(const void *sendbuf, void *recvbuf, size_t count,
                                      pccl_dtype_t dtype, int root, pccl_comm_t *comm);

/* recvbuf is written (and may be NULL elsewhere) at the root only. */
PCCL_API pccl_status_t pccl_reduce(const void *sendbuf, void *recvbuf, size_t count,
                                   pccl_dtype_t dtype, pccl_op_t op, int root,
                                   pccl_comm_t *comm);

/* sendbuf (nranks*count) is read at the root only. */
PCCL_API pccl_status_t pccl_scatter(const void *sendbuf, void *recvbuf, size_t count,
                                    pccl_dtype_t dtype, int root, pccl_comm_t *comm);

/* recvbuf (nranks*count) is written at the root only. */
PCCL_API pccl_status_t pccl_gather(const void *sendbuf, void *recvbuf, size_t count,
                                   pccl_dtype_t dtype, int root, pccl_comm_t *comm);

PCCL_API pccl_status_t pccl_alltoall(const void *sendbuf, void *recvbuf, size_t count,
                                     pccl_dtype_t dtype, pccl_comm_t *comm);

/* All-gather of blocks that differ in size, as MPI_Allgatherv: rank r
 * contributes recvcounts[r] elements from sendbuf, and every rank receives
 * rank i's block at recvbuf + displs[i] elements. recvcounts (and displs
 * where given) have one entry per rank; recvcounts must be the same on
 * every rank, displs may differ, and NULL displs means the blocks lie
 * packed in rank order (displs[i] = recvcounts[0] + ... + recvcounts[i-1]).
 * Counts may be 0; bytes between and after the blocks are left as they
 * were. In place: sendbuf == recvbuf + displs[rank] elements. Blocks that
 * overlap in recvbuf are PCCL_ERR_INVALID_ARGUMENT; PCCL_ERR_OVERFLOW when
 * the counts' sum or a block's end exceeds PTRDIFF_MAX bytes. With equal
 * counts and packed blocks it runs as pccl_allgather. */
PCCL_API pccl_status_t pccl_allgatherv(const void *sendbuf, void *recvbuf,
                                       const size_t *recvcounts, const size_t *displs,
                                       pccl_dtype_t dtype, pccl_comm_t *comm);

/* Reduce-scatter into blocks that differ in size, as MPI_Reduce_scatter:
 * sendbuf holds recvcounts[0] + ... + recvcounts[nranks-1] elements on every
 * rank; rank r receives in recvbuf the reduction over all ranks of the
 * recvcounts[r] elements that start at recvcounts[0] + ... +
 * recvcounts[r-1]. recvcounts must be the same on every rank; counts may be
 * 0. In place: recvbuf == sendbuf + that offset (the result overwrites the
 * rank's own block of the input). PCCL_AVG divides by nranks. With equal
 * counts it runs as pccl_reduce_scatter. */
PCCL_API pccl_status_t pccl_reduce_scatterv(const void *sendbuf, void *recvbuf,
                                            const size_t *recvcounts, pccl_dtype_t dtype,
                                            pccl_op_t op, pccl_comm_t *comm);

/* Gather of blocks that differ in size to the root, as MPI_Gatherv: rank r
 * sends sendcount elements from sendbuf; the root receives rank i's block,
 * recvcounts[i] elements, at recvbuf + displs[i] elements (NULL displs:
 * packed in rank order). recvbuf, recvcounts and displs are read at the
 * root only (NULL elsewhere is fine), and there recvcounts[root] must equal
 * sendcount. In place, at the root: sendbuf == recvbuf + displs[root]
 * elements. Blocks may be empty; bytes between them are left as they were;
 * blocks that overlap in recvbuf are PCCL_ERR_INVALID_ARGUMENT. Only the
 * root knows every count, so a rank whose sendcount differs from the
 * root's recvcounts entry fails the call with a size mismatch, or, where
 * one side expects nothing, leaves the other to PCCL_TIMEOUT. */
PCCL_API pccl_status_t pccl_gatherv(const void *sendbuf, size_t sendcount, void *recvbuf,
                                    const size_t *recvcounts, const size_t *displs,
                                    pccl_dtype_t dtype, int root, pccl_comm_t *comm);

/* Scatter of blocks that differ in size from the root, as MPI_Scatterv:
 * the root sends rank i sendcounts[i] elements from sendbuf + displs[i]
 * (NULL displs: packed in rank order); rank r receives recvcount elements
 * in recvbuf. sendbuf, sendcounts and displs are read at the root only,
 * and there sendcounts[root] must equal recvcount. In place, at the root:
 * recvbuf == sendbuf + displs[root] elements. Counts as pccl_gatherv. */
PCCL_API pccl_status_t pccl_scatterv(const void *sendbuf, const size_t *sendcounts,
                                     const size_t *displs, void *recvbuf, size_t recvcount,
                                     pccl_dtype_t dtype, int root, pccl_comm_t *comm);

/* All-to-all of blocks that differ in size, as MPI_Alltoallv: this rank
 * sends sendcounts[j] elements from sendbuf + sdispls[j] to rank j and
 * receives recvcounts[j] elements from rank j at recvbuf + rdispls[j]
 * (NULL sdispls or rdispls: packed in rank order). Rank i's sendcounts[j]
 * must equal rank j's recvcounts[i]. In place (sendbuf == recvbuf, as
 * MPI_IN_PLACE): the blocks sent are recvbuf's own, recvcounts[j] elements
 * at rdispls[j], replaced by what rank j sends; sendcounts and sdispls are
 * not read (every pair then exchanges blocks of one size); it needs at
 * most 64 KiB of scratch, except on one node's segment (the default
 * there), where blocks to send that do not fit its buffer are first
 * copied, within PCCL_MAX_SCRATCH (beyond it PCCL_ERR_UNSUPPORTED on that
 * rank and an error on the others: choose alltoallv:pairwise). Blocks that overlap in recvbuf, and send and
 * receive buffers that overlap otherwise, are PCCL_ERR_INVALID_ARGUMENT. */
PCCL_API pccl_status_t pccl_alltoallv(const void *sendbuf, const size_t *sendcounts,
                                      const size_t *sdispls, void *recvbuf,
                                      const size_t *recvcounts, const size_t *rdispls,
                                      pccl_dtype_t dtype, pccl_comm_t *comm);

/* Prefix reductions, as MPI_Scan and MPI_Exscan. pccl_scan leaves in rank
 * r's recvbuf the reduction of the sendbufs of ranks 0..r; pccl_exscan that
 * of ranks 0..r-1, and never writes rank 0's recvbuf, which may there be
 * NULL (MPI leaves its contents undefined; pccl leaves them as they were).
 * PCCL_AVG gives the mean over those ranks. In place: sendbuf == recvbuf.
 * The ranks' values are combined in rank order where an algorithm can, but
 * floating-point results may differ in the last bits between algorithms. */
PCCL_API pccl_status_t pccl_scan(const void *sendbuf, void *recvbuf, size_t count,
                                 pccl_dtype_t dtype, pccl_op_t op, pccl_comm_t *comm);
PCCL_API pccl_status_t pccl_exscan(const void *sendbuf, void *recvbuf, size_t count,
                                   pccl_dtype_t dtype, pccl_op_t op, pccl_comm_t *comm);

/* Returns once every rank of comm has called it (as MPI_Barrier). Runs as a
 * one-byte all-reduce, so its errors are pccl_allreduce's: PCCL_ERR_TIMEOUT
 * when a rank does not come within the communicator's timeout. */
PCCL_API pccl_status_t pccl_barrier(pccl_comm_t *comm);

/* ---- collectives (non-blocking) ---------------------------------------- */
/* Each pccl_i* call starts the blocking call of the same name and returns
 * at once with a request in *request; pccl_wait or pccl_test completes it.
 * Until then the buffers (and count and displacement arrays) must stay as
 * they are: the send side unchanged, the receive side unread.
 *
 * - Order: a communicator's collectives, blocking or not, run in the order
 *   they were issued, which must be the same on every rank (as in MPI). A
 *   blocking call first finishes the communicator's outstanding ones.
 * - Progress: the calls move only inside pccl calls of the thread that
 *   issued them (or last waited for or tested one of them): pccl_test,
 *   pccl_wait, another pccl_i* call, or a blocking collective on any
 *   communicator while it waits for its peers. A thread that computes
 *   between issue and wait overlaps the messages already in flight; testing
 *   now and then keeps later steps going. The communicator calls
 *   (pccl_comm_create_*, pccl_comm_destroy) and plain MPI calls do not move
 *   them: complete the outstanding calls before a communicator call that a
 *   peer may reach only after its own wait.
 * - Errors: arguments are checked at once, as the blocking call checks them
 *   (the call then returns the error, *request is NULL and nothing moves).
 *   What fails later (timeouts, MPI errors, PCCL_CHECK's mismatches) is
 *   returned by pccl_wait or pccl_test, with the message in
 *   pccl_last_error(comm). A request of a call that failed also completes.
 * - Algorithms: the blocking call's, chosen when the call is issued, except
 *   the node's shared segment (algorithm seg), whose calls wait for the
 *   node's ranks: a communicator whose PCCL_ALGO forces seg for a
 *   collective refuses its non-blocking form with PCCL_ERR_UNSUPPORTED. A call too large for PCCL_MAX_SCRATCH
 *   is not streamed but fails on every rank with PCCL_ERR_UNSUPPORTED.
 * - With PCCL_CHECK=1 the ranks' agreement is one more non-blocking step
 *   of the call; a rank whose arguments fail validation gets its error at
 *   once and its peers get PCCL_ERR_MISMATCH from their wait.
 * - pccl_comm_destroy refuses a communicator with outstanding calls
 *   (PCCL_ERR_INVALID_ARGUMENT). Compressed (lossy) calls have no
 *   non-blocking form, and device buffers are PCCL_ERR_UNSUPPORTED (not
 *   built yet). */
typedef struct pccl_request pccl_request_t;

PCCL_API pccl_status_t pccl_iallgather(const void *sendbuf, void *recvbuf, size_t count,
                                       pccl_dtype_t dtype, pccl_comm_t *comm,
                                       pccl_request_t **request);
PCCL_API pccl_status_t pccl_ireduce_scatter(const void *sendbuf, void *recvbuf, size_t count,
                                            pccl_dtype_t dtype, pccl_op_t op, pccl_comm_t *comm,
                                            pccl_request_t **request);
PCCL_API pccl_status_t pccl_iallreduce(const void *sendbuf, void *recvbuf, size_t count,
                                       pccl_dtype_t dtype, pccl_op_t op, pccl_comm_t *comm,
                                       pccl_request_t **request);
PCCL_API pccl_status_t pccl_ibroadcast(const void *sendbuf, void *recvbuf, size_t count,
                                       pccl_dtype_t dtype, int root, pccl_comm_t *comm,
                                       pccl_request_t **request);
PCCL_API pccl_status_t pccl_ireduce(const void *sendbuf, void *recvbuf, size_t count,
                                    pccl_dtype_t dtype, pccl_op_t op, int root,
                                    pccl_comm_t *comm, pccl_request_t **request);
PCCL_API pccl_status_t pccl_iscatter(const void *sendbuf, void *recvbuf, size_t count,
                                     pccl_dtype_t dtype, int root, pccl_comm_t *comm,
                                     pccl_request_t **request);
PCCL_API pccl_status_t pccl_igather(const void *sendbuf, void *recvbuf, size_t count,
                                    pccl_dtype_t dtype, int root, pccl_comm_t *comm,
                                    pccl_request_t **request);
PCCL_API pccl_status_t pccl_ialltoall(const void *sendbuf, void *recvbuf, size_t count,
                                      pccl_dtype_t dtype, pccl_comm_t *comm,
                                      pccl_request_t **request);
PCCL_API pccl_status_t pccl_iallgatherv(const void *sendbuf, void *recvbuf,
                                        const size_t *recvcounts, const size_t *displs,
                                        pccl_dtype_t dtype, pccl_comm_t *comm,
                                        pccl_request_t **request);
PCCL_API pccl_status_t pccl_ireduce_scatterv(const void *sendbuf, void *recvbuf,
                                             const size_t *recvcounts, pccl_dtype_t dtype,
                                             pccl_op_t op, pccl_comm_t *comm,
                                             pccl_request_t **request);
PCCL_API pccl_status_t pccl_igatherv(const void *sendbuf, size_t sendcount, void *recvbuf,
                                     const size_t *recvcounts, const size_t *displs,
                                     pccl_dtype_t dtype, int root, pccl_comm_t *comm,
                                     pccl_request_t **request);
PCCL_API pccl_status_t pccl_iscatterv(const void *sendbuf, const size_t *sendcounts,
                                      const size_t *displs, void *recvbuf, size_t recvcount,
                                      pccl_dtype_t dtype, int root, pccl_comm_t *comm,
                                      pccl_request_t **request);
PCCL_API pccl_status_t pccl_ialltoallv(const void *sendbuf, const size_t *sendcounts,
                                       const size_t *sdispls, void *recvbuf,
                                       const size_t *recvcounts, const size_t *rdispls,
                                       pccl_dtype_t dtype, pccl_comm_t *comm,
                                       pccl_request_t **request);
PCCL_API pccl_status_t pccl_iscan(const void *sendbuf, void *recvbuf, size_t count,
                                  pccl_dtype_t dtype, pccl_op_t op, pccl_comm_t *comm,
                                  pccl_request_t **request);
PCCL_API pccl_status_t pccl_iexscan(const void *sendbuf, void *recvbuf, size_t count,
                                    pccl_dtype_t dtype, pccl_op_t op, pccl_comm_t *comm,
                                    pccl_request_t **request);
PCCL_API pccl_status_t pccl_ibarrier(pccl_comm_t *comm, pccl_request_t **request);

/* Completes *request: returns the call's status and frees the request,
 * setting *request to NULL. A NULL *request (completed already) returns
 * PCCL_OK at once. While it waits, the thread's other outstanding calls
 * move along too. A call that makes no progress for the communicator's
 * timeout fails with PCCL_ERR_TIMEOUT, as a blocking call does. */
PCCL_API pccl_status_t pccl_wait(pccl_request_t **request);

/* Moves the thread's outstanding calls along once without waiting; *done
 * = 1 when *request has completed, which then returns its status and frees
 * it as pccl_wait does (*request = NULL). A NULL *request gives *done = 1. */
PCCL_API pccl_status_t pccl_test(pccl_request_t **request, int *done);

/* Whether the call behind `request` has finished (1) or not (0; also for
 * NULL), without moving any call along or completing the request: for a
 * caller that handles a call finished as it was issued another way (the
 * MPI drop-in hands out a request MPI made complete). */
PCCL_API int pccl_request_finished(const pccl_request_t *request);

/* Moves comm's outstanding non-blocking calls along once, whichever thread
 * issued them, without completing any request: for a progress thread of
 * the caller's own, so that a rank busy elsewhere (computing, or blocked in
 * a call of another library) does not hold up peers waiting on its calls.
 * The caller makes sure no other thread uses comm meanwhile (pccl's
 * communicators are used by one thread at a time); the calls' outcomes stay
 * with their requests, for pccl_test or pccl_wait. PCCL_ERR_UNSUPPORTED,
 * moving nothing, with the message in pccl_last_error(NULL) (the calling
 * thread's): where a call is on device buffers, or where one would make
 * MPI calls from that thread (a communicator spanning nodes or without
 * shared memory, a compressed call, PCCL_CHECK) and MPI was not
 * initialised with MPI_THREAD_MULTIPLE. Inside one node a non-blocking
 * call's messages take pccl's shared memory at every size, so no MPI call
 * is made. */
PCCL_API pccl_status_t pccl_comm_progress(pccl_comm_t *comm);

/* pccl_wait on each of requests[0..n-1], in order; returns the first
 * failure's status (and its message), PCCL_OK when all succeeded. Every
 * request is completed and set to NULL either way. */
PCCL_API pccl_status_t pccl_waitall(int n, pccl_request_t **requests);

/* ---- compressed collectives (lossy) -------------------------------------- */
/* The same collectives with the data compressed on the wire by an
 * error-bounded codec: for slow networks, where moving fewer bytes pays for
 * compressing them. float16/bfloat16/float32/float64 only; sum, avg, min and
 * max (a product has no additive bound: PCCL_ERR_UNSUPPORTED).
 *
 * The bound is on the answer, not on each compression: every element of the
 * result differs from the exact one (computed without loss, in the same
 * precision) by at most abs_bound, beyond the rounding any reduction order
 * has. pccl counts the compressions one element can pass through (stages)
 * for the algorithm it runs and gives each stage_bound = abs_bound / stages.
 * All ranks get bit-identical results. Compressed streams travel through
 * MPI, between all ranks. Algorithms: PCCL_ALGO / pccl_comm_set_algo names
 * zrecdbl and zring (all-reduce), zring (all-gather, reduce-scatter),
 * zbinomial (scatter); they apply to these calls only, and the plain calls
 * never run them. Unless one is forced, a lossy call on a single node runs
 * what the plain call would (exact, stages 0): there, compressing costs
 * more than memory bandwidth saves.
 *
 * Every rank must pass the same abs_bound and codec, as it passes the same
 * count: ranks that differ get results within the loosest bound given, no
 * longer bit-identical across ranks.
 *
 * Returns what the plain call returns, plus PCCL_ERR_INVALID_ARGUMENT (lossy
 * NULL, lossy->size not sizeof(pccl_lossy_t), abs_bound not positive and
 * finite), PCCL_ERR_INVALID_DTYPE (not a float type), PCCL_ERR_UNSUPPORTED
 * (product, a codec other than PCCL_CODEC_SZP), PCCL_ERR_CORRUPT (a stream
 * damaged in transit). */
typedef struct {
  size_t size;        /* sizeof(pccl_lossy_t), so the struct can grow */
  pccl_codec_t codec; /* PCCL_CODEC_SZP */
  double abs_bound;   /* in: largest error allowed on any element of the result */
  double stage_bound; /* out: the bound each compression ran with */
  double guaranteed;  /* out: the worst-case error pccl guarantees, <= abs_bound */
  int32_t stages;     /* out: compressions that can feed one element (0: none ran) */
} pccl_lossy_t;

#define PCCL_LOSSY_INIT(bound) {sizeof(pccl_lossy_t), PCCL_CODEC_SZP, (bound), 0.0, 0.0, 0}

PCCL_API pccl_status_t pccl_allreduce_lossy(const void *sendbuf, void *recvbuf, size_t count,
                                            pccl_dtype_t dtype, pccl_op_t op,
                                            pccl_lossy_t *lossy, pccl_comm_t *comm);
PCCL_API pccl_status_t pccl_allgather_lossy(const void *sendbuf, void *recvbuf, size_t count,
                                            pccl_dtype_t dtype, pccl_lossy_t *lossy,
                                            pccl_comm_t *comm);
PCCL_API pccl_status_t pccl_reduce_scatter_lossy(const void *sendbuf, void *recvbuf,
                                                 size_t count, pccl_dtype_t dtype, pccl_op_t op,
                                                 pccl_lossy_t *lossy, pccl_comm_t *comm);
/* The root's own block is copied exactly. */
PCCL_API pccl_status_t pccl_scatter_lossy(const void *sendbuf, void *recvbuf, size_t count,
                                          pccl_dtype_t dtype, int root, pccl_lossy_t *lossy,
                                          pccl_comm_t *comm);

/* ---- engine: named requests for training loops -------------------------- */
/* A background thread per process that takes collectives on named tensors
 * in whatever order each rank produces them, agrees with the other ranks on
 * one global order, fuses small tensors into one collective, runs it, and
 * completes a handle per request (docs/engine.md).
 *
 * Negotiation: a name seen for the first time goes to rank 0, which waits
 * until every rank has submitted it, checks that all agree (collective,
 * datatype, op, root, count, shape, group) and answers every rank. Answers
 * enter a response cache, identical on every rank, so a cache position
 * names a tensor everywhere: a cycle whose requests are all cached costs one
 * AND-allreduce of a bitvector, and rank 0 is not involved.
 *
 * Threads: the engine runs its collectives on a communicator of its own
 * (created from `comm`, which stays the caller's). Its thread calls MPI, so
 * MPI must provide MPI_THREAD_SERIALIZED (pccl_comm_create_world asks for
 * it) and, below MPI_THREAD_MULTIPLE, the program must make no other MPI or
 * pccl communication call while an engine lives. The submit, handle and
 * stats calls are thread-safe. */
typedef struct pccl_engine pccl_engine_t;
typedef struct pccl_handle pccl_handle_t;

/* Engine settings. A negative value (NULL for timeline) takes the
 * environment variable named beside it, else the default. */
typedef struct {
  size_t size;           /* sizeof(pccl_engine_config_t) */
  double cycle_ms;       /* PCCL_CYCLE_TIME_MS: time between cycles (5 ms) */
  int64_t fusion_bytes;  /* PCCL_FUSION_THRESHOLD: largest fusion buffer in bytes,
                            K/M/G suffixes in the variable (64 MiB); 0: no fusion */
  int64_t cache_capacity; /* PCCL_CACHE_CAPACITY: responses cached (1024); 0: no cache */
  double stall_seconds;  /* PCCL_STALL_CHECK_SECONDS: warn about tensors some ranks
                            submitted and others not after this long (60); 0: never */
  const char *timeline;  /* PCCL_TIMELINE: Chrome-trace JSON file written by rank 0
                            ("%r" in the name: every rank, %r replaced by the rank) */
} pccl_engine_config_t;

#define PCCL_ENGINE_CONFIG_INIT {sizeof(pccl_engine_config_t), -1.0, -1, -1, -1.0, NULL}

#define PCCL_ENGINE_NAME_MAX 255 /* longest request name, in bytes */
#define PCCL_ENGINE_MAX_DIMS 8

/* One named collective. Buffers, count, dtype, op and root mean what they
 * mean for the blocking call of the same collective (allreduce, allgather,
 * broadcast and reduce-scatter), and must stay valid until the handle
 * completes. shape (ndim entries, product = count) is optional: when given,
 * ranks must agree on it too. */
typedef struct {
  size_t size; /* sizeof(pccl_engine_request_t) */
  const char *name;
  pccl_coll_t coll;
  const void *sendbuf;
  void *recvbuf;
  size_t count;
  pccl_dtype_t dtype;
  pccl_op_t op;
  int32_t root;
  int32_t ndim; /* 0: no shape */
  const int64_t *shape;
} pccl_engine_request_t;

#define PCCL_ENGINE_REQUEST_INIT \
  {sizeof(pccl_engine_request_t), NULL, PCCL_COLL_ALLREDUCE, NULL, NULL, 0, PCCL_FLOAT32, PCCL_SUM, 0, 0, NULL}

/* What the engine has done on this rank since it was created. */
typedef struct {
  size_t size;                  /* sizeof(pccl_engine_stats_t), set by the caller */
  uint64_t cycles;              /* coordination cycles run */
  uint64_t coordinator_cycles;  /* cycles that negotiated through rank 0 */
  uint64_t cache_hits;          /* requests answered from the response cache */
  uint64_t negotiated;          /* requests answered by rank 0 */
  uint64_t coordination_bytes;  /* bytes this rank gave to or got from MPI to coordinate */
  double coordination_seconds;  /* time spent coordinating */
  uint64_t collectives;         /* collectives run (a fused one counts once) */
  uint64_t tensors;             /* requests completed, with success or error */
  uint64_t fused_tensors;       /* requests that ran inside a fused collective */
  uint64_t stall_warnings;      /* stall warnings issued (rank 0) */
} pccl_engine_stats_t;

/* Starts an engine over the ranks of `comm` (collective over them).
 * config NULL takes every setting from the environment.
 * Returns PCCL_OK; PCCL_ERR_INVALID_COMM; PCCL_ERR_INVALID_ARGUMENT (out
 * NULL, config->size wrong, a setting out of range); PCCL_ERR_CONFIG (a
 * malformed variable); PCCL_ERR_UNSUPPORTED (MPI below
 * MPI_THREAD_SERIALIZED); PCCL_ERR_NO_MEMORY; PCCL_ERR_MPI. */
PCCL_API pccl_status_t pccl_engine_create(pccl_comm_t *comm, const pccl_engine_config_t *config,
                                          pccl_engine_t **engine);

/* Submits one request and returns its handle (free it with
 * pccl_handle_free). Returns PCCL_OK; PCCL_ERR_INVALID_ARGUMENT (NULL,
 * empty or too long name, a name already pending on this rank, the
 * arguments the blocking call would reject, shape not matching count);
 * PCCL_ERR_INVALID_DTYPE; PCCL_ERR_INVALID_OP; PCCL_ERR_OVERFLOW;
 * PCCL_ERR_UNSUPPORTED (a collective other than the four);
 * PCCL_ERR_ABORTED (the engine has shut down); PCCL_ERR_NO_MEMORY.
 * The detail is in pccl_last_error(NULL). Errors found later, across
 * ranks, complete the handle with that error instead. */
PCCL_API pccl_status_t pccl_engine_submit(pccl_engine_t *engine,
                                          const pccl_engine_request_t *request,
                                          pccl_handle_t **handle);

/* Submits n requests as a group: none is ready until all are submitted on
 * every rank, and they run together (fused where they share collective,
 * datatype and op). handles receives n handles. All or nothing: on error no
 * request is submitted. Returns what pccl_engine_submit returns. */
PCCL_API pccl_status_t pccl_engine_submit_group(pccl_engine_t *engine,
                                                const pccl_engine_request_t *requests, int n,
                                                pccl_handle_t **handles);

/* Waits for the request to complete and returns its status: PCCL_OK, or
 * the error that ended it (PCCL_ERR_MISMATCH: ranks disagreed on the
 * request; PCCL_ERR_ABORTED: the engine shut down first; any status of the
 * collective). PCCL_ERR_INVALID_ARGUMENT for a NULL handle. */
PCCL_API pccl_status_t pccl_handle_wait(pccl_handle_t *handle);

/* *done = 1 when the request has completed (pccl_handle_wait then returns
 * at once), else 0. Returns PCCL_OK or PCCL_ERR_INVALID_ARGUMENT. */
PCCL_API pccl_status_t pccl_handle_test(pccl_handle_t *handle, int *done);

/* What ended the request with an error: names the tensor and, for a
 * disagreement, which ranks passed what. Empty while pending or after
 * success. Valid until pccl_handle_free. */
PCCL_API const char *pccl_handle_error(const pccl_handle_t *handle);

/* Releases the handle; a request still pending runs on, unobserved.
 * NULL is accepted. */
PCCL_API pccl_status_t pccl_handle_free(pccl_handle_t *handle);

/* Copies the engine's counters into *stats (stats->size must be set).
 * Returns PCCL_OK or PCCL_ERR_INVALID_ARGUMENT. */
PCCL_API pccl_status_t pccl_engine_stats(pccl_engine_t *engine, pccl_engine_stats_t *stats);

/* Copies the last stall warning (rank 0 only; empty elsewhere and when
 * none) into buf, truncated to len bytes with a NUL. The same warning goes
 * to stderr. Returns PCCL_OK or PCCL_ERR_INVALID_ARGUMENT. */
PCCL_API pccl_status_t pccl_engine_last_warning(pccl_engine_t *engine, char *buf, size_t len);

/* Stops the engine: collective in effect, since the first rank to call it
 * stops every rank's engine at their next cycle. Requests still pending
 * complete with PCCL_ERR_ABORTED; later submits fail with it. Then frees
 * the engine (handles stay valid until freed). NULL is accepted. */
PCCL_API pccl_status_t pccl_engine_destroy(pccl_engine_t *engine);

#ifdef __cplusplus
}
#endif

#endif /* PCCL_H */
