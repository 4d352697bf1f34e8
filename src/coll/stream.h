/* stream.h - running a collective in pieces through bounded scratch
 * (PCCL_MAX_SCRATCH): stream.c. */
#ifndef PCCL_STREAM_H
#define PCCL_STREAM_H

#include <stddef.h>

#include "pccl.h"

/* Runs the collective on `count` elements (per block) at send / recv, in
 * this call's layout; the pieces' buffers are contiguous, in the in-place
 * layout where they share the staging buffer. */
typedef pccl_status_t (*pccl_piece_fn)(void *ctx, const void *send, void *recv, size_t count);

typedef struct {
  pccl_coll_t coll;
  int rank, size, root;
  const void *send; /* the whole call's buffers; NULL where this rank has none */
  void *recv;
  size_t count, esize;
  size_t seg; /* elements of each block per piece, > 0 */
  pccl_piece_fn run;
  void *ctx;
} pccl_stream_t;

/* Blocks of `seg` elements the staging buffer holds for `coll` (0: none). */
size_t pccl__stream_stage_blocks(pccl_coll_t coll, int size);

/* Runs every piece in order, the same on every rank; stops at the first
 * error. PCCL_ERR_NO_MEMORY when the staging buffer cannot be had. */
pccl_status_t pccl__stream(const pccl_stream_t *s);

#endif /* PCCL_STREAM_H */
