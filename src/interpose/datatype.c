/* datatype.c - MPI datatypes and ops as pccl sees them: which predefined
 * datatypes and ops pccl reduces, and any buffer seen as contiguous bytes.
 *
 * Reductions need the arithmetic: a predefined datatype maps to the pccl
 * type of its kind (signed, unsigned, floating) and size as this MPI defines
 * it, so MPI_LONG, MPI_INTEGER or MPI_REAL land wherever they fall on this
 * platform. Collectives that only move data see bytes: a predefined type
 * without holes is used in place, anything else is packed into a copy. */
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "interpose.h"

typedef enum { KIND_BYTES, KIND_SIGNED, KIND_UNSIGNED, KIND_FLOAT } kind_t;

/* The predefined datatypes programs pass, each with the kind of number it
 * holds (KIND_BYTES: moved, never reduced) and, found once from MPI, its
 * size when its elements lie back to back and the pccl type of its kind
 * and size. Both answers are looked up by handle on every call, so the
 * commonest come first: the MPI queries they replace were a tenth of a
 * preloaded 8-byte MPI_Reduce (perf). 16-bit integers, long double,
 * complex, logical and pair types are not reduced: pccl has no arithmetic
 * for them, so those calls fall back. */
typedef struct {
  MPI_Datatype dt;
  kind_t kind;
  MPI_Count plain; /* bytes per element without padding, else -1 */
  int reducible;   /* a pccl type of this kind and size exists */
  pccl_dtype_t pccl;
} predef_t;

#define T(dt, kind) {dt, kind, -1, 0, PCCL_UINT8} /* the rest is found at first use */
static predef_t predef[] = {
    T(MPI_DOUBLE, KIND_FLOAT),         T(MPI_FLOAT, KIND_FLOAT),
    T(MPI_INT, KIND_SIGNED),           T(MPI_BYTE, KIND_BYTES),
    T(MPI_CHAR, KIND_BYTES),           T(MPI_LONG, KIND_SIGNED),
    T(MPI_LONG_LONG, KIND_SIGNED),     T(MPI_UNSIGNED, KIND_UNSIGNED),
    T(MPI_UNSIGNED_LONG, KIND_UNSIGNED), T(MPI_INT64_T, KIND_SIGNED),
    T(MPI_INT32_T, KIND_SIGNED),       T(MPI_UINT64_T, KIND_UNSIGNED),
    T(MPI_UNSIGNED_CHAR, KIND_UNSIGNED), T(MPI_UINT8_T, KIND_UNSIGNED),
    T(MPI_SHORT, KIND_BYTES),          T(MPI_DOUBLE_PRECISION, KIND_FLOAT),
    T(MPI_REAL, KIND_FLOAT),           T(MPI_INTEGER, KIND_SIGNED),
    T(MPI_SIGNED_CHAR, KIND_SIGNED),   T(MPI_INT8_T, KIND_SIGNED),
    T(MPI_AINT, KIND_SIGNED),          T(MPI_OFFSET, KIND_SIGNED),
    T(MPI_COUNT, KIND_SIGNED),         T(MPI_INTEGER1, KIND_SIGNED),
    T(MPI_INTEGER4, KIND_SIGNED),      T(MPI_INTEGER8, KIND_SIGNED),
    T(MPI_UNSIGNED_LONG_LONG, KIND_UNSIGNED), T(MPI_UINT32_T, KIND_UNSIGNED),
    T(MPI_REAL4, KIND_FLOAT),          T(MPI_REAL8, KIND_FLOAT),
};
#undef T
enum { NPREDEF = sizeof predef / sizeof predef[0] };
static pthread_once_t predef_once = PTHREAD_ONCE_INIT;

static int pccl_type_of(kind_t kind, MPI_Count size, pccl_dtype_t *out) {
  static const struct { kind_t kind; int size; pccl_dtype_t pccl; } types[] = {
      {KIND_SIGNED, 1, PCCL_INT8},     {KIND_SIGNED, 4, PCCL_INT32},
      {KIND_SIGNED, 8, PCCL_INT64},    {KIND_UNSIGNED, 1, PCCL_UINT8},
      {KIND_UNSIGNED, 4, PCCL_UINT32}, {KIND_UNSIGNED, 8, PCCL_UINT64},
      {KIND_FLOAT, 4, PCCL_FLOAT32},   {KIND_FLOAT, 8, PCCL_FLOAT64},
  };
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (types[i].kind == kind && types[i].size == size) return *out = types[i].pccl, 1;
  return 0;
}

/* Whether `count` elements of `dt` are their bytes, back to back, from the
 * buffer's address: a predefined type with no padding (or a single one). */
static int is_plain_query(size_t count, MPI_Datatype dt) {
  int ni, na, nd, combiner;
  MPI_Count lb, extent, size;
  if (PMPI_Type_get_envelope(dt, &ni, &na, &nd, &combiner) != MPI_SUCCESS ||
      combiner != MPI_COMBINER_NAMED)
    return 0;
  if (count <= 1) return 1;
  return PMPI_Type_size_x(dt, &size) == MPI_SUCCESS &&
         PMPI_Type_get_extent_x(dt, &lb, &extent) == MPI_SUCCESS && size == extent && lb == 0;
}

static void predef_init(void) {
  for (int i = 0; i < NPREDEF; i++) {
    predef_t *p = &predef[i];
    MPI_Count size = 0;
    p->plain = -1;
    if (p->dt == MPI_DATATYPE_NULL || PMPI_Type_size_x(p->dt, &size) != MPI_SUCCESS) continue;
    if (size > 0 && is_plain_query(2, p->dt)) p->plain = size;
    p->reducible = p->kind != KIND_BYTES && pccl_type_of(p->kind, size, &p->pccl);
  }
}

/* The table's entry for dt, or NULL. */
static const predef_t *predef_of(MPI_Datatype dt) {
  if (dt == MPI_DATATYPE_NULL) return NULL;
  pthread_once(&predef_once, predef_init);
  for (int i = 0; i < NPREDEF; i++)
    if (predef[i].dt == dt) return &predef[i];
  return NULL;
}

int pccl_ip_reduce_dtype(MPI_Datatype dt, pccl_dtype_t *out) {
  const predef_t *p = predef_of(dt);
  if (!p || !p->reducible) return 0;
  *out = p->pccl;
  return 1;
}

int pccl_ip_reduce_op(MPI_Op op, pccl_op_t *out) {
  if (op == MPI_SUM) *out = PCCL_SUM;
  else if (op == MPI_PROD) *out = PCCL_PROD;
  else if (op == MPI_MIN) *out = PCCL_MIN;
  else if (op == MPI_MAX) *out = PCCL_MAX;
  else return 0;
  return 1;
}

/* Bytes per element of dt when they lie back to back and dt is in the
 * table, else -1. */
static MPI_Count plain_size(MPI_Datatype dt) {
  const predef_t *p = predef_of(dt);
  return p ? p->plain : -1;
}

/* count elements of `size` bytes, SIZE_MAX when that overflows */
static size_t bytes_of(size_t count, MPI_Count size) {
  if (size > 0 && count > SIZE_MAX / (size_t)size) return SIZE_MAX;
  return count * (size_t)size;
}

size_t pccl_ip_bytes(size_t count, MPI_Datatype dt) {
  MPI_Count size = plain_size(dt);
  if (size < 0 &&
      (dt == MPI_DATATYPE_NULL || PMPI_Type_size_x(dt, &size) != MPI_SUCCESS || size < 0))
    return 0;
  return bytes_of(count, size);
}

int pccl_ip_view(pccl_ip_buf_t *b, const void *user, size_t count, MPI_Datatype dt, size_t align,
                 int load, MPI_Comm comm) {
  *b = (pccl_ip_buf_t){.user = (void *)user, .count = count, .dt = dt};
  MPI_Count size = plain_size(dt);
  b->len = size > 0 ? bytes_of(count, size) : pccl_ip_bytes(count, dt);
  if (b->len == SIZE_MAX) return MPI_ERR_COUNT;
  b->packed = size <= 0 && !is_plain_query(count, dt);
  if (b->len == 0 || (!b->packed && (uintptr_t)user % align == 0)) {
    b->bytes = (char *)user;
    return MPI_SUCCESS;
  }
  if (b->packed && (count > INT_MAX || b->len > INT_MAX)) return MPI_ERR_COUNT;
  b->copy = aligned_alloc(64, (b->len + 63) / 64 * 64);
  if (!b->copy) return MPI_ERR_NO_MEM;
  b->bytes = b->copy;
  if (!load) return MPI_SUCCESS;
  if (!b->packed) {
    memcpy(b->copy, user, b->len);
    return MPI_SUCCESS;
  }
  /* MPI packs a homogeneous job's data as its bytes, which is what a rank
   * describing the same data with a predefined type sends; check it. */
  int pos = 0, rc = PMPI_Pack(user, (int)count, dt, b->copy, (int)b->len, &pos, comm);
  if (rc == MPI_SUCCESS && (size_t)pos != b->len) rc = MPI_ERR_INTERN;
  if (rc != MPI_SUCCESS) pccl_ip_release(b);
  return rc;
}

int pccl_ip_store(pccl_ip_buf_t *b, MPI_Comm comm) {
  if (!b->copy) return MPI_SUCCESS;
  if (!b->packed) {
    memcpy(b->user, b->copy, b->len);
    return MPI_SUCCESS;
  }
  int pos = 0;
  return PMPI_Unpack(b->copy, (int)b->len, &pos, b->user, (int)b->count, b->dt, comm);
}

void pccl_ip_release(pccl_ip_buf_t *b) {
  free(b->copy);
  b->copy = NULL;
  b->bytes = NULL;
}
