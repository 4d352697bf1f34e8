/* szp_block.h - one block of the szp codec (the format is described at the
 * top of szp.c): quantization with the decoder's own reconstruction check,
 * the choice of order 1, order 2 or raw, the code byte, the block's size,
 * its bytes, and decoding; plus the 24-byte container header (codec.c).
 * Every function is PCCL_HD: the CPU codec (szp.c) and the GPU codec
 * (src/cuda/szp.cu) run this one source, so they write the same bytes.
 *
 * Two things keep the device bit for bit with the CPU: products are rounded
 * on their own (pccl__szp_mul: nvcc would fuse a product and the next add
 * into an FMA), and the code must not be built with --use_fast_math or
 * -ftz=true (float16 decoding relies on float subnormals). */
#ifndef PCCL_SZP_BLOCK_H
#define PCCL_SZP_BLOCK_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "half.h"
#include "hd.h"
#include "pccl.h"

#if defined(__SSE2__) && !defined(__CUDACC__) && !defined(PCCL_SZP_PORTABLE)
#define PCCL_SZP_SSE2 1
#include <emmintrin.h>
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "szp writes its planes in host order and assumes a little-endian host"
#endif

#define PCCL_CODEC_VERSION 2 /* of the container header; 2: szp's order-2 blocks */

#define PCCL_SZP_B 32        /* elements per block */
#define PCCL_SZP_RAW 255     /* block code: stored raw */
#define PCCL_SZP_ORDER2 165  /* first code of an order-2 block */
#define PCCL_SZP_W2MAX 17    /* widest order-2 block: 165 + 17 * 5 + 4 = 254 */
#define PCCL_SZP_QMAX 0x1p30 /* |q| bound: differences then fit in 32 bits */

/* The per-element loops must inline into each dtype's instance. */
#define PCCL_SZP_INLINE PCCL_HD __attribute__((always_inline))

typedef struct {
  double step, inv, bound;
} pccl__szp_quant_t;

/* What the encoder chose for a block: its code byte and its data bytes. */
typedef struct {
  unsigned code;
  size_t size;
} pccl__szp_plan_t;

/* ---- container header (codec.c reads it) ---- */

/* Writes the 24-byte header: 'P' 'Z', version, codec, dtype, three zero
 * bytes, count (uint64) and bound (binary64), little-endian. */
PCCL_HD void pccl__codec_header_write(uint8_t *h, unsigned codec, pccl_dtype_t dtype,
                                      uint64_t count, double bound) {
  uint64_t bits;
  memcpy(&bits, &bound, sizeof(bits));
  h[0] = 'P', h[1] = 'Z', h[2] = PCCL_CODEC_VERSION, h[3] = (uint8_t)codec;
  h[4] = (uint8_t)dtype, h[5] = h[6] = h[7] = 0;
  for (int i = 0; i < 8; i++) {
    h[8 + i] = (uint8_t)(count >> (8 * i));
    h[16 + i] = (uint8_t)(bits >> (8 * i));
  }
}

/* ---- arithmetic ---- */

/* a * b rounded once, never fused with a following add. */
PCCL_HD double pccl__szp_mul(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

PCCL_HD unsigned pccl__szp_bit_width(uint32_t v) {
#ifdef __CUDA_ARCH__
  return 32u - (unsigned)__clz((int)v); /* __clz(0) is 32 */
#else
  return v ? 32u - (unsigned)__builtin_clz(v) : 0u;
#endif
}

PCCL_HD unsigned pccl__szp_byte_width(uint32_t v) { return (pccl__szp_bit_width(v) + 7) / 8; }

PCCL_HD uint32_t pccl__szp_zigzag(uint32_t d) { return (d << 1) ^ (0u - (d >> 31)); }

PCCL_HD uint32_t pccl__szp_unzigzag(uint32_t z) { return (z >> 1) ^ (0u - (z & 1u)); }

PCCL_HD pccl__szp_quant_t pccl__szp_quant_of(double bound) {
  pccl__szp_quant_t qz;
  qz.step = bound * (2.0 - 0x1p-5);
  qz.inv = 1.0 / qz.step;
  qz.bound = bound;
  return qz;
}

PCCL_HD size_t pccl__szp_nblocks(size_t count) {
  return count / PCCL_SZP_B + (count % PCCL_SZP_B != 0);
}

/* Elements in block b of count. */
PCCL_HD size_t pccl__szp_block_count(size_t count, size_t b) {
  size_t first = b * PCCL_SZP_B;
  return count - first < PCCL_SZP_B ? count - first : PCCL_SZP_B;
}

/* Bytes a block occupies, from its code alone (every code 0..255 is valid). */
PCCL_HD size_t pccl__szp_block_bytes(unsigned code, size_t n, size_t esize) {
  if (code == PCCL_SZP_RAW) return n * esize;
  if (code >= PCCL_SZP_ORDER2)
    return 2 * ((code - PCCL_SZP_ORDER2) % 5) + 4 * ((code - PCCL_SZP_ORDER2) / 5);
  return code % 5 + 4 * (code / 5);
}

/* ---- elements ---- */

PCCL_SZP_INLINE double pccl__szp_load(const void *p, size_t i, pccl_dtype_t t) {
  switch (t) {
  case PCCL_FLOAT32: return ((const float *)p)[i];
  case PCCL_FLOAT64: return ((const double *)p)[i];
  case PCCL_FLOAT16: return pccl_f16_to_f32(((const uint16_t *)p)[i]);
  default: return pccl_bf16_to_f32(((const uint16_t *)p)[i]);
  }
}

/* Writes element i of the decoded array; pccl__szp_decoded() gives the
 * same value, since the encoder checks the bound on it. */
PCCL_SZP_INLINE void pccl__szp_store(void *p, size_t i, int32_t q, double step, pccl_dtype_t t) {
  double y = pccl__szp_mul(q, step);
  switch (t) {
  case PCCL_FLOAT32: ((float *)p)[i] = (float)y; break;
  case PCCL_FLOAT64: ((double *)p)[i] = y; break;
  case PCCL_FLOAT16: ((uint16_t *)p)[i] = pccl_f32_to_f16((float)y); break;
  default: ((uint16_t *)p)[i] = pccl_f32_to_bf16((float)y); break;
  }
}

/* The value the decoder writes for q, as a double (no store). */
PCCL_SZP_INLINE double pccl__szp_decoded(int32_t q, double step, pccl_dtype_t t) {
  double y = pccl__szp_mul(q, step);
  switch (t) {
  case PCCL_FLOAT32: return (float)y;
  case PCCL_FLOAT64: return y;
  case PCCL_FLOAT16: return pccl_f16_to_f32(pccl_f32_to_f16((float)y));
  default: return pccl_bf16_to_f32(pccl_f32_to_bf16((float)y));
  }
}

/* Quantizes n <= 32 elements into q[32] (padded by repeating the last);
 * returns nonzero when the block must be stored raw. Three simple passes,
 * so each vectorizes. */
PCCL_SZP_INLINE int pccl__szp_quantize(const void *src, size_t n, pccl_dtype_t t,
                                       const pccl__szp_quant_t *qz, int32_t *q) {
  double x[PCCL_SZP_B];
  int bad = 0;
  for (size_t i = 0; i < n; i++) x[i] = pccl__szp_load(src, i, t);
  for (size_t i = 0; i < n; i++) {
    double s = pccl__szp_mul(x[i], qz->inv);
    int in = fabs(s) < PCCL_SZP_QMAX; /* false for NaN and Inf */
    bad |= !in;
    q[i] = (int32_t)(in ? (s + 0x1.8p52) - 0x1.8p52 : 0.0); /* round to nearest even */
  }
  for (size_t i = 0; i < n; i++)
    bad |= !(fabs(pccl__szp_decoded(q[i], qz->step, t) - x[i]) <= qz->bound);
  for (size_t i = n; i < PCCL_SZP_B; i++) q[i] = q[n - 1];
  return bad;
}

/* ---- bytes ---- */

PCCL_HD void pccl__szp_put_le(uint8_t *p, uint32_t v, unsigned nbytes) {
  for (unsigned i = 0; i < nbytes; i++) p[i] = (uint8_t)(v >> (8 * i));
}

PCCL_HD uint32_t pccl__szp_get_le(const uint8_t *p, unsigned nbytes) {
  uint32_t v = 0;
  for (unsigned i = 0; i < nbytes; i++) v |= (uint32_t)p[i] << (8 * i);
  return v;
}

#ifdef PCCL_SZP_SSE2
/* Plane b is the sign bits of the 32 values shifted left by 31 - b. */
static inline void pccl__szp_pack_planes(const uint32_t *z, unsigned w, uint8_t *out) {
  __m128i v[PCCL_SZP_B / 4];
  for (int j = 0; j < PCCL_SZP_B / 4; j++) v[j] = _mm_loadu_si128((const __m128i *)(z + 4 * j));
  for (unsigned b = 0; b < w; b++) {
    __m128i shift = _mm_cvtsi32_si128((int)(31 - b));
    uint32_t plane = 0;
    for (int j = 0; j < PCCL_SZP_B / 4; j++)
      plane |= (uint32_t)_mm_movemask_ps(_mm_castsi128_ps(_mm_sll_epi32(v[j], shift))) << (4 * j);
    memcpy(out + 4 * b, &plane, 4);
  }
}

/* Lane i of the result gets bit i of each plane: select lanes by mask. */
static inline void pccl__szp_unpack_planes(const uint8_t *in, unsigned w, uint32_t *z) {
  __m128i acc[PCCL_SZP_B / 4], lane[PCCL_SZP_B / 4];
  for (int j = 0; j < PCCL_SZP_B / 4; j++) {
    acc[j] = _mm_setzero_si128();
    lane[j] = _mm_setr_epi32(1 << (4 * j), 2 << (4 * j), 4 << (4 * j), (int)(8u << (4 * j)));
  }
  for (unsigned b = 0; b < w; b++) {
    uint32_t plane;
    memcpy(&plane, in + 4 * b, 4);
    __m128i p = _mm_set1_epi32((int)plane), bit = _mm_set1_epi32((int)(1u << b));
    for (int j = 0; j < PCCL_SZP_B / 4; j++) {
      __m128i hit = _mm_cmpeq_epi32(_mm_and_si128(p, lane[j]), lane[j]);
      acc[j] = _mm_or_si128(acc[j], _mm_and_si128(hit, bit));
    }
  }
  for (int j = 0; j < PCCL_SZP_B / 4; j++) _mm_storeu_si128((__m128i *)(z + 4 * j), acc[j]);
}
#else
/* Portable planes (the device, nvcc's host pass, PCCL_SZP_PORTABLE): the
 * same bytes as the SSE2 pair above. */
PCCL_HD void pccl__szp_pack_planes(const uint32_t *z, unsigned w, uint8_t *out) {
  for (unsigned b = 0; b < w; b++) {
    uint32_t plane = 0;
    for (int i = 0; i < PCCL_SZP_B; i++) plane |= ((z[i] >> b) & 1u) << i;
    memcpy(out + 4 * b, &plane, 4);
  }
}

PCCL_HD void pccl__szp_unpack_planes(const uint8_t *in, unsigned w, uint32_t *z) {
  for (int i = 0; i < PCCL_SZP_B; i++) z[i] = 0;
  for (unsigned b = 0; b < w; b++) {
    uint32_t plane;
    memcpy(&plane, in + 4 * b, 4);
    for (int i = 0; i < PCCL_SZP_B; i++) z[i] |= ((plane >> i) & 1u) << b;
  }
}
#endif

/* ---- one block ---- */

/* The two predictions of a quantized block, zigzag-coded: order 1
 * (differences, z1[1..]) and order 2 (differences of differences, z2[2..]);
 * their plane counts. */
typedef struct {
  uint32_t z1[PCCL_SZP_B], z2[PCCL_SZP_B];
  unsigned w1, w2; /* w2 > PCCL_SZP_W2MAX: order 2 not usable */
} pccl__szp_pred_t;

PCCL_SZP_INLINE void pccl__szp_predict(const int32_t *q, pccl__szp_pred_t *p) {
  uint32_t any1 = 0;
  uint64_t any2 = 0;
  p->z1[0] = p->z2[0] = p->z2[1] = 0;
  for (int i = 1; i < PCCL_SZP_B; i++) {
    p->z1[i] = pccl__szp_zigzag((uint32_t)q[i] - (uint32_t)q[i - 1]);
    any1 |= p->z1[i];
  }
  for (int i = 2; i < PCCL_SZP_B; i++) { /* |q| < 2^30: r fits in 33 bits, so 64 */
    int64_t r = ((int64_t)q[i] - q[i - 1]) - ((int64_t)q[i - 1] - q[i - 2]);
    uint64_t zz = ((uint64_t)r << 1) ^ (0 - ((uint64_t)r >> 63));
    p->z2[i] = (uint32_t)zz;
    any2 |= zz;
  }
  p->w1 = pccl__szp_bit_width(any1);
  p->w2 = any2 >> 32 ? 64 : pccl__szp_bit_width((uint32_t)any2);
}

/* Chooses a block's coding from its first value q0 and predictions:
 * order 1 or order 2, whichever is smaller, or raw when the block is bad or
 * coding would not be smaller than its n * esize bytes. */
PCCL_SZP_INLINE pccl__szp_plan_t pccl__szp_plan(int32_t q0, const pccl__szp_pred_t *p, int bad,
                                               size_t n, size_t esize) {
  unsigned len1 = pccl__szp_byte_width(pccl__szp_zigzag((uint32_t)q0));
  unsigned len2 = len1 > pccl__szp_byte_width(p->z1[1]) ? len1 : pccl__szp_byte_width(p->z1[1]);
  size_t size1 = len1 + 4 * (size_t)p->w1;
  size_t size2 = p->w2 <= PCCL_SZP_W2MAX ? 2 * len2 + 4 * (size_t)p->w2 : SIZE_MAX;
  pccl__szp_plan_t plan;
  if (bad || (size2 < size1 ? size2 : size1) >= n * esize) {
    plan.code = PCCL_SZP_RAW, plan.size = n * esize;
  } else if (size2 < size1) {
    plan.code = PCCL_SZP_ORDER2 + p->w2 * 5 + len2, plan.size = size2;
  } else {
    plan.code = p->w1 * 5 + len1, plan.size = size1;
  }
  return plan;
}

/* Writes the bytes of a block of n elements at src, with first value q0,
 * predictions p and code (from pccl__szp_plan), to out. */
PCCL_SZP_INLINE void pccl__szp_write(const void *src, int32_t q0, const pccl__szp_pred_t *p,
                                     unsigned code, size_t n, size_t esize, uint8_t *out) {
  if (code == PCCL_SZP_RAW) {
    memcpy(out, src, n * esize);
    return;
  }
  int order2 = code >= PCCL_SZP_ORDER2;
  unsigned c = order2 ? code - PCCL_SZP_ORDER2 : code, w = c / 5, len = c % 5;
  pccl__szp_put_le(out, pccl__szp_zigzag((uint32_t)q0), len);
  if (order2) {
    pccl__szp_put_le(out + len, p->z1[1], len);
    pccl__szp_pack_planes(p->z2, w, out + 2 * len);
  } else {
    pccl__szp_pack_planes(p->z1, w, out + len);
  }
}

/* Encodes one block into out (room for n * esize bytes); returns its size. */
PCCL_SZP_INLINE size_t pccl__szp_encode(const void *src, size_t n, pccl_dtype_t t, size_t esize,
                                        const pccl__szp_quant_t *qz, uint8_t *out,
                                        uint8_t *code) {
  int32_t q[PCCL_SZP_B];
  pccl__szp_pred_t p;
  int bad = pccl__szp_quantize(src, n, t, qz, q);
  pccl__szp_predict(q, &p);
  pccl__szp_plan_t plan = pccl__szp_plan(q[0], &p, bad, n, esize);
  *code = (uint8_t)plan.code;
  pccl__szp_write(src, q[0], &p, plan.code, n, esize, out);
  return plan.size;
}

/* Decodes a block of n elements with code from in to dst; reads exactly
 * pccl__szp_block_bytes(code, n, esize) bytes. */
PCCL_SZP_INLINE void pccl__szp_decode(const uint8_t *in, unsigned code, size_t n, pccl_dtype_t t,
                                      size_t esize, double step, void *dst) {
  if (code == PCCL_SZP_RAW) {
    memcpy(dst, in, n * esize);
    return;
  }
  int order2 = code >= PCCL_SZP_ORDER2;
  unsigned c = order2 ? code - PCCL_SZP_ORDER2 : code, w = c / 5, len = c % 5;
  uint32_t z[PCCL_SZP_B];
  pccl__szp_unpack_planes(in + (order2 ? 2 * len : len), w, z);
  /* Unsigned arithmetic: corrupt input wraps instead of overflowing. */
  uint32_t acc = pccl__szp_unzigzag(pccl__szp_get_le(in, len));
  uint32_t d = order2 ? pccl__szp_unzigzag(pccl__szp_get_le(in + len, len)) : 0;
  int32_t q[PCCL_SZP_B];
  q[0] = (int32_t)acc;
  for (size_t i = 1; i < n; i++) {
    d = order2 ? (i == 1 ? d : d + pccl__szp_unzigzag(z[i])) : pccl__szp_unzigzag(z[i]);
    q[i] = (int32_t)(acc += d);
  }
  for (size_t i = 0; i < n; i++) pccl__szp_store(dst, i, q[i], step, t);
}

#endif /* PCCL_SZP_BLOCK_H */
