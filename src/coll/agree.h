/* agree.h - PCCL_CHECK: the ranks agree on a collective's arguments before
 * running it, so that disagreement is an error instead of a hang or
 * corrupted memory. */
#ifndef PCCL_AGREE_H
#define PCCL_AGREE_H

#include <stdint.h>

#include "comm.h"

/* What every rank must pass alike, as int64 so one all-reduce compares all. */
#define PCCL_AGREE_FIELDS(X) \
  X(COLL, "collective")      \
  X(COUNT, "count")          \
  X(DTYPE, "datatype")       \
  X(OP, "op")                \
  X(ROOT, "root")            \
  X(LOSSY, "lossy call")     \
  X(ALGO, "algorithm")       \
  X(STATUS, "arguments")

typedef enum {
#define PCCL_AGREE_ENUM(id, name) PCCL_AGREE_##id,
  PCCL_AGREE_FIELDS(PCCL_AGREE_ENUM)
#undef PCCL_AGREE_ENUM
  PCCL_AGREE_NFIELDS
} pccl_agree_field_t;

/* What the agreement all-reduces: each field and its negation. */
#define PCCL_AGREE_NVALUES (2 * PCCL_AGREE_NFIELDS)

/* COLL's value for pccl_barrier, which runs as a one-byte all-reduce but
 * must not pass for one. */
#define PCCL_AGREE_BARRIER ((int64_t)PCCL_COLL_COUNT)

typedef struct {
  int64_t f[PCCL_AGREE_NFIELDS]; /* ALGO: a hash of the name; STATUS: validation's status */
  char algo[40];                 /* the algorithm's name, for the message */
} pccl_agree_t;

/* An in-place all-reduce with MPI_MIN of n int64, as pccl runs its own
 * collectives (bounded by the communicator's timeout and abort flag). */
typedef pccl_status_t (*pccl_agree_min_fn)(pccl_comm_t *comm, int64_t *v, size_t n);

/* Collective over comm: PCCL_OK when every rank passed the same fields;
 * PCCL_ERR_MISMATCH on every rank otherwise, the last error naming the
 * fields that differ and which ranks passed what; PCCL_ERR_TIMEOUT or
 * PCCL_ERR_ABORTED when some rank never comes (the caller breaks the
 * communicator). */
pccl_status_t pccl__agree(pccl_comm_t *comm, const char *api, const pccl_agree_t *mine,
                          pccl_agree_min_fn allreduce_min);

/* pccl__agree in two halves, for a caller that runs the all-reduce itself
 * (a non-blocking call): the values to all-reduce with MIN, then, once it
 * ended with status st, the verdict pccl__agree would return. */
void pccl__agree_values(const pccl_agree_t *mine, int64_t *v);
pccl_status_t pccl__agree_verdict(pccl_comm_t *comm, const char *api, const pccl_agree_t *mine,
                                  const int64_t *v, pccl_status_t st);

#endif /* PCCL_AGREE_H */
