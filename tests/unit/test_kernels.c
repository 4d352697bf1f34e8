/* test_kernels.c - every reduction kernel (datatype x op) and the AVG
 * division against scalar references written here independently: integer
 * arithmetic through 64-bit values reduced modulo the type's width, float16
 * through the compiler's _Float16, bfloat16 by choosing the nearer of the two
 * neighbouring bfloat16 values; logical and bitwise ops on integers and
 * bool, MAXLOC/MINLOC on the pair types, and which ops each type has. Also
 * the 16-bit conversions over every
 * float16 pattern and many float32 values (specials, subnormals, ties). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "half.h"
#include "kernels.h"

#ifndef __FLT16_MAX__
#error "this test needs the compiler's _Float16 as an independent float16 reference"
#endif

static int passed, failed;

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

static void expect(int ok, const char *what, size_t i) {
  if (ok) {
    passed++;
    return;
  }
  failed++;
  if (failed < 20) printf("FAIL %s at %zu\n", what, i);
}

/* ---- independent references ---- */

static float ref_f16_to_f32(uint16_t h) {
  _Float16 x;
  memcpy(&x, &h, 2);
  return (float)x;
}

static uint16_t ref_f32_to_f16(float f) {
  _Float16 x = (_Float16)f;
  uint16_t h;
  memcpy(&h, &x, 2);
  return h;
}

static float bf_value(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* Value of a bfloat16 pattern, reading the pattern after the largest finite
 * one (Inf) as 2^128, where an unbounded exponent would put it. */
static double bf_position(uint16_t b) {
  if ((b & 0x7F80) == 0x7F80) return (b & 0x8000) ? -ldexp(1.0, 128) : ldexp(1.0, 128);
  return (double)bf_value(b);
}

static uint16_t ref_f32_to_bf16(float f) {
  if (isnan(f)) return 0x7FC0;
  uint32_t u;
  memcpy(&u, &f, 4);
  uint16_t lo = (uint16_t)(u >> 16); /* truncated toward zero */
  if ((u & 0xFFFF) == 0 || isinf(f)) return lo;
  uint16_t hi = (uint16_t)(lo + 1); /* next away from zero */
  double dl = fabs((double)f - bf_position(lo)), dh = fabs(bf_position(hi) - (double)f);
  if (dl != dh) return dl < dh ? lo : hi;
  return (lo & 1) ? hi : lo;
}

/* MIN/MAX contract (pccl.h): the result is one of the operands; without NaN
 * it is <= (MIN) or >= (MAX) both. Which of two equal zeros, or what a NaN
 * gives (one of the operands or a NaN), is unspecified. */
static int minmax_ok(int op, double x, double y, double got, int got_is_x, int got_is_y) {
  if (isnan(x) || isnan(y)) return got_is_x || got_is_y || isnan(got); /* NaNs may be quieted */
  if (!got_is_x && !got_is_y) return 0;
  return op == PCCL_MIN ? got <= x && got <= y : got >= x && got >= y;
}

/* Integer reference: arithmetic in 64 bits, then reduced modulo 2^bits. */
static uint64_t ref_int(int op, uint64_t a, uint64_t b, int bits, int is_signed) {
  uint64_t mask = bits == 64 ? ~0ull : ((1ull << bits) - 1);
  int64_t sa = (int64_t)a, sb = (int64_t)b;
  if (is_signed && bits < 64) {
    sa = (int64_t)(a << (64 - bits)) >> (64 - bits);
    sb = (int64_t)(b << (64 - bits)) >> (64 - bits);
  }
  uint64_t r;
  switch (op) {
    case PCCL_SUM: r = a + b; break;
    case PCCL_PROD: r = a * b; break;
    case PCCL_MIN: r = is_signed ? (uint64_t)(sa < sb ? sa : sb) : ((a & mask) < (b & mask) ? a : b); break;
    case PCCL_MAX: r = is_signed ? (uint64_t)(sa > sb ? sa : sb) : ((a & mask) > (b & mask) ? a : b); break;
    case PCCL_LAND: r = (a & mask) && (b & mask); break;
    case PCCL_LOR: r = (a & mask) || (b & mask); break;
    case PCCL_LXOR: r = !(a & mask) != !(b & mask); break;
    case PCCL_BAND: r = a & b; break;
    case PCCL_BOR: r = a | b; break;
    default: r = a ^ b; break; /* BXOR */
  }
  return r & mask;
}

/* ---- tests ---- */

#define N 1037 /* odd, so vector loops have a tail */

static void test_int(pccl_dtype_t dt, int bits, int is_signed) {
  size_t es = (size_t)bits / 8;
  unsigned char a[N * 8], b[N * 8], d[N * 8];
  static const int ops[] = {PCCL_SUM,  PCCL_PROD, PCCL_MIN,  PCCL_MAX, PCCL_LAND,
                            PCCL_LOR,  PCCL_LXOR, PCCL_BAND, PCCL_BOR, PCCL_BXOR};
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
    int op = ops[k];
    for (size_t i = 0; i < N * es; i++) {
      a[i] = (unsigned char)rng();
      b[i] = (unsigned char)rng();
    }
    /* Make sure sums overflow in both directions somewhere, and that the
     * logical ops see zeros on either side and on both. */
    memset(a, 0x7F, es);
    memset(b, 0x7F, es);
    for (size_t i = 1; i < N; i += 3) memset((i % 2 ? a : b) + i * es, 0, es);
    for (size_t i = 2; i < N; i += 9) memset(a + i * es, 0, es), memset(b + i * es, 0, es);
    pccl_kernel_reduce(dt, (pccl_op_t)op)(d, a, b, N);
    char what[64];
    snprintf(what, sizeof(what), "%s %s", pccl_dtype_name(dt), pccl_op_name((pccl_op_t)op));
    for (size_t i = 0; i < N; i++) {
      uint64_t x = 0, y = 0, z = 0;
      memcpy(&x, a + i * es, es);
      memcpy(&y, b + i * es, es);
      memcpy(&z, d + i * es, es);
      expect(z == ref_int(op, x, y, bits, is_signed), what, i);
    }
  }
  /* AVG's division: truncating, like C. */
  for (size_t i = 0; i < N * es; i++) a[i] = (unsigned char)rng();
  memcpy(d, a, N * es);
  pccl_kernel_divide(dt)(d, N, 7);
  for (size_t i = 0; i < N; i++) {
    uint64_t x = 0, z = 0;
    memcpy(&x, a + i * es, es);
    memcpy(&z, d + i * es, es);
    uint64_t mask = bits == 64 ? ~0ull : ((1ull << bits) - 1);
    uint64_t want;
    if (is_signed) {
      int64_t sx = bits < 64 ? (int64_t)(x << (64 - bits)) >> (64 - bits) : (int64_t)x;
      want = (uint64_t)(sx / 7) & mask;
    } else {
      want = (x / 7) & mask;
    }
    expect(z == want, "integer divide", i);
  }
}

static double rand_double(void) {
  return ((double)(int64_t)(rng() % 2000001) - 1000000.0) / 977.0;
}

static void test_float(pccl_dtype_t dt) {
  for (int op = 0; op < PCCL_AVG; op++) {
    if (dt == PCCL_FLOAT32) {
      float a[N], b[N], d[N];
      for (int i = 0; i < N; i++) a[i] = (float)rand_double(), b[i] = (float)rand_double();
      a[0] = 0.0f, b[0] = -0.0f; /* equal zeros of both signs */
      pccl_kernel_reduce(dt, (pccl_op_t)op)(d, a, b, N);
      for (size_t i = 0; i < N; i++) {
        int ok = op == PCCL_SUM    ? d[i] == a[i] + b[i]
                 : op == PCCL_PROD ? d[i] == a[i] * b[i]
                                   : minmax_ok(op, a[i], b[i], d[i], !memcmp(&d[i], &a[i], 4), !memcmp(&d[i], &b[i], 4));
        expect(ok, "float32", i);
      }
    } else {
      double a[N], b[N], d[N];
      for (int i = 0; i < N; i++) a[i] = rand_double(), b[i] = rand_double();
      a[0] = 0.0, b[0] = -0.0;
      pccl_kernel_reduce(dt, (pccl_op_t)op)(d, a, b, N);
      for (size_t i = 0; i < N; i++) {
        int ok = op == PCCL_SUM    ? d[i] == a[i] + b[i]
                 : op == PCCL_PROD ? d[i] == a[i] * b[i]
                                   : minmax_ok(op, a[i], b[i], d[i], !memcmp(&d[i], &a[i], 8), !memcmp(&d[i], &b[i], 8));
        expect(ok, "float64", i);
      }
    }
  }
  float f[N], g[N];
  for (int i = 0; i < N; i++) f[i] = g[i] = (float)rand_double();
  if (dt == PCCL_FLOAT32) {
    pccl_kernel_divide(dt)(f, N, 3);
    for (size_t i = 0; i < N; i++) expect(f[i] == g[i] / 3.0f, "float32 divide", i);
  }
}

/* 16-bit floats: operands are exact in float, so the reference is the
 * float-precision result (computed as the library must), rounded once. */
static void test_half(pccl_dtype_t dt) {
  uint16_t a[N], b[N], d[N];
  for (int op = 0; op < PCCL_AVG; op++) {
    for (int i = 0; i < N; i++) {
      a[i] = (uint16_t)rng();
      b[i] = (uint16_t)rng();
    }
    pccl_kernel_reduce(dt, (pccl_op_t)op)(d, a, b, N);
    for (size_t i = 0; i < N; i++) {
      float x = dt == PCCL_FLOAT16 ? ref_f16_to_f32(a[i]) : bf_value(a[i]);
      float y = dt == PCCL_FLOAT16 ? ref_f16_to_f32(b[i]) : bf_value(b[i]);
      float got_v = dt == PCCL_FLOAT16 ? ref_f16_to_f32(d[i]) : bf_value(d[i]);
      int ok;
      if (op == PCCL_MIN || op == PCCL_MAX) {
        ok = minmax_ok(op, x, y, got_v, d[i] == a[i], d[i] == b[i]);
      } else {
        float r = op == PCCL_SUM ? x + y : x * y; /* exact operands: one rounding to float */
        uint16_t want = dt == PCCL_FLOAT16 ? ref_f32_to_f16(r) : ref_f32_to_bf16(r);
        ok = isnan(r) ? isnan(got_v) : d[i] == want; /* any NaN will do */
      }
      expect(ok, dt == PCCL_FLOAT16 ? "float16 reduce" : "bfloat16 reduce", i);
    }
  }
}

static void test_conversions(void) {
  for (uint32_t h = 0; h < 65536; h++) {
    float got = pccl_f16_to_f32((uint16_t)h), want = ref_f16_to_f32((uint16_t)h);
    int ok = isnan(want) ? isnan(got) : memcmp(&got, &want, 4) == 0;
    expect(ok, "float16 -> float32", h);
  }
  for (int i = 0; i < 2000000; i++) {
    uint32_t u = (uint32_t)rng();
    if (i % 4 == 0) u = (u & 0x8000FFFFu) | ((uint32_t)(100 + rng() % 60) << 23); /* near float16 range */
    if (i % 4 == 1) u &= 0xFFFF0000u | 0x8000u;                                    /* exact ties */
    float f;
    memcpy(&f, &u, 4);
    uint16_t want = ref_f32_to_f16(f), got = pccl_f32_to_f16(f);
    int ok = isnan(f) ? (got & 0x7C00) == 0x7C00 && (got & 0x3FF) : got == want;
    expect(ok, "float32 -> float16", u);
    uint16_t bw = ref_f32_to_bf16(f), bg = pccl_f32_to_bf16(f);
    ok = isnan(f) ? isnan(bf_value(bg)) : bg == bw;
    expect(ok, "float32 -> bfloat16", u);
  }
}

/* The in-place cycle permutation against a naive out-of-place gather, on
 * random permutations (and the identity and one full rotation) of 1 to 300
 * blocks of several sizes. */
static void test_permute(void) {
  for (uint32_t n = 1; n <= 300; n += (n < 20 ? 1 : 37)) {
    for (int kind = 0; kind < 3; kind++) {
      size_t bs = (size_t)(1 + rng() % 13) * (kind == 2 ? 1 : 8);
      uint32_t *src_of = malloc(n * sizeof(uint32_t));
      uint32_t *cyc = malloc((n + n / 2 + 1) * sizeof(uint32_t));
      unsigned char *buf = malloc(n * bs), *want = malloc(n * bs), *tmp = malloc(bs);
      for (uint32_t i = 0; i < n; i++) src_of[i] = kind == 1 ? (i + 1) % n : i;
      if (kind != 1)
        for (uint32_t i = n; i > 1; i--) { /* Fisher-Yates */
          uint32_t j = (uint32_t)(rng() % i), t = src_of[i - 1];
          src_of[i - 1] = src_of[j];
          src_of[j] = t;
        }
      for (size_t i = 0; i < n * bs; i++) buf[i] = (unsigned char)rng();
      for (uint32_t x = 0; x < n; x++) memcpy(want + x * bs, buf + src_of[x] * bs, bs);
      size_t words = pccl_perm_cycles(src_of, n, cyc);
      expect(words <= n + n / 2, "permute: cycle list within its bound", n);
      pccl_permute_cycles(buf, bs, cyc, words, tmp);
      expect(memcmp(buf, want, n * bs) == 0, "permute: in place equals naive", n);
      free(src_of);
      free(cyc);
      free(buf);
      free(want);
      free(tmp);
    }
  }
}

/* NaNs that sums, products and the AVG division produce are the one quiet
 * NaN of each type whatever the operands' payloads or signs (elem.h), so
 * that CPUs and GPUs write the same bits. */
static void test_canonical_nan(void) {
  const uint32_t f32_in[][2] = {{0x7FC12345u, 0x3F800000u}, {0xFFC00001u, 0x3F800000u},
                                {0x7F800000u, 0xFF800000u}, {0x3F800000u, 0xFFA00000u}};
  for (size_t k = 0; k < 4; k++) {
    uint32_t got;
    pccl_kernel_reduce(PCCL_FLOAT32, PCCL_SUM)(&got, &f32_in[k][0], &f32_in[k][1], 1);
    expect(got == 0x7FC00000u, "float32 sum NaN is canonical", k);
  }
  const uint64_t f64_in[][2] = {{0x7FF8000000000123ull, 0x3FF0000000000000ull},
                                {0x0000000000000000ull, 0xFFF0000000000000ull}};
  for (size_t k = 0; k < 2; k++) {
    uint64_t got;
    pccl_kernel_reduce(PCCL_FLOAT64, PCCL_PROD)(&got, &f64_in[k][0], &f64_in[k][1], 1);
    expect(got == 0x7FF8000000000000ull, "float64 product NaN is canonical", k);
  }
  uint16_t h[2] = {0xFE01u, 0x3C00u}, b[2] = {0xFFC1u, 0x3F80u}, got16;
  pccl_kernel_reduce(PCCL_FLOAT16, PCCL_SUM)(&got16, &h[0], &h[1], 1);
  expect(got16 == 0x7E00u, "float16 sum NaN is canonical", 0);
  pccl_kernel_reduce(PCCL_BFLOAT16, PCCL_SUM)(&got16, &b[0], &b[1], 1);
  expect(got16 == 0x7FC0u, "bfloat16 sum NaN is canonical", 0);
  uint32_t q = 0xFFC12345u;
  pccl_kernel_divide(PCCL_FLOAT32)(&q, 1, 3);
  expect(q == 0x7FC00000u, "float32 AVG division NaN is canonical", 0);
}

/* bool: operands 0 or 1, results 0 or 1. */
static void test_bool(void) {
  uint8_t a[N], b[N], d[N];
  const int ops[] = {PCCL_LAND, PCCL_LOR, PCCL_LXOR};
  for (size_t k = 0; k < 3; k++) {
    for (int i = 0; i < N; i++) a[i] = (uint8_t)(rng() & 1), b[i] = (uint8_t)(rng() & 1);
    pccl_kernel_reduce(PCCL_BOOL, (pccl_op_t)ops[k])(d, a, b, N);
    for (size_t i = 0; i < N; i++) {
      int want = ops[k] == PCCL_LAND ? a[i] && b[i] : ops[k] == PCCL_LOR ? a[i] || b[i] : a[i] != b[i];
      expect(d[i] == want, pccl_op_name((pccl_op_t)ops[k]), i);
    }
  }
}

/* MAXLOC / MINLOC on each pair type: values from a small range so equal
 * values (where the smaller index wins) are common. */
#define PAIR_TEST(T, DT, VT)                                                                    \
  static void test_pair_##T(void) {                                                             \
    static T a[N], b[N], d[N];                                                                  \
    for (int op = PCCL_MAXLOC; op <= PCCL_MINLOC; op++) {                                       \
      for (int i = 0; i < N; i++) {                                                             \
        a[i].value = (VT)((int)(rng() % 7) - 3), a[i].index = (int32_t)(rng() % 9) - 2;         \
        b[i].value = (VT)((int)(rng() % 7) - 3), b[i].index = (int32_t)(rng() % 9) - 2;         \
      }                                                                                         \
      pccl_kernel_reduce(DT, (pccl_op_t)op)(d, a, b, N);                                        \
      for (size_t i = 0; i < N; i++) {                                                          \
        int a_wins = op == PCCL_MAXLOC ? a[i].value > b[i].value : a[i].value < b[i].value;     \
        VT v = a_wins ? a[i].value : a[i].value == b[i].value ? a[i].value : b[i].value;        \
        int32_t x = a_wins ? a[i].index                                                         \
                    : a[i].value == b[i].value ? (a[i].index < b[i].index ? a[i].index : b[i].index) \
                                               : b[i].index;                                    \
        expect(d[i].value == v && d[i].index == x, #T, i);                                      \
      }                                                                                         \
    }                                                                                           \
  }
PAIR_TEST(pccl_float_int_t, PCCL_FLOAT_INT, float)
PAIR_TEST(pccl_double_int_t, PCCL_DOUBLE_INT, double)
PAIR_TEST(pccl_int64_int_t, PCCL_INT64_INT, int64_t)
PAIR_TEST(pccl_int32_int_t, PCCL_INT32_INT, int32_t)
PAIR_TEST(pccl_int16_int_t, PCCL_INT16_INT, int16_t)

/* Which ops each type has (pccl.h's list), and that the kernel table and
 * pccl_op_supported agree with it; the alignment of each type. */
static void test_support(void) {
  for (int d = 0; d < PCCL_DTYPE_COUNT; d++) {
    int is_int = d <= PCCL_UINT64 || d == PCCL_INT16 || d == PCCL_UINT16;
    int is_float = d >= PCCL_FLOAT16 && d <= PCCL_FLOAT64;
    int is_pair = d >= PCCL_FLOAT_INT;
    for (int op = 0; op < PCCL_OP_COUNT; op++) {
      int arith = op <= PCCL_AVG, logical = op >= PCCL_LAND && op <= PCCL_LXOR;
      int loc = op >= PCCL_MAXLOC;
      int want = (is_int && !loc) || (is_float && arith) || (d == PCCL_BOOL && logical) ||
                 (is_pair && loc);
      expect(pccl_op_supported((pccl_dtype_t)d, (pccl_op_t)op) == want, "op support", (size_t)(d * 100 + op));
      expect((pccl_kernel_reduce((pccl_dtype_t)d, (pccl_op_t)op) != NULL) == want, "kernel table", (size_t)(d * 100 + op));
    }
    expect((pccl_kernel_divide((pccl_dtype_t)d) != NULL) == (is_int || is_float), "divide table", (size_t)d);
  }
  expect(!pccl_op_supported(PCCL_DTYPE_COUNT, PCCL_SUM) && !pccl_op_supported(PCCL_INT32, PCCL_OP_COUNT),
         "out-of-range values are unsupported", 0);
  const size_t align[PCCL_DTYPE_COUNT] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8, 2, 2, 1,
                                          _Alignof(pccl_float_int_t), _Alignof(pccl_double_int_t),
                                          _Alignof(pccl_int64_int_t), _Alignof(pccl_int32_int_t),
                                          _Alignof(pccl_int16_int_t)};
  for (int d = 0; d < PCCL_DTYPE_COUNT; d++) expect(pccl_dtype_align((pccl_dtype_t)d) == align[d], "alignment", (size_t)d);
}

int main(void) {
  test_support();
  test_bool();
  test_pair_pccl_float_int_t();
  test_pair_pccl_double_int_t();
  test_pair_pccl_int64_int_t();
  test_pair_pccl_int32_int_t();
  test_pair_pccl_int16_int_t();
  test_int(PCCL_INT16, 16, 1);
  test_int(PCCL_UINT16, 16, 0);
  test_canonical_nan();
  test_int(PCCL_INT8, 8, 1);
  test_int(PCCL_UINT8, 8, 0);
  test_int(PCCL_INT32, 32, 1);
  test_int(PCCL_UINT32, 32, 0);
  test_int(PCCL_INT64, 64, 1);
  test_int(PCCL_UINT64, 64, 0);
  test_float(PCCL_FLOAT32);
  test_float(PCCL_FLOAT64);
  test_half(PCCL_FLOAT16);
  test_half(PCCL_BFLOAT16);
  test_conversions();
  test_permute();
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
