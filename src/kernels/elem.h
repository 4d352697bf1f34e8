/* elem.h - one element of a reduction, for every (datatype, op): the CPU
 * loops (reduce.c) and the CUDA kernels (src/cuda/reduce.cu) expand the same
 * macros, so both compute the same bits.
 *
 * Integer sums and products run in the unsigned type of the same width (W)
 * so they wrap in two's complement instead of overflowing; min and max
 * compare in the type itself. 16-bit floats are widened to float32, operated
 * on, and rounded back to nearest even (half.h). A NaN operand of min/max
 * is kept only when it is the first one, on both sides. A NaN that
 * arithmetic (sum, product, division) produces is always the one quiet NaN
 * 0x7FC00000 (float64: 0x7FF8...): x86 keeps an operand's payload or makes
 * a negative NaN, GPUs make one of their own, and every rank and device
 * must write the same bits. */
#ifndef PCCL_ELEM_H
#define PCCL_ELEM_H

#include "half.h"
#include "pccl.h"

PCCL_HD float pccl_canon_f32(float r) { return r != r ? pccl_bits_f32(0x7FC00000u) : r; }

PCCL_HD double pccl_canon_f64(double r) {
  uint64_t u = 0x7FF8000000000000ull;
  double nan;
  memcpy(&nan, &u, sizeof nan);
  return r != r ? nan : r;
}

#define PCCL_OP_SUM(x, y) ((x) + (y))
#define PCCL_OP_PROD(x, y) ((x) * (y))
#define PCCL_OP_MIN(x, y) ((y) < (x) ? (y) : (x))
#define PCCL_OP_MAX(x, y) ((y) > (x) ? (y) : (x))

/* Integers: storage type C, arithmetic in W. */
#define PCCL_ELEM_NATIVE(C, W, OP, x, y) ((C)(W)OP((W)(x), (W)(y)))
/* float32 / float64 (CANON: pccl_canon_f32 / _f64; min and max pass
 * PCCL_PICK), and 16-bit floats stored as uint16_t (arithmetic rounds back
 * with the canonical-NaN converter, min and max with the plain one). */
#define PCCL_PICK(r) (r)
#define PCCL_ELEM_FLOAT(CANON, OP, x, y) (CANON(OP((x), (y))))
#define PCCL_ELEM_HALF(TO_F32, FROM_F32, OP, x, y) (FROM_F32(OP(TO_F32(x), TO_F32(y))))

/* The AVG op's division in the type's own arithmetic (C's truncation for
 * integers); the divisor stays an int so 128 ranks do not wrap an int8. */
#define PCCL_DIV_NATIVE(C, x, divisor) ((C)((x) / (divisor)))
#define PCCL_DIV_FLOAT(CANON, x, divisor) (CANON((x) / (divisor)))
#define PCCL_DIV_HALF(TO_F32, FROM_F32, x, divisor) (FROM_F32(TO_F32(x) / (float)(divisor)))

/* Logical ops on integers and bool: an element is true when not zero, the
 * result 1 or 0 in the type. */
#define PCCL_OP_LAND(x, y) (((x) != 0) & ((y) != 0))
#define PCCL_OP_LOR(x, y) (((x) != 0) | ((y) != 0))
#define PCCL_OP_LXOR(x, y) (((x) != 0) ^ ((y) != 0))
#define PCCL_ELEM_LOGICAL(C, OP, x, y) ((C)OP((x), (y)))
/* Bitwise ops on integers, in the unsigned type W so no sign is extended. */
#define PCCL_OP_BAND(x, y) ((x) & (y))
#define PCCL_OP_BOR(x, y) ((x) | (y))
#define PCCL_OP_BXOR(x, y) ((x) ^ (y))

/* MAXLOC / MINLOC on (value, index) pairs: the larger (smaller) value, and
 * of equal values the smaller index (MPI's definition). Written as one
 * select of the whole pair so both kernels keep value and index together. */
#define PCCL_PAIR_TAKES_Y_MAXLOC(x, y) ((y).value > (x).value || ((y).value == (x).value && (y).index < (x).index))
#define PCCL_PAIR_TAKES_Y_MINLOC(x, y) ((y).value < (x).value || ((y).value == (x).value && (y).index < (x).index))
#define PCCL_ELEM_PAIR(WHICH, x, y) (PCCL_PAIR_TAKES_Y_##WHICH(x, y) ? (y) : (x))

/* X(tag, C, W, kind): every datatype in pccl_dtype_t order; kind says which
 * ops the type has (pccl_op_t's list):
 * - NATIVE: integers, W the unsigned arithmetic type (32 bits for 16-bit
 *   integers: uint16_t would be promoted to int, whose products overflow);
 *   every op but the pairs';
 * - FLOAT, HALF: sum, prod, min, max, avg (W unused);
 * - BOOL: the logical ops;
 * - PAIR: MAXLOC and MINLOC, C the pair's struct (W unused).
 * Float rows name their canonical NaN through PCCL_CANON_<tag>, 16-bit ones
 * their converters through PCCL_TO_F32_<tag>, PCCL_FROM_F32_<tag> and
 * PCCL_FROM_F32_CANON_<tag>. */
#define PCCL_DTYPE_MAP(X)                        \
  X(i8, int8_t, uint8_t, NATIVE)                 \
  X(u8, uint8_t, uint8_t, NATIVE)                \
  X(i32, int32_t, uint32_t, NATIVE)              \
  X(u32, uint32_t, uint32_t, NATIVE)             \
  X(i64, int64_t, uint64_t, NATIVE)              \
  X(u64, uint64_t, uint64_t, NATIVE)             \
  X(f16, uint16_t, float, HALF)                  \
  X(bf16, uint16_t, float, HALF)                 \
  X(f32, float, float, FLOAT)                    \
  X(f64, double, double, FLOAT)                  \
  X(i16, int16_t, uint32_t, NATIVE)              \
  X(u16, uint16_t, uint32_t, NATIVE)             \
  X(bool, uint8_t, uint8_t, BOOL)                \
  X(f32i, pccl_float_int_t, float, PAIR)         \
  X(f64i, pccl_double_int_t, double, PAIR)       \
  X(i64i, pccl_int64_int_t, int64_t, PAIR)       \
  X(i32i, pccl_int32_int_t, int32_t, PAIR)       \
  X(i16i, pccl_int16_int_t, int16_t, PAIR)

#define PCCL_CANON_f32 pccl_canon_f32
#define PCCL_CANON_f64 pccl_canon_f64
#define PCCL_TO_F32_f16 pccl_f16_to_f32
#define PCCL_FROM_F32_f16 pccl_f32_to_f16
#define PCCL_FROM_F32_CANON_f16 pccl_f32_to_f16_canon
#define PCCL_TO_F32_bf16 pccl_bf16_to_f32
#define PCCL_FROM_F32_bf16 pccl_f32_to_bf16
#define PCCL_FROM_F32_CANON_bf16 pccl_f32_to_bf16_canon

#endif /* PCCL_ELEM_H */
