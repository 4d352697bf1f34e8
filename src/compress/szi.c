/* szi.c - an error-bounded lossy codec for float32 and float64 arrays of
 * up to three dimensions: szp's quantization and bit planes, with a
 * multilevel cubic interpolation predictor over the whole array (after the
 * interpolation predictor of SZ3). On a smooth 3-D field it sees the
 * neighbours in y and z that szp's 1-D blocks cannot.
 *
 * Traversal. S is the smallest power of two >= the largest dimension. The
 * origin comes first (predicted as 0); then, for s = S/2, S/4, ..., 1, three
 * passes, each point coded once and predicted along one dimension d from
 * points coded before it:
 *   x-pass: x an odd multiple of s, y and z multiples of 2s (d = x);
 *   y-pass: y an odd multiple of s, x a multiple of s, z a multiple of 2s;
 *   z-pass: z an odd multiple of s, x and y multiples of s.
 * With a1, b1 the decoded points at -s and +s along d and a3, b3 at -3s and
 * +3s, the prediction is cubic, (9 (a1 + b1) - (a3 + b3)) / 16, when all
 * four lie inside the array; else linear, (a1 + b1) / 2; else extrapolated,
 * 1.5 a1 - 0.5 a3; else a1. Encoder and decoder compute it in double with
 * the same operations on the same decoded values (the library is built
 * with -ffp-contract=off), so they agree bit for bit.
 *
 * Quantization as szp: q = (x - pred) x (1 / step), rounded to nearest
 * even, with step = (2 - 2^-5) x bound; the decoded value is
 * (T)(pred + q x step). The encoder checks that value against the bound; an
 * element that misses it (NaN, Inf, huge values) or whose scaled residual
 * (x - pred) / step reaches 2^30 in magnitude is an outlier: its q is the escape
 * value INT32_MIN and the element itself is stored bit for bit, so it
 * decodes exactly. That check, not the arithmetic, guarantees the bound.
 *
 * Payload (after the 24-byte container header):
 *   mode   1 byte: 0 coded; 1 raw (the elements as they are: chosen when
 *          coding would not be smaller)
 *   dims   nx, ny, nz (x fastest): three little-endian uint64, product count
 *   codes  mode 0: one byte per group of 32 values of q in traversal order,
 *          the group's width w in bits, 0..32 (zigzag coding)
 *   data   mode 0: per group, w uint32 bit planes (szp_block.h), then the
 *          group's outliers (esize bytes each, in order)
 * An escape needs all 32 bits, so only groups of width 32 hold outliers; the
 * decoder counts them as it validates the whole layout, before it writes.
 *
 * The encoder keeps the decoded array in a work buffer of count elements
 * (allocated per call); the decoder predicts from its own output. */
#define _DEFAULT_SOURCE 1 /* MAP_ANONYMOUS, madvise */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "codec.h"
#include "errmsg.h"
#include "szp_block.h" /* zigzag, bit planes, quantization step */

#define SZI_GROUP 32
#define SZI_ESCAPE INT32_MIN
#define SZI_PREFIX 25 /* mode byte and three dimensions */
#define SZI_CODED 0
#define SZI_RAW 1

/* The array's shape and its traversal level. */
typedef struct {
  size_t n[3], stride[3];
  size_t top; /* S: smallest power of two >= every dimension */
} szi_grid_t;

static szi_grid_t grid_of(const size_t dims[3]) {
  szi_grid_t g = {{dims[0], dims[1], dims[2]}, {1, dims[0], dims[0] * dims[1]}, 1};
  size_t most = dims[0] > dims[1] ? dims[0] : dims[1];
  most = most > dims[2] ? most : dims[2];
  while (g.top < most && g.top <= SIZE_MAX / 2) g.top *= 2; /* a zero dimension allows any other */
  return g;
}

/* Which prediction a point at coordinate i along a dimension of n points
 * gets at distance s (the formulas at the top of the file). */
enum { SZI_CUBIC, SZI_LINEAR, SZI_EXTRAP, SZI_COPY, SZI_ORIGIN /* predicted as 0 */ };

static inline int form_of(size_t i, size_t s, size_t n) {
  int left3 = i >= 3 * s, right1 = i + s < n;
  if (right1) return left3 && i + 3 * s < n ? SZI_CUBIC : SZI_LINEAR;
  return left3 ? SZI_EXTRAP : SZI_COPY;
}

/* The traversal as runs: `m` points from index `at`, `ps` apart, each
 * predicted with `form` from neighbours `off` apart. RUN(state, at, m, ps,
 * off, form) gets them in traversal order. An x-pass row is split where its
 * form changes (at its ends); y- and z-pass rows share one form. */
#define SZI_WALK(g, RUN, state)                                                                   \
  do {                                                                                            \
    const size_t *n_ = (g)->n, *st_ = (g)->stride;                                                \
    if (n_[0] * n_[1] * n_[2] == 0) break;                                                        \
    RUN(state, 0, 1, 1, 0, SZI_ORIGIN);                                                           \
    for (size_t s = (g)->top / 2; s >= 1; s /= 2) {                                               \
      for (size_t z = 0; z < n_[2]; z += 2 * s)                                                   \
        for (size_t y = 0; y < n_[1]; y += 2 * s)                                                 \
          for (size_t x = s; x < n_[0];) {                                                        \
            int form = form_of(x, s, n_[0]);                                                      \
            size_t first = x, m = 0;                                                              \
            for (; x < n_[0] && form_of(x, s, n_[0]) == form; x += 2 * s) m++;                    \
            RUN(state, z * st_[2] + y * st_[1] + first, m, 2 * s, s, form);                       \
          }                                                                                       \
      for (size_t z = 0; z < n_[2]; z += 2 * s)                                                   \
        for (size_t y = s; y < n_[1]; y += 2 * s)                                                 \
          RUN(state, z * st_[2] + y * st_[1], (n_[0] - 1) / s + 1, s, s * st_[1],                 \
              form_of(y, s, n_[1]));                                                              \
      for (size_t z = s; z < n_[2]; z += 2 * s) {                                                 \
        int form = form_of(z, s, n_[2]);                                                          \
        for (size_t y = 0; y < n_[1]; y += s)                                                     \
          RUN(state, z * st_[2] + y * st_[1], (n_[0] - 1) / s + 1, s, s * st_[2], form);          \
      }                                                                                           \
    }                                                                                             \
  } while (0)

#define SZI_CHUNK 256 /* points a run is processed in at a time */

/* One element type's instance of the codec: predictions, the encoder's and
 * the decoder's runs. Each run is done in simple loops over a chunk
 * (predict, then quantize or reconstruct without branches, then move the
 * values to or from the groups), so the compiler can vectorize them. */
#define SZI_TYPED(name, T)                                                                        \
  /* p[j]: the prediction of point at + j * ps. */                                                \
  static inline void predict_##name(const T *r, size_t at, size_t c, size_t ps, size_t off,       \
                                    int form, double *p) {                                        \
    switch (form) {                                                                               \
    case SZI_CUBIC:                                                                               \
      for (size_t j = 0; j < c; j++) {                                                            \
        const T *v = r + at + j * ps;                                                             \
        p[j] = (9.0 * ((double)v[-(ptrdiff_t)off] + (double)v[off]) -                             \
                ((double)v[-3 * (ptrdiff_t)off] + (double)v[3 * off])) * 0.0625;                  \
      }                                                                                           \
      break;                                                                                      \
    case SZI_LINEAR:                                                                              \
      for (size_t j = 0; j < c; j++) {                                                            \
        const T *v = r + at + j * ps;                                                             \
        p[j] = ((double)v[-(ptrdiff_t)off] + (double)v[off]) * 0.5;                               \
      }                                                                                           \
      break;                                                                                      \
    case SZI_EXTRAP:                                                                              \
      for (size_t j = 0; j < c; j++) {                                                            \
        const T *v = r + at + j * ps;                                                             \
        p[j] = 1.5 * (double)v[-(ptrdiff_t)off] - 0.5 * (double)v[-3 * (ptrdiff_t)off];           \
      }                                                                                           \
      break;                                                                                      \
    case SZI_COPY:                                                                                \
      for (size_t j = 0; j < c; j++) p[j] = r[at + j * ps - off];                                 \
      break;                                                                                      \
    default: /* SZI_ORIGIN */                                                                     \
      for (size_t j = 0; j < c; j++) p[j] = 0.0;                                                  \
    }                                                                                             \
  }                                                                                               \
                                                                                                  \
  typedef struct {                                                                                \
    const T *x;                                                                                   \
    T *r; /* the decoded array as the decoder will see it */                                      \
    pccl__szp_quant_t qz;                                                                         \
    uint8_t *codes, *data;                                                                        \
    size_t cap, pos, group;                                                                       \
    uint32_t z[SZI_GROUP];                                                                        \
    T out[SZI_GROUP];                                                                             \
    int nz, nout, full;                                                                           \
  } enc_##name##_t;                                                                               \
                                                                                                  \
  /* Writes the pending group: its width, planes and outliers. */                                 \
  static void flush_##name(enc_##name##_t *e) {                                                   \
    uint32_t any = 0;                                                                             \
    for (int i = e->nz; i < SZI_GROUP; i++) e->z[i] = 0;                                          \
    for (int i = 0; i < SZI_GROUP; i++) any |= e->z[i];                                           \
    unsigned w = pccl__szp_bit_width(any);                                                        \
    size_t bytes = 4 * (size_t)w + (size_t)e->nout * sizeof(T);                                   \
    if (bytes > e->cap - e->pos) {                                                                \
      e->full = 1;                                                                                \
    } else {                                                                                      \
      e->codes[e->group] = (uint8_t)w;                                                            \
      pccl__szp_pack_planes(e->z, w, e->data + e->pos);                                           \
      memcpy(e->data + e->pos + 4 * (size_t)w, e->out, (size_t)e->nout * sizeof(T));              \
      e->pos += bytes;                                                                            \
    }                                                                                             \
    e->group++;                                                                                   \
    e->nz = e->nout = 0;                                                                          \
  }                                                                                               \
                                                                                                  \
  static void encode_run_##name(enc_##name##_t *e, size_t at, size_t m, size_t ps, size_t off,    \
                                int form) {                                                       \
    double p[SZI_CHUNK];                                                                          \
    uint32_t zz[SZI_CHUNK];                                                                       \
    for (size_t done = 0; done < m; done += SZI_CHUNK, at += SZI_CHUNK * ps) {                    \
      size_t c = m - done < SZI_CHUNK ? m - done : SZI_CHUNK;                                     \
      predict_##name(e->r, at, c, ps, off, form, p);                                              \
      uint32_t esc = 0;                                                                           \
      for (size_t j = 0; j < c; j++) {                                                            \
        T x = e->x[at + j * ps];                                                                  \
        double d = pccl__szp_mul((double)x - p[j], e->qz.inv);                                    \
        int in = fabs(d) < PCCL_SZP_QMAX; /* false for NaN and Inf */                             \
        double k = in ? (d + 0x1.8p52) - 0x1.8p52 : 0.0; /* round to nearest even */              \
        T y = (T)(p[j] + pccl__szp_mul(k, e->qz.step));                                           \
        int ok = in & (fabs((double)y - (double)x) <= e->qz.bound);                               \
        e->r[at + j * ps] = ok ? y : x;                                                           \
        zz[j] = ok ? pccl__szp_zigzag((uint32_t)(int32_t)k) : UINT32_MAX; /* the escape */        \
        esc |= (uint32_t)!ok;                                                                     \
      }                                                                                           \
      for (size_t j = 0; j < c;) {                                                                \
        size_t t = (size_t)(SZI_GROUP - e->nz) < c - j ? (size_t)(SZI_GROUP - e->nz) : c - j;     \
        memcpy(e->z + e->nz, zz + j, t * sizeof(uint32_t));                                       \
        for (size_t u = 0; esc && u < t; u++)                                                     \
          if (zz[j + u] == UINT32_MAX) e->out[e->nout++] = e->x[at + (j + u) * ps];               \
        e->nz += (int)t;                                                                          \
        j += t;                                                                                   \
        if (e->nz == SZI_GROUP) flush_##name(e);                                                  \
      }                                                                                           \
    }                                                                                             \
  }                                                                                               \
                                                                                                  \
  typedef struct {                                                                                \
    T *r;                                                                                         \
    double step;                                                                                  \
    const uint8_t *codes, *data;                                                                  \
    size_t pos, group;                                                                            \
    uint32_t z[SZI_GROUP];                                                                        \
    const uint8_t *out; /* the current group's next outlier */                                    \
    int next;                                                                                     \
  } dec_##name##_t;                                                                               \
                                                                                                  \
  /* q[j] for the next c values; an escape's element goes to o[j]. Returns  \
   * nonzero when there was one. */                                                              \
  static uint32_t take_##name(dec_##name##_t *d, size_t c, double *q, T *o) {                     \
    uint32_t any = 0;                                                                             \
    for (size_t j = 0; j < c;) {                                                                  \
      if (d->next == SZI_GROUP) {                                                                 \
        unsigned w = d->codes[d->group++];                                                        \
        pccl__szp_unpack_planes(d->data + d->pos, w, d->z);                                       \
        d->out = d->data + d->pos + 4 * (size_t)w;                                                \
        d->pos += 4 * (size_t)w;                                                                  \
        d->next = 0;                                                                              \
      }                                                                                           \
      size_t t = (size_t)(SZI_GROUP - d->next) < c - j ? (size_t)(SZI_GROUP - d->next) : c - j;   \
      uint32_t esc = 0;                                                                           \
      for (size_t u = 0; u < t; u++) {                                                            \
        uint32_t z = d->z[d->next + (int)u];                                                      \
        q[j + u] = (int32_t)pccl__szp_unzigzag(z);                                                \
        esc |= z == UINT32_MAX;                                                                   \
      }                                                                                           \
      for (size_t u = 0; esc && u < t; u++)                                                       \
        if (d->z[d->next + (int)u] == UINT32_MAX) {                                               \
          memcpy(&o[j + u], d->out, sizeof(T));                                                   \
          d->out += sizeof(T);                                                                    \
          d->pos += sizeof(T);                                                                    \
        }                                                                                         \
      d->next += (int)t;                                                                          \
      j += t;                                                                                     \
      any |= esc;                                                                                 \
    }                                                                                             \
    return any;                                                                                   \
  }                                                                                               \
                                                                                                  \
  static void decode_run_##name(dec_##name##_t *d, size_t at, size_t m, size_t ps, size_t off,    \
                                int form) {                                                       \
    double p[SZI_CHUNK], q[SZI_CHUNK];                                                            \
    T o[SZI_CHUNK];                                                                               \
    for (size_t done = 0; done < m; done += SZI_CHUNK, at += SZI_CHUNK * ps) {                    \
      size_t c = m - done < SZI_CHUNK ? m - done : SZI_CHUNK;                                     \
      predict_##name(d->r, at, c, ps, off, form, p);                                              \
      uint32_t esc = take_##name(d, c, q, o);                                                     \
      for (size_t j = 0; j < c; j++) d->r[at + j * ps] = (T)(p[j] + pccl__szp_mul(q[j], d->step)); \
      for (size_t j = 0; esc && j < c; j++) /* o[j] is set only for escapes */                    \
        if (q[j] == (double)SZI_ESCAPE) d->r[at + j * ps] = o[j];                                 \
    }                                                                                             \
  }                                                                                               \
                                                                                                  \
  static void encode_all_##name(const szi_grid_t *g, enc_##name##_t *e) {                         \
    SZI_WALK(g, encode_run_##name, e);                                                            \
  }                                                                                               \
  static void decode_all_##name(const szi_grid_t *g, dec_##name##_t *d) {                         \
    SZI_WALK(g, decode_run_##name, d);                                                            \
  }

SZI_TYPED(f32, float)
SZI_TYPED(f64, double)

/* ---- the codec table's row --------------------------------------------------- */

static int szi_available(void) { return 1; }

static size_t groups_of(size_t count) { return count / SZI_GROUP + (count % SZI_GROUP != 0); }

static size_t szi_bound(const pccl_codec_args_t *a) {
  if (a->dtype != PCCL_FLOAT32 && a->dtype != PCCL_FLOAT64) return 0;
  size_t raw = a->count * a->esize;
  return raw > SIZE_MAX - SZI_PREFIX ? 0 : SZI_PREFIX + raw;
}

static void put64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* The encoder's work array. Large pages where the kernel has them: faulting
 * in a fresh array 4 KiB at a time took a third of the encoder's time on a
 * 64 MiB field. */
static void *work_alloc(size_t bytes) {
#if defined(MAP_ANONYMOUS) && defined(MADV_HUGEPAGE)
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  (void)madvise(p, bytes, MADV_HUGEPAGE); /* a hint: without it, small pages */
  return p;
#else
  return malloc(bytes);
#endif
}

static void work_free(void *p, size_t bytes) {
#if defined(MAP_ANONYMOUS) && defined(MADV_HUGEPAGE)
  munmap(p, bytes);
#else
  (void)bytes;
  free(p);
#endif
}

/* Codes src into dst's codes and data; returns the data bytes, or SIZE_MAX
 * when they would exceed data_cap. */
static size_t encode(const pccl_codec_args_t *a, const szi_grid_t *g, const void *src, void *work,
                     uint8_t *codes, uint8_t *data, size_t data_cap) {
  pccl__szp_quant_t qz = pccl__szp_quant_of(a->bound);
  if (a->dtype == PCCL_FLOAT32) {
    enc_f32_t e = {.x = src, .r = work, .qz = qz, .codes = codes, .data = data, .cap = data_cap};
    encode_all_f32(g, &e);
    if (e.nz > 0) flush_f32(&e);
    return e.full ? SIZE_MAX : e.pos;
  }
  enc_f64_t e = {.x = src, .r = work, .qz = qz, .codes = codes, .data = data, .cap = data_cap};
  encode_all_f64(g, &e);
  if (e.nz > 0) flush_f64(&e);
  return e.full ? SIZE_MAX : e.pos;
}

static pccl_status_t szi_compress(const pccl_codec_args_t *a, const void *src, uint8_t *dst,
                                  size_t cap, size_t *size) {
  size_t raw = a->count * a->esize, ngroups = groups_of(a->count);
  if (cap < SZI_PREFIX) return PCCL_ERR_INVALID_ARGUMENT;
  for (int d = 0; d < 3; d++) put64(dst + 1 + 8 * d, a->dims[d]);
  /* Coded only while smaller than raw: data_cap keeps it so. */
  size_t room = cap - SZI_PREFIX, data_cap = raw > ngroups ? raw - ngroups - 1 : 0;
  size_t data = SIZE_MAX;
  if (room >= ngroups && raw > ngroups) {
    if (room - ngroups < data_cap) data_cap = room - ngroups;
    void *work = work_alloc(raw);
    if (work == NULL)
      return pccl__thread_error_set(PCCL_ERR_NO_MEMORY, "pccl_compress",
                                    "szi: no memory for a %zu-byte work array", raw);
    szi_grid_t g = grid_of(a->dims);
    data = encode(a, &g, src, work, dst + SZI_PREFIX, dst + SZI_PREFIX + ngroups, data_cap);
    work_free(work, raw);
  }
  if (data != SIZE_MAX || a->count == 0) {
    dst[0] = SZI_CODED;
    *size = SZI_PREFIX + ngroups + (a->count == 0 ? 0 : data);
    return PCCL_OK;
  }
  if (room < raw) return PCCL_ERR_INVALID_ARGUMENT;
  dst[0] = SZI_RAW;
  memcpy(dst + SZI_PREFIX, src, raw);
  *size = SZI_PREFIX + raw;
  return PCCL_OK;
}

#define SZI_CORRUPT(...) pccl__thread_error_set(PCCL_ERR_CORRUPT, "pccl_decompress", __VA_ARGS__)

/* Checks the dimensions against the count: their product, without overflow. */
static pccl_status_t read_dims(const uint8_t *src, size_t count, size_t dims[3]) {
  size_t product = 1;
  for (int d = 0; d < 3; d++) {
    uint64_t v = get64(src + 1 + 8 * d);
    if (v > SIZE_MAX || (v != 0 && product > SIZE_MAX / v))
      return SZI_CORRUPT("szi: the stream's dimensions overflow (dimension %d)", d);
    dims[d] = (size_t)v;
    product *= (size_t)v;
  }
  if (product != count)
    return SZI_CORRUPT("szi: the dimensions hold %zu elements, the header says %zu", product, count);
  return PCCL_OK;
}

/* The data bytes the groups' codes and outliers account for, or an error:
 * every width at most 32, every group inside the payload. */
static pccl_status_t check_groups(const pccl_codec_args_t *a, const uint8_t *codes, size_t ngroups,
                                  const uint8_t *data, size_t data_size) {
  size_t pos = 0;
  for (size_t i = 0; i < ngroups; i++) {
    if (codes[i] > 32) return SZI_CORRUPT("szi: group %zu has width %u, above 32", i, codes[i]);
    size_t bytes = 4 * (size_t)codes[i];
    if (bytes > data_size - pos) return SZI_CORRUPT("szi: group %zu runs past the end (%zu bytes)", i, data_size);
    if (codes[i] == 32) {
      uint32_t z[SZI_GROUP];
      pccl__szp_unpack_planes(data + pos, 32, z);
      size_t lanes = i + 1 < ngroups || a->count % SZI_GROUP == 0 ? SZI_GROUP : a->count % SZI_GROUP;
      for (size_t l = 0; l < lanes; l++) bytes += z[l] == UINT32_MAX ? a->esize : 0;
      if (bytes > data_size - pos)
        return SZI_CORRUPT("szi: group %zu's outliers run past the end (%zu bytes)", i, data_size);
    }
    pos += bytes;
  }
  if (pos != data_size) return SZI_CORRUPT("szi: %zu data bytes, the groups account for %zu", data_size, pos);
  return PCCL_OK;
}

static pccl_status_t szi_decompress(const pccl_codec_args_t *a, const uint8_t *src, size_t size,
                                    void *dst) {
  size_t raw = a->count * a->esize, ngroups = groups_of(a->count), dims[3];
  if (a->dtype != PCCL_FLOAT32 && a->dtype != PCCL_FLOAT64)
    return SZI_CORRUPT("szi: datatype %s, not float32 or float64", pccl_dtype_name(a->dtype));
  if (size < SZI_PREFIX) return SZI_CORRUPT("szi: %zu payload bytes, shorter than its %d-byte prefix", size, SZI_PREFIX);
  pccl_status_t st = read_dims(src, a->count, dims);
  if (st != PCCL_OK) return st;
  if (src[0] == SZI_RAW) {
    if (size - SZI_PREFIX != raw)
      return SZI_CORRUPT("szi: raw payload of %zu bytes, expected %zu", size - SZI_PREFIX, raw);
    if (raw > 0) memcpy(dst, src + SZI_PREFIX, raw); /* dst may be NULL for count 0 */
    return PCCL_OK;
  }
  if (src[0] != SZI_CODED) return SZI_CORRUPT("szi: mode %u is neither coded nor raw", src[0]);
  if (size - SZI_PREFIX < ngroups)
    return SZI_CORRUPT("szi: %zu bytes cannot hold %zu group codes", size - SZI_PREFIX, ngroups);
  const uint8_t *codes = src + SZI_PREFIX, *data = codes + ngroups;
  st = check_groups(a, codes, ngroups, data, size - SZI_PREFIX - ngroups);
  if (st != PCCL_OK) return st;
  szi_grid_t g = grid_of(dims);
  double step = pccl__szp_quant_of(a->bound).step;
  if (a->dtype == PCCL_FLOAT32) {
    dec_f32_t d = {.r = dst, .step = step, .codes = codes, .data = data, .next = SZI_GROUP};
    decode_all_f32(&g, &d);
  } else {
    dec_f64_t d = {.r = dst, .step = step, .codes = codes, .data = data, .next = SZI_GROUP};
    decode_all_f64(&g, &d);
  }
  return PCCL_OK;
}

const pccl_codec_ops_t pccl__codec_szi = {"szi", szi_available, szi_bound, szi_compress,
                                          szi_decompress};
