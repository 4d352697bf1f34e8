/* test_coll.c - checks one pccl collective against an independent reference.
 *
 * usage: test_coll --coll NAME [--algo NAME] [--quick] [--max-report K]
 *   NAME: allgather reducescatter allreduce broadcast reduce scatter gather alltoall
 *   --algo     force the algorithm (pccl_comm_set_algo) and check that every
 *              call with count > 0 reports it through pccl_comm_last_algo
 *   --quick    skip the 2^20+3 element cases
 *   --ops all  every (dtype, op) pair pccl defines, not the default's
 *              selection (see in_matrix)
 *   --mem pccl buffers from pccl_mem_alloc (ranks of a node read each other's)
 *   --shift K  start every buffer K (0-63) elements past a 64-byte boundary, so
 *              buffers are element-aligned only (transports' unaligned paths)
 *   --max-report K  print details of up to K failures per rank (default 1)
 *   --timing   print (stderr) the CPU time spent filling buffers, in pccl and checking
 *
 * Every rank regenerates every rank's deterministic input and computes the
 * expected result with its own scalar code (refcheck.h); the output is
 * compared bit for bit (a pair type's padding aside). Matrix: counts
 * {0, 1, 7, 1000} x every dtype x every op it has (reductions; by default a
 * selection of the newer types and ops, see in_matrix) x {out-of-place, in-place} x roots {0, nranks/2, nranks-1}
 * (rooted collectives), integer wrap-around cases, and 2^20+3 elements for a
 * subset of dtypes/ops. Rank 0 prints "N passed, M failed" at the end; the
 * exit status is 0 only when every case passed on every rank.
 */
#define _DEFAULT_SOURCE /* clock_gettime, madvise */
#include <mpi.h>
#include <time.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "pccl_mpi.h"
#include "refcheck.h"

typedef enum {
  K_DATA,     /* arbitrary bits (data movement only) */
  K_SMALL,    /* integers in [-2,2] (signed, float) or [0,4] (unsigned) */
  K_PROD,     /* +-1, and +-2 on at most two ranks per index */
  K_WRAPSUM,  /* values near the type's limits: sums wrap around */
  K_WRAPPROD, /* large odd values: products wrap around */
  K_BITS      /* random bits of the type's width (bitwise ops) */
} kind_t;
static const char *const kind_names[] = {"data", "small", "prod", "wrapsum", "wrapprod", "bits"};

typedef struct {
  pccl_coll_t coll;
  pccl_dtype_t dtype;
  int op; /* pccl_op_t, or -1 for data movement */
  size_t count;
  int inplace; /* 1: on every rank; 2: on the even ranks only */
  int root; /* -1 for collectives without a root */
  kind_t kind;
  uint32_t seed;
} tcase_t;

static int g_rank, g_n;
static pccl_comm_t *g_comm;
static const char *g_algo; /* forced algorithm or NULL */
static const char *g_algos[64];
static int g_nalgos;
static long g_reported, g_max_report = 1;
static double g_t_call, g_t_check, g_t_setup; /* CPU seconds spent, for --timing */

static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Large, long-lived buffers. First touches of 4 KiB pages are slow on some
 * virtual machines (more than the collectives themselves), so buffers of
 * 2 MiB and more ask for transparent huge pages where Linux offers them. */
static void *big_alloc(size_t bytes) {
  const size_t huge = (size_t)2 << 20;
  if (bytes < huge) return aligned_alloc(64, (bytes + 63) / 64 * 64);
  bytes = (bytes + huge - 1) / huge * huge;
  void *p = aligned_alloc(huge, bytes);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (p) (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
  return p;
}

/* ---- reference values --------------------------------------------------- */

/* K_SMALL value for hash residue v in 0..4 (bool: 1 for three of them);
 * also a pair's value. */
static inline int64_t val_small(uint32_t v, pccl_dtype_t d) {
  if (d == PCCL_BOOL) return v < 3;
  return (rc_is_signed_int(d) || rc_is_float(d) || rc_is_pair(d)) ? (int64_t)v - 2 : (int64_t)v;
}

/* The logical (integer) value of element idx of rank r's input. */
static inline int64_t val_logical(const tcase_t *c, int r, size_t idx) {
  const uint32_t h = rc_mix32((uint32_t)r, idx, c->seed);
  const pccl_dtype_t d = c->dtype;
  const int sgn = rc_is_signed_int(d) || rc_is_float(d);
  switch (c->kind) {
    case K_SMALL:
      return val_small(h % 5u, d);
    case K_BITS:
      return (int64_t)rc_mix64((uint32_t)r, idx, c->seed);
    case K_PROD: {
      const uint32_t s1 = rc_mix32(0xFFFF0001u, idx, c->seed) % (uint32_t)g_n;
      const uint32_t s2 = rc_mix32(0xFFFF0002u, idx, c->seed) % (uint32_t)g_n;
      int64_t v = ((uint32_t)r == s1 || (uint32_t)r == s2) ? 2 : 1;
      if (sgn && (h & 0x100u)) v = -v;
      return v;
    }
    case K_WRAPSUM: {
      const int neg = sgn && ((h >> 20) & 1u);
      const int64_t small = (int64_t)(h % 20u);
      switch (d) {
        case PCCL_INT8:
          return neg ? -100 - (int64_t)(r % 8) - small : 100 + (int64_t)(r % 8) + small;
        case PCCL_UINT8:
          return 200 + (int64_t)(h % 56u);
        case PCCL_INT16:
          return neg ? -32000 - (int64_t)(r % 8) - small : 32000 + (int64_t)(r % 8) + small;
        case PCCL_UINT16:
          return 65000 + (int64_t)(h % 536u);
        case PCCL_INT32:
          return neg ? -(int64_t)0x7fffff00 - (int64_t)(h % 256u)
                     : (int64_t)0x7fffff00 + (int64_t)(h % 256u);
        case PCCL_UINT32:
          return (int64_t)0xffffff00 + (int64_t)(h % 256u);
        case PCCL_INT64:
          return neg ? -(int64_t)0x7fffffffffffff00 - (int64_t)(h % 256u)
                     : (int64_t)0x7fffffffffffff00 + (int64_t)(h % 256u);
        case PCCL_UINT64:
          return (int64_t)(0xffffffffffffff00ull + (uint64_t)(h % 256u));
        default:
          return 0;
      }
    }
    case K_WRAPPROD: {
      const int neg = sgn && ((h >> 20) & 1u);
      int64_t v;
      if (rc_size(d) == 1)
        v = 3 + 2 * (int64_t)(h % 7u); /* odd 3..15 */
      else if (rc_size(d) == 2)
        v = 0x101 + 2 * (int64_t)(h % 64u);
      else if (rc_size(d) == 4)
        v = 0x10001 + 2 * (int64_t)(h % 2048u);
      else
        v = (int64_t)0x100000001 + 2 * (int64_t)(h & 0xfffffu);
      return neg ? -v : v;
    }
    default:
      return 0;
  }
}

/* A pair's index: a few values either side of zero, so equal values often
 * meet equal indices too. */
static inline int32_t pair_index(const tcase_t *c, int r, size_t idx) {
  return (int32_t)((rc_mix32((uint32_t)r, idx, c->seed) >> 8) % 11u) - 5;
}

/* Stores the pair (v, index) as element of the pair type d; padding zero. */
static void pair_store(pccl_dtype_t d, unsigned char *dst, int64_t v, int32_t index) {
  memset(dst, 0, rc_size(d));
  const size_t vs = rc_pair_value_size[d];
  if (d == PCCL_FLOAT_INT) {
    const float f = (float)v;
    memcpy(dst, &f, 4);
  } else if (d == PCCL_DOUBLE_INT) {
    const double f = (double)v;
    memcpy(dst, &f, 8);
  } else {
    const uint64_t u = (uint64_t)v; /* little-endian: the low bytes first */
    memcpy(dst, &u, vs);
  }
  memcpy(dst + rc_pair_index_at[d], &index, 4);
}

/* Elements off..off+n-1 of rank r's send buffer. K_DATA: the low bytes of
 * a hash of (rank, index, seed); other kinds: val_logical stored in the
 * dtype, with table lookups for K_SMALL (the kind of the large counts). */
static void fill_input(const tcase_t *c, unsigned char *dst, int r, size_t off, size_t n) {
  const size_t es = rc_size(c->dtype);
  const uint32_t seed = c->seed, ur = (uint32_t)r;
  if (c->kind == K_DATA) {
    switch (es) {
      case 1:
        for (size_t i = 0; i < n; i++) dst[i] = (uint8_t)rc_mix32(ur, off + i, seed);
        return;
      case 2:
        for (size_t i = 0; i < n; i++) {
          const uint16_t x = (uint16_t)rc_mix32(ur, off + i, seed);
          memcpy(dst + 2 * i, &x, 2);
        }
        return;
      case 4:
        for (size_t i = 0; i < n; i++) {
          const uint32_t x = rc_mix32(ur, off + i, seed);
          memcpy(dst + 4 * i, &x, 4);
        }
        return;
      case 8:
        for (size_t i = 0; i < n; i++) {
          const uint64_t x = rc_mix64(ur, off + i, seed);
          memcpy(dst + 8 * i, &x, 8);
        }
        return;
      default: /* 16 */
        for (size_t i = 0; i < n; i++) {
          const uint64_t x[2] = {rc_mix64(ur, off + i, seed), rc_mix64(ur ^ 0x40000000u, off + i, seed)};
          memcpy(dst + 16 * i, x, 16);
        }
        return;
    }
  }
  if (rc_is_pair(c->dtype)) {
    for (size_t i = 0; i < n; i++)
      pair_store(c->dtype, dst + i * es, val_logical(c, r, off + i), pair_index(c, r, off + i));
    return;
  }
  if (c->kind == K_SMALL) {
    /* Five possible values: encode them once. */
    unsigned char enc[5][8];
    for (int v = 0; v < 5; v++) rc_store(c->dtype, enc[v], val_small((uint32_t)v, c->dtype));
    switch (es) {
      case 1:
        for (size_t i = 0; i < n; i++) dst[i] = enc[rc_mix32(ur, off + i, seed) % 5u][0];
        return;
      case 2:
        for (size_t i = 0; i < n; i++) memcpy(dst + 2 * i, enc[rc_mix32(ur, off + i, seed) % 5u], 2);
        return;
      case 4:
        for (size_t i = 0; i < n; i++) memcpy(dst + 4 * i, enc[rc_mix32(ur, off + i, seed) % 5u], 4);
        return;
      default:
        for (size_t i = 0; i < n; i++) memcpy(dst + 8 * i, enc[rc_mix32(ur, off + i, seed) % 5u], 8);
        return;
    }
  }
  for (size_t i = 0; i < n; i++) rc_store(c->dtype, dst + i * es, val_logical(c, r, off + i));
}

/* How many ranks' inputs the expected reduction covers: every rank, or
 * the prefix of a scan (ranks 0..r) or exscan (0..r-1). */
static inline int red_ranks(const tcase_t *c) {
  if (c->coll == PCCL_COLL_SCAN) return g_rank + 1;
  return c->coll == PCCL_COLL_EXSCAN ? g_rank : g_n;
}

/* Stores the reduction result from its accumulated value: floats get the
 * exact sum/prod/min/max (acc), AVG divides once in the type (16-bit types
 * through float32); integers wrap to the type's width, AVG divides the
 * wrapped sum with C integer division. */
static inline void store_float_result(const tcase_t *c, double acc, unsigned char *dst) {
  const pccl_dtype_t d = c->dtype;
  const int n = red_ranks(c);
  if (c->op != PCCL_AVG) {
    rc_store(d, dst, (int64_t)acc); /* exact: small integers */
    return;
  }
  switch (d) {
    case PCCL_FLOAT32: {
      volatile float s = (float)acc, nn = (float)n;
      const float x = s / nn;
      memcpy(dst, &x, 4);
    } break;
    case PCCL_FLOAT64: {
      volatile double x = acc / (double)n;
      const double y = x;
      memcpy(dst, &y, 8);
    } break;
    case PCCL_FLOAT16: {
      volatile float s = (float)acc, nn = (float)n;
      const uint16_t x = rc_f32_to_f16(s / nn);
      memcpy(dst, &x, 2);
    } break;
    case PCCL_BFLOAT16: {
      volatile float s = (float)acc, nn = (float)n;
      const uint16_t x = rc_f32_to_bf16(s / nn);
      memcpy(dst, &x, 2);
    } break;
    default: break;
  }
}

static inline void store_int_result(const tcase_t *c, uint64_t acc, unsigned char *dst) {
  const pccl_dtype_t d = c->dtype;
  const unsigned bits = (unsigned)(8 * rc_size(d));
  const uint64_t mask = bits == 64 ? ~0ull : ((1ull << bits) - 1);
  uint64_t t = acc & mask;
  if (c->op == PCCL_AVG) {
    if (rc_is_signed_int(d)) {
      int64_t s;
      if (bits < 64 && ((t >> (bits - 1)) & 1u))
        s = -(int64_t)((~t & mask) + 1); /* sign-extend */
      else
        s = (int64_t)t;
      s = s / (int64_t)red_ranks(c); /* C integer division */
      t = (uint64_t)s;
    } else {
      t = t / (uint64_t)red_ranks(c);
    }
  }
  rc_store(d, dst, (int64_t)t);
}

/* Element idx of the reduction over red_ranks(c) ranks' send buffers
 * (generic path). */
static void red_elem(const tcase_t *c, size_t idx, unsigned char *dst) {
  const pccl_dtype_t d = c->dtype;
  const int op = c->op, n = red_ranks(c);
  if (rc_is_float(d)) {
    double acc = (double)val_logical(c, 0, idx); /* exact: small integers */
    for (int q = 1; q < n; q++) {
      const double v = (double)val_logical(c, q, idx);
      switch (op) {
        case PCCL_SUM:
        case PCCL_AVG: acc += v; break;
        case PCCL_PROD: acc *= v; break;
        case PCCL_MIN: acc = v < acc ? v : acc; break;
        case PCCL_MAX: acc = v > acc ? v : acc; break;
      }
    }
    store_float_result(c, acc, dst);
    return;
  }
  if (rc_is_pair(d)) { /* MAXLOC / MINLOC */
    int64_t v = val_logical(c, 0, idx);
    int32_t at = pair_index(c, 0, idx);
    for (int q = 1; q < n; q++) {
      const int64_t w = val_logical(c, q, idx);
      const int32_t wat = pair_index(c, q, idx);
      if (w == v) {
        if (wat < at) at = wat;
      } else if (op == PCCL_MAXLOC ? w > v : w < v) {
        v = w, at = wat;
      }
    }
    pair_store(d, dst, v, at);
    return;
  }
  /* Integers (and bool): wrap like unsigned arithmetic of the same width. */
  const unsigned bits = (unsigned)(8 * rc_size(d));
  const uint64_t mask = bits == 64 ? ~0ull : ((1ull << bits) - 1);
  const int sgn = rc_is_signed_int(d);
  uint64_t acc = (uint64_t)val_logical(c, 0, idx);
  for (int q = 1; q < n; q++) {
    const int64_t v = val_logical(c, q, idx);
    switch (op) {
      case PCCL_SUM:
      case PCCL_AVG: acc += (uint64_t)v; break;
      case PCCL_PROD: acc *= (uint64_t)v; break;
      case PCCL_MIN:
        if (sgn ? v < (int64_t)acc : ((uint64_t)v & mask) < (acc & mask)) acc = (uint64_t)v;
        break;
      case PCCL_MAX:
        if (sgn ? v > (int64_t)acc : ((uint64_t)v & mask) > (acc & mask)) acc = (uint64_t)v;
        break;
      case PCCL_LAND: acc = (acc & mask) != 0 && ((uint64_t)v & mask) != 0; break;
      case PCCL_LOR: acc = (acc & mask) != 0 || ((uint64_t)v & mask) != 0; break;
      case PCCL_LXOR: acc = ((acc & mask) != 0) != (((uint64_t)v & mask) != 0); break;
      case PCCL_BAND: acc &= (uint64_t)v; break;
      case PCCL_BOR: acc |= (uint64_t)v; break;
      case PCCL_BXOR: acc ^= (uint64_t)v; break;
    }
  }
  store_int_result(c, acc, dst);
}

#define CHUNK 4096

/* Reduction of elements off..off+n-1 (n <= CHUNK). For small-integer
 * inputs with sum/min/max/avg the exact result fits an int32 accumulator;
 * everything else goes element by element. */
static void red_chunk(const tcase_t *c, size_t off, size_t n, unsigned char *dst) {
  const size_t es = rc_size(c->dtype);
  if (c->kind != K_SMALL || c->op == PCCL_PROD || c->op > PCCL_AVG) {
    for (size_t i = 0; i < n; i++) red_elem(c, off + i, dst + i * es);
    return;
  }
  static int32_t acc[CHUNK];
  const int32_t bias = (rc_is_signed_int(c->dtype) || rc_is_float(c->dtype)) ? 2 : 0;
  const uint32_t seed = c->seed;
  for (size_t i = 0; i < n; i++) acc[i] = (int32_t)(rc_mix32(0, off + i, seed) % 5u) - bias;
  for (int q = 1; q < red_ranks(c); q++) {
    const uint32_t uq = (uint32_t)q;
    switch (c->op) {
      case PCCL_MIN:
        for (size_t i = 0; i < n; i++) {
          const int32_t v = (int32_t)(rc_mix32(uq, off + i, seed) % 5u) - bias;
          acc[i] = v < acc[i] ? v : acc[i];
        }
        break;
      case PCCL_MAX:
        for (size_t i = 0; i < n; i++) {
          const int32_t v = (int32_t)(rc_mix32(uq, off + i, seed) % 5u) - bias;
          acc[i] = v > acc[i] ? v : acc[i];
        }
        break;
      default: /* sum, avg */
        for (size_t i = 0; i < n; i++) acc[i] += (int32_t)(rc_mix32(uq, off + i, seed) % 5u) - bias;
        break;
    }
  }
  if (rc_is_float(c->dtype))
    for (size_t i = 0; i < n; i++) store_float_result(c, (double)acc[i], dst + i * es);
  else
    for (size_t i = 0; i < n; i++) store_int_result(c, (uint64_t)(int64_t)acc[i], dst + i * es);
}

/* ---- expected regions and checks ---------------------------------------- */

typedef enum {
  M_FIXED,  /* element e = input(a, off + e) */
  M_BLOCKS, /* element e = input(e / count, off + e % count) */
  M_RED,    /* element e = reduction(off + e) */
  M_SENT    /* every byte is the sentinel */
} map_t;

typedef struct {
  const unsigned char *p;
  size_t nelem;
  map_t m;
  int a;
  size_t off;
  const char *what;
} chk_t;

static void describe(const tcase_t *c, char *buf, size_t len) {
  char root[16];
  if (c->root >= 0)
    snprintf(root, sizeof root, "%d", c->root);
  else
    snprintf(root, sizeof root, "-");
  const char *la = pccl_comm_last_algo(g_comm);
  snprintf(buf, len,
           "rank %d coll %s algo %s dtype %s op %s count %zu inplace %d root %s (inputs %s, seed %u, nranks %d)",
           g_rank, rc_coll_names[c->coll], g_algo ? g_algo : la ? la : "(null)",
           rc_dtype_names[c->dtype], c->op >= 0 ? rc_op_names[c->op] : "-", c->count, c->inplace,
           root, kind_names[c->kind], (unsigned)c->seed, g_n);
}

static void report_msg(const tcase_t *c, const char *msg) {
  if (g_reported++ >= g_max_report) return;
  char d[512];
  describe(c, d, sizeof d);
  fprintf(stderr, "FAIL %s: %s\n", d, msg);
  fflush(stderr);
}

static void report_elem(const tcase_t *c, const char *what, size_t idx, const unsigned char *exp,
                        const unsigned char *got) {
  if (g_reported >= g_max_report) {
    g_reported++;
    return;
  }
  char e[40], g[40], msg[256];
  rc_hex(exp, rc_size(c->dtype), e);
  rc_hex(got, rc_size(c->dtype), g);
  snprintf(msg, sizeof msg, "%s: first differing index %zu expected 0x%s got 0x%s", what, idx, e,
           g);
  report_msg(c, msg);
}

static _Alignas(64) unsigned char g_tmp[CHUNK * 16];

/* Expected elements start..start+n-1 of a checked region. */
static void gen_expected(const tcase_t *c, const chk_t *k, size_t start, size_t n,
                         unsigned char *dst, unsigned char sentinel) {
  const size_t es = rc_size(c->dtype);
  switch (k->m) {
    case M_FIXED:
      fill_input(c, dst, k->a, k->off + start, n);
      break;
    case M_BLOCKS:
      for (size_t i = 0; i < n;) { /* one run per source rank */
        const size_t e = start + i, q = e / c->count, j = e % c->count;
        size_t len = c->count - j;
        if (len > n - i) len = n - i;
        fill_input(c, dst + i * es, (int)q, k->off + j, len);
        i += len;
      }
      break;
    case M_RED:
      for (size_t i = 0; i < n; i += CHUNK)
        red_chunk(c, k->off + start + i, n - i < CHUNK ? n - i : CHUNK, dst + i * es);
      break;
    case M_SENT:
      memset(dst, sentinel, n * es);
      break;
  }
}

/* A small cache of large expected reductions, reused by the in-place and
 * out-of-place variants of a case (and by every root of a reduce): the
 * variants of one case share their inputs (same seed). */
typedef struct {
  int valid;
  unsigned long stamp;
  tcase_t key;
  map_t m;
  int a;
  size_t off, nelem;
  unsigned char *buf;
  size_t cap;
} cache_t;
static cache_t g_cache[2];
static unsigned long g_stamp;
#define CACHE_MIN_BYTES 65536

static int cache_match(const cache_t *e, const tcase_t *c, const chk_t *k) {
  return e->valid && e->key.coll == c->coll && e->key.dtype == c->dtype && e->key.op == c->op &&
         e->key.count == c->count && e->key.kind == c->kind && e->key.seed == c->seed &&
         e->m == k->m && e->a == k->a && e->off == k->off && e->nelem == k->nelem;
}

/* The cached expected bytes of region k, computing them if needed; NULL
 * when the cache cannot hold them. */
static const unsigned char *cache_get(const tcase_t *c, const chk_t *k, unsigned char sentinel) {
  const size_t bytes = k->nelem * rc_size(c->dtype);
  cache_t *victim = &g_cache[0];
  for (int i = 0; i < 2; i++) {
    if (cache_match(&g_cache[i], c, k)) {
      g_cache[i].stamp = ++g_stamp;
      return g_cache[i].buf;
    }
    if (g_cache[i].stamp < victim->stamp) victim = &g_cache[i];
  }
  victim->valid = 0;
  if (victim->cap < bytes) {
    free(victim->buf);
    victim->buf = (unsigned char *)big_alloc(bytes);
    victim->cap = victim->buf ? bytes : 0;
    if (!victim->buf) return NULL;
  }
  gen_expected(c, k, 0, k->nelem, victim->buf, sentinel);
  victim->valid = 1;
  victim->stamp = ++g_stamp;
  victim->key = *c;
  victim->m = k->m;
  victim->a = k->a;
  victim->off = k->off;
  victim->nelem = k->nelem;
  return victim->buf;
}

static int compare_region(const tcase_t *c, const chk_t *k, const unsigned char *exp, size_t s,
                          size_t n) {
  const size_t es = rc_size(c->dtype);
  const unsigned char *got = k->p + s * es;
  if (memcmp(exp, got, n * es) == 0) return 1;
  if (k->m != M_SENT) { /* padding: the sentinel check compares all bytes */
    size_t i = 0;
    while (i < n && rc_same(c->dtype, exp + i * es, got + i * es)) i++;
    if (i == n) return 1;
  }
  for (size_t i = 0; i < n; i++)
    if (k->m == M_SENT ? memcmp(exp + i * es, got + i * es, es) != 0
                       : !rc_same(c->dtype, exp + i * es, got + i * es)) {
      report_elem(c, k->what, s + i, exp + i * es, got + i * es);
      break;
    }
  return 0;
}

static int run_check(const tcase_t *c, const chk_t *k, unsigned char sentinel) {
  const size_t bytes = k->nelem * rc_size(c->dtype);
  if (k->m == M_RED && bytes >= CACHE_MIN_BYTES) { /* n inputs per element: worth keeping */
    const unsigned char *exp = cache_get(c, k, sentinel);
    if (exp) return compare_region(c, k, exp, 0, k->nelem);
  }
  for (size_t s = 0; s < k->nelem; s += CHUNK) {
    const size_t n = k->nelem - s < CHUNK ? k->nelem - s : CHUNK;
    gen_expected(c, k, s, n, g_tmp, sentinel);
    if (!compare_region(c, k, g_tmp, s, n)) return 0;
  }
  return 1;
}

/* Whether `name` ("ring", or "recmul:4" with its parameter) is registered. */
static int algo_known(const char *name) {
  size_t len = strcspn(name, ":");
  for (int i = 0; i < g_nalgos; i++)
    if (g_algos[i] && strlen(g_algos[i]) == len && strncmp(g_algos[i], name, len) == 0) return 1;
  return 0;
}

/* ---- one case ------------------------------------------------------------ */

/* Two buffers kept across cases (fresh pages for every large case would
 * cost more than the collectives): slot 0 send or in-place, slot 1 receive.
 * Guards and contents are re-filled with the sentinel for every case. */
static struct {
  unsigned char *mem;
  size_t cap;
} g_pool[2];
static int g_pccl_mem; /* --mem pccl: the pool comes from pccl_mem_alloc */
static size_t g_shift;  /* --shift K: buffers start K elements off alignment */

static void *pool_alloc(size_t bytes) {
  void *p = NULL;
  if (!g_pccl_mem) return big_alloc(bytes);
  return pccl_mem_alloc(&p, bytes) == PCCL_OK ? p : NULL;
}

static void pool_free(void *p) {
  if (!g_pccl_mem)
    free(p);
  else if (pccl_mem_free(p) != PCCL_OK)
    fprintf(stderr, "test_coll: pccl_mem_free failed: %s\n", pccl_last_error(NULL));
}

/* `shift` bytes move the whole buffer (guards included) off alignment. */
static int pool_buf(int slot, rc_buf_t *b, size_t bytes, size_t shift, unsigned char sentinel) {
  const size_t total = (bytes + 63) / 64 * 64 + 2 * RC_GUARD;
  if (g_pool[slot].cap < total + shift) {
    pool_free(g_pool[slot].mem);
    g_pool[slot].mem = (unsigned char *)pool_alloc(total + shift);
    g_pool[slot].cap = g_pool[slot].mem ? total + shift : 0;
    if (!g_pool[slot].mem) return 0;
  }
  b->base = g_pool[slot].mem + shift;
  b->data = b->base + RC_GUARD;
  b->bytes = bytes;
  b->total = total;
  b->sentinel = sentinel;
  memset(b->base, sentinel, total);
  return 1;
}

/* Runs one case on this rank; returns 1 when everything checked here passed. */
static int run_case(const tcase_t *c) {
  const double ts = cpu_now();
  const pccl_dtype_t d = c->dtype;
  const size_t es = rc_size(d), cnt = c->count, n = (size_t)g_n, r = (size_t)g_rank;
  const int root = c->root, is_root = g_rank == root;
  const unsigned char sent = ((c->seed + (uint32_t)c->inplace + (uint32_t)c->root) & 1u) ? 0xA5 : 0x5C;
  const int ip = c->inplace == 1 || (c->inplace == 2 && g_rank % 2 == 0);
  rc_buf_t A = {0}, B = {0};
  int haveB = 0;
  const void *sp = NULL;
  void *rp = NULL;
  chk_t chk[4];
  int nchk = 0;
  int ok = 1;
  char msg[600];

  size_t send_elems = cnt, recv_elems = cnt;
  switch (c->coll) {
    case PCCL_COLL_ALLGATHER: recv_elems = n * cnt; break;
    case PCCL_COLL_REDUCE_SCATTER: send_elems = n * cnt; break;
    case PCCL_COLL_SCATTER: send_elems = n * cnt; break;
    case PCCL_COLL_GATHER: recv_elems = n * cnt; break;
    case PCCL_COLL_ALLTOALL: send_elems = recv_elems = n * cnt; break;
    default: break;
  }

#define ALLOC(buf, elems)                                     \
  do {                                                        \
    if (!pool_buf((&(buf) == &B), &(buf), (elems) * es, g_shift * es, sent)) { \
      report_msg(c, "test could not allocate its buffers");   \
      ok = 0;                                                 \
      goto out;                                               \
    }                                                         \
  } while (0)
#define CHECK(P, NE, M, AA, OFF, WHAT) \
  do {                                 \
    chk[nchk].p = (P);                 \
    chk[nchk].nelem = (NE);            \
    chk[nchk].m = (M);                 \
    chk[nchk].a = (AA);                \
    chk[nchk].off = (OFF);             \
    chk[nchk].what = (WHAT);           \
    nchk++;                            \
  } while (0)

  if (!ip) {
    ALLOC(A, send_elems);
    fill_input(c, A.data, g_rank, 0, send_elems);
    ALLOC(B, recv_elems);
    haveB = 1;
    sp = A.data;
    rp = B.data;
    CHECK(A.data, send_elems, M_FIXED, g_rank, 0, "send buffer modified");
    switch (c->coll) {
      case PCCL_COLL_ALLGATHER: CHECK(B.data, recv_elems, M_BLOCKS, 0, 0, "recvbuf"); break;
      case PCCL_COLL_REDUCE_SCATTER: CHECK(B.data, cnt, M_RED, 0, r * cnt, "recvbuf"); break;
      case PCCL_COLL_ALLREDUCE: CHECK(B.data, cnt, M_RED, 0, 0, "recvbuf"); break;
      case PCCL_COLL_BROADCAST: CHECK(B.data, cnt, M_FIXED, root, 0, "recvbuf"); break;
      case PCCL_COLL_REDUCE:
        if (is_root)
          CHECK(B.data, cnt, M_RED, 0, 0, "recvbuf at root");
        else
          CHECK(B.data, cnt, M_SENT, 0, 0, "non-root recvbuf written");
        break;
      case PCCL_COLL_SCATTER: CHECK(B.data, cnt, M_FIXED, root, r * cnt, "recvbuf"); break;
      case PCCL_COLL_GATHER:
        if (is_root)
          CHECK(B.data, recv_elems, M_BLOCKS, 0, 0, "recvbuf at root");
        else
          CHECK(B.data, recv_elems, M_SENT, 0, 0, "non-root recvbuf written");
        break;
      case PCCL_COLL_ALLTOALL: CHECK(B.data, recv_elems, M_BLOCKS, 0, r * cnt, "recvbuf"); break;
      case PCCL_COLL_SCAN: CHECK(B.data, cnt, M_RED, 0, 0, "recvbuf"); break;
      case PCCL_COLL_EXSCAN:
        if (g_rank > 0)
          CHECK(B.data, cnt, M_RED, 0, 0, "recvbuf");
        else
          CHECK(B.data, cnt, M_SENT, 0, 0, "rank 0's recvbuf written");
        break;
      default: break;
    }
  } else {
    switch (c->coll) {
      case PCCL_COLL_ALLGATHER:
        ALLOC(A, n * cnt);
        fill_input(c, A.data + r * cnt * es, g_rank, 0, cnt);
        rp = A.data;
        sp = A.data + r * cnt * es;
        CHECK(A.data, n * cnt, M_BLOCKS, 0, 0, "recvbuf (in-place)");
        break;
      case PCCL_COLL_REDUCE_SCATTER:
        ALLOC(A, n * cnt);
        fill_input(c, A.data, g_rank, 0, n * cnt);
        sp = A.data;
        rp = A.data + r * cnt * es;
        CHECK(A.data + r * cnt * es, cnt, M_RED, 0, r * cnt, "recvbuf (in-place)");
        break;
      case PCCL_COLL_ALLREDUCE:
        ALLOC(A, cnt);
        fill_input(c, A.data, g_rank, 0, cnt);
        sp = rp = A.data;
        CHECK(A.data, cnt, M_RED, 0, 0, "recvbuf (in-place)");
        break;
      case PCCL_COLL_BROADCAST:
        ALLOC(A, cnt);
        if (is_root) fill_input(c, A.data, g_rank, 0, cnt);
        sp = rp = A.data;
        CHECK(A.data, cnt, M_FIXED, root, 0, "recvbuf (in-place)");
        break;
      case PCCL_COLL_REDUCE:
        ALLOC(A, cnt);
        fill_input(c, A.data, g_rank, 0, cnt);
        sp = rp = A.data;
        if (is_root)
          CHECK(A.data, cnt, M_RED, 0, 0, "recvbuf at root (in-place)");
        else
          CHECK(A.data, cnt, M_FIXED, g_rank, 0, "non-root buffer modified (in-place)");
        break;
      case PCCL_COLL_SCATTER:
        if (is_root) {
          ALLOC(A, n * cnt);
          fill_input(c, A.data, g_rank, 0, n * cnt);
          sp = A.data;
          rp = A.data + r * cnt * es;
          /* recvbuf already holds its block; the rest is send data, read-only */
          CHECK(A.data, n * cnt, M_FIXED, root, 0, "root buffer (in-place)");
        } else {
          ALLOC(A, cnt);
          sp = NULL; /* read at the root only */
          rp = A.data;
          CHECK(A.data, cnt, M_FIXED, root, r * cnt, "recvbuf");
        }
        break;
      case PCCL_COLL_GATHER:
        if (is_root) {
          ALLOC(A, n * cnt);
          fill_input(c, A.data + r * cnt * es, g_rank, 0, cnt);
          rp = A.data;
          sp = A.data + r * cnt * es;
          CHECK(A.data, n * cnt, M_BLOCKS, 0, 0, "recvbuf at root (in-place)");
        } else {
          ALLOC(A, cnt);
          fill_input(c, A.data, g_rank, 0, cnt);
          sp = A.data;
          rp = NULL; /* written at the root only */
          CHECK(A.data, cnt, M_FIXED, g_rank, 0, "send buffer modified");
        }
        break;
      case PCCL_COLL_ALLTOALL:
        ALLOC(A, n * cnt);
        fill_input(c, A.data, g_rank, 0, n * cnt);
        sp = rp = A.data;
        CHECK(A.data, n * cnt, M_BLOCKS, 0, r * cnt, "recvbuf (in-place)");
        break;
      case PCCL_COLL_SCAN:
      case PCCL_COLL_EXSCAN:
        ALLOC(A, cnt);
        fill_input(c, A.data, g_rank, 0, cnt);
        sp = rp = A.data;
        if (c->coll == PCCL_COLL_EXSCAN && g_rank == 0)
          CHECK(A.data, cnt, M_FIXED, g_rank, 0, "rank 0's buffer modified (in-place)");
        else
          CHECK(A.data, cnt, M_RED, 0, 0, "recvbuf (in-place)");
        break;
      default:
        break;
    }
  }

  const double t0 = cpu_now();
  g_t_setup += t0 - ts;
  pccl_status_t st = PCCL_ERR_INTERNAL;
  const pccl_op_t op = (pccl_op_t)c->op;
  switch (c->coll) {
    case PCCL_COLL_ALLGATHER: st = pccl_allgather(sp, rp, cnt, d, g_comm); break;
    case PCCL_COLL_REDUCE_SCATTER: st = pccl_reduce_scatter(sp, rp, cnt, d, op, g_comm); break;
    case PCCL_COLL_ALLREDUCE: st = pccl_allreduce(sp, rp, cnt, d, op, g_comm); break;
    case PCCL_COLL_BROADCAST: st = pccl_broadcast(sp, rp, cnt, d, root, g_comm); break;
    case PCCL_COLL_REDUCE: st = pccl_reduce(sp, rp, cnt, d, op, root, g_comm); break;
    case PCCL_COLL_SCATTER: st = pccl_scatter(sp, rp, cnt, d, root, g_comm); break;
    case PCCL_COLL_GATHER: st = pccl_gather(sp, rp, cnt, d, root, g_comm); break;
    case PCCL_COLL_ALLTOALL: st = pccl_alltoall(sp, rp, cnt, d, g_comm); break;
    case PCCL_COLL_SCAN: st = pccl_scan(sp, rp, cnt, d, op, g_comm); break;
    case PCCL_COLL_EXSCAN: st = pccl_exscan(sp, rp, cnt, d, op, g_comm); break;
    default: break;
  }
  const double t1 = cpu_now();
  g_t_call += t1 - t0;
  if (st != PCCL_OK) {
    const char *le = pccl_last_error(g_comm);
    snprintf(msg, sizeof msg, "returned status %d (%s), last error: %s", (int)st,
             pccl_status_string(st), le ? le : "(null)");
    report_msg(c, msg);
    ok = 0;
    goto out; /* outputs are meaningless after a failed call */
  }
  if (cnt > 0) {
    const char *la = pccl_comm_last_algo(g_comm);
    if (g_algo) {
      /* a parameterized algorithm forced without ":k" reports its default k */
      size_t fl = strlen(g_algo);
      if (!la || strncmp(la, g_algo, fl) != 0 || (la[fl] != '\0' && (la[fl] != ':' || strchr(g_algo, ':')))) {
        snprintf(msg, sizeof msg, "pccl_comm_last_algo says \"%s\", forced \"%s\"",
                 la ? la : "(null)", g_algo);
        report_msg(c, msg);
        ok = 0;
      }
    } else if (!la || !algo_known(la)) {
      snprintf(msg, sizeof msg, "pccl_comm_last_algo says \"%s\", not an algorithm of %s",
               la ? la : "(null)", rc_coll_names[c->coll]);
      report_msg(c, msg);
      ok = 0;
    }
  }
  for (int i = 0; i < nchk; i++)
    if (!run_check(c, &chk[i], sent)) ok = 0;
  g_t_check += cpu_now() - t1;
  {
    long long where = 0;
    if (!rc_buf_guards_ok(&A, &where) || (haveB && !rc_buf_guards_ok(&B, &where))) {
      snprintf(msg, sizeof msg, "wrote outside its buffers (byte offset %lld from a buffer start)",
               where);
      report_msg(c, msg);
      ok = 0;
    }
  }
out:
  return ok;
#undef ALLOC
#undef CHECK
}

/* ---- matrix -------------------------------------------------------------- */

static unsigned char *g_fail; /* per case: 1 if failed on this rank */
static size_t g_ncases, g_capcases;
static uint32_t g_seed = 1;

static void record(int ok) {
  if (g_ncases == g_capcases) {
    g_capcases = g_capcases ? 2 * g_capcases : 1024;
    g_fail = (unsigned char *)realloc(g_fail, g_capcases);
    if (!g_fail) {
      fprintf(stderr, "rank %d: out of memory\n", g_rank);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
  }
  g_fail[g_ncases++] = ok ? 0 : 1;
}

/* Runs in-place and out-of-place for every root of the collective. */
static void run_variants(pccl_coll_t coll, pccl_dtype_t dtype, int op, size_t count, kind_t kind) {
  int roots[3], nroots = 0;
  if (rc_is_rooted(coll)) {
    roots[nroots++] = 0;
    if (g_n > 2) roots[nroots++] = g_n / 2;
    if (g_n > 1) roots[nroots++] = g_n - 1;
  } else {
    roots[nroots++] = -1;
  }
  const uint32_t seed = g_seed++; /* variants share inputs (see cache_get) */
  /* an all-to-all also in place on the even ranks only: pccl tells in
   * place by each rank's pointers, and a node's direct form, which cannot
   * run in place, must then take every rank to the same path */
  int forms = coll == PCCL_COLL_ALLTOALL && g_n > 1 ? 3 : 2;
  for (int ri = 0; ri < nroots; ri++)
    for (int inplace = 0; inplace < forms; inplace++) {
      tcase_t c = {coll, dtype, op, count, inplace, roots[ri], kind, seed};
      record(run_case(&c));
    }
}

/* The kind of inputs an op is checked on. */
static kind_t kind_for(int op) {
  if (op == PCCL_PROD) return K_PROD;
  return op >= PCCL_BAND && op <= PCCL_BXOR ? K_BITS : K_SMALL;
}

/* Which (dtype, op) pairs the matrix runs: every one with --ops all; by
 * default the ten first types with the five first ops (arithmetic, the
 * bulk of real use), and each later type and op once or twice: the kernels
 * are algorithm-independent (test_kernels checks them all), what each
 * algorithm must get right for them is the element size (16-byte pairs)
 * and carrying the op through. */
static int g_all_ops;
static int in_matrix(pccl_dtype_t d, int op) {
  static const struct { pccl_dtype_t d; int op; } extra[] = {
      {PCCL_INT16, PCCL_SUM},        {PCCL_UINT16, PCCL_MAX},     {PCCL_INT32, PCCL_LAND},
      {PCCL_UINT8, PCCL_LOR},        {PCCL_INT64, PCCL_LXOR},     {PCCL_UINT32, PCCL_BAND},
      {PCCL_INT16, PCCL_BOR},        {PCCL_UINT64, PCCL_BXOR},    {PCCL_BOOL, PCCL_LAND},
      {PCCL_BOOL, PCCL_LXOR},        {PCCL_FLOAT_INT, PCCL_MAXLOC}, {PCCL_DOUBLE_INT, PCCL_MINLOC},
      {PCCL_INT64_INT, PCCL_MAXLOC}, {PCCL_INT32_INT, PCCL_MINLOC}, {PCCL_INT16_INT, PCCL_MAXLOC}};
  if (!rc_op_defined(d, op)) return 0;
  if (g_all_ops || (d <= PCCL_FLOAT64 && op <= PCCL_AVG)) return 1;
  for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++)
    if (extra[i].d == d && extra[i].op == op) return 1;
  return 0;
}

static void run_matrix(pccl_coll_t coll, int quick) {
  const size_t counts[] = {0, 1, 7, 1000};
  const int red = rc_is_reduction(coll);
  /* The large cases: 2^20 + 3 elements (odd, so no power of two divides
   * them). A collective of one block per rank moves n blocks, so there the
   * block shrinks with n to keep about 2^21 elements a rank: 2^18 + 3 on 8
   * ranks, still many rounds of the node segment and of every pipeline
   * (an 8-rank hierarchical reduce-scatter's 16 large cases took 9.8 of its
   * 11 s with 2^20 + 3; the test took 3.5 s with this). */
  size_t big = ((size_t)1 << 20) + 3;
  if (g_n > 2 && (coll == PCCL_COLL_ALLGATHER || coll == PCCL_COLL_GATHER ||
                  coll == PCCL_COLL_REDUCE_SCATTER || coll == PCCL_COLL_SCATTER ||
                  coll == PCCL_COLL_ALLTOALL))
    big = (((size_t)1 << 21) / (size_t)g_n & ~(size_t)1) + 3;
  {
    /* Size the buffer pool for the largest case at once: growing it step
     * by step would touch fresh pages again and again. The largest cases
     * are of 8-byte elements at most (16-byte pairs go up to 1000), and
     * every page reserved is touched: on 8 ranks a reduce-scatter's pool
     * was 128 MiB a rank at 16 bytes. */
    const size_t maxc = quick ? 1000 : big, n = (size_t)g_n, es = quick ? 16 : 8;
    size_t se = maxc, re = maxc;
    switch (coll) {
      case PCCL_COLL_ALLGATHER:
      case PCCL_COLL_GATHER: re = n * maxc; break;
      case PCCL_COLL_REDUCE_SCATTER:
      case PCCL_COLL_SCATTER: se = n * maxc; break;
      case PCCL_COLL_ALLTOALL: se = re = n * maxc; break;
      default: break;
    }
    rc_buf_t tmp;
    if (!pool_buf(0, &tmp, es * (se > re ? se : re), 16 * g_shift, 0) ||
        !pool_buf(1, &tmp, es * re, 16 * g_shift, 0))
      fprintf(stderr, "rank %d: could not reserve the test buffers\n", g_rank);
  }
  for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++)
    for (int d = 0; d < PCCL_DTYPE_COUNT; d++) {
      if (!red) { /* data movement: the ten first types, and a 16-byte pair */
        if (d <= PCCL_FLOAT64 || d == PCCL_DOUBLE_INT)
          run_variants(coll, (pccl_dtype_t)d, -1, counts[ci], K_DATA);
        continue;
      }
      for (int op = 0; op < PCCL_OP_COUNT; op++)
        if (in_matrix((pccl_dtype_t)d, op)) run_variants(coll, (pccl_dtype_t)d, op, counts[ci], kind_for(op));
    }
  if (red) {
    /* Integer wrap-around: a saturating or widening implementation fails. */
    const pccl_dtype_t ints[] = {PCCL_INT8,  PCCL_UINT8, PCCL_INT16, PCCL_UINT16,
                                 PCCL_INT32, PCCL_UINT32, PCCL_INT64, PCCL_UINT64};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
      run_variants(coll, ints[i], PCCL_SUM, 1000, K_WRAPSUM);
      run_variants(coll, ints[i], PCCL_AVG, 1000, K_WRAPSUM);
      run_variants(coll, ints[i], PCCL_PROD, 1000, K_WRAPPROD);
    }
  }
  if (!quick) {
    if (red) {
      const pccl_dtype_t sums[] = {PCCL_INT8, PCCL_INT32, PCCL_FLOAT32, PCCL_FLOAT64,
                                   PCCL_BFLOAT16};
      for (size_t i = 0; i < sizeof sums / sizeof sums[0]; i++)
        run_variants(coll, sums[i], PCCL_SUM, big, K_SMALL);
      run_variants(coll, PCCL_FLOAT32, PCCL_MAX, big, K_SMALL);
      /* one round of the node segment's two-round all-reduce (160 KiB: past
       * its 128 KiB threshold on 2 ranks, within its 256 KiB buffer), with
       * slices that do not divide evenly; AVG divides each slice once */
      run_variants(coll, PCCL_FLOAT64, PCCL_SUM, 20011, K_SMALL);
      run_variants(coll, PCCL_FLOAT64, PCCL_AVG, 20011, K_SMALL);
    } else {
      /* data movement depends on the element size only: 1, 2, 4, 8 bytes */
      const pccl_dtype_t dts[] = {PCCL_INT8, PCCL_BFLOAT16, PCCL_FLOAT32, PCCL_FLOAT64};
      for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++)
        run_variants(coll, dts[i], -1, big, K_DATA);
    }
  }
}

/* ---- main ---------------------------------------------------------------- */

static void usage(void) {
  if (g_rank == 0)
    fprintf(stderr,
            "usage: test_coll --coll NAME [--algo NAME] [--quick] [--max-report K] [--timing]\n"
            "                 [--mem pccl]  (buffers from pccl_mem_alloc)\n"
            "                 [--ops all]   (every dtype x op pccl defines)\n"
            "                 [--shift K]   (buffers K elements off 64-byte alignment)\n"
            "  NAME: allgather reducescatter allreduce broadcast reduce scatter gather "
            "alltoall scan exscan\n");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_n);

  int coll = -1, quick = 0, timing = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--coll") == 0 && i + 1 < argc) {
      const char *name = argv[++i];
      for (int k = 0; k < PCCL_COLL_COUNT; k++)
        if (strcmp(name, rc_coll_names[k]) == 0) coll = k;
      if (coll >= PCCL_COLL_ALLGATHERV) coll = -1; /* the v-collectives: test_vcolls */
      if (coll < 0) {
        if (g_rank == 0) fprintf(stderr, "test_coll: unknown collective \"%s\"\n", name);
        usage();
        MPI_Finalize();
        return 2;
      }
    } else if (strcmp(argv[i], "--algo") == 0 && i + 1 < argc) {
      g_algo = argv[++i];
    } else if (strcmp(argv[i], "--mem") == 0 && i + 1 < argc && strcmp(argv[i + 1], "pccl") == 0) {
      g_pccl_mem = 1;
      i++;
    } else if (strcmp(argv[i], "--shift") == 0 && i + 1 < argc) {
      char *end;
      const char *arg = argv[++i];
      unsigned long k = strtoul(arg, &end, 10);
      if (*arg < '0' || *arg > '9' || *end || k > 63) { /* a shift of 64 elements realigns */
        if (g_rank == 0) fprintf(stderr, "test_coll: --shift wants 0-63, not \"%s\"\n", arg);
        MPI_Finalize();
        return 2;
      }
      g_shift = k;
    } else if (strcmp(argv[i], "--quick") == 0) {
      quick = 1;
    } else if (strcmp(argv[i], "--ops") == 0 && i + 1 < argc && strcmp(argv[i + 1], "all") == 0) {
      g_all_ops = 1;
      i++;
    } else if (strcmp(argv[i], "--timing") == 0) {
      timing = 1;
    } else if (strcmp(argv[i], "--max-report") == 0 && i + 1 < argc) {
      g_max_report = atol(argv[++i]);
    } else {
      usage();
      MPI_Finalize();
      return 2;
    }
  }
  if (coll < 0) {
    usage();
    MPI_Finalize();
    return 2;
  }

  /* The references themselves: half-precision conversions. */
  {
    long bad = rc_selftest_half();
    if (bad) fprintf(stderr, "rank %d: float16/bfloat16 reference self-test: %ld mismatches\n",
                     g_rank, bad);
    record(bad == 0);
  }

  pccl_status_t st = pccl_comm_create_mpi(MPI_COMM_WORLD, &g_comm);
  int setup_ok = st == PCCL_OK, all_ok;
  if (!setup_ok)
    fprintf(stderr, "rank %d: pccl_comm_create_mpi returned %d: %s\n", g_rank, (int)st,
            pccl_last_error(NULL));
  MPI_Allreduce(&setup_ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all_ok) {
    if (g_rank == 0) printf("0 passed, 1 failed\n");
    MPI_Finalize();
    return 1;
  }
  if (g_algo) {
    st = pccl_comm_set_algo(g_comm, (pccl_coll_t)coll, g_algo);
    setup_ok = st == PCCL_OK;
    if (!setup_ok)
      fprintf(stderr, "rank %d: pccl_comm_set_algo(%s, \"%s\") returned %d: %s\n", g_rank,
              rc_coll_names[coll], g_algo, (int)st, pccl_last_error(g_comm));
    MPI_Allreduce(&setup_ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
      pccl_comm_destroy(g_comm);
      if (g_rank == 0) printf("0 passed, 1 failed\n");
      MPI_Finalize();
      return 1;
    }
  }
  {
    int total = 0;
    if (pccl_algo_list((pccl_coll_t)coll, g_algos, 64, &total) != PCCL_OK) total = 0;
    g_nalgos = total < 64 ? total : 64;
  }

  run_matrix((pccl_coll_t)coll, quick);

  st = pccl_comm_destroy(g_comm);
  if (st != PCCL_OK)
    fprintf(stderr, "rank %d: pccl_comm_destroy returned %d\n", g_rank, (int)st);
  record(st == PCCL_OK);

  /* Every rank ran the same matrix; a case failed if it failed anywhere. */
  long long nc = (long long)g_ncases, ncmin = 0, ncmax = 0;
  MPI_Allreduce(&nc, &ncmin, 1, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&nc, &ncmax, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  long passed = 0, failed = 0;
  if (ncmin != ncmax) {
    if (g_rank == 0) fprintf(stderr, "ranks ran different numbers of cases\n");
    failed = 1;
  } else {
    unsigned char *all = (unsigned char *)malloc(g_ncases ? g_ncases : 1);
    MPI_Allreduce(g_fail, all, (int)g_ncases, MPI_UNSIGNED_CHAR, MPI_MAX, MPI_COMM_WORLD);
    for (size_t i = 0; i < g_ncases; i++) {
      if (all[i])
        failed++;
      else
        passed++;
    }
    free(all);
  }
  if (g_reported > g_max_report)
    fprintf(stderr, "rank %d: %ld failure details not shown (--max-report)\n", g_rank,
            g_reported - g_max_report);
  if (timing) {
    double t[3] = {g_t_setup, g_t_call, g_t_check}, tmax[3];
    MPI_Reduce(t, tmax, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (g_rank == 0)
      fprintf(stderr, "CPU time (max over ranks): setup %.3f s, pccl calls %.3f s, checks %.3f s\n",
              tmax[0], tmax[1], tmax[2]);
  }
  if (g_rank == 0) {
    printf("%ld passed, %ld failed\n", passed, failed);
    fflush(stdout);
  }
  free(g_fail);
  MPI_Finalize();
  return failed ? 1 : 0;
}
