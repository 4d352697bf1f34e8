/* szp.c - pccl's error-bounded lossy codec for float arrays, in the cuSZp
 * family (fixed-size blocks, quantization, in-block prediction, fixed-length
 * bit packing per block).
 *
 * Quantization: q = round(x / step) with step = (2 - 2^-5) x bound, a hair
 * under twice the bound so that rounding the reconstruction q x step to the
 * element type (float32, float16, bfloat16) stays inside the bound. The
 * encoder computes exactly what the decoder will produce and checks it:
 * a block with NaN, Inf, |q| >= 2^30, or any element whose reconstruction
 * misses the bound (e.g. float16 values far above the bound) is stored raw,
 * bit-exact. That check, not the arithmetic, is what guarantees the bound.
 *
 * Prediction, inside each block of 32 elements, whichever codes smaller:
 * order 1, q[i] - q[i-1] (1-D Lorenzo), or order 2, the difference of
 * successive differences (exact on locally linear data: smooth fields leave
 * residuals of a unit or two where differences are tens). The first value
 * q[0] (and for order 2 the first difference) is stored on its own in 0-4
 * bytes, so one large value does not widen the whole block. The residuals
 * are zigzag-coded and packed as w bit planes of 32 bits (plane b holds bit
 * b of every element), w being the block's widest residual.
 *
 * Payload (after the 24-byte container header):
 *   codes   one byte per block: 255 = raw; 0..164 = order 1, w * 5 + L
 *           (w <= 32 planes, L <= 4 bytes of q[0]); 165..254 = order 2,
 *           165 + w * 5 + L (w <= 17, L bytes each for q[0] and q[1]-q[0])
 *   data    per block in order: raw elements, or the L-byte little-endian
 *           zigzag values then w little-endian uint32 planes
 * A block's size follows from its code alone, so the decoder validates the
 * whole layout before it writes anything, and an all-zero block costs its
 * code byte only. A block is raw also whenever coding would not be smaller.
 *
 * The blocks themselves are coded by szp_block.h, which the GPU codec
 * (src/cuda/szp.cu) shares; this file runs them over an array, in parts on
 * threads, and validates streams before decoding.
 */
#include <stdint.h>
#include <string.h>

#include "codec.h"
#include "errmsg.h"
#include "parts.h"
#include "szp_block.h" /* the blocks themselves, shared with src/cuda/szp.cu */

#define SZP_INLINE static inline __attribute__((always_inline))

/* Blocks [b0, b1) of src: codes to codes[b0..], data from out; returns the
 * bytes of data written, or SIZE_MAX when cap would be exceeded. */
SZP_INLINE size_t compress_blocks(const void *src, size_t count, size_t b0, size_t b1,
                                  pccl_dtype_t t, size_t esize, const pccl__szp_quant_t *qz,
                                  uint8_t *codes, uint8_t *out, size_t cap) {
  size_t pos = 0;
  uint8_t spill[PCCL_SZP_B * sizeof(double)];
  for (size_t b = b0; b < b1; b++) {
    size_t first = b * PCCL_SZP_B, n = pccl__szp_block_count(count, b);
    const uint8_t *in = (const uint8_t *)src + first * esize;
    if (cap - pos >= n * esize) {
      pos += pccl__szp_encode(in, n, t, esize, qz, out + pos, &codes[b]);
      continue;
    }
    size_t size = pccl__szp_encode(in, n, t, esize, qz, spill, &codes[b]);
    if (size > cap - pos) return SIZE_MAX;
    memcpy(out + pos, spill, size);
    pos += size;
  }
  return pos;
}

/* Blocks [b0, b1), whose data starts at `data`. */
SZP_INLINE void decompress_blocks(const uint8_t *codes, const uint8_t *data, size_t count,
                                  size_t b0, size_t b1, pccl_dtype_t t, size_t esize, double step,
                                  void *dst) {
  size_t pos = 0;
  for (size_t b = b0; b < b1; b++) {
    size_t first = b * PCCL_SZP_B, n = pccl__szp_block_count(count, b);
    pccl__szp_decode(data + pos, codes[b], n, t, esize, step, (uint8_t *)dst + first * esize);
    pos += pccl__szp_block_bytes(codes[b], n, esize);
  }
}

/* One instance of each loop per element type, so the conversions inline. */
#define SZP_TYPED(name, T)                                                                     \
  static size_t compress_##name(const void *src, size_t count, size_t b0, size_t b1,          \
                                const pccl__szp_quant_t *qz, uint8_t *codes, uint8_t *out, size_t cap) { \
    return compress_blocks(src, count, b0, b1, T, pccl_dtype_size(T), qz, codes, out, cap);   \
  }                                                                                            \
  static void decompress_##name(const uint8_t *codes, const uint8_t *data, size_t count,      \
                                size_t b0, size_t b1, double step, void *dst) {               \
    decompress_blocks(codes, data, count, b0, b1, T, pccl_dtype_size(T), step, dst);          \
  }
SZP_TYPED(f32, PCCL_FLOAT32)
SZP_TYPED(f64, PCCL_FLOAT64)
SZP_TYPED(f16, PCCL_FLOAT16)
SZP_TYPED(bf16, PCCL_BFLOAT16)

typedef struct {
  size_t (*compress)(const void *, size_t, size_t, size_t, const pccl__szp_quant_t *, uint8_t *,
                     uint8_t *, size_t);
  void (*decompress)(const uint8_t *, const uint8_t *, size_t, size_t, size_t, double, void *);
} szp_typed_t;

static const szp_typed_t *typed(pccl_dtype_t t) {
  static const szp_typed_t f32 = {compress_f32, decompress_f32}, f64 = {compress_f64, decompress_f64},
                           f16 = {compress_f16, decompress_f16}, bf16 = {compress_bf16, decompress_bf16};
  return t == PCCL_FLOAT32 ? &f32 : t == PCCL_FLOAT64 ? &f64 : t == PCCL_FLOAT16 ? &f16 : &bf16;
}

static int szp_available(void) { return 1; }

static size_t szp_bound(const pccl_codec_args_t *a) {
  size_t nb = pccl__szp_nblocks(a->count), raw = a->count * a->esize;
  return raw > SIZE_MAX - nb - 1 ? 0 : nb + raw + (a->count == 0);
}

size_t pccl__codec_slot_bytes(size_t count, size_t esize) {
  pccl_codec_args_t a = {count, PCCL_FLOAT32, esize, 1.0, {count, 1, 1}};
  return PCCL_CODEC_HEADER + szp_bound(&a);
}

/* Parts of a call run on threads (parts.h): part i holds blocks
 * [i * nb / parts, (i+1) * nb / parts), at least SZP_PART_BLOCKS each. A part
 * writes its codes in place and its data at the raw offset of its first
 * block (data never exceeds raw), then the parts are moved together, so the
 * stream is byte for byte the one a single thread writes. */
#define SZP_PART_BLOCKS 8192 /* 256K elements */

typedef struct {
  const pccl_codec_args_t *a;
  const void *src;
  uint8_t *codes, *data;            /* compress: codes, and where the data windows start */
  const uint8_t *codes_in, *data_in; /* decompress: codes, payload data */
  const size_t *data_off;  /* decompress: each part's first data byte */
  void *dst;
  pccl__szp_quant_t qz;
  size_t nb;
  int parts;
  size_t written[PCCL_CODEC_MAX_THREADS];
} szp_job_t;

static size_t part_first(const szp_job_t *j, int i) { return j->nb * (size_t)i / (size_t)j->parts; }

static size_t raw_bytes(const pccl_codec_args_t *a, size_t b0, size_t b1) {
  size_t end = b1 * PCCL_SZP_B < a->count ? b1 * PCCL_SZP_B : a->count;
  return (end - b0 * PCCL_SZP_B) * a->esize;
}

static int parts_for(size_t nb, int threads) {
  size_t most = nb / SZP_PART_BLOCKS;
  return most < 2 ? 1 : (int)(most < (size_t)threads ? most : (size_t)threads);
}

static void compress_part(void *arg, int i) {
  szp_job_t *j = arg;
  size_t b0 = part_first(j, i), b1 = part_first(j, i + 1);
  j->written[i] = typed(j->a->dtype)->compress(j->src, j->a->count, b0, b1, &j->qz, j->codes,
                                               j->data + b0 * PCCL_SZP_B * j->a->esize,
                                               raw_bytes(j->a, b0, b1));
}

static pccl_status_t szp_compress(const pccl_codec_args_t *a, const void *src, uint8_t *dst,
                                  size_t cap, size_t *size) {
  size_t nb = pccl__szp_nblocks(a->count);
  int threads;
  pccl_status_t st = pccl__codec_threads("pccl_compress", &threads);
  if (st != PCCL_OK) return st;
  if (cap < nb) return PCCL_ERR_INVALID_ARGUMENT;
  szp_job_t j = {.a = a, .src = src, .codes = dst, .data = dst + nb, .qz = pccl__szp_quant_of(a->bound), .nb = nb};
  /* Threads need each part's raw-size window: a full-bound capacity. */
  j.parts = cap - nb >= a->count * a->esize ? parts_for(nb, threads) : 1;
  if (j.parts == 1) {
    size_t data = typed(a->dtype)->compress(src, a->count, 0, nb, &j.qz, dst, dst + nb, cap - nb);
    if (data == SIZE_MAX) return PCCL_ERR_INVALID_ARGUMENT;
    *size = nb + data;
    return PCCL_OK;
  }
  pccl__run_parts(j.parts, compress_part, &j);
  size_t pos = j.written[0];
  for (int i = 1; i < j.parts; i++) {
    memmove(j.data + pos, j.data + part_first(&j, i) * PCCL_SZP_B * a->esize, j.written[i]);
    pos += j.written[i];
  }
  *size = nb + pos;
  return PCCL_OK;
}

static void decompress_part(void *arg, int i) {
  szp_job_t *j = arg;
  typed(j->a->dtype)->decompress(j->codes_in, j->data_in + j->data_off[i], j->a->count, part_first(j, i),
                                 part_first(j, i + 1), j->qz.step, j->dst);
}

static pccl_status_t szp_decompress(const pccl_codec_args_t *a, const uint8_t *src, size_t size,
                                    void *dst) {
  size_t nb = pccl__szp_nblocks(a->count);
  int threads;
  pccl_status_t st = pccl__codec_threads("pccl_decompress", &threads);
  if (st != PCCL_OK) return st;
  if (size < nb)
    return pccl__thread_error_set(PCCL_ERR_CORRUPT, "pccl_decompress",
                                  "szp: %zu payload bytes cannot hold %zu block codes", size, nb);
  szp_job_t j = {.a = a, .codes_in = src, .data_in = src + nb, .dst = dst,
                 .qz = pccl__szp_quant_of(a->bound), .nb = nb, .parts = parts_for(nb, threads)};
  size_t data_off[PCCL_CODEC_MAX_THREADS + 1];
  /* Validate the whole layout before writing: the sizes must sum to the
   * payload. The walk also finds where each part's data starts. */
  size_t need = nb;
  for (int i = 0, b = 0; i < j.parts; i++) {
    data_off[i] = need - nb;
    for (; (size_t)b < part_first(&j, i + 1); b++) {
      size_t bytes = pccl__szp_block_bytes(src[b], raw_bytes(a, (size_t)b, (size_t)b + 1) / a->esize, a->esize);
      if (bytes > size - need)
        return pccl__thread_error_set(PCCL_ERR_CORRUPT, "pccl_decompress",
                                      "szp: block %d runs past the end (%zu bytes)", b, size);
      need += bytes;
    }
  }
  if (need != size)
    return pccl__thread_error_set(PCCL_ERR_CORRUPT, "pccl_decompress",
                                  "szp: %zu payload bytes, the blocks account for %zu", size, need);
  j.data_off = data_off;
  pccl__run_parts(j.parts, decompress_part, &j);
  return PCCL_OK;
}

const pccl_codec_ops_t pccl__codec_szp = {"szp", szp_available, szp_bound, szp_compress,
                                          szp_decompress};
