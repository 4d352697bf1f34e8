/* datatype.c - MPI datatypes and ops as pccl sees them: which predefined
 * datatypes and ops pccl reduces, and any buffer seen as contiguous bytes.
 *
 * Reductions need the arithmetic: a predefined datatype maps to the pccl
 * type of its kind (signed, unsigned, floating, logical, pair) and size as
 * this MPI defines it, so MPI_LONG, MPI_INTEGER or MPI_REAL land wherever
 * they fall on this platform, and an op MPI does not define on the kind
 * stays MPI's to answer. Collectives that only move data see bytes: a predefined type
 * without holes is used in place, anything else is packed into a copy. */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "interpose.h"

/* What a predefined datatype holds, which decides the ops MPI defines on it
 * (MPI 4.0, 6.9.2) and so the ones pccl takes: */
typedef enum {
  KIND_MOVE,     /* moved, never reduced by pccl (wchar, complex, long double) */
  KIND_BYTE,     /* MPI_BYTE: the bitwise ops */
  KIND_SIGNED,   /* C integers: arithmetic, logical and bitwise (MPI_CHAR too, as */
  KIND_UNSIGNED, /* Open MPI and MPICH take it) */
  KIND_FINT,     /* Fortran integers, MPI_AINT and the like: arithmetic and bitwise */
  KIND_FLOAT,    /* arithmetic */
  KIND_LOGICAL,  /* C_BOOL, CXX_BOOL, LOGICAL: the logical ops */
  KIND_PAIR      /* MPI_FLOAT_INT and the like: MAXLOC, MINLOC */
} kind_t;

/* The predefined datatypes programs pass, each with the kind of number it
 * holds and, found once from MPI, its size when its elements lie back to
 * back and the pccl type of its kind and size. Both answers are looked up
 * by handle on every call, so the commonest come first: the MPI queries
 * they replace were a tenth of a preloaded 8-byte MPI_Reduce (perf). A
 * pair type has padding (MPI_DOUBLE_INT: 12 bytes in 16), so its elements
 * are reduced whole, padding and all, at the extent of pccl's struct; where
 * this MPI's extent differs it is not reduced. Moved, a pair with padding
 * is packed like any type with holes: another rank may pass a derived type
 * of the same signature, which packs to the pair's size, not its extent. */
typedef struct {
  MPI_Datatype dt;
  kind_t kind;
  MPI_Count plain; /* bytes per element without padding (a pair: its extent), else -1 */
  int padded;      /* a pair whose size is less than its extent */
  int reducible;   /* a pccl type of this kind and size exists */
  pccl_dtype_t pccl;
} predef_t;

#define T(dt, kind) {dt, kind, -1, 0, 0, PCCL_UINT8} /* the rest is found at first use */
static predef_t predef[] = {
    T(MPI_DOUBLE, KIND_FLOAT),         T(MPI_FLOAT, KIND_FLOAT),
    T(MPI_INT, KIND_SIGNED),           T(MPI_BYTE, KIND_BYTE),
    T(MPI_CHAR, (char)-1 < 0 ? KIND_SIGNED : KIND_UNSIGNED), /* as Open MPI and MPICH reduce it */
    T(MPI_LONG, KIND_SIGNED),
    T(MPI_LONG_LONG, KIND_SIGNED),     T(MPI_UNSIGNED, KIND_UNSIGNED),
    T(MPI_UNSIGNED_LONG, KIND_UNSIGNED), T(MPI_INT64_T, KIND_SIGNED),
    T(MPI_INT32_T, KIND_SIGNED),       T(MPI_UINT64_T, KIND_UNSIGNED),
    T(MPI_UNSIGNED_CHAR, KIND_UNSIGNED), T(MPI_UINT8_T, KIND_UNSIGNED),
    T(MPI_SHORT, KIND_SIGNED),         T(MPI_DOUBLE_PRECISION, KIND_FLOAT),
    T(MPI_REAL, KIND_FLOAT),           T(MPI_INTEGER, KIND_FINT),
    T(MPI_SIGNED_CHAR, KIND_SIGNED),   T(MPI_INT8_T, KIND_SIGNED),
    T(MPI_C_BOOL, KIND_LOGICAL),       T(MPI_DOUBLE_INT, KIND_PAIR),
    T(MPI_2INT, KIND_PAIR),            T(MPI_FLOAT_INT, KIND_PAIR),
    T(MPI_LONG_INT, KIND_PAIR),        T(MPI_SHORT_INT, KIND_PAIR),
    T(MPI_UNSIGNED_SHORT, KIND_UNSIGNED), T(MPI_INT16_T, KIND_SIGNED),
    T(MPI_UINT16_T, KIND_UNSIGNED),    T(MPI_AINT, KIND_FINT),
    T(MPI_OFFSET, KIND_FINT),        T(MPI_COUNT, KIND_FINT),
    T(MPI_INTEGER1, KIND_FINT),      T(MPI_INTEGER2, KIND_FINT),
    T(MPI_INTEGER4, KIND_FINT),      T(MPI_INTEGER8, KIND_FINT),
    T(MPI_UNSIGNED_LONG_LONG, KIND_UNSIGNED), T(MPI_UINT32_T, KIND_UNSIGNED),
    T(MPI_REAL4, KIND_FLOAT),          T(MPI_REAL8, KIND_FLOAT),
    T(MPI_LOGICAL, KIND_LOGICAL),      T(MPI_CXX_BOOL, KIND_LOGICAL),
    T(MPI_WCHAR, KIND_MOVE),
};
#undef T
enum { NPREDEF = sizeof predef / sizeof predef[0] };
static pthread_once_t predef_once = PTHREAD_ONCE_INIT;

/* The pccl type of a kind and size: integers by size (a logical type is
 * one: its ops look at zero and not zero), a pair by value type and size. */
static int pccl_type_of(MPI_Datatype dt, kind_t kind, MPI_Count size, pccl_dtype_t *out) {
  static const struct { kind_t kind; int size; pccl_dtype_t pccl; } types[] = {
      {KIND_SIGNED, 1, PCCL_INT8},     {KIND_SIGNED, 2, PCCL_INT16},
      {KIND_SIGNED, 4, PCCL_INT32},    {KIND_SIGNED, 8, PCCL_INT64},
      {KIND_UNSIGNED, 1, PCCL_UINT8},  {KIND_UNSIGNED, 2, PCCL_UINT16},
      {KIND_UNSIGNED, 4, PCCL_UINT32}, {KIND_UNSIGNED, 8, PCCL_UINT64},
      {KIND_BYTE, 1, PCCL_UINT8},      {KIND_LOGICAL, 1, PCCL_BOOL},
      {KIND_LOGICAL, 4, PCCL_INT32},   {KIND_FLOAT, 4, PCCL_FLOAT32},
      {KIND_FLOAT, 8, PCCL_FLOAT64},
  };
  if (kind == KIND_PAIR) {
    pccl_dtype_t t = dt == MPI_FLOAT_INT ? PCCL_FLOAT_INT : dt == MPI_DOUBLE_INT ? PCCL_DOUBLE_INT
                     : dt == MPI_2INT    ? PCCL_INT32_INT : dt == MPI_SHORT_INT ? PCCL_INT16_INT
                     : sizeof(long) == 8 ? PCCL_INT64_INT : PCCL_DTYPE_COUNT; /* MPI_LONG_INT */
    if (t == PCCL_DTYPE_COUNT || (size_t)size != pccl_dtype_size(t)) return 0;
    return *out = t, 1;
  }
  if (kind == KIND_FINT) kind = KIND_SIGNED;
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
    MPI_Count size = 0, lb = 0, extent = 0;
    p->plain = -1;
    if (p->dt == MPI_DATATYPE_NULL || PMPI_Type_size_x(p->dt, &size) != MPI_SUCCESS) continue;
    if (p->kind == KIND_PAIR) { /* whole elements at pccl's extent, or not at all */
      if (PMPI_Type_get_extent_x(p->dt, &lb, &extent) == MPI_SUCCESS && lb == 0 &&
          pccl_type_of(p->dt, p->kind, extent, &p->pccl))
        p->plain = extent, p->reducible = 1, p->padded = size < extent;
      continue;
    }
    if (size > 0 && is_plain_query(2, p->dt)) p->plain = size;
    p->reducible = p->kind != KIND_MOVE && pccl_type_of(p->dt, p->kind, size, &p->pccl);
  }
}

/* The table's entry for dt, or NULL. */
static const predef_t *predef_of(MPI_Datatype dt) {
  /* the last entry found: a program calls with a few types over and over,
   * and a call left to MPI should cost little more than MPI's own */
  static _Atomic(const predef_t *) last;
  if (dt == MPI_DATATYPE_NULL) return NULL;
  const predef_t *p = atomic_load_explicit(&last, memory_order_acquire);
  if (p && p->dt == dt) return p;
  pthread_once(&predef_once, predef_init);
  for (int i = 0; i < NPREDEF; i++)
    if (predef[i].dt == dt) {
      atomic_store_explicit(&last, &predef[i], memory_order_release);
      return &predef[i];
    }
  return NULL;
}

/* Whether MPI defines op (a pccl op) on datatypes of this kind. */
static int op_defined(kind_t kind, pccl_op_t op) {
  int arith = op <= PCCL_MAX, logical = op >= PCCL_LAND && op <= PCCL_LXOR;
  int bitwise = op >= PCCL_BAND && op <= PCCL_BXOR, loc = op == PCCL_MAXLOC || op == PCCL_MINLOC;
  switch (kind) {
    case KIND_SIGNED:
    case KIND_UNSIGNED: return arith || logical || bitwise;
    case KIND_FINT: return arith || bitwise;
    case KIND_FLOAT: return arith;
    case KIND_BYTE: return bitwise;
    case KIND_LOGICAL: return logical;
    case KIND_PAIR: return loc;
    default: return 0;
  }
}

pccl_ip_reason_t pccl_ip_reduction(MPI_Datatype dt, MPI_Op op, pccl_dtype_t *pd, pccl_op_t *po) {
  static const struct { MPI_Op mpi; pccl_op_t pccl; } ops[] = {
      {MPI_SUM, PCCL_SUM},   {MPI_MAX, PCCL_MAX},       {MPI_MIN, PCCL_MIN},
      {MPI_PROD, PCCL_PROD}, {MPI_LAND, PCCL_LAND},     {MPI_LOR, PCCL_LOR},
      {MPI_LXOR, PCCL_LXOR}, {MPI_BAND, PCCL_BAND},     {MPI_BOR, PCCL_BOR},
      {MPI_BXOR, PCCL_BXOR}, {MPI_MAXLOC, PCCL_MAXLOC}, {MPI_MINLOC, PCCL_MINLOC},
  };
  size_t i = 0;
  while (i < sizeof ops / sizeof ops[0] && ops[i].mpi != op) i++;
  if (i == sizeof ops / sizeof ops[0]) return PCCL_IP_OP;
  const predef_t *p = predef_of(dt);
  if (!p || !p->reducible) return PCCL_IP_DATATYPE;
  if (!op_defined(p->kind, ops[i].pccl)) return PCCL_IP_UNDEFINED;
  *pd = p->pccl;
  *po = ops[i].pccl;
  return PCCL_IP_TAKEN;
}

/* Bytes per element of dt when they lie back to back and dt is in the
 * table, else -1; a padded pair's elements count whole only when `reduced`. */
static MPI_Count plain_size(MPI_Datatype dt, int reduced) {
  const predef_t *p = predef_of(dt);
  return !p || (p->padded && !reduced) ? -1 : p->plain;
}

/* count elements of `size` bytes, SIZE_MAX when that overflows */
static size_t bytes_of(size_t count, MPI_Count size) {
  if (size > 0 && count > SIZE_MAX / (size_t)size) return SIZE_MAX;
  return count * (size_t)size;
}

int pccl_ip_plain(MPI_Datatype dt) { return plain_size(dt, 0) > 0; }

size_t pccl_ip_bytes(size_t count, MPI_Datatype dt) {
  MPI_Count size = plain_size(dt, 0);
  if (size < 0 &&
      (dt == MPI_DATATYPE_NULL || PMPI_Type_size_x(dt, &size) != MPI_SUCCESS || size < 0))
    return 0;
  return bytes_of(count, size);
}

int pccl_ip_view(pccl_ip_buf_t *b, const void *user, size_t count, MPI_Datatype dt, size_t align,
                 int reduced, int load, MPI_Comm comm) {
  *b = (pccl_ip_buf_t){.user = (void *)user, .count = count, .dt = dt};
  MPI_Count size = plain_size(dt, reduced);
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
