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
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "codec.h"
#include "errmsg.h"
#include "half.h"
#include "parts.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "szp writes its planes in host order and assumes a little-endian host"
#endif

#define SZP_B 32        /* elements per block */
#define SZP_RAW 255     /* block code: stored raw */
#define SZP_ORDER2 165 /* first code of an order-2 block */
#define SZP_W2MAX 17    /* widest order-2 block: 165 + 17 * 5 + 4 = 254 */
#define SZP_QMAX 0x1p30 /* |q| bound: differences then fit in 32 bits */
#define SZP_INLINE static inline __attribute__((always_inline))

typedef struct {
  double step, inv, bound;
} szp_quant_t;

static szp_quant_t quant_of(double bound) {
  double step = bound * (2.0 - 0x1p-5);
  return (szp_quant_t){step, 1.0 / step, bound};
}

static size_t nblocks(size_t count) { return count / SZP_B + (count % SZP_B != 0); }

/* Bytes a block occupies, from its code alone (every code 0..255 is valid). */
static size_t block_bytes(unsigned code, size_t n, size_t esize) {
  if (code == SZP_RAW) return n * esize;
  if (code >= SZP_ORDER2) return 2 * ((code - SZP_ORDER2) % 5) + 4 * ((code - SZP_ORDER2) / 5);
  return code % 5 + 4 * (code / 5);
}

SZP_INLINE double load(const void *p, size_t i, pccl_dtype_t t) {
  switch (t) {
  case PCCL_FLOAT32: return ((const float *)p)[i];
  case PCCL_FLOAT64: return ((const double *)p)[i];
  case PCCL_FLOAT16: return pccl_f16_to_f32(((const uint16_t *)p)[i]);
  default: return pccl_bf16_to_f32(((const uint16_t *)p)[i]);
  }
}

/* Writes element i of the decoded array; decoded() below must give the
 * same value, since the encoder checks the bound on it. */
SZP_INLINE void store(void *p, size_t i, int32_t q, double step, pccl_dtype_t t) {
  double y = q * step;
  switch (t) {
  case PCCL_FLOAT32: ((float *)p)[i] = (float)y; break;
  case PCCL_FLOAT64: ((double *)p)[i] = y; break;
  case PCCL_FLOAT16: ((uint16_t *)p)[i] = pccl_f32_to_f16((float)y); break;
  default: ((uint16_t *)p)[i] = pccl_f32_to_bf16((float)y); break;
  }
}

static uint32_t zigzag(uint32_t d) { return (d << 1) ^ (0u - (d >> 31)); }
static uint32_t unzigzag(uint32_t z) { return (z >> 1) ^ (0u - (z & 1u)); }
static unsigned bit_width(uint32_t v) { return v ? 32u - (unsigned)__builtin_clz(v) : 0u; }

/* The value the decoder writes for q, as a double (no store). */
SZP_INLINE double decoded(int32_t q, double step, pccl_dtype_t t) {
  double y = q * step;
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
SZP_INLINE int quantize(const void *src, size_t n, pccl_dtype_t t, const szp_quant_t *qz,
                        int32_t *q) {
  double x[SZP_B];
  int bad = 0;
  for (size_t i = 0; i < n; i++) x[i] = load(src, i, t);
  for (size_t i = 0; i < n; i++) {
    double s = x[i] * qz->inv;
    int in = fabs(s) < SZP_QMAX; /* false for NaN and Inf */
    bad |= !in;
    q[i] = (int32_t)(in ? (s + 0x1.8p52) - 0x1.8p52 : 0.0); /* round to nearest even */
  }
  for (size_t i = 0; i < n; i++) bad |= !(fabs(decoded(q[i], qz->step, t) - x[i]) <= qz->bound);
  for (size_t i = n; i < SZP_B; i++) q[i] = q[n - 1];
  return bad;
}

static void put_le(uint8_t *p, uint32_t v, unsigned nbytes) {
  for (unsigned i = 0; i < nbytes; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_le(const uint8_t *p, unsigned nbytes) {
  uint32_t v = 0;
  for (unsigned i = 0; i < nbytes; i++) v |= (uint32_t)p[i] << (8 * i);
  return v;
}

#ifdef __SSE2__
/* Plane b is the sign bits of the 32 values shifted left by 31 - b. */
static void pack_planes(const uint32_t *z, unsigned w, uint8_t *out) {
  __m128i v[SZP_B / 4];
  for (int j = 0; j < SZP_B / 4; j++) v[j] = _mm_loadu_si128((const __m128i *)(z + 4 * j));
  for (unsigned b = 0; b < w; b++) {
    __m128i shift = _mm_cvtsi32_si128((int)(31 - b));
    uint32_t plane = 0;
    for (int j = 0; j < SZP_B / 4; j++)
      plane |= (uint32_t)_mm_movemask_ps(_mm_castsi128_ps(_mm_sll_epi32(v[j], shift))) << (4 * j);
    memcpy(out + 4 * b, &plane, 4);
  }
}

/* Lane i of the result gets bit i of each plane: select lanes by mask. */
static void unpack_planes(const uint8_t *in, unsigned w, uint32_t *z) {
  __m128i acc[SZP_B / 4], lane[SZP_B / 4];
  for (int j = 0; j < SZP_B / 4; j++) {
    acc[j] = _mm_setzero_si128();
    lane[j] = _mm_setr_epi32(1 << (4 * j), 2 << (4 * j), 4 << (4 * j), (int)(8u << (4 * j)));
  }
  for (unsigned b = 0; b < w; b++) {
    uint32_t plane;
    memcpy(&plane, in + 4 * b, 4);
    __m128i p = _mm_set1_epi32((int)plane), bit = _mm_set1_epi32((int)(1u << b));
    for (int j = 0; j < SZP_B / 4; j++) {
      __m128i hit = _mm_cmpeq_epi32(_mm_and_si128(p, lane[j]), lane[j]);
      acc[j] = _mm_or_si128(acc[j], _mm_and_si128(hit, bit));
    }
  }
  for (int j = 0; j < SZP_B / 4; j++) _mm_storeu_si128((__m128i *)(z + 4 * j), acc[j]);
}
#else
static void pack_planes(const uint32_t *z, unsigned w, uint8_t *out) {
  for (unsigned b = 0; b < w; b++) {
    uint32_t plane = 0;
    for (int i = 0; i < SZP_B; i++) plane |= ((z[i] >> b) & 1u) << i;
    memcpy(out + 4 * b, &plane, 4);
  }
}

static void unpack_planes(const uint8_t *in, unsigned w, uint32_t *z) {
  memset(z, 0, SZP_B * sizeof(uint32_t));
  for (unsigned b = 0; b < w; b++) {
    uint32_t plane;
    memcpy(&plane, in + 4 * b, 4);
    for (int i = 0; i < SZP_B; i++) z[i] |= ((plane >> i) & 1u) << b;
  }
}
#endif

static unsigned byte_width(uint32_t v) { return (bit_width(v) + 7) / 8; }

/* The two predictions of a block, zigzag-coded: order 1 (differences, z1[1..])
 * and order 2 (differences of differences, z2[2..]); their plane counts. */
typedef struct {
  uint32_t z1[SZP_B], z2[SZP_B];
  unsigned w1, w2; /* w2 > SZP_W2MAX: order 2 not usable */
} szp_pred_t;

SZP_INLINE void predict(const int32_t *q, szp_pred_t *p) {
  uint32_t any1 = 0;
  uint64_t any2 = 0;
  p->z1[0] = p->z2[0] = p->z2[1] = 0;
  for (int i = 1; i < SZP_B; i++) {
    p->z1[i] = zigzag((uint32_t)q[i] - (uint32_t)q[i - 1]);
    any1 |= p->z1[i];
  }
  for (int i = 2; i < SZP_B; i++) { /* |q| < 2^30: r fits in 33 bits, so 64 */
    int64_t r = ((int64_t)q[i] - q[i - 1]) - ((int64_t)q[i - 1] - q[i - 2]);
    uint64_t zz = ((uint64_t)r << 1) ^ (0 - ((uint64_t)r >> 63));
    p->z2[i] = (uint32_t)zz;
    any2 |= zz;
  }
  p->w1 = bit_width(any1);
  p->w2 = any2 >> 32 ? 64 : bit_width((uint32_t)any2);
}

/* Encodes one block into out (room for n * esize bytes); returns its size. */
SZP_INLINE size_t encode_block(const void *src, size_t n, pccl_dtype_t t, size_t esize,
                               const szp_quant_t *qz, uint8_t *out, uint8_t *code) {
  int32_t q[SZP_B];
  szp_pred_t p;
  int bad = quantize(src, n, t, qz, q);
  predict(q, &p);
  uint32_t z0 = zigzag((uint32_t)q[0]);
  unsigned len1 = byte_width(z0), len2 = len1 > byte_width(p.z1[1]) ? len1 : byte_width(p.z1[1]);
  size_t size1 = len1 + 4 * (size_t)p.w1;
  size_t size2 = p.w2 <= SZP_W2MAX ? 2 * len2 + 4 * (size_t)p.w2 : SIZE_MAX;
  size_t size = size2 < size1 ? size2 : size1;
  if (bad || size >= n * esize) {
    *code = SZP_RAW;
    memcpy(out, src, n * esize);
    return n * esize;
  }
  if (size2 < size1) {
    *code = (uint8_t)(SZP_ORDER2 + p.w2 * 5 + len2);
    put_le(out, z0, len2);
    put_le(out + len2, p.z1[1], len2);
    pack_planes(p.z2, p.w2, out + 2 * len2);
  } else {
    *code = (uint8_t)(p.w1 * 5 + len1);
    put_le(out, z0, len1);
    pack_planes(p.z1, p.w1, out + len1);
  }
  return size;
}

SZP_INLINE void decode_block(const uint8_t *in, unsigned code, size_t n, pccl_dtype_t t,
                             size_t esize, double step, void *dst) {
  if (code == SZP_RAW) {
    memcpy(dst, in, n * esize);
    return;
  }
  int order2 = code >= SZP_ORDER2;
  unsigned c = order2 ? code - SZP_ORDER2 : code, w = c / 5, len = c % 5;
  uint32_t z[SZP_B];
  unpack_planes(in + (order2 ? 2 * len : len), w, z);
  int32_t q[SZP_B];
  /* Unsigned arithmetic: corrupt input wraps instead of overflowing. */
  uint32_t acc = unzigzag(get_le(in, len));
  uint32_t d = order2 ? unzigzag(get_le(in + len, len)) : 0;
  q[0] = (int32_t)acc;
  for (size_t i = 1; i < n; i++) {
    d = order2 ? (i == 1 ? d : d + unzigzag(z[i])) : unzigzag(z[i]);
    q[i] = (int32_t)(acc += d);
  }
  for (size_t i = 0; i < n; i++) store(dst, i, q[i], step, t);
}

/* Blocks [b0, b1) of src: codes to codes[b0..], data from out; returns the
 * bytes of data written, or SIZE_MAX when cap would be exceeded. */
SZP_INLINE size_t compress_blocks(const void *src, size_t count, size_t b0, size_t b1,
                                  pccl_dtype_t t, size_t esize, const szp_quant_t *qz,
                                  uint8_t *codes, uint8_t *out, size_t cap) {
  size_t pos = 0;
  uint8_t spill[SZP_B * sizeof(double)];
  for (size_t b = b0; b < b1; b++) {
    size_t first = b * SZP_B, n = count - first < SZP_B ? count - first : SZP_B;
    const uint8_t *in = (const uint8_t *)src + first * esize;
    if (cap - pos >= n * esize) {
      pos += encode_block(in, n, t, esize, qz, out + pos, &codes[b]);
      continue;
    }
    size_t size = encode_block(in, n, t, esize, qz, spill, &codes[b]);
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
    size_t first = b * SZP_B, n = count - first < SZP_B ? count - first : SZP_B;
    decode_block(data + pos, codes[b], n, t, esize, step, (uint8_t *)dst + first * esize);
    pos += block_bytes(codes[b], n, esize);
  }
}

/* One instance of each loop per element type, so the conversions inline. */
#define SZP_TYPED(name, T)                                                                     \
  static size_t compress_##name(const void *src, size_t count, size_t b0, size_t b1,          \
                                const szp_quant_t *qz, uint8_t *codes, uint8_t *out, size_t cap) { \
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
  size_t (*compress)(const void *, size_t, size_t, size_t, const szp_quant_t *, uint8_t *,
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
  size_t nb = nblocks(a->count), raw = a->count * a->esize;
  return raw > SIZE_MAX - nb - 1 ? 0 : nb + raw + (a->count == 0);
}

size_t pccl__codec_slot_bytes(size_t count, size_t esize) {
  pccl_codec_args_t a = {count, PCCL_FLOAT32, esize, 1.0};
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
  szp_quant_t qz;
  size_t nb;
  int parts;
  size_t written[PCCL_CODEC_MAX_THREADS];
} szp_job_t;

static size_t part_first(const szp_job_t *j, int i) { return j->nb * (size_t)i / (size_t)j->parts; }

static size_t raw_bytes(const pccl_codec_args_t *a, size_t b0, size_t b1) {
  size_t end = b1 * SZP_B < a->count ? b1 * SZP_B : a->count;
  return (end - b0 * SZP_B) * a->esize;
}

static int parts_for(size_t nb, int threads) {
  size_t most = nb / SZP_PART_BLOCKS;
  return most < 2 ? 1 : (int)(most < (size_t)threads ? most : (size_t)threads);
}

static void compress_part(void *arg, int i) {
  szp_job_t *j = arg;
  size_t b0 = part_first(j, i), b1 = part_first(j, i + 1);
  j->written[i] = typed(j->a->dtype)->compress(j->src, j->a->count, b0, b1, &j->qz, j->codes,
                                               j->data + b0 * SZP_B * j->a->esize,
                                               raw_bytes(j->a, b0, b1));
}

static pccl_status_t szp_compress(const pccl_codec_args_t *a, const void *src, uint8_t *dst,
                                  size_t cap, size_t *size) {
  size_t nb = nblocks(a->count);
  int threads;
  pccl_status_t st = pccl__codec_threads("pccl_compress", &threads);
  if (st != PCCL_OK) return st;
  if (cap < nb) return PCCL_ERR_INVALID_ARGUMENT;
  szp_job_t j = {.a = a, .src = src, .codes = dst, .data = dst + nb, .qz = quant_of(a->bound), .nb = nb};
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
    memmove(j.data + pos, j.data + part_first(&j, i) * SZP_B * a->esize, j.written[i]);
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
  size_t nb = nblocks(a->count);
  int threads;
  pccl_status_t st = pccl__codec_threads("pccl_decompress", &threads);
  if (st != PCCL_OK) return st;
  if (size < nb)
    return pccl__thread_error_set(PCCL_ERR_CORRUPT, "pccl_decompress",
                                  "szp: %zu payload bytes cannot hold %zu block codes", size, nb);
  szp_job_t j = {.a = a, .codes_in = src, .data_in = src + nb, .dst = dst,
                 .qz = quant_of(a->bound), .nb = nb, .parts = parts_for(nb, threads)};
  size_t data_off[PCCL_CODEC_MAX_THREADS + 1];
  /* Validate the whole layout before writing: the sizes must sum to the
   * payload. The walk also finds where each part's data starts. */
  size_t need = nb;
  for (int i = 0, b = 0; i < j.parts; i++) {
    data_off[i] = need - nb;
    for (; (size_t)b < part_first(&j, i + 1); b++) {
      size_t bytes = block_bytes(src[b], raw_bytes(a, (size_t)b, (size_t)b + 1) / a->esize, a->esize);
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
