/* reduce.c - CPU reduction kernels, one loop body per (datatype, op),
 * instantiated by macro into a table.
 *
 * Each loop is written so the compiler vectorizes it (no aliasing beyond the
 * same index, no data-dependent branches), and is compiled for several
 * instruction sets with the chosen one picked at load time by the dynamic
 * linker (GCC/Clang target_clones). Integer sums and products run in the
 * unsigned type of the same width so they wrap in two's complement instead of
 * overflowing; 16-bit floats are widened to float32 and rounded back. */
#include <stdint.h>

#include "half.h"
#include "kernels.h"

/* Not under AddressSanitizer or ThreadSanitizer: the dynamic loader runs
 * target_clones' resolvers before the sanitizer's runtime has started, and
 * an instrumented resolver crashes there. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define PCCL_MULTIVERSION __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define PCCL_MULTIVERSION
#endif

#define OP_SUM(x, y) ((x) + (y))
#define OP_PROD(x, y) ((x) * (y))
#define OP_MIN(x, y) ((y) < (x) ? (y) : (x))
#define OP_MAX(x, y) ((y) > (x) ? (y) : (x))

/* Types whose arithmetic is native: C is the storage type, W the type the
 * operation runs in (unsigned for integers, so overflow wraps). */
#define DEFINE_NATIVE(name, C, W, OP)                                                \
  PCCL_MULTIVERSION static void name(void *dst, const void *a, const void *b, size_t n) { \
    C *d = dst;                                                                      \
    const C *x = a, *y = b;                                                          \
    for (size_t i = 0; i < n; i++) d[i] = (C)(W)OP((W)x[i], (W)y[i]);                 \
  }

/* 16-bit floats: widen, operate in float, round back. */
#define DEFINE_HALF(name, TO_F32, FROM_F32, OP)                                      \
  PCCL_MULTIVERSION static void name(void *dst, const void *a, const void *b, size_t n) { \
    uint16_t *d = dst;                                                               \
    const uint16_t *x = a, *y = b;                                                   \
    for (size_t i = 0; i < n; i++) d[i] = FROM_F32(OP(TO_F32(x[i]), TO_F32(y[i])));  \
  }

/* Min and max compare in the signed type itself (no wrap involved). */
#define DEFINE_INT(tag, C, U)                     \
  DEFINE_NATIVE(reduce_sum_##tag, C, U, OP_SUM)   \
  DEFINE_NATIVE(reduce_prod_##tag, C, U, OP_PROD) \
  DEFINE_NATIVE(reduce_min_##tag, C, C, OP_MIN)   \
  DEFINE_NATIVE(reduce_max_##tag, C, C, OP_MAX)

#define DEFINE_FLOAT(tag, C)                      \
  DEFINE_NATIVE(reduce_sum_##tag, C, C, OP_SUM)   \
  DEFINE_NATIVE(reduce_prod_##tag, C, C, OP_PROD) \
  DEFINE_NATIVE(reduce_min_##tag, C, C, OP_MIN)   \
  DEFINE_NATIVE(reduce_max_##tag, C, C, OP_MAX)

#define DEFINE_HALF_ALL(tag, TO, FROM)                \
  DEFINE_HALF(reduce_sum_##tag, TO, FROM, OP_SUM)     \
  DEFINE_HALF(reduce_prod_##tag, TO, FROM, OP_PROD)   \
  DEFINE_HALF(reduce_min_##tag, TO, FROM, OP_MIN)     \
  DEFINE_HALF(reduce_max_##tag, TO, FROM, OP_MAX)

/* uint8 * uint8 promotes to int and cannot overflow it; wider unsigned types
 * multiply in themselves. */
DEFINE_INT(i8, int8_t, uint8_t)
DEFINE_INT(u8, uint8_t, uint8_t)
DEFINE_INT(i32, int32_t, uint32_t)
DEFINE_INT(u32, uint32_t, uint32_t)
DEFINE_INT(i64, int64_t, uint64_t)
DEFINE_INT(u64, uint64_t, uint64_t)
DEFINE_FLOAT(f32, float)
DEFINE_FLOAT(f64, double)
DEFINE_HALF_ALL(f16, pccl_f16_to_f32, pccl_f32_to_f16)
DEFINE_HALF_ALL(bf16, pccl_bf16_to_f32, pccl_f32_to_bf16)

/* The AVG op's division, in each type's own arithmetic (C's truncating
 * division for integers). The divisor stays an int: narrowing it to int8
 * would break at 128 ranks. */
#define DEFINE_DIVIDE(tag, C)                                     \
  static void divide_##tag(void *dst, size_t n, int divisor) {    \
    C *d = dst;                                                   \
    for (size_t i = 0; i < n; i++) d[i] = (C)(d[i] / divisor);    \
  }
#define DEFINE_DIVIDE_HALF(tag, TO, FROM)                         \
  static void divide_##tag(void *dst, size_t n, int divisor) {    \
    uint16_t *d = dst;                                            \
    const float q = (float)divisor;                               \
    for (size_t i = 0; i < n; i++) d[i] = FROM(TO(d[i]) / q);     \
  }

DEFINE_DIVIDE(i8, int8_t)
DEFINE_DIVIDE(u8, uint8_t)
DEFINE_DIVIDE(i32, int32_t)
DEFINE_DIVIDE(u32, uint32_t)
DEFINE_DIVIDE(i64, int64_t)
DEFINE_DIVIDE(u64, uint64_t)
DEFINE_DIVIDE(f32, float)
DEFINE_DIVIDE(f64, double)
DEFINE_DIVIDE_HALF(f16, pccl_f16_to_f32, pccl_f32_to_f16)
DEFINE_DIVIDE_HALF(bf16, pccl_bf16_to_f32, pccl_f32_to_bf16)

/* Rows follow pccl_dtype_t, columns pccl_op_t up to (not including) AVG. */
#define ROW(tag) {reduce_sum_##tag, reduce_prod_##tag, reduce_min_##tag, reduce_max_##tag}
static const pccl_reduce_fn reduce_table[PCCL_DTYPE_COUNT][PCCL_AVG] = {
    ROW(i8), ROW(u8), ROW(i32), ROW(u32), ROW(i64), ROW(u64), ROW(f16), ROW(bf16), ROW(f32), ROW(f64),
};
static const pccl_divide_fn divide_table[PCCL_DTYPE_COUNT] = {
    divide_i8, divide_u8, divide_i32, divide_u32, divide_i64,
    divide_u64, divide_f16, divide_bf16, divide_f32, divide_f64,
};

pccl_reduce_fn pccl_kernel_reduce(pccl_dtype_t dtype, pccl_op_t op) {
  if ((unsigned)dtype >= PCCL_DTYPE_COUNT || (unsigned)op >= PCCL_OP_COUNT) return NULL;
  return reduce_table[dtype][op == PCCL_AVG ? PCCL_SUM : op];
}

pccl_divide_fn pccl_kernel_divide(pccl_dtype_t dtype) {
  if ((unsigned)dtype >= PCCL_DTYPE_COUNT) return NULL;
  return divide_table[dtype];
}
