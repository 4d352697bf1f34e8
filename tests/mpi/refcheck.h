/* refcheck.h - reference helpers shared by the MPI-level tests of pccl.
 *
 * Everything here is independent of the library: datatype sizes, the
 * float16/bfloat16 conversions, deterministic input generation and the
 * scalar reference reductions are re-implemented so that a bug in pccl's
 * own tables or kernels cannot hide itself. Only the enum values of pccl.h
 * (fixed by the API) are shared.
 */
#ifndef PCCL_TESTS_REFCHECK_H
#define PCCL_TESTS_REFCHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pccl.h"

/* ---- datatypes (own tables) ------------------------------------------- */

static const char *const rc_dtype_names[PCCL_DTYPE_COUNT] = {
    "int8", "uint8", "int32", "uint32", "int64", "uint64",
    "float16", "bfloat16", "float32", "float64", "int16", "uint16", "bool",
    "float_int", "double_int", "int64_int", "int32_int", "int16_int"};
/* The pair types as C lays them out on LP64 hosts: value first, int32 index
 * at the next multiple of the value's size, the struct padded to that too. */
static const size_t rc_dtype_sizes[PCCL_DTYPE_COUNT] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8,
                                                        2, 2, 1, 8, 16, 16, 8, 8};
static const size_t rc_pair_value_size[PCCL_DTYPE_COUNT] = {[PCCL_FLOAT_INT] = 4, [PCCL_DOUBLE_INT] = 8,
                                                            [PCCL_INT64_INT] = 8, [PCCL_INT32_INT] = 4,
                                                            [PCCL_INT16_INT] = 2};
static const size_t rc_pair_index_at[PCCL_DTYPE_COUNT] = {[PCCL_FLOAT_INT] = 4, [PCCL_DOUBLE_INT] = 8,
                                                          [PCCL_INT64_INT] = 8, [PCCL_INT32_INT] = 4,
                                                          [PCCL_INT16_INT] = 4};
static const char *const rc_op_names[PCCL_OP_COUNT] = {
    "sum", "prod", "min", "max", "avg", "land", "lor", "lxor", "band", "bor", "bxor", "maxloc",
    "minloc"};
/* Collective names as the test command lines spell them. */
static const char *const rc_coll_names[PCCL_COLL_COUNT] = {
    "allgather", "reducescatter", "allreduce", "broadcast",
    "reduce", "scatter", "gather", "alltoall", "scan", "exscan", "allgatherv",
    "reducescatterv", "gatherv", "scatterv", "alltoallv"};

static inline size_t rc_size(pccl_dtype_t d) { return rc_dtype_sizes[d]; }
static inline int rc_is_float(pccl_dtype_t d) {
  return d == PCCL_FLOAT16 || d == PCCL_BFLOAT16 || d == PCCL_FLOAT32 || d == PCCL_FLOAT64;
}
static inline int rc_is_signed_int(pccl_dtype_t d) {
  return d == PCCL_INT8 || d == PCCL_INT16 || d == PCCL_INT32 || d == PCCL_INT64;
}
static inline int rc_is_int(pccl_dtype_t d) {
  return d <= PCCL_UINT64 || d == PCCL_INT16 || d == PCCL_UINT16;
}
static inline int rc_is_pair(pccl_dtype_t d) { return d >= PCCL_FLOAT_INT && d < PCCL_DTYPE_COUNT; }
/* Whether op is defined on d (pccl.h's list, written out again here). */
static inline int rc_op_defined(pccl_dtype_t d, int op) {
  if (rc_is_int(d)) return op <= PCCL_BXOR;
  if (rc_is_float(d)) return op <= PCCL_AVG;
  if (d == PCCL_BOOL) return op == PCCL_LAND || op == PCCL_LOR || op == PCCL_LXOR;
  return op == PCCL_MAXLOC || op == PCCL_MINLOC;
}
/* Whether two elements are equal: bit for bit, but a pair's padding does
 * not count (C leaves it unspecified). */
static inline int rc_same(pccl_dtype_t d, const void *a, const void *b) {
  if (!rc_is_pair(d)) return memcmp(a, b, rc_dtype_sizes[d]) == 0;
  const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
  const size_t at = rc_pair_index_at[d];
  return memcmp(x, y, rc_pair_value_size[d]) == 0 && memcmp(x + at, y + at, 4) == 0;
}
static inline int rc_is_reduction(pccl_coll_t c) {
  return c == PCCL_COLL_REDUCE_SCATTER || c == PCCL_COLL_ALLREDUCE || c == PCCL_COLL_REDUCE ||
         c == PCCL_COLL_SCAN || c == PCCL_COLL_EXSCAN;
}
static inline int rc_is_rooted(pccl_coll_t c) {
  return c == PCCL_COLL_BROADCAST || c == PCCL_COLL_REDUCE || c == PCCL_COLL_SCATTER ||
         c == PCCL_COLL_GATHER;
}

/* ---- float16 / bfloat16 ------------------------------------------------ */

static inline uint32_t rc_f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}
static inline float rc_bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* float32 -> IEEE binary16, round to nearest even, by integer arithmetic. */
static inline uint16_t rc_f32_to_f16_soft(float f) {
  uint32_t x = rc_f32_bits(f);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) { /* inf or NaN */
    if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
    return (uint16_t)(sign | 0x7c00u);
  }
  if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* >= 65520: inf */
  uint32_t e = ax >> 23;
  if (e < 113) { /* below 2^-14: binary16 subnormal or zero */
    if (e == 0) return sign;
    uint32_t m = (ax & 0x7fffffu) | 0x800000u;
    uint32_t s = 126 - e; /* result = m / 2^s in units of 2^-24 */
    if (s > 24) return sign;
    uint32_t q = m >> s, rem = m & ((1u << s) - 1u), half = 1u << (s - 1);
    if (rem > half || (rem == half && (q & 1u))) q++;
    return (uint16_t)(sign | q);
  }
  uint32_t mant = ax & 0x7fffffu;
  uint32_t h = ((e - 112u) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;
  return (uint16_t)(sign | h);
}

static inline float rc_f16_to_f32(uint16_t h) {
  uint32_t sign = ((uint32_t)h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  uint32_t u;
  if (e == 0) {
    if (m == 0) {
      u = sign;
    } else { /* subnormal: normalise */
      e = 113;
      while (!(m & 0x400u)) {
        m <<= 1;
        e--;
      }
      u = sign | (e << 23) | ((m & 0x3ffu) << 13);
    }
  } else if (e == 31) {
    u = sign | 0x7f800000u | (m << 13);
  } else {
    u = sign | ((e + 112u) << 23) | (m << 13);
  }
  return rc_bits_f32(u);
}

#if defined(__FLT16_MAX__)
#define RC_HAVE_FLOAT16 1
static inline uint16_t rc_f32_to_f16(float f) {
  _Float16 h = (_Float16)f;
  uint16_t u;
  memcpy(&u, &h, sizeof u);
  return u;
}
#else
#define RC_HAVE_FLOAT16 0
static inline uint16_t rc_f32_to_f16(float f) { return rc_f32_to_f16_soft(f); }
#endif

/* float32 -> bfloat16: the top 16 bits, rounded to nearest even. */
static inline uint16_t rc_f32_to_bf16(float f) {
  uint32_t u = rc_f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}
static inline float rc_bf16_to_f32(uint16_t b) { return rc_bits_f32((uint32_t)b << 16); }

/* Checks the conversions against each other and against known values.
 * Returns the number of mismatches (0 when the references are sound). */
static inline long rc_selftest_half(void) {
  long bad = 0;
  /* Every binary16 value round-trips through float32 exactly. */
  for (uint32_t h = 0; h < 0x10000u; h++) {
    uint16_t hh = (uint16_t)h;
    if (((hh >> 10) & 0x1f) == 0x1f && (hh & 0x3ff)) continue; /* NaN payloads */
    if (rc_f32_to_f16_soft(rc_f16_to_f32(hh)) != hh) bad++;
    if (rc_f32_to_f16(rc_f16_to_f32(hh)) != hh) bad++;
  }
  /* Known roundings. */
  struct {
    float f;
    uint16_t h, b;
  } k[] = {{1.0f, 0x3c00, 0x3f80},      {-2.0f, 0xc000, 0xc000},
           {65504.0f, 0x7bff, 0x4780},  {65520.0f, 0x7c00, 0x4780},
           {1.0f / 3.0f, 0x3555, 0x3eab}, {2.0f / 3.0f, 0x3955, 0x3f2b},
           {5.0f / 7.0f, 0x39b7, 0x3f37}, {0.0f, 0x0000, 0x0000}};
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    if (rc_f32_to_f16_soft(k[i].f) != k[i].h) bad++;
    if (rc_f32_to_f16(k[i].f) != k[i].h) bad++;
    if (rc_f32_to_bf16(k[i].f) != k[i].b) bad++;
  }
#if RC_HAVE_FLOAT16
  /* The integer routine agrees with the compiler's conversion on a sweep
   * of float32 bit patterns (both signs, all exponents). */
  for (uint64_t u = 0; u < 0x100000000ull; u += 65521) {
    uint32_t x = (uint32_t)u;
    if ((x & 0x7fffffffu) > 0x7f800000u) continue;
    float f = rc_bits_f32(x);
    if (rc_f32_to_f16_soft(f) != rc_f32_to_f16(f)) bad++;
  }
  /* Exact ties between adjacent binary16 values. */
  for (uint32_t h = 0; h < 0x7bffu; h++) {
    float a = rc_f16_to_f32((uint16_t)h), b = rc_f16_to_f32((uint16_t)(h + 1));
    float mid = (float)(((double)a + (double)b) / 2.0);
    if (rc_f32_to_f16_soft(mid) != rc_f32_to_f16(mid)) bad++;
  }
#endif
  return bad;
}

/* ---- deterministic inputs ---------------------------------------------- */

static inline uint32_t rc_mix32(uint32_t r, uint64_t idx, uint32_t seed) {
  uint32_t h = (uint32_t)idx * 0x9E3779B1u ^ (uint32_t)(idx >> 32) * 0x7FEB352Du;
  h += r * 0x85EBCA77u + seed * 0xC2B2AE3Du + 0x27D4EB2Fu;
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  h *= 0x297A2D39u;
  h ^= h >> 15;
  return h;
}
static inline uint64_t rc_mix64(uint32_t r, uint64_t idx, uint32_t seed) {
  uint64_t a = rc_mix32(r, idx, seed), b = rc_mix32(r ^ 0x5bd1e995u, idx, seed + 0x9e37u);
  return (a << 32) | b;
}

/* Stores an integer-valued logical value into one element of dtype d.
 * Integers keep the low bits (values are chosen inside the type's range);
 * floats get the exact conversion (values are small integers). */
static inline void rc_store(pccl_dtype_t d, void *dst, int64_t v) {
  switch (d) {
    case PCCL_INT8:
    case PCCL_UINT8:
    case PCCL_BOOL: {
      uint8_t x = (uint8_t)(uint64_t)v;
      memcpy(dst, &x, 1);
    } break;
    case PCCL_INT16:
    case PCCL_UINT16: {
      uint16_t x = (uint16_t)(uint64_t)v;
      memcpy(dst, &x, 2);
    } break;
    case PCCL_INT32:
    case PCCL_UINT32: {
      uint32_t x = (uint32_t)(uint64_t)v;
      memcpy(dst, &x, 4);
    } break;
    case PCCL_INT64:
    case PCCL_UINT64: {
      uint64_t x = (uint64_t)v;
      memcpy(dst, &x, 8);
    } break;
    case PCCL_FLOAT16: {
      uint16_t x = rc_f32_to_f16((float)v);
      memcpy(dst, &x, 2);
    } break;
    case PCCL_BFLOAT16: {
      uint16_t x = rc_f32_to_bf16((float)v);
      memcpy(dst, &x, 2);
    } break;
    case PCCL_FLOAT32: {
      float x = (float)v;
      memcpy(dst, &x, 4);
    } break;
    case PCCL_FLOAT64: {
      double x = (double)v;
      memcpy(dst, &x, 8);
    } break;
    default:
      break;
  }
}

/* Element bytes as a hex string, most significant (last on little-endian
 * hosts) first; out needs 2 * size + 1 chars. */
static inline void rc_hex(const void *p, size_t size, char *out) {
  const unsigned char *b = (const unsigned char *)p;
  for (size_t i = 0; i < size; i++) snprintf(out + 2 * i, 3, "%02x", b[size - 1 - i]);
  out[2 * size] = '\0';
}

/* ---- buffers ------------------------------------------------------------ */

#define RC_GUARD 64

/* A 64-byte aligned allocation with a guard zone on both sides. */
typedef struct {
  unsigned char *base; /* allocation */
  unsigned char *data; /* base + RC_GUARD, 64-byte aligned */
  size_t bytes;        /* usable bytes */
  size_t total;        /* allocation size */
  unsigned char sentinel;
} rc_buf_t;

static inline int rc_buf_alloc(rc_buf_t *b, size_t bytes, unsigned char sentinel) {
  size_t body = (bytes + 63) / 64 * 64;
  b->total = body + 2 * RC_GUARD;
  b->base = (unsigned char *)aligned_alloc(64, b->total);
  if (!b->base) return 0;
  b->data = b->base + RC_GUARD;
  b->bytes = bytes;
  b->sentinel = sentinel;
  memset(b->base, sentinel, b->total);
  return 1;
}
static inline void rc_buf_free(rc_buf_t *b) {
  free(b->base);
  b->base = b->data = NULL;
}
/* 1 when both guard zones still hold the sentinel; *where gets the offset
 * (relative to data, may be negative) of the first damaged byte. */
static inline int rc_buf_guards_ok(const rc_buf_t *b, long long *where) {
  for (size_t i = 0; i < RC_GUARD; i++)
    if (b->base[i] != b->sentinel) {
      *where = (long long)i - RC_GUARD;
      return 0;
    }
  for (size_t i = RC_GUARD + b->bytes; i < b->total; i++)
    if (b->base[i] != b->sentinel) {
      *where = (long long)(i - RC_GUARD);
      return 0;
    }
  return 1;
}

#endif /* PCCL_TESTS_REFCHECK_H */
