/* half.h - conversions between float32 and the 16-bit float formats
 * (IEEE binary16 and bfloat16), rounding to nearest even. Written without
 * branches on data where possible so the reduction loops vectorize; shared
 * with the CUDA kernels (PCCL_HD), which so round exactly as the CPU does. */
#ifndef PCCL_HALF_H
#define PCCL_HALF_H

#include <stdint.h>
#include <string.h>

#include "hd.h"

PCCL_HD uint32_t pccl_f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof(u));
  return u;
}

PCCL_HD float pccl_bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof(f));
  return f;
}

PCCL_HD float pccl_bf16_to_f32(uint16_t h) { return pccl_bits_f32((uint32_t)h << 16); }

/* With `canonical` (a constant, folded away) every NaN becomes the one
 * quiet NaN (0x7FC0, float16 0x7E00), as arithmetic results must be
 * (elem.h); without, a NaN keeps its sign and payload, made quiet. */
PCCL_HD uint16_t pccl__f32_to_bf16(float f, int canonical) {
  uint32_t u = pccl_f32_bits(f);
  uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
  uint32_t nan = canonical ? 0x7FC0u : (u >> 16) | 0x40u; /* quiet */
  return (uint16_t)((u & 0x7FFFFFFFu) > 0x7F800000u ? nan : rounded);
}

PCCL_HD uint16_t pccl_f32_to_bf16(float f) { return pccl__f32_to_bf16(f, 0); }
PCCL_HD uint16_t pccl_f32_to_bf16_canon(float f) { return pccl__f32_to_bf16(f, 1); }

PCCL_HD float pccl_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t em = h & 0x7FFFu;
#if defined(__CUDA_ARCH__)
  /* The GPU's conversion instruction is exact too; it only does not keep a
   * NaN's payload. The bit code below cost a third of the float16
   * reduction's rate (0.67 of the device copy on an H200). */
  float hw;
  asm("cvt.f32.f16 %0, %1;" : "=f"(hw) : "h"(h));
  return em > 0x7C00u ? pccl_bits_f32(sign | (em << 13) | 0x7F800000u) : hw;
#endif
  uint32_t normal = (em << 13) + ((127u - 15u) << 23);
  uint32_t special = (em << 13) | 0x7F800000u; /* Inf / NaN keep their payload */
  /* Subnormals and zero: the 10-bit mantissa times 2^-24, exact in float. */
  uint32_t sub = pccl_f32_bits((float)em * 0x1p-24f);
  uint32_t mag = em >= 0x7C00u ? special : em >= 0x0400u ? normal : sub;
  return pccl_bits_f32(sign | mag);
}

PCCL_HD uint16_t pccl__f32_to_f16(float f, int canonical) {
  uint32_t u = pccl_f32_bits(f);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t x = u & 0x7FFFFFFFu;
  uint32_t nan = 0x7E00u | ((x >> 13) & 0x3FFu);
#if defined(__CUDA_ARCH__)
  /* cvt.rn rounds to nearest even, overflow to Inf, as below; NaN apart */
  unsigned short hw;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(hw) : "f"(f));
  return (uint16_t)(x > 0x7F800000u ? (canonical ? 0x7E00u : sign | nan) : hw);
#endif
  /* Normal range: rebias the exponent and round the 13 dropped bits. */
  uint32_t normal = (x - ((127u - 15u) << 23) + 0xFFFu + ((x >> 13) & 1u)) >> 13;
  /* Below 2^-14: the subnormal mantissa is x * 2^24 rounded to an integer;
   * adding and removing 2^23 rounds to nearest even in float arithmetic.
   * Larger inputs are clamped first so the conversion to integer is defined. */
  float scaled = pccl_bits_f32(x < 0x38800000u ? x : 0x38800000u) * 0x1p24f;
  uint32_t sub = (uint32_t)((scaled + 0x1p23f) - 0x1p23f);
  uint32_t mag = x > 0x7F800000u   ? nan
                 : x >= 0x477FF000u ? 0x7C00u /* rounds to Inf (>= 65520) */
                 : x >= 0x38800000u ? normal
                                    : sub;
  return (uint16_t)(canonical && x > 0x7F800000u ? 0x7E00u : sign | mag);
}

PCCL_HD uint16_t pccl_f32_to_f16(float f) { return pccl__f32_to_f16(f, 0); }
PCCL_HD uint16_t pccl_f32_to_f16_canon(float f) { return pccl__f32_to_f16(f, 1); }

#endif /* PCCL_HALF_H */
