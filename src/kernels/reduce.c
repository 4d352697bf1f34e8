/* reduce.c - CPU reduction kernels, one loop body per (datatype, op),
 * instantiated by macro into a table.
 *
 * Each loop is written so the compiler vectorizes it (no aliasing beyond the
 * same index, no data-dependent branches), and is compiled for several
 * instruction sets with the chosen one picked at load time by the dynamic
 * linker (GCC/Clang target_clones). The element arithmetic (wrapping
 * integer sums, 16-bit floats through float32) is elem.h's, shared with the
 * CUDA kernels. */
#include <stdint.h>

#include "elem.h"
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

/* One loop per (datatype, op), its element from elem.h. */
#define LOOP(name, C, EXPR)                                                               \
  PCCL_MULTIVERSION static void name(void *dst, const void *a, const void *b, size_t n) { \
    C *d = dst;                                                                           \
    const C *x = a, *y = b;                                                               \
    for (size_t i = 0; i < n; i++) d[i] = EXPR;                                           \
  }
#define DIVIDE(tag, C, EXPR)                                   \
  static void divide_##tag(void *dst, size_t n, int divisor) { \
    C *d = dst;                                                \
    for (size_t i = 0; i < n; i++) d[i] = EXPR;                \
  }

#define NATIVE(C, W, OP) PCCL_ELEM_NATIVE(C, W, OP, x[i], y[i])
#define LOGICAL(C, OP) PCCL_ELEM_LOGICAL(C, OP, x[i], y[i])
#define DEFINE_NATIVE(tag, C, W)                                \
  LOOP(reduce_sum_##tag, C, NATIVE(C, W, PCCL_OP_SUM))          \
  LOOP(reduce_prod_##tag, C, NATIVE(C, W, PCCL_OP_PROD))        \
  LOOP(reduce_min_##tag, C, NATIVE(C, C, PCCL_OP_MIN))          \
  LOOP(reduce_max_##tag, C, NATIVE(C, C, PCCL_OP_MAX))          \
  LOOP(reduce_land_##tag, C, LOGICAL(C, PCCL_OP_LAND))          \
  LOOP(reduce_lor_##tag, C, LOGICAL(C, PCCL_OP_LOR))            \
  LOOP(reduce_lxor_##tag, C, LOGICAL(C, PCCL_OP_LXOR))          \
  LOOP(reduce_band_##tag, C, NATIVE(C, W, PCCL_OP_BAND))        \
  LOOP(reduce_bor_##tag, C, NATIVE(C, W, PCCL_OP_BOR))          \
  LOOP(reduce_bxor_##tag, C, NATIVE(C, W, PCCL_OP_BXOR))        \
  DIVIDE(tag, C, PCCL_DIV_NATIVE(C, d[i], divisor))

#define FLOAT(tag, CANON, OP) PCCL_ELEM_FLOAT(CANON, OP, x[i], y[i])
#define DEFINE_FLOAT(tag, C, W)                                          \
  LOOP(reduce_sum_##tag, C, FLOAT(tag, PCCL_CANON_##tag, PCCL_OP_SUM))   \
  LOOP(reduce_prod_##tag, C, FLOAT(tag, PCCL_CANON_##tag, PCCL_OP_PROD)) \
  LOOP(reduce_min_##tag, C, FLOAT(tag, PCCL_PICK, PCCL_OP_MIN))          \
  LOOP(reduce_max_##tag, C, FLOAT(tag, PCCL_PICK, PCCL_OP_MAX))          \
  DIVIDE(tag, C, PCCL_DIV_FLOAT(PCCL_CANON_##tag, d[i], divisor))

#define HALF(tag, FROM, OP) PCCL_ELEM_HALF(PCCL_TO_F32_##tag, FROM, OP, x[i], y[i])
#define DEFINE_HALF(tag, C, W)                                                  \
  LOOP(reduce_sum_##tag, C, HALF(tag, PCCL_FROM_F32_CANON_##tag, PCCL_OP_SUM))  \
  LOOP(reduce_prod_##tag, C, HALF(tag, PCCL_FROM_F32_CANON_##tag, PCCL_OP_PROD)) \
  LOOP(reduce_min_##tag, C, HALF(tag, PCCL_FROM_F32_##tag, PCCL_OP_MIN))        \
  LOOP(reduce_max_##tag, C, HALF(tag, PCCL_FROM_F32_##tag, PCCL_OP_MAX))        \
  DIVIDE(tag, C, PCCL_DIV_HALF(PCCL_TO_F32_##tag, PCCL_FROM_F32_CANON_##tag, d[i], divisor))

#define DEFINE_BOOL(tag, C, W)                         \
  LOOP(reduce_land_##tag, C, LOGICAL(C, PCCL_OP_LAND)) \
  LOOP(reduce_lor_##tag, C, LOGICAL(C, PCCL_OP_LOR))   \
  LOOP(reduce_lxor_##tag, C, LOGICAL(C, PCCL_OP_LXOR))

#define DEFINE_PAIR(tag, C, W)                                       \
  LOOP(reduce_maxloc_##tag, C, PCCL_ELEM_PAIR(MAXLOC, x[i], y[i])) \
  LOOP(reduce_minloc_##tag, C, PCCL_ELEM_PAIR(MINLOC, x[i], y[i]))

#define DEFINE(tag, C, W, kind) DEFINE_##kind(tag, C, W)
PCCL_DTYPE_MAP(DEFINE)

/* Rows follow pccl_dtype_t, columns pccl_op_t (AVG: the sum, divided after;
 * NULL where the op is not defined on the type). */
#define ROW_NATIVE(tag)                                                                         \
  {reduce_sum_##tag, reduce_prod_##tag, reduce_min_##tag, reduce_max_##tag, reduce_sum_##tag, \
   reduce_land_##tag, reduce_lor_##tag, reduce_lxor_##tag, reduce_band_##tag, reduce_bor_##tag, \
   reduce_bxor_##tag, NULL, NULL},
#define ROW_FLOAT(tag) \
  {reduce_sum_##tag, reduce_prod_##tag, reduce_min_##tag, reduce_max_##tag, reduce_sum_##tag},
#define ROW_HALF ROW_FLOAT
#define ROW_BOOL(tag) \
  {NULL, NULL, NULL, NULL, NULL, reduce_land_##tag, reduce_lor_##tag, reduce_lxor_##tag},
#define ROW_PAIR(tag) \
  {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, reduce_maxloc_##tag, reduce_minloc_##tag},
#define ROW(tag, C, W, kind) ROW_##kind(tag)
static const pccl_reduce_fn reduce_table[PCCL_DTYPE_COUNT][PCCL_OP_COUNT] = {PCCL_DTYPE_MAP(ROW)};
#define DIVIDE_NATIVE(tag) divide_##tag,
#define DIVIDE_FLOAT DIVIDE_NATIVE
#define DIVIDE_HALF DIVIDE_NATIVE
#define DIVIDE_BOOL(tag) NULL,
#define DIVIDE_PAIR DIVIDE_BOOL
#define DIVIDE_ROW(tag, C, W, kind) DIVIDE_##kind(tag)
static const pccl_divide_fn divide_table[PCCL_DTYPE_COUNT] = {PCCL_DTYPE_MAP(DIVIDE_ROW)};
#define ALIGN_ROW(tag, C, W, kind) _Alignof(C),
static const size_t align_table[PCCL_DTYPE_COUNT] = {PCCL_DTYPE_MAP(ALIGN_ROW)};

pccl_reduce_fn pccl_kernel_reduce(pccl_dtype_t dtype, pccl_op_t op) {
  if ((unsigned)dtype >= PCCL_DTYPE_COUNT || (unsigned)op >= PCCL_OP_COUNT) return NULL;
  return reduce_table[dtype][op];
}

pccl_divide_fn pccl_kernel_divide(pccl_dtype_t dtype) {
  if ((unsigned)dtype >= PCCL_DTYPE_COUNT) return NULL;
  return divide_table[dtype];
}

int pccl_op_supported(pccl_dtype_t dtype, pccl_op_t op) {
  return pccl_kernel_reduce(dtype, op) != NULL;
}

size_t pccl_dtype_align(pccl_dtype_t dtype) {
  return (unsigned)dtype < PCCL_DTYPE_COUNT ? align_table[dtype] : 0;
}
