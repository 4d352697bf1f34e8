/* test_codec.c - the error-bounded codecs through the public API.
 *
 * Every check is against a reference computed here from the original data:
 * the 16-bit conversions are this file's own (not src/kernels/half.h), and
 * errors are measured in long double. Covered: round trips of every dataset
 * x dtype x bound x count (each element within the bound, NaN kept bit-exact
 * by szp, +-Inf kept), stream sizes against pccl_compress_bound, the header
 * pccl_compressed_info reads back, compression ratios (sanity floors), every
 * documented argument error, and damaged streams (every truncation, byte
 * flips, header fields) refused or decoded without writing outside dst.
 * szi runs the same checks on float32 and float64 with shaped arrays, and
 * its own (test_szi). ZFP is checked where the build has it. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datagen.h"
#include "errmsg.h"
#include "pccl.h"

static int passed, failed;

#define EXPECT_ST(call, want) \
  do { pccl_status_t st_ = (call); expect(st_ == (want), "%s: status %d, want %d", #call, st_, want); } while (0)

static void expect(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A failure prints the library's detail from the calls since the last check. */
static void expect(int ok, const char *fmt, ...) {
  char *detail = pccl__thread_error();
  if (ok) {
    passed++;
  } else {
    failed++;
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL ");
    vprintf(fmt, ap);
    va_end(ap);
    printf(detail[0] ? " (%s)\n" : "\n", detail);
  }
  detail[0] = '\0';
}

/* ---- reference conversions --------------------------------------------- */

/* double -> binary16 (ebits 5, mbits 10) or bfloat16 (8, 7), rounding to
 * nearest even through nearbyint on exactly scaled values. */
static uint16_t to_half(double d, int ebits, int mbits) {
  const int bias = (1 << (ebits - 1)) - 1;
  const unsigned sign = signbit(d) ? 1u << (ebits + mbits) : 0u;
  const unsigned expmask = ((1u << ebits) - 1) << mbits;
  if (isnan(d)) return (uint16_t)(sign | expmask | 1u << (mbits - 1));
  double a = fabs(d);
  if (a >= ldexp(2.0 - ldexp(1.0, -(mbits + 1)), bias)) return (uint16_t)(sign | expmask);
  int e;
  frexp(a, &e); /* a in [2^(e-1), 2^e) */
  int E = e - 1;
  if (a == 0 || E < 1 - bias) /* subnormal: units of 2^(1-bias-mbits); 2^mbits is the least normal */
    return (uint16_t)(sign | (unsigned)nearbyint(ldexp(a, bias - 1 + mbits)));
  unsigned m = (unsigned)nearbyint(ldexp(a, mbits - E)); /* 2^mbits .. 2^(mbits+1) */
  return (uint16_t)(sign | ((((unsigned)(E + bias)) << mbits) + (m - (1u << mbits))));
}

static double from_half(uint16_t h, int ebits, int mbits) {
  const int bias = (1 << (ebits - 1)) - 1;
  unsigned e = (h >> mbits) & ((1u << ebits) - 1), m = h & ((1u << mbits) - 1);
  double s = (h >> (ebits + mbits)) ? -1.0 : 1.0;
  if (e == (1u << ebits) - 1) return m ? NAN : s * INFINITY;
  if (e == 0) return s * ldexp(m, 1 - bias - mbits);
  return s * ldexp(m + (1u << mbits), (int)e - bias - mbits);
}

static const pccl_dtype_t dtypes[4] = {PCCL_FLOAT32, PCCL_FLOAT64, PCCL_FLOAT16, PCCL_BFLOAT16};

static size_t esize_of(pccl_dtype_t t) { return t == PCCL_FLOAT64 ? 8 : t == PCCL_FLOAT32 ? 4 : 2; }

/* x[0..n) converted to dtype t into out. */
static void to_dtype(const double *x, size_t n, pccl_dtype_t t, void *out) {
  for (size_t i = 0; i < n; i++) switch (t) {
    case PCCL_FLOAT32: ((float *)out)[i] = (float)x[i]; break;
    case PCCL_FLOAT64: ((double *)out)[i] = x[i]; break;
    case PCCL_FLOAT16: ((uint16_t *)out)[i] = to_half(x[i], 5, 10); break;
    default: ((uint16_t *)out)[i] = to_half(x[i], 8, 7); break;
    }
}

static double elem(const void *p, size_t i, pccl_dtype_t t) {
  switch (t) {
  case PCCL_FLOAT32: return ((const float *)p)[i];
  case PCCL_FLOAT64: return ((const double *)p)[i];
  case PCCL_FLOAT16: return from_half(((const uint16_t *)p)[i], 5, 10);
  default: return from_half(((const uint16_t *)p)[i], 8, 7);
  }
}

static int same_bits(const void *a, const void *b, size_t i, size_t es) {
  return memcmp((const uint8_t *)a + i * es, (const uint8_t *)b + i * es, es) == 0;
}

static void test_converters(void) {
  int bad = 0;
  for (unsigned h = 0; h < 65536; h++) {
    double f = from_half((uint16_t)h, 5, 10), b = from_half((uint16_t)h, 8, 7);
    bad += !isnan(f) && to_half(f, 5, 10) != h;
    bad += !isnan(b) && to_half(b, 8, 7) != h;
  }
  expect(bad == 0, "reference half converters: %d of 2 x 65536 values do not round-trip", bad);
  expect(to_half(1.0, 5, 10) == 0x3C00 && to_half(65504, 5, 10) == 0x7BFF &&
             to_half(65519.99, 5, 10) == 0x7BFF && to_half(65520, 5, 10) == 0x7C00 &&
             to_half(0x1p-24, 5, 10) == 1 && to_half(0x1p-25, 5, 10) == 0 &&
             to_half(0x3p-25, 5, 10) == 2 && to_half(-2.0, 5, 10) == 0xC000 &&
             to_half(1 + 0x1p-11, 5, 10) == 0x3C00 && to_half(1 + 0x3p-11, 5, 10) == 0x3C02,
         "reference float16 converter: known values");
  expect(to_half(1.0, 8, 7) == 0x3F80 && to_half(1 + 0x1p-8, 8, 7) == 0x3F80 &&
             to_half(1 + 0x3p-8, 8, 7) == 0x3F82 && to_half(0x1p-133, 8, 7) == 1 &&
             to_half(-INFINITY, 8, 7) == 0xFF80 && to_half(3.4e38, 8, 7) == 0x7F80,
         "reference bfloat16 converter: known values");
}

/* ---- round trips -------------------------------------------------------- */

#define GUARD 64
#define GUARD_BYTE 0xA5

static uint8_t *guarded(size_t bytes) {
  uint8_t *p = malloc(bytes + GUARD);
  if (p == NULL) abort();
  memset(p, GUARD_BYTE, bytes + GUARD);
  return p;
}

static int guard_intact(const uint8_t *p, size_t bytes) {
  for (size_t i = 0; i < GUARD; i++)
    if (p[bytes + i] != GUARD_BYTE) return 0;
  return 1;
}

/* Elements of dec[0..n) that miss the bound against x (NaN must stay NaN,
 * bit-exact when `nan_bits`; +-Inf must stay); *first gets the first. */
static size_t count_misses(const void *x, const void *dec, size_t n, pccl_dtype_t t, double bound,
                           int nan_bits, size_t *first) {
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) {
    double a = elem(x, i, t), b = elem(dec, i, t);
    int ok = isnan(a)   ? isnan(b) && (!nan_bits || same_bits(x, dec, i, esize_of(t)))
             : isinf(a) ? b == a
                        : fabsl((long double)b - (long double)a) <= (long double)bound;
    if (!ok && bad++ == 0) *first = i;
  }
  return bad;
}

/* Compresses x (n elements of t), checks size, header and every decoded
 * element; returns the compressed size (0 after a failure or a refusal).
 * With may_refuse, PCCL_ERR_UNSUPPORTED (a bound the codec cannot keep,
 * said so) passes too; a bound missed in silence never does. */
static size_t roundtrip_3d(pccl_codec_t c, const void *x, const size_t dims[3], pccl_dtype_t t,
                           double bound, int may_refuse, const char *label) {
  size_t n = dims[0] * dims[1] * dims[2];
  size_t es = esize_of(t), cap = pccl_compress_bound(c, n, t), size = 0;
  expect(cap >= 24, "%s: compress_bound %zu", label, cap);
  if (cap < 24) return 0;
  uint8_t *z = guarded(cap);
  pccl_status_t st = pccl_compress_3d(c, x, dims[0], dims[1], dims[2], t, bound, z, cap, &size);
  expect(st == PCCL_OK || (may_refuse && st == PCCL_ERR_UNSUPPORTED), "%s: compress status %d",
         label, st);
  expect(guard_intact(z, cap), "%s: compress wrote past dst_capacity", label);
  size_t ret = 0;
  if (st != PCCL_OK) goto out;
  expect(size >= 24 && size <= cap, "%s: compressed size %zu, bound %zu", label, size, cap);
  pccl_codec_t ic = PCCL_CODEC_COUNT;
  size_t icount = 0;
  pccl_dtype_t it = PCCL_DTYPE_COUNT;
  double ib = 0;
  st = pccl_compressed_info(z, size, &ic, &icount, &it, &ib);
  expect(st == PCCL_OK && ic == c && icount == n && it == t && memcmp(&ib, &bound, 8) == 0,
         "%s: compressed_info %d: codec %d count %zu dtype %d bound %g", label, st, ic, icount, it, ib);
  uint8_t *d = guarded(n * es);
  st = pccl_decompress(z, size, d, n, t);
  expect(st == PCCL_OK, "%s: decompress status %d", label, st);
  expect(guard_intact(d, n * es), "%s: decompress wrote past dst", label);
  size_t first = 0, bad = st == PCCL_OK ? count_misses(x, d, n, t, bound, c != PCCL_CODEC_ZFP, &first) : 0;
  expect(bad == 0, "%s: %zu of %zu elements miss the bound %g; first [%zu] %.17g -> %.17g", label,
         bad, n, bound, first, bad ? elem(x, first, t) : 0.0, bad ? elem(d, first, t) : 0.0);
  free(d);
  ret = st == PCCL_OK && bad == 0 ? size : 0;
out:
  free(z);
  return ret;
}

static size_t roundtrip_or_refuse(pccl_codec_t c, const void *x, size_t n, pccl_dtype_t t,
                                  double bound, int may_refuse, const char *label) {
  return roundtrip_3d(c, x, (size_t[3]){n, 1, 1}, t, bound, may_refuse, label);
}

static size_t roundtrip(pccl_codec_t c, const void *x, size_t n, pccl_dtype_t t, double bound,
                        const char *label) {
  return roundtrip_or_refuse(c, x, n, t, bound, 0, label);
}

/* What the zfp row documents it takes: float32/float64, finite, zero or normal. */
static int zfp_codable(const void *x, size_t n, pccl_dtype_t t) {
  if (t != PCCL_FLOAT32 && t != PCCL_FLOAT64) return 0;
  double least = t == PCCL_FLOAT32 ? 0x1p-126 : 0x1p-1022;
  for (size_t i = 0; i < n; i++) {
    double v = elem(x, i, t);
    if (!isfinite(v) || (v != 0 && fabs(v) < least)) return 0;
  }
  return 1;
}

/* Every dataset x dtype x bound x count, for szp, szi and zfp. szi codes
 * each count as its shape, and refuses 16-bit types. zfp must keep the
 * bound on what it takes, except that below its precision (the absolute
 * 1e-30) it may refuse instead; the rest it refuses. */
static void test_matrix(void) {
  static const size_t counts[][3] = {{1, 1, 1},    {31, 1, 1},   {32, 1, 1},  {33, 1, 1},
                                     {1000, 1, 1}, {4099, 1, 1}, {40, 30, 20}, {1, 33, 1},
                                     {1, 1, 70},   {9, 1, 13},   {17, 6, 5}};
  static const double rel[6] = {1e-1, 1e-3, 1e-5, 1e-7, 0, 0};
  int zfp = pccl_codec_available(PCCL_CODEC_ZFP);
  for (int kind = 0; kind < PCCL_DATA_COUNT; kind++)
    for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
      size_t n = counts[ci][0] * counts[ci][1] * counts[ci][2];
      double *x = malloc(n * sizeof(double));
      uint8_t *buf = malloc(n * 8);
      for (int bi = 0; bi < 6; bi++) {
        double bound = bi == 4 ? 1e-30 : bi == 5 ? 1e30 : rel[bi];
        pccl_data_fill(kind, x, counts[ci][0], counts[ci][1], counts[ci][2], bound,
                       (uint64_t)(kind * 16 + ci));
        /* Bounds relative to the data's range; "large" data is made for its
         * (absolute) bound, so its bounds stay as they are. */
        if (bi < 4 && kind != PCCL_DATA_LARGE) {
          double lo, hi;
          pccl_data_range(x, n, &lo, &hi);
          double range = hi - lo > 0 ? hi - lo : fmax(fabs(lo), fabs(hi));
          bound *= range > 0 ? range : 1.0;
        }
        for (int ti = 0; ti < 4; ti++) {
          pccl_dtype_t t = dtypes[ti];
          char label[160];
          snprintf(label, sizeof label, "szp %s %s n=%zu bound=%g", pccl_data_name(kind),
                   pccl_dtype_name(t), n, bound);
          to_dtype(x, n, t, buf);
          roundtrip(PCCL_CODEC_SZP, buf, n, t, bound, label);
          memcpy(label, "szi", 3);
          if (esize_of(t) > 2) {
            roundtrip_3d(PCCL_CODEC_SZI, buf, counts[ci], t, bound, 0, label);
          } else {
            size_t size, cap = 4096;
            uint8_t z[4096];
            expect(pccl_compress_bound(PCCL_CODEC_SZI, n, t) == 0 &&
                       pccl_compress(PCCL_CODEC_SZI, buf, n, t, bound, z, cap, &size) == PCCL_ERR_UNSUPPORTED,
                   "%s: 16-bit types are unsupported", label);
          }
          if (!zfp) continue;
          memcpy(label, "zfp", 3);
          if (zfp_codable(buf, n, t)) {
            roundtrip_or_refuse(PCCL_CODEC_ZFP, buf, n, t, bound, bi == 4, label);
            continue;
          }
          size_t size, cap = pccl_compress_bound(PCCL_CODEC_ZFP, n, t);
          uint8_t *z = guarded(cap);
          pccl_status_t st = pccl_compress(PCCL_CODEC_ZFP, buf, n, t, bound, z, cap, &size);
          expect(st == PCCL_ERR_UNSUPPORTED && guard_intact(z, cap),
                 "%s: non-finite, subnormal or 16-bit input gives status %d, want UNSUPPORTED",
                 label, st);
          free(z);
        }
      }
      free(x);
      free(buf);
    }
}

/* szp, and szi where it takes the type: label starts with "szp". */
static void own_codecs(const void *x, size_t n, pccl_dtype_t t, double bound, const char *label) {
  roundtrip(PCCL_CODEC_SZP, x, n, t, bound, label);
  if (esize_of(t) == 2) return;
  char szi[200];
  snprintf(szi, sizeof szi, "szi%s", label + 3);
  roundtrip(PCCL_CODEC_SZI, x, n, t, bound, szi);
}

static uint64_t rng_state = 0x1234567;

static uint64_t rng(void) {
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Random bit patterns (NaN payloads, sNaN, Inf, subnormals included), the
 * special values one by one, and magnitudes at the quantization limit:
 * szp, and szi for float32 and float64. */
static void test_special(void) {
  for (int ti = 0; ti < 4; ti++) {
    pccl_dtype_t t = dtypes[ti];
    size_t es = esize_of(t), n = 3001;
    uint8_t *buf = malloc(n * es);
    for (size_t i = 0; i < n * es; i++) buf[i] = (uint8_t)rng();
    static const double bounds[] = {1e-30, 1e-3, 1.0, 1e30};
    for (int b = 0; b < 4; b++) {
      char label[96];
      snprintf(label, sizeof label, "szp random bits %s bound=%g", pccl_dtype_name(t), bounds[b]);
      own_codecs(buf, n, t, bounds[b], label);
    }
    /* NaN payloads (quiet, signalling, negative) between ordinary values. */
    static const uint64_t nan64[] = {0x7FF8000000000001ull, 0x7FF0000000000001ull,
                                     0xFFF4000000000123ull, 0x7FFFFFFFFFFFFFFFull};
    static const uint32_t nan32[] = {0x7FC00001u, 0x7F800001u, 0xFFA00123u, 0x7FFFFFFFu};
    static const uint16_t nan16[] = {0x7E01u, 0x7C01u, 0xFD23u, 0x7FFFu};
    static const uint16_t nanbf[] = {0x7FC1u, 0x7F81u, 0xFFA3u, 0x7FFFu};
    double *x = malloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++) x[i] = sin(0.01 * (double)i);
    to_dtype(x, n, t, buf);
    for (size_t i = 0; i < n; i += 37) {
      const void *src = t == PCCL_FLOAT64   ? (const void *)&nan64[i % 4]
                        : t == PCCL_FLOAT32 ? (const void *)&nan32[i % 4]
                        : t == PCCL_FLOAT16 ? (const void *)&nan16[i % 4]
                                            : (const void *)&nanbf[i % 4];
      memcpy(buf + i * es, src, es);
    }
    for (size_t i = 5; i < n; i += 101) to_dtype((double[]){i % 2 ? INFINITY : -INFINITY}, 1, t, buf + i * es);
    for (size_t i = 7; i < n; i += 53) to_dtype((double[]){-0.0}, 1, t, buf + i * es);
    char label[96];
    snprintf(label, sizeof label, "szp NaN payloads / Inf / -0 in %s", pccl_dtype_name(t));
    own_codecs(buf, n, t, 1e-3, label);
    /* Around 2^30 x 2 x bound on both sides, alternating signs (widest differences). */
    double bound = 1e-3;
    for (size_t i = 0; i < n; i++)
      x[i] = (i % 2 ? -1.0 : 1.0) * 0x1p31 * bound * (1.0 + ldexp((double)(i % 64) - 32.0, -8));
    to_dtype(x, n, t, buf);
    snprintf(label, sizeof label, "szp at the quantization limit, %s", pccl_dtype_name(t));
    own_codecs(buf, n, t, bound, label);
    for (size_t i = 0; i < n; i++) x[i] = ldexp((double)(i % 1000) - 500.0, 20) * bound;
    to_dtype(x, n, t, buf);
    snprintf(label, sizeof label, "szp wide quantized steps, %s", pccl_dtype_name(t));
    own_codecs(buf, n, t, bound, label);
    /* Bounds at the ends of double's range: the step may round or overflow. */
    static const double extreme[] = {0x1p-1074, 0x3p-1074, 1e-310, 0x1p-1022, 1e300, 1e308, 1.7976931348623157e308};
    for (size_t i = 0; i < n; i++) x[i] = i % 3 ? ldexp(sin((double)i), (int)(i % 2000) - 1000) : 0.0;
    to_dtype(x, n, t, buf);
    for (int b = 0; b < 7; b++) {
      snprintf(label, sizeof label, "szp wide magnitudes %s at bound %g", pccl_dtype_name(t), extreme[b]);
      own_codecs(buf, n, t, extreme[b], label);
    }
    /* Count 0, with and without buffers. */
    size_t size = 0;
    uint8_t z[64];
    expect(pccl_compress(PCCL_CODEC_SZP, NULL, 0, t, 1.0, z, sizeof z, &size) == PCCL_OK && size >= 24 &&
               size <= pccl_compress_bound(PCCL_CODEC_SZP, 0, t),
           "count 0 %s compresses (size %zu)", pccl_dtype_name(t), size);
    expect(pccl_decompress(z, size, NULL, 0, t) == PCCL_OK, "count 0 %s decompresses into NULL",
           pccl_dtype_name(t));
    expect(pccl_decompress(z, size, buf, 0, t) == PCCL_OK, "count 0 %s decompresses",
           pccl_dtype_name(t));
    expect(pccl_decompress(z, size, buf, 1, t) == PCCL_ERR_INVALID_ARGUMENT,
           "count 0 %s stream read as 1 element", pccl_dtype_name(t));
    free(x);
    free(buf);
  }
}

/* ZFP on small inputs that show where its bound fails (kept or refused,
 * never missed in silence); non-finite, subnormal and 16-bit input refused. */
static void test_zfp(void) {
  if (!pccl_codec_available(PCCL_CODEC_ZFP)) return;
  static const float block[4] = {0x1.10bc36p-8f, 0x1.d89c84p-1f, 0x1.3012a2p-1f, 0x1.716704p-3f};
  static const double dblock[4] = {0x1.10bc36p-8, 0x1.d89c84p-1, 0x1.3012a2p-1, 0x1.716704p-3};
  roundtrip(PCCL_CODEC_ZFP, block, 4, PCCL_FLOAT32, 1e-3, "zfp float32 block of 4 in [0,1) at bound 1e-3");
  roundtrip(PCCL_CODEC_ZFP, dblock, 4, PCCL_FLOAT64, 1e-3, "zfp float64 block of 4 in [0,1) at bound 1e-3");
  /* Below ZFP's precision (30 bits under the block's largest value). */
  roundtrip_or_refuse(PCCL_CODEC_ZFP, block, 4, PCCL_FLOAT32, 1e-30, 1,
                      "zfp float32 block of 4 in [0,1) at bound 1e-30");
  roundtrip_or_refuse(PCCL_CODEC_ZFP, block, 4, PCCL_FLOAT32, 1e-10, 1,
                      "zfp float32 block of 4 in [0,1) at bound 1e-10");
  /* Normal values whose block maximum is under 2^-98 (float) / 2^-962 (double). */
  static const float tiny[1] = {0x1p-100f};
  roundtrip_or_refuse(PCCL_CODEC_ZFP, tiny, 1, PCCL_FLOAT32, 0x1p-110, 1, "zfp float32 {2^-100} at bound 2^-110");
  static const double dtiny[1] = {0x1.8p-963};
  roundtrip_or_refuse(PCCL_CODEC_ZFP, dtiny, 1, PCCL_FLOAT64, 0x1p-971, 1, "zfp float64 {1.5 x 2^-963} at bound 2^-971");
  uint8_t z[256];
  size_t size = 0;
  static const float sub[2] = {1.0f, 0x1p-127f};
  static const double dsub[2] = {1.0, 0x1p-1023};
  expect(pccl_compress(PCCL_CODEC_ZFP, sub, 2, PCCL_FLOAT32, 1e-3, z, sizeof z, &size) == PCCL_ERR_UNSUPPORTED &&
             pccl_compress(PCCL_CODEC_ZFP, dsub, 2, PCCL_FLOAT64, 1e-3, z, sizeof z, &size) == PCCL_ERR_UNSUPPORTED,
         "zfp refuses subnormals");
  for (int i = 0; i < 3; i++) {
    float f[5] = {1, 2, 3, 4, 5};
    double d[5] = {1, 2, 3, 4, 5};
    f[2] = i == 0 ? NAN : i == 1 ? INFINITY : -INFINITY;
    d[2] = f[2];
    expect(pccl_compress(PCCL_CODEC_ZFP, f, 5, PCCL_FLOAT32, 1e-3, z, sizeof z, &size) == PCCL_ERR_UNSUPPORTED &&
               pccl_compress(PCCL_CODEC_ZFP, d, 5, PCCL_FLOAT64, 1e-3, z, sizeof z, &size) == PCCL_ERR_UNSUPPORTED,
           "zfp refuses %g", f[2]);
  }
  uint16_t h[5] = {0x3C00, 0x3C00, 0x3C00, 0x3C00, 0x3C00};
  expect(pccl_compress(PCCL_CODEC_ZFP, h, 5, PCCL_FLOAT16, 1e-3, z, sizeof z, &size) == PCCL_ERR_UNSUPPORTED &&
             pccl_compress(PCCL_CODEC_ZFP, h, 5, PCCL_BFLOAT16, 1e-3, z, sizeof z, &size) == PCCL_ERR_UNSUPPORTED,
         "zfp refuses float16 and bfloat16");
  expect(pccl_compress(PCCL_CODEC_ZFP, NULL, 0, PCCL_FLOAT32, 1e-3, z, sizeof z, &size) == PCCL_OK &&
             pccl_decompress(z, size, NULL, 0, PCCL_FLOAT32) == PCCL_OK,
         "zfp: count 0 round-trips");
}

/* Same input, same bytes. */
static void test_deterministic(void) {
  size_t n = 5000, s1 = 0, s2 = 0, cap = pccl_compress_bound(PCCL_CODEC_SZP, n, PCCL_FLOAT32);
  double *x = malloc(n * sizeof(double));
  float *f = malloc(n * sizeof(float));
  uint8_t *a = malloc(cap), *b = malloc(cap);
  pccl_data_fill(PCCL_DATA_NOISY, x, n, 1, 1, 0, 3);
  to_dtype(x, n, PCCL_FLOAT32, f);
  pccl_compress(PCCL_CODEC_SZP, f, n, PCCL_FLOAT32, 1e-3, a, cap, &s1);
  pccl_compress(PCCL_CODEC_SZP, f, n, PCCL_FLOAT32, 1e-3, b, cap, &s2);
  expect(s1 == s2 && memcmp(a, b, s1) == 0, "szp: the same input compresses to the same bytes");
  free(x), free(f), free(a), free(b);
}

/* Threads (PCCL_CODEC_THREADS) split the blocks into parts: the stream must
 * be byte for byte the single-thread one, and decode to the same values;
 * a capacity short of the full bound falls back to one thread; a malformed
 * value is PCCL_ERR_CONFIG naming the variable. */
static void test_threads(void) {
  size_t n = ((size_t)1 << 20) + 77, s1 = 0, s2 = 0, s3 = 0;
  size_t cap = pccl_compress_bound(PCCL_CODEC_SZP, n, PCCL_FLOAT32);
  double *x = malloc(n * sizeof(double));
  float *f = malloc(n * sizeof(float)), *y1 = malloc(n * sizeof(float)), *y2 = malloc(n * sizeof(float));
  uint8_t *a = malloc(cap), *b = malloc(cap), *c = malloc(cap);
  pccl_data_fill(PCCL_DATA_WAVEFIELD, x, 128, 128, 64, 0, 5);
  for (size_t i = 0; i < n; i++) x[i] = i < (size_t)1 << 20 ? x[i] : (double)i * 1e-7;
  to_dtype(x, n, PCCL_FLOAT32, f);
  unsetenv("PCCL_CODEC_THREADS");
  pccl_status_t st1 = pccl_compress(PCCL_CODEC_SZP, f, n, PCCL_FLOAT32, 1e-4, a, cap, &s1);
  pccl_status_t d1 = pccl_decompress(a, s1, y1, n, PCCL_FLOAT32);
  const char *counts[] = {"2", "3", "64"};
  for (int k = 0; k < 3; k++) {
    setenv("PCCL_CODEC_THREADS", counts[k], 1);
    pccl_status_t st2 = pccl_compress(PCCL_CODEC_SZP, f, n, PCCL_FLOAT32, 1e-4, b, cap, &s2);
    expect(st1 == PCCL_OK && st2 == PCCL_OK && s1 == s2 && memcmp(a, b, s1) == 0,
           "szp with %s threads: the same stream as one thread (%zu / %zu bytes)", counts[k], s1, s2);
    memset(y2, 0xA5, n * sizeof(float));
    pccl_status_t d2 = pccl_decompress(a, s1, y2, n, PCCL_FLOAT32);
    expect(d1 == PCCL_OK && d2 == PCCL_OK && memcmp(y1, y2, n * sizeof(float)) == 0,
           "szp with %s threads: decodes to the same values", counts[k]);
  }
  /* Room for the stream but not the full bound: one thread, same bytes. */
  pccl_status_t st3 = pccl_compress(PCCL_CODEC_SZP, f, n, PCCL_FLOAT32, 1e-4, c, s1 + 24, &s3);
  expect(st3 == PCCL_OK && s3 == s1 && memcmp(a, c, s1) == 0,
         "szp with threads and a short capacity: the same stream");
  const char *bad[] = {"0", "65", "two", "-1", "2 "};
  for (int k = 0; k < 5; k++) {
    setenv("PCCL_CODEC_THREADS", bad[k], 1);
    pccl_status_t sc = pccl_compress(PCCL_CODEC_SZP, f, n, PCCL_FLOAT32, 1e-4, b, cap, &s2);
    int named = strstr(pccl__thread_error(), "PCCL_CODEC_THREADS") != NULL;
    pccl_status_t sd = pccl_decompress(a, s1, y2, n, PCCL_FLOAT32);
    expect(sc == PCCL_ERR_CONFIG && sd == PCCL_ERR_CONFIG && named,
           "PCCL_CODEC_THREADS=\"%s\": PCCL_ERR_CONFIG naming it (%d, %d)", bad[k], (int)sc, (int)sd);
  }
  unsetenv("PCCL_CODEC_THREADS");
  free(x), free(f), free(y1), free(y2), free(a), free(b), free(c);
}

/* ---- ratios -------------------------------------------------------------- */

static double ratio_of(pccl_codec_t c, const void *x, size_t n, pccl_dtype_t t, double bound) {
  size_t cap = pccl_compress_bound(c, n, t), size = 0;
  uint8_t *z = malloc(cap);
  pccl_status_t st = pccl_compress(c, x, n, t, bound, z, cap, &size);
  free(z);
  return st == PCCL_OK && size ? (double)(n * esize_of(t)) / (double)size : 0.0;
}

static void test_ratios(void) {
  size_t n = 64 * 64 * 64;
  double *x = malloc(n * sizeof(double)), lo, hi;
  uint8_t *buf = malloc(n * 8);
  pccl_data_fill(PCCL_DATA_SMOOTH, x, 64, 64, 64, 0, 1);
  pccl_data_range(x, n, &lo, &hi);
  to_dtype(x, n, PCCL_FLOAT32, buf);
  double r = ratio_of(PCCL_CODEC_SZP, buf, n, PCCL_FLOAT32, 1e-3 * (hi - lo));
  expect(r > 4, "szp: smooth 64^3 float32 at 1e-3 of the range compresses %.2fx, want > 4", r);
  if (pccl_codec_available(PCCL_CODEC_ZFP)) { /* coded as 1-D: about 3x here */
    r = ratio_of(PCCL_CODEC_ZFP, buf, n, PCCL_FLOAT32, 1e-3 * (hi - lo));
    expect(r > 2, "zfp: smooth 64^3 float32 at 1e-3 of the range compresses %.2fx, want > 2", r);
  }
  for (int ti = 0; ti < 4; ti++) {
    pccl_dtype_t t = dtypes[ti];
    static const double bounds[] = {1e-1, 1e-3, 1e-5};
    for (int b = 0; b < 3; b++) {
      memset(buf, 0, n * 8);
      r = ratio_of(PCCL_CODEC_SZP, buf, n, t, bounds[b]);
      expect(r > 20, "szp: all-zero %s at bound %g compresses %.2fx, want > 20", pccl_dtype_name(t),
             bounds[b], r);
      pccl_data_fill(PCCL_DATA_CONSTANT, x, n, 1, 1, 0, 1);
      to_dtype(x, n, t, buf);
      r = ratio_of(PCCL_CODEC_SZP, buf, n, t, bounds[b]);
      /* A constant block costs its code and q[0] (up to 4 bytes): a 32-byte
       * float16 block of 3.25 at 1e-5 cannot beat 64 / 4. */
      double want = esize_of(t) == 2 ? 12 : 20;
      expect(r > want, "szp: constant %s at bound %g compresses %.2fx, want > %g", pccl_dtype_name(t),
             bounds[b], r, want);
    }
  }
  free(x);
  free(buf);
}

/* szi: the shape must matter (a smooth 3-D field compresses far better than
 * szp's 1-D blocks manage), the same input gives the same bytes, pccl_compress
 * is the 1-D shape, data that will not code is stored raw and exact, and
 * the 3-D call's own arguments are checked. */
static void test_szi(void) {
  size_t n = 64 * 64 * 64, s1 = 0, s2 = 0;
  size_t cap = pccl_compress_bound(PCCL_CODEC_SZI, n, PCCL_FLOAT32);
  double *x = malloc(n * sizeof(double)), lo, hi;
  float *f = malloc(n * sizeof(float));
  uint8_t *a = malloc(cap), *b = malloc(cap);
  pccl_data_fill(PCCL_DATA_SMOOTH, x, 64, 64, 64, 0, 1);
  pccl_data_range(x, n, &lo, &hi);
  to_dtype(x, n, PCCL_FLOAT32, f);
  double bound = 1e-3 * (hi - lo), szp = ratio_of(PCCL_CODEC_SZP, f, n, PCCL_FLOAT32, bound);
  pccl_status_t st = pccl_compress_3d(PCCL_CODEC_SZI, f, 64, 64, 64, PCCL_FLOAT32, bound, a, cap, &s1);
  double szi = st == PCCL_OK ? (double)(n * 4) / (double)s1 : 0;
  expect(szi > 3 * szp, "szi: smooth 64^3 at 1e-3 of the range compresses %.2fx, want > 3 x szp's %.2fx",
         szi, szp);
  st = pccl_compress_3d(PCCL_CODEC_SZI, f, 64, 64, 64, PCCL_FLOAT32, bound, b, cap, &s2);
  expect(st == PCCL_OK && s1 == s2 && memcmp(a, b, s1) == 0, "szi: the same input compresses to the same bytes");
  /* Capacity: exactly the stream's size suffices, one byte less does not. */
  st = pccl_compress_3d(PCCL_CODEC_SZI, f, 64, 64, 64, PCCL_FLOAT32, bound, b, s1, &s2);
  expect(st == PCCL_OK && s2 == s1 && memcmp(a, b, s1) == 0, "szi: capacity of exactly the stream's size");
  st = pccl_compress_3d(PCCL_CODEC_SZI, f, 64, 64, 64, PCCL_FLOAT32, bound, b, s1 - 1, &s2);
  expect(st == PCCL_ERR_INVALID_ARGUMENT, "szi: capacity one byte short: status %d", st);
  /* pccl_compress is the shape n x 1 x 1. */
  pccl_compress(PCCL_CODEC_SZI, f, n, PCCL_FLOAT32, bound, a, cap, &s1);
  pccl_compress_3d(PCCL_CODEC_SZI, f, n, 1, 1, PCCL_FLOAT32, bound, b, cap, &s2);
  expect(s1 == s2 && memcmp(a, b, s1) == 0, "szi: pccl_compress is pccl_compress_3d(n, 1, 1)");
  /* Constant and all-zero data: one code byte per 32 values. */
  pccl_data_fill(PCCL_DATA_CONSTANT, x, n, 1, 1, 0, 1);
  to_dtype(x, n, PCCL_FLOAT32, f);
  double r = ratio_of(PCCL_CODEC_SZI, f, n, PCCL_FLOAT32, 1e-5);
  expect(r > 20, "szi: constant float32 at 1e-5 compresses %.2fx, want > 20", r);
  /* Random bits do not code: stored raw, the header, mode and dimensions around them. */
  size_t m = 3000;
  for (size_t i = 0; i < m; i++) {
    uint32_t v = (uint32_t)rng();
    memcpy(&f[i], &v, 4);
  }
  size_t size = roundtrip(PCCL_CODEC_SZI, f, m, PCCL_FLOAT32, 1e-30, "szi random bits at 1e-30");
  expect(size == 24 + 25 + m * 4, "szi: random bits stored raw in %zu bytes, want %zu", size, 24 + 25 + m * 4);
  /* Dimensions whose product overflows; a zero dimension is count 0. */
  EXPECT_ST(pccl_compress_3d(PCCL_CODEC_SZI, f, SIZE_MAX, 2, 1, PCCL_FLOAT32, 1.0, a, cap, &size),
            PCCL_ERR_OVERFLOW);
  EXPECT_ST(pccl_compress_3d(PCCL_CODEC_SZI, f, 1 << 20, 1 << 20, (size_t)1 << 30, PCCL_FLOAT32, 1.0, a,
                             cap, &size),
            PCCL_ERR_OVERFLOW);
  EXPECT_ST(pccl_compress_3d(PCCL_CODEC_SZP, f, SIZE_MAX / 2, 3, 1, PCCL_FLOAT32, 1.0, a, cap, &size),
            PCCL_ERR_OVERFLOW);
  st = pccl_compress_3d(PCCL_CODEC_SZI, f, 0, 7, 7, PCCL_FLOAT32, 1.0, a, cap, &size);
  expect(st == PCCL_OK && pccl_decompress(a, size, NULL, 0, PCCL_FLOAT32) == PCCL_OK,
         "szi: a 0 x 7 x 7 array is count 0 (%d)", st);
  /* ... and so is 0 x 2^63 x 2^63, which once hung the traversal (found by fuzz_decompress) */
  st = pccl_compress_3d(PCCL_CODEC_SZI, f, 0, SIZE_MAX / 2 + 1, SIZE_MAX / 2 + 1, PCCL_FLOAT32, 1.0, a, cap, &size);
  expect(st == PCCL_OK && pccl_decompress(a, size, NULL, 0, PCCL_FLOAT32) == PCCL_OK,
         "szi: a 0 x 2^63 x 2^63 array is count 0 (%d)", st);
  a[24] = 1; /* the same empty array in raw mode, decoded into NULL (found by fuzz_decompress) */
  EXPECT_ST(pccl_decompress(a, size, NULL, 0, PCCL_FLOAT32), PCCL_OK);
  EXPECT_ST(pccl_compress_3d(PCCL_CODEC_SZI, f, 4, 4, 4, PCCL_FLOAT16, 1.0, a, cap, &size),
            PCCL_ERR_UNSUPPORTED);
  free(x), free(f), free(a), free(b);
}

/* ---- arguments ----------------------------------------------------------- */

static void test_arguments(void) {
  enum { N = 100 };
  float f[N + 1];
  for (int i = 0; i <= N; i++) f[i] = (float)i;
  uint8_t z[2048];
  size_t size = 0, cap = sizeof z;
  const pccl_codec_t S = PCCL_CODEC_SZP;
  const pccl_dtype_t F = PCCL_FLOAT32;
  pccl_status_t st = pccl_compress(S, NULL, N, F, 1.0, z, cap, &size);
  expect(st == PCCL_ERR_INVALID_ARGUMENT && strstr(pccl__thread_error(), "pccl_compress: NULL src"),
         "NULL src: status %d and a detail naming pccl_compress", st);
  EXPECT_ST(pccl_compress(S, f, N, F, 1.0, NULL, cap, &size), PCCL_ERR_INVALID_ARGUMENT);
  EXPECT_ST(pccl_compress(S, f, N, F, 1.0, z, cap, NULL), PCCL_ERR_INVALID_ARGUMENT);
  EXPECT_ST(pccl_compress(S, (char *)f + 1, N, F, 1.0, z, cap, &size), PCCL_ERR_INVALID_ARGUMENT);
  EXPECT_ST(pccl_compress(S, (char *)f + 2, N, F, 1.0, z, cap, &size), PCCL_ERR_INVALID_ARGUMENT);
  EXPECT_ST(pccl_compress(S, (char *)f + 4, N, PCCL_FLOAT64, 1.0, z, cap, &size),
            ((uintptr_t)f + 4) % 8 ? PCCL_ERR_INVALID_ARGUMENT : PCCL_OK);
  EXPECT_ST(pccl_compress(S, (char *)f + 1, N, PCCL_FLOAT16, 1.0, z, cap, &size), PCCL_ERR_INVALID_ARGUMENT);
  static const double bad_bounds[] = {0.0, -0.0, -1.0, -1e-30, NAN, -NAN, INFINITY, -INFINITY};
  for (int i = 0; i < 8; i++)
    expect(pccl_compress(S, f, N, F, bad_bounds[i], z, cap, &size) == PCCL_ERR_INVALID_ARGUMENT,
           "bound %g refused", bad_bounds[i]);
  for (int t = PCCL_INT8; t <= PCCL_UINT64; t++) {
    EXPECT_ST(pccl_compress(S, f, N, (pccl_dtype_t)t, 1.0, z, cap, &size), PCCL_ERR_INVALID_DTYPE);
    expect(pccl_compress_bound(S, N, (pccl_dtype_t)t) == 0, "compress_bound of %s is 0",
           pccl_dtype_name((pccl_dtype_t)t));
  }
  EXPECT_ST(pccl_compress(S, f, N, PCCL_DTYPE_COUNT, 1.0, z, cap, &size), PCCL_ERR_INVALID_DTYPE);
  EXPECT_ST(pccl_compress(S, f, N, (pccl_dtype_t)-1, 1.0, z, cap, &size), PCCL_ERR_INVALID_DTYPE);
  EXPECT_ST(pccl_compress(S, f, N, (pccl_dtype_t)200, 1.0, z, cap, &size), PCCL_ERR_INVALID_DTYPE);
  EXPECT_ST(pccl_compress(PCCL_CODEC_COUNT, f, N, F, 1.0, z, cap, &size), PCCL_ERR_INVALID_ARGUMENT);
  EXPECT_ST(pccl_compress((pccl_codec_t)-1, f, N, F, 1.0, z, cap, &size), PCCL_ERR_INVALID_ARGUMENT);
  EXPECT_ST(pccl_compress(S, f, SIZE_MAX / 4 + 1, F, 1.0, z, cap, &size), PCCL_ERR_OVERFLOW);
  expect(pccl_compress_bound(PCCL_CODEC_COUNT, N, F) == 0 && pccl_compress_bound((pccl_codec_t)-1, N, F) == 0,
         "compress_bound of an unknown codec is 0");
  expect(!strcmp(pccl_codec_name(S), "szp") && !strcmp(pccl_codec_name(PCCL_CODEC_ZFP), "zfp") &&
             !strcmp(pccl_codec_name(PCCL_CODEC_COUNT), "unknown") &&
             !strcmp(pccl_codec_name((pccl_codec_t)-1), "unknown") && pccl_codec_available(S) &&
             !pccl_codec_available(PCCL_CODEC_COUNT),
         "codec names and availability");
  if (!pccl_codec_available(PCCL_CODEC_ZFP)) {
    EXPECT_ST(pccl_compress(PCCL_CODEC_ZFP, f, N, F, 1.0, z, cap, &size), PCCL_ERR_UNSUPPORTED);
    expect(pccl_compress_bound(PCCL_CODEC_ZFP, N, F) == 0, "compress_bound of an unavailable codec is 0");
  }
  /* compress_bound: 0 or at least the raw size; 0 whenever that would not fit. */
  static const size_t big[] = {(size_t)1 << 32, (size_t)1 << 40, (size_t)1 << 58, (size_t)1 << 60,
                               SIZE_MAX / 8, SIZE_MAX / 8 + 1, SIZE_MAX / 4, SIZE_MAX / 2, SIZE_MAX};
  for (int c = 0; c < PCCL_CODEC_COUNT; c++)
    for (int ti = 0; ti < 4 && pccl_codec_available((pccl_codec_t)c); ti++)
      for (int i = 0; i < 9; i++) {
        size_t es = esize_of(dtypes[ti]), b = pccl_compress_bound((pccl_codec_t)c, big[i], dtypes[ti]);
        int ok = big[i] > SIZE_MAX / es ? b == 0 : b == 0 || b >= big[i] * es;
        if (c == PCCL_CODEC_ZFP && es == 2) ok = 1; /* zfp refuses 16-bit types at compress time */
        expect(ok, "compress_bound(%s, %zu, %s) = %zu: neither 0 nor the raw size %zu or more",
               pccl_codec_name((pccl_codec_t)c), big[i], pccl_dtype_name(dtypes[ti]), b, big[i] * es);
      }

  /* dst_capacity too small: every capacity below the needed size, for an
   * incompressible input (random bits) and a compressible one. */
  for (int c = 0; c < PCCL_CODEC_COUNT; c++) {
    if (!pccl_codec_available((pccl_codec_t)c)) continue;
    for (int kind = 0; kind < 2; kind++) {
      float g[N];
      for (int i = 0; i < N; i++) /* noise in [-1, 1) at bound 1e-30, or a sine at 1e-3 */
        g[i] = kind ? (float)sin(i * 0.1) : (float)((double)(rng() >> 40) * 0x1p-23 - 1.0);
      double bound = kind ? 1e-3 : 1e-30;
      size_t need = 0;
      uint8_t *zz = guarded(cap);
      st = pccl_compress((pccl_codec_t)c, g, N, F, bound, zz, cap, &need);
      expect(st == PCCL_OK, "%s: reference compression", pccl_codec_name((pccl_codec_t)c));
      if (c == PCCL_CODEC_SZP && !kind)
        expect(need == pccl_compress_bound(PCCL_CODEC_SZP, N, F), "szp: noise at 1e-30 takes the whole bound");
      free(zz);
      for (size_t k = 0; st == PCCL_OK && k < need; k++) {
        zz = guarded(k);
        size = 12345;
        pccl_status_t s2 = pccl_compress((pccl_codec_t)c, g, N, F, bound, zz, k, &size);
        expect(s2 == PCCL_ERR_INVALID_ARGUMENT && guard_intact(zz, k) && size == 12345,
               "%s %s: dst_capacity %zu of %zu needed: status %d, guard %s, size %zu",
               pccl_codec_name((pccl_codec_t)c), kind ? "sine" : "noise", k, need, s2,
               guard_intact(zz, k) ? "intact" : "overwritten", size);
        free(zz);
      }
    }
  }

  /* Decompression arguments. */
  size = 0;
  pccl_compress(S, f, N, F, 1e-2, z, cap, &size);
  float out[N + 2];
  EXPECT_ST(pccl_decompress(z, size, out, N, F), PCCL_OK);
  EXPECT_ST(pccl_decompress(NULL, size, out, N, F), PCCL_ERR_INVALID_ARGUMENT);
  EXPECT_ST(pccl_decompress(z, size, NULL, N, F), PCCL_ERR_INVALID_ARGUMENT);
  EXPECT_ST(pccl_decompress(z, size, (char *)out + 1, N, F), PCCL_ERR_INVALID_ARGUMENT);
  EXPECT_ST(pccl_decompress(z, size, out, N - 1, F), PCCL_ERR_INVALID_ARGUMENT);
  EXPECT_ST(pccl_decompress(z, size, out, N + 1, F), PCCL_ERR_INVALID_ARGUMENT);
  EXPECT_ST(pccl_decompress(z, size, out, 0, F), PCCL_ERR_INVALID_ARGUMENT);
  EXPECT_ST(pccl_decompress(z, size, out, N, PCCL_FLOAT64), PCCL_ERR_INVALID_ARGUMENT);
  EXPECT_ST(pccl_decompress(z, size, out, N, PCCL_INT32), PCCL_ERR_INVALID_ARGUMENT);
  EXPECT_ST(pccl_decompress(z, size, out, N, PCCL_DTYPE_COUNT), PCCL_ERR_INVALID_ARGUMENT);
  EXPECT_ST(pccl_compressed_info(NULL, size, NULL, NULL, NULL, NULL), PCCL_ERR_INVALID_ARGUMENT);
  EXPECT_ST(pccl_compressed_info(z, size, NULL, NULL, NULL, NULL), PCCL_OK);
#undef EXPECT_ST
}

/* ---- damaged streams ----------------------------------------------------- */

/* Decodes a damaged stream of n x t into a guarded dst; the status must be
 * one of `allowed` (a bit mask of statuses) and dst's guard intact. */
static void damaged(const uint8_t *s, size_t size, size_t n, pccl_dtype_t t, unsigned allowed,
                    const char *what) {
  uint8_t *src = malloc(size ? size : 1); /* exactly sized: no slack to read into */
  memcpy(src, s, size);
  size_t bytes = n * esize_of(t);
  uint8_t *d = guarded(bytes);
  pccl_status_t st = pccl_decompress(src, size, d, n, t);
  if (!((allowed >> st) & 1u) || !guard_intact(d, bytes))
    expect(0, "%s: status %d, dst guard %s", what, st, guard_intact(d, bytes) ? "intact" : "overwritten");
  else
    passed++;
  free(d);
  free(src);
}

#define OKB (1u << PCCL_OK)
#define CORRUPTB (1u << PCCL_ERR_CORRUPT)
#define ARGB (1u << PCCL_ERR_INVALID_ARGUMENT)
#define UNSUPB (1u << PCCL_ERR_UNSUPPORTED)

static void set_header(uint8_t *h, size_t off, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++) h[off + (size_t)i] = (uint8_t)(v >> (8 * i));
}

static void corrupt_stream(pccl_codec_t c, const uint8_t *z, size_t size, size_t n, pccl_dtype_t t,
                           const char *label) {
  char what[200];
  /* Every truncation. */
  for (size_t len = 0; len < size; len++) {
    snprintf(what, sizeof what, "%s truncated to %zu of %zu bytes", label, len, size);
    damaged(z, len, n, t, CORRUPTB, what);
  }
  /* A trailing byte. */
  uint8_t *m = malloc(size + 1);
  memcpy(m, z, size);
  m[size] = 0;
  snprintf(what, sizeof what, "%s with a trailing byte", label);
  damaged(m, size + 1, n, t, CORRUPTB, what);
  /* Every byte under a few masks: refused or decoded, never outside dst.
   * Header bytes 4 (dtype) and 8..15 (count) may turn into another valid
   * dtype / count: that is the caller's mismatch. Byte 3 may name a codec
   * this build lacks. */
  static const uint8_t masks[] = {0xFF, 0x01, 0x80, 0x10, 0x5A};
  for (size_t i = 0; i < size; i++)
    for (int k = 0; k < 5; k++) {
      memcpy(m, z, size);
      m[i] ^= masks[k];
      unsigned allowed = OKB | CORRUPTB;
      if (i == 4 || (i >= 8 && i < 16)) allowed |= ARGB;
      if (i == 3) allowed |= UNSUPB;
      snprintf(what, sizeof what, "%s byte %zu ^ 0x%02X", label, i, masks[k]);
      damaged(m, size, n, t, allowed, what);
    }
  /* Header fields, each checked by pccl_compressed_info and pccl_decompress. */
  struct { size_t off; uint64_t v; int bytes; const char *name; } hdr[] = {
      {0, 'Q', 1, "magic[0]"}, {1, 'Y', 1, "magic[1]"}, {0, 0, 2, "magic zero"},
      {2, 0, 1, "version 0"},  {2, 1, 1, "version 1"},  {2, 3, 1, "version 3"},  {2, 255, 1, "version 255"},
      {5, 1, 1, "reserved[5]"}, {6, 0x80, 1, "reserved[6]"}, {7, 1, 1, "reserved[7]"},
      {3, PCCL_CODEC_COUNT, 1, "codec id past the table"}, {3, 255, 1, "codec id 255"},
      {4, PCCL_INT8, 1, "dtype int8"}, {4, PCCL_UINT32, 1, "dtype uint32"}, {4, PCCL_UINT64, 1, "dtype uint64"},
      {4, PCCL_DTYPE_COUNT, 1, "dtype 10"}, {4, 255, 1, "dtype 255"},
      {16, 0x7FF8000000000000ull, 8, "bound NaN"}, {16, 0xFFF8000000000000ull, 8, "bound -NaN"},
      {16, 0, 8, "bound 0"}, {16, 0x8000000000000000ull, 8, "bound -0"},
      {16, 0xBFF0000000000000ull, 8, "bound -1"}, {16, 0x7FF0000000000000ull, 8, "bound +Inf"},
      {16, 0xFFF0000000000000ull, 8, "bound -Inf"},
      {8, UINT64_MAX, 8, "count 2^64-1"}, {8, (uint64_t)(SIZE_MAX / esize_of(t)) + 1, 8, "count past size_t"},
  };
  for (size_t h = 0; h < sizeof hdr / sizeof hdr[0]; h++) {
    memcpy(m, z, size);
    set_header(m, hdr[h].off, hdr[h].v, hdr[h].bytes);
    snprintf(what, sizeof what, "%s header %s", label, hdr[h].name);
    pccl_status_t st = pccl_compressed_info(m, size, NULL, NULL, NULL, NULL);
    expect(st == PCCL_ERR_CORRUPT, "%s: compressed_info status %d", what, st);
    damaged(m, size, n, t, CORRUPTB, what);
    expect(strstr(pccl__thread_error(), "pccl_decompress") != NULL, "%s: error detail", what);
  }
  /* A huge count that size_t holds: szp and szi must see the payload cannot
   * hold it before they write (dst here holds only the real n elements). */
  if (c != PCCL_CODEC_ZFP) {
    memcpy(m, z, size);
    set_header(m, 8, (uint64_t)1 << 40, 8);
    uint8_t *d = guarded(n * esize_of(t));
    pccl_status_t st = pccl_decompress(m, size, d, (size_t)1 << 40, t);
    expect(st == PCCL_ERR_CORRUPT && guard_intact(d, n * esize_of(t)), "%s header count 2^40: status %d",
           label, st);
    free(d);
  }
  free(m);
}

static void test_corrupt(void) {
  static const int kinds[] = {PCCL_DATA_SMOOTH, PCCL_DATA_WAVEFIELD, PCCL_DATA_NOISY, PCCL_DATA_NONFINITE,
                              PCCL_DATA_CONSTANT, -1 /* random bits */};
  const size_t n = 100;
  double x[100];
  uint8_t buf[800];
  for (int c = 0; c < PCCL_CODEC_COUNT; c++) {
    if (!pccl_codec_available((pccl_codec_t)c)) continue;
    for (size_t ki = 0; ki < sizeof kinds / sizeof kinds[0]; ki++)
      for (int ti = 0; ti < 4; ti++) {
        pccl_dtype_t t = dtypes[ti];
        if (c == PCCL_CODEC_ZFP && (esize_of(t) == 2 || kinds[ki] == PCCL_DATA_NONFINITE || kinds[ki] < 0))
          continue;
        if (c == PCCL_CODEC_SZI && esize_of(t) == 2) continue;
        if (kinds[ki] >= 0) {
          pccl_data_fill(kinds[ki], x, n, 1, 1, 0, 7 + ki);
          to_dtype(x, n, t, buf);
        } else {
          for (size_t i = 0; i < n * esize_of(t); i++) buf[i] = (uint8_t)rng();
        }
        size_t cap = pccl_compress_bound((pccl_codec_t)c, n, t), size = 0;
        uint8_t *z = malloc(cap);
        /* szi as a 5 x 4 x 5 array, so that every pass of its traversal runs */
        pccl_status_t st = c == PCCL_CODEC_SZI
                               ? pccl_compress_3d((pccl_codec_t)c, buf, 5, 4, 5, t, 1e-3, z, cap, &size)
                               : pccl_compress((pccl_codec_t)c, buf, n, t, 1e-3, z, cap, &size);
        char label[96];
        snprintf(label, sizeof label, "%s %s %s", pccl_codec_name((pccl_codec_t)c),
                 kinds[ki] >= 0 ? pccl_data_name(kinds[ki]) : "random", pccl_dtype_name(t));
        expect(st == PCCL_OK, "%s: compress for the corruption test", label);
        if (st == PCCL_OK) corrupt_stream((pccl_codec_t)c, z, size, n, t, label);
        free(z);
      }
  }
  /* A count-0 stream: every truncation, a trailing byte. */
  uint8_t z[32];
  size_t size = 0;
  pccl_compress(PCCL_CODEC_SZP, NULL, 0, PCCL_FLOAT32, 1.0, z, sizeof z, &size);
  for (size_t len = 0; len < size; len++) damaged(z, len, 0, PCCL_FLOAT32, CORRUPTB, "empty stream truncated");
  z[size] = 0;
  damaged(z, size + 1, 0, PCCL_FLOAT32, CORRUPTB, "empty stream with a trailing byte");
}

int main(void) {
  test_converters();
  test_matrix();
  test_special();
  test_zfp();
  test_deterministic();
  test_threads();
  test_ratios();
  test_szi();
  test_arguments();
  test_corrupt();
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
