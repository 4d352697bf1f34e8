/* test_zcoll.c - the compressed (lossy) collectives of src/algo/zcoll.c, all
 * ranks' schedules run in one process over the in-memory transport (no MPI),
 * driven as coll.c drives them: generate each rank's schedule, split the
 * user's bound over its lossy stages, give every executor the codec
 * settings, run.
 *
 * Matrix: every lossy row of the registry x p = 1..20, 31, 32, 33 x counts
 * {1, 2, 33, 1000} x in place or not x roots {0, p-1, p/2} (scatter) x
 * float32 / float64 x sum, avg, min, max (reducing ones) x bounds 1e-2 and
 * 1e-5 of the data's magnitude; the staged transport on one count; float16
 * on a few rank counts. Messages are never split (max_msg 1 GiB); a tiny
 * max_msg must make schedule generation fail with an error status, as
 * compressed streams cannot be cut.
 *
 * Checks, against a reference computed here in long double from every
 * rank's regenerated input:
 *   - every element of every rank's result within the bound (plus the
 *     rounding slack of expected() for sums and averages), NaN and
 *     infinities carried through (the "special" inputs);
 *   - all-reduce and all-gather results bit-identical on every rank;
 *   - the send buffer untouched out of place; the scatter root's own block
 *     exact;
 *   - each schedule's lossy_stages equal to the closed form of zcoll.c's top
 *     comment (expected_stages, written here from that comment), also for
 *     p = 34..130 (schedules only);
 *   - at a loose bound the all-gather changes some values (it compresses);
 *   - a compressing schedule run without codec settings fails with a status.
 * usage: test_zcoll [MAX_P]  (rank counts up to MAX_P only, default 33)
 * Prints "FAIL ..." per failed case and "N passed, M failed"; exits nonzero
 * on any failure. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo.h"
#include "exec.h"
#include "kernels.h"
#include "mem_transport.h"

static int passed, failed;
static int g_max_p = 33; /* argv[1]: rank counts up to this only (valgrind runs) */

/* ---- datatypes, independent of the library's tables ---------------------- */

static size_t esize_of(pccl_dtype_t d) {
  return d == PCCL_FLOAT64 ? 8 : d == PCCL_FLOAT32 ? 4 : 2; /* float16 */
}

/* Unit roundoff of one rounding to nearest in the type. */
static long double unit_roundoff(pccl_dtype_t d) {
  return d == PCCL_FLOAT64 ? 0x1p-53L : d == PCCL_FLOAT32 ? 0x1p-24L : 0x1p-11L;
}

/* IEEE binary16 -> value, every encoding but NaN. */
static long double f16_decode(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  long double v = e == 0    ? ldexpl((long double)m, -24)
                  : e == 31 ? (long double)INFINITY
                            : ldexpl((long double)(1024 + m), e - 25);
  return (h & 0x8000) ? -v : v;
}

/* Value -> binary16, for values exactly representable as normal numbers or
 * zero (the inputs are multiples of 2^-8 below 8 in magnitude). */
static uint16_t f16_encode_exact(double v) {
  uint16_t sign = signbit(v) ? 0x8000 : 0;
  if (v == 0) return sign;
  int e;
  double m = frexp(fabs(v), &e); /* |v| = m 2^e, m in [0.5, 1) */
  return (uint16_t)(sign | (uint16_t)((e + 14) << 10) | (uint16_t)(m * 2048.0 - 1024.0));
}

static long double load(pccl_dtype_t d, const void *buf, size_t i) {
  if (d == PCCL_FLOAT64) return ((const double *)buf)[i];
  if (d == PCCL_FLOAT32) return ((const float *)buf)[i];
  return f16_decode(((const uint16_t *)buf)[i]);
}

/* ---- inputs ---------------------------------------------------------------- */

/* Smooth-ish data: two phase-shifted sine waves per rank (the phase and the
 * amplitude depend on the rank), exact zeros at scattered positions and a
 * whole zero stretch (a codec block) on every third rank. |x| <= MAG.
 * Tabulated once per datatype, as stored in it (float16: multiples of 2^-8,
 * exact in binary16), for every rank and index the matrix reaches. */
#define MAX_P 33
#define MAX_ELEMS (MAX_P * 1000)
#define WAVE_N 4096
#define MAG 3.0
static double g_wave[WAVE_N];
/* float16, float32, float64, then float32 and float64 with special values
 * (slots 4 and 5): [rank * MAX_ELEMS + j] */
static double *g_in[6];
static int g_special; /* the current case's inputs hold special values */

static int dtype_slot(pccl_dtype_t d) { return d == PCCL_FLOAT64 ? 2 : d == PCCL_FLOAT32; }

static double raw_value(int rank, size_t j) {
  if (((size_t)rank * 3 + j * 7) % 13 == 0) return 0.0;
  if (rank % 3 == 0 && j >= 64 && j < 96) return 0.0;
  return g_wave[(j + 97 * (size_t)rank) % WAVE_N] * (1.0 + 0.05 * (rank % 7)) +
         0.25 * g_wave[(3 * j + 11 * (size_t)rank + 500) % WAVE_N];
}

/* The same with, at some indices, what a codec must carry through or store
 * exactly: NaN from one rank, +Inf from odd ranks, -Inf from rank 1 (never
 * at the same index as +Inf), values far above any bound, a float32
 * subnormal, negative zero. */
static double special_value(int rank, size_t j) {
  switch (j % 61) {
    case 17: return rank == 0 ? NAN : 1.0;
    case 29: return rank % 2 ? INFINITY : 2.0;
    case 41: return rank == 1 ? -INFINITY : -0.5;
    case 47: return 1e30 * (rank + 1);
    case 53: return 1e-40;
    case 59: return -0.0;
    default: return raw_value(rank, j);
  }
}

static int init_inputs(void) {
  for (int k = 0; k < WAVE_N; k++) g_wave[k] = 2.0 * sin(6.283185307179586 * k / 400.0);
  for (int t = 0; t < 6; t++) {
    if (t == 3) continue; /* no special float16 */
    g_in[t] = malloc((size_t)MAX_P * MAX_ELEMS * sizeof(double));
    if (!g_in[t]) return 0;
  }
  for (int r = 0; r < MAX_P; r++)
    for (size_t j = 0; j < MAX_ELEMS; j++) {
      double v = raw_value(r, j);
      g_in[0][(size_t)r * MAX_ELEMS + j] = nearbyint(v * 256.0) / 256.0;
      g_in[1][(size_t)r * MAX_ELEMS + j] = (float)v;
      g_in[2][(size_t)r * MAX_ELEMS + j] = v;
      v = special_value(r, j);
      g_in[4][(size_t)r * MAX_ELEMS + j] = (float)v;
      g_in[5][(size_t)r * MAX_ELEMS + j] = v;
    }
  return 1;
}

/* Element j of rank r's input, exactly (computed beyond the tables). */
static double input(pccl_dtype_t d, int rank, size_t j) {
  if (rank < MAX_P && j < MAX_ELEMS)
    return g_in[dtype_slot(d) + 3 * g_special][(size_t)rank * MAX_ELEMS + j];
  double v = g_special ? special_value(rank, j) : raw_value(rank, j);
  return d == PCCL_FLOAT64 ? v : d == PCCL_FLOAT32 ? (float)v : nearbyint(v * 256.0) / 256.0;
}

/* The same element stored at buf[at] in dtype d. */
static void store_input(pccl_dtype_t d, void *buf, size_t at, int rank, size_t j) {
  double v = input(d, rank, j);
  if (d == PCCL_FLOAT64) ((double *)buf)[at] = v;
  else if (d == PCCL_FLOAT32) ((float *)buf)[at] = (float)v;
  else ((uint16_t *)buf)[at] = f16_encode_exact(v);
}

/* Buffers reused from case to case (per rank: send, recv, scratch, and the
 * expected send buffer), so the matrix does not spend its time faulting
 * fresh pages in. */
static unsigned char *g_pool[4 * MAX_P];
static size_t g_pool_cap[4 * MAX_P];

static unsigned char *pool_get(int rank, int kind, size_t bytes) {
  int i = 4 * rank + kind;
  if (bytes > g_pool_cap[i]) {
    free(g_pool[i]);
    g_pool[i] = malloc(bytes);
    g_pool_cap[i] = g_pool[i] ? bytes : 0;
  }
  return g_pool[i];
}

/* ---- one case ------------------------------------------------------------- */

typedef struct {
  const pccl_algo_t *al;
  int p, root;
  size_t count;
  int inplace;
  pccl_dtype_t dtype;
  pccl_op_t op; /* reducing collectives only */
  double rel;   /* the bound, relative to MAG */
  const pccl_transport_t *tp;
  int special; /* inputs with NaN, infinities, huge and subnormal values */
} zcase_t;

typedef struct {
  unsigned char *send, *recv; /* what the rank passes (may alias, may be NULL) */
  size_t send_elems, recv_elems;
  int aliased;
  long long send_in_recv;
} rank_bufs_t;

static int reduces(pccl_coll_t c) {
  return c == PCCL_COLL_ALLREDUCE || c == PCCL_COLL_REDUCE_SCATTER;
}
static int blocks_in(pccl_coll_t c) {
  return c == PCCL_COLL_REDUCE_SCATTER || c == PCCL_COLL_SCATTER;
}
static int blocks_out(pccl_coll_t c) { return c == PCCL_COLL_ALLGATHER; }

/* Compressions that can feed one result element, from zcoll.c's top comment:
 * zrecdbl 2(P-1) + (P+1 when r > 0), P = 2^floor(log2 p), r = p - P;
 * zring all-reduce p; zring all-gather 1; zring reduce-scatter p-1;
 * zbinomial scatter 1. With one rank the reducing ones compress nothing
 * (their count is then 0; zring all-reduce's p would say 1). UINT32_MAX: a
 * lossy row this test does not know (add its formula). */
static uint32_t expected_stages(const pccl_algo_t *al, int p) {
  if (al->coll == PCCL_COLL_ALLREDUCE && strcmp(al->name, "zrecdbl") == 0) {
    int P = 1;
    while (2 * P <= p) P *= 2;
    return (uint32_t)(2 * (P - 1) + (p > P ? P + 1 : 0));
  }
  if (al->coll == PCCL_COLL_ALLREDUCE && strcmp(al->name, "zring") == 0)
    return p == 1 ? 0 : (uint32_t)p;
  if (al->coll == PCCL_COLL_ALLGATHER && strcmp(al->name, "zring") == 0) return 1;
  if (al->coll == PCCL_COLL_REDUCE_SCATTER && strcmp(al->name, "zring") == 0)
    return (uint32_t)(p - 1);
  if (al->coll == PCCL_COLL_SCATTER && strcmp(al->name, "zbinomial") == 0) return 1;
  return UINT32_MAX;
}

/* The per-compression bound for a schedule of `stages`, as coll.c's
 * lossy_plan promises it: the largest e with e x stages <= bound. */
static double stage_bound(double bound, uint32_t stages) {
  if (stages == 0) return bound;
  double e = bound / stages;
  while (e * stages > bound) e = nextafter(e, 0.0);
  return e;
}

/* Lays out one rank's buffers as a user would (test_sched.c's layouts) and
 * fills the input; receive buffers start as NaN-free garbage (0x5A bytes). */
static int setup(rank_bufs_t *b, const zcase_t *zc, int rank) {
  pccl_coll_t coll = zc->al->coll;
  size_t c = zc->count, p = (size_t)zc->p, es = esize_of(zc->dtype);
  int inplace = zc->inplace;
  memset(b, 0, sizeof(*b));
  b->send_elems = blocks_in(coll) ? c * p : c;
  b->recv_elems = blocks_out(coll) ? c * p : c;
  int uses_send = !(coll == PCCL_COLL_SCATTER && rank != zc->root);
  if (coll == PCCL_COLL_SCATTER && rank != zc->root) inplace = 0;
  if (inplace) {
    size_t owner = (size_t)(coll == PCCL_COLL_SCATTER ? zc->root : rank);
    if (b->recv_elems >= b->send_elems) {
      b->recv = pool_get(rank, 1, b->recv_elems * es);
      long long shift = blocks_out(coll) ? (long long)(owner * c) : 0;
      b->send = b->recv ? b->recv + shift * (long long)es : NULL;
      b->send_in_recv = shift;
    } else {
      b->send = pool_get(rank, 0, b->send_elems * es);
      b->recv = b->send ? b->send + owner * c * es : NULL;
      b->send_in_recv = -(long long)(owner * c);
    }
    b->aliased = 1;
  } else {
    if (uses_send) b->send = pool_get(rank, 0, b->send_elems * es);
    b->recv = pool_get(rank, 1, b->recv_elems * es);
    if (b->recv) memset(b->recv, 0x5A, b->recv_elems * es);
  }
  if (!b->recv || (uses_send && !b->send)) return 0;
  if (b->send)
    for (size_t i = 0; i < b->send_elems; i++) store_input(zc->dtype, b->send, i, rank, i);
  return 1;
}

/* Exact reduction over ranks of element j of every rank's input; *abs_sum
 * gets sum |x|. A NaN or infinite answer (special inputs, sum and average
 * only) goes to *nonfinite by IEEE rules, decided in double (valgrind
 * mangles long double infinities), with 0 there for a finite one. */
static long double reduce_ref(const zcase_t *zc, size_t j, long double *abs_sum,
                              double *nonfinite) {
  int nan = 0, pinf = 0, ninf = 0;
  long double acc = 0, s = 0;
  for (int q = 0; q < zc->p; q++) {
    double xd = input(zc->dtype, q, j);
    nan |= isnan(xd);
    pinf |= xd == INFINITY;
    ninf |= xd == -INFINITY;
    long double x = xd;
    s += fabsl(x);
    if (q == 0) acc = x;
    else if (zc->op == PCCL_MIN) acc = x < acc ? x : acc;
    else if (zc->op == PCCL_MAX) acc = x > acc ? x : acc;
    else acc += x;
  }
  *nonfinite = nan || (pinf && ninf) ? NAN : pinf ? INFINITY : ninf ? -INFINITY : 0.0;
  if (zc->op == PCCL_AVG) acc /= zc->p;
  *abs_sum = s;
  return acc;
}

/* How far element i of `rank`'s result may be from the exact one (*want).
 *
 * The bound A, plus A 2^-40: the codec checks |decoded - x| <= e in double
 * arithmetic, exact for float32/float16 and within half an ulp of the
 * difference for float64 (a relative 2^-53 of each stage's e).
 *
 * Sums: the API bounds the error beyond the rounding of the reduction.
 * p-1 additions feed one element (a chain in the ring, a tree in recursive
 * doubling); each rounds by at most u |partial| with |partial| <= S + A
 * (S = sum |x_i|, A covering the decoded operands' drift) to first order.
 * So rounding adds at most (p-1) u (S + A); twice that covers the
 * second-order terms. AVG divides that by p and rounds once more:
 * u (|avg| + A). Min and max neither round nor accumulate: no slack.
 * All-gather and scatter move decoded values: no slack either. */
static long double expected(const zcase_t *zc, int rank, size_t i, long double *want,
                            double *nonfinite) {
  long double A = (long double)(zc->rel * MAG), S = 0;
  long double tol = A * (1.0L + 0x1p-40L);
  size_t c = zc->count;
  double x;
  switch (zc->al->coll) {
    case PCCL_COLL_ALLGATHER:
    case PCCL_COLL_SCATTER:
      x = zc->al->coll == PCCL_COLL_ALLGATHER ? input(zc->dtype, (int)(i / c), i % c)
                                              : input(zc->dtype, zc->root, (size_t)rank * c + i);
      *want = x;
      *nonfinite = isfinite(x) ? 0.0 : x;
      return tol;
    case PCCL_COLL_REDUCE_SCATTER: *want = reduce_ref(zc, (size_t)rank * c + i, &S, nonfinite); break;
    default: *want = reduce_ref(zc, i, &S, nonfinite); break;
  }
  if (zc->op == PCCL_SUM || zc->op == PCCL_AVG) {
    long double u = unit_roundoff(zc->dtype);
    long double slack = 2.0L * (zc->p - 1) * u * (S + A);
    if (zc->op == PCCL_AVG) slack = slack / zc->p + u * (fabsl(*want) + A);
    tol += slack;
  }
  return tol;
}

static void describe(char *out, size_t n, const zcase_t *zc) {
  snprintf(out, n, "%s/%s p=%d root=%d count=%zu inplace=%d %s %s bound=%g%s%s",
           pccl_coll_name(zc->al->coll), zc->al->name, zc->p, zc->root, zc->count, zc->inplace,
           zc->dtype == PCCL_FLOAT64 ? "float64" : zc->dtype == PCCL_FLOAT32 ? "float32" : "float16",
           reduces(zc->al->coll) ? pccl_op_name(zc->op) : "-", zc->rel * MAG,
           zc->tp == &pccl_mem_transport_staged ? " staged" : "", zc->special ? " special" : "");
}

static int check(const zcase_t *zc, rank_bufs_t *bufs) {
  char what[256];
  describe(what, sizeof what, zc);
  size_t es = esize_of(zc->dtype);
  pccl_coll_t coll = zc->al->coll;
  int same_everywhere = coll == PCCL_COLL_ALLREDUCE || coll == PCCL_COLL_ALLGATHER;
  for (int r = 0; r < zc->p; r++) {
    rank_bufs_t *b = &bufs[r];
    /* Where every rank gets the same answer, rank 0's is checked against
     * the reference and the others' bits against rank 0's. */
    for (size_t i = 0; i < b->recv_elems && (r == 0 || !same_everywhere); i++) {
      long double want, got = load(zc->dtype, b->recv, i);
      double nf, gd = (double)load(zc->dtype, b->recv, i);
      long double tol = expected(zc, r, i, &want, &nf);
      /* NaN stays NaN, an infinity stays itself (pccl.h), the rest bounded. */
      if (nf != 0.0 ? (isnan(nf) ? isnan(gd) : gd == nf)
                    : isfinite(gd) && fabsl(got - want) <= tol)
        continue;
      printf("FAIL %s: rank %d element %zu is %.17Lg, want %.17Lg (error %.3Lg > %.3Lg)\n", what,
             r, i, got, want, fabsl(got - want), tol);
      return 0;
    }
    /* The data did go through the codec: at a loose bound some of 1000
     * smooth values come back changed (a silent fall back to an exact
     * schedule would pass every other check). */
    if (coll == PCCL_COLL_ALLGATHER && r == 0 && zc->count >= 1000 && zc->rel >= 1e-2 &&
        zc->dtype != PCCL_FLOAT16) {
      size_t changed = 0;
      for (size_t i = 0; i < b->recv_elems; i++) {
        long double want;
        double nf;
        expected(zc, r, i, &want, &nf);
        changed += load(zc->dtype, b->recv, i) != want;
      }
      if (changed == 0) {
        printf("FAIL %s: every element exact: was anything compressed?\n", what);
        return 0;
      }
    }
    if (same_everywhere && r > 0 &&
        memcmp(b->recv, bufs[0].recv, b->recv_elems * es) != 0) {
      printf("FAIL %s: rank %d's result differs from rank 0's\n", what, r);
      return 0;
    }
    if (coll == PCCL_COLL_SCATTER && r == zc->root)
      for (size_t i = 0; i < zc->count; i++) {
        unsigned char own[8];
        store_input(zc->dtype, own, 0, r, (size_t)r * zc->count + i);
        if (memcmp(b->recv + i * es, own, es) != 0) {
          printf("FAIL %s: the root's own block is not exact at element %zu\n", what, i);
          return 0;
        }
      }
    if (!b->aliased && b->send) {
      unsigned char *want = pool_get(r, 3, b->send_elems * es);
      if (!want) {
        printf("FAIL %s: out of memory\n", what);
        return 0;
      }
      for (size_t i = 0; i < b->send_elems; i++) store_input(zc->dtype, want, i, r, i);
      if (memcmp(b->send, want, b->send_elems * es) != 0) {
        size_t i = 0;
        while (memcmp(b->send + i * es, want + i * es, es) == 0) i++;
        printf("FAIL %s: rank %d's send buffer modified at element %zu\n", what, r, i);
        return 0;
      }
    }
  }
  return 1;
}

/* Builds rank r's schedule as coll.c does (the generator, then AVG's
 * division where the result lands). */
static pccl_status_t build(const zcase_t *zc, int r, const rank_bufs_t *b, size_t max_msg,
                           pccl_sched_t *out) {
  pccl_sb_t *sb;
  pccl_status_t st = pccl_sb_create(zc->p, r, esize_of(zc->dtype), b ? b->aliased : 0,
                                    b ? b->send_in_recv : 0, max_msg, &sb);
  if (st != PCCL_OK) return st;
  pccl_coll_args_t a = {zc->al->coll, zc->p, r, zc->root, zc->count, b ? b->aliased : 0,
                        NULL, PCCL_INTRA_RING, zc->al->k, NULL, NULL, NULL};
  st = zc->al->generate(sb, &a);
  if (st != PCCL_OK) {
    pccl_sb_destroy(sb);
    return st;
  }
  if (reduces(zc->al->coll) && zc->op == PCCL_AVG)
    pccl_sb_divide(sb, pccl_rg(PCCL_BUF_RECV, 0, zc->count), zc->p);
  return pccl_sb_finish(sb, out);
}

static void run_case(const zcase_t *zc) {
  int p = zc->p;
  size_t es = esize_of(zc->dtype);
  pccl_sched_t *sched = calloc((size_t)p, sizeof(*sched));
  rank_bufs_t *bufs = calloc((size_t)p, sizeof(*bufs));
  pccl_exec_t *execs = calloc((size_t)p, sizeof(*execs));
  unsigned char **tmp = calloc((size_t)p, sizeof(*tmp));
  pccl_exec_ws_t *ws = calloc((size_t)p, sizeof(*ws));
  pccl_exec_lossy_t *lossy = calloc((size_t)p, sizeof(*lossy));
  pccl_mem_world_t *world = NULL;
  char what[256];
  describe(what, sizeof what, zc);
  g_special = zc->special;
  int ok = sched && bufs && execs && tmp && ws && lossy &&
           pccl_mem_world_create(p, &world) == PCCL_OK;
  uint32_t want_stages = expected_stages(zc->al, p);
  pccl_op_t kop = reduces(zc->al->coll) ? zc->op : PCCL_SUM;
  for (int r = 0; ok && r < p; r++) {
    if (!setup(&bufs[r], zc, r)) {
      printf("FAIL %s: out of memory\n", what);
      ok = 0;
      break;
    }
    pccl_status_t st = build(zc, r, &bufs[r], (size_t)1 << 30, &sched[r]);
    if (st != PCCL_OK) {
      printf("FAIL %s: rank %d's schedule generation: %s\n", what, r, pccl_status_string(st));
      ok = 0;
      break;
    }
    if (sched[r].lossy_stages != want_stages) {
      printf("FAIL %s: rank %d's schedule has lossy_stages %u, the closed form says %u\n", what,
             r, sched[r].lossy_stages, want_stages);
      ok = 0;
    }
    lossy[r] = (pccl_exec_lossy_t){PCCL_CODEC_SZP, zc->dtype,
                                   stage_bound(zc->rel * MAG, sched[r].lossy_stages)};
    size_t tmp_bytes = (sched[r].tmp_elems ? sched[r].tmp_elems : 1) * es;
    tmp[r] = pool_get(r, 2, tmp_bytes);
    if (tmp[r]) memset(tmp[r], 0xAB, tmp_bytes);
    ok = ok && tmp[r] &&
         pccl_exec_init(&execs[r], &sched[r], bufs[r].send, bufs[r].recv, tmp[r], es,
                        pccl_kernel_reduce(zc->dtype, kop), pccl_kernel_divide(zc->dtype), zc->tp,
                        pccl_mem_world_rank(world, r), &ws[r]) == PCCL_OK;
    if (ok) pccl_exec_set_lossy(&execs[r], &lossy[r]);
  }
  if (ok) {
    pccl_status_t st = pccl_mem_run_all(execs, p);
    if (st != PCCL_OK) {
      printf("FAIL %s: %s (deadlock, size mismatch or a codec error)\n", what,
             pccl_status_string(st));
      ok = 0;
    }
  }
  if (ok) ok = check(zc, bufs);
  ok ? passed++ : failed++;
  for (int r = 0; sched && ws && r < p; r++) {
    pccl_exec_ws_free(&ws[r]);
    pccl_sched_free(&sched[r]);
  }
  pccl_mem_world_destroy(world);
  free(sched);
  free(bufs);
  free(execs);
  free(tmp);
  free(ws);
  free(lossy);
}

/* A compressed stream cannot be cut into messages: with a largest message
 * smaller than any stream, every rank that sends or receives one (all of
 * them for p > 1) must get an error status from generation, not a crash
 * and not a schedule. */
static void check_tiny_msg(const pccl_algo_t *al, int p) {
  zcase_t zc = {al, p, p / 2, 1000, 0, PCCL_FLOAT32, PCCL_SUM, 1e-2, &pccl_mem_transport, 0};
  const size_t tiny[] = {sizeof(float), 24}; /* 24: a stream's header alone */
  for (size_t t = 0; t < sizeof tiny / sizeof tiny[0]; t++) {
    int ok = 1;
    for (int r = 0; r < p; r++) {
      pccl_sched_t s;
      pccl_status_t st = build(&zc, r, NULL, tiny[t], &s);
      if (st == PCCL_OK) {
        printf("FAIL %s/%s p=%d rank=%d max_msg=%zu: generation succeeded with streams that "
               "do not fit a message\n",
               pccl_coll_name(al->coll), al->name, p, r, tiny[t]);
        pccl_sched_free(&s);
        ok = 0;
      }
    }
    ok ? passed++ : failed++;
  }
}

/* An executor given no codec settings (pccl_exec_set_lossy not called)
 * cannot run a COMPRESS step: the run must end with an error status. */
static void check_no_lossy(const pccl_algo_t *al, int p) {
  zcase_t zc = {al, p, p - 1, 33, 0, PCCL_FLOAT32, PCCL_SUM, 1e-2, &pccl_mem_transport, 0};
  pccl_sched_t sched[3];
  rank_bufs_t bufs[3];
  pccl_exec_t execs[3];
  pccl_exec_ws_t ws[3];
  unsigned char *tmp[3];
  pccl_mem_world_t *world = NULL;
  memset(sched, 0, sizeof sched);
  memset(ws, 0, sizeof ws);
  g_special = 0;
  int ok = p <= 3 && pccl_mem_world_create(p, &world) == PCCL_OK;
  for (int r = 0; ok && r < p; r++) {
    ok = setup(&bufs[r], &zc, r) && build(&zc, r, &bufs[r], (size_t)1 << 30, &sched[r]) == PCCL_OK;
    tmp[r] = ok ? pool_get(r, 2, (sched[r].tmp_elems + 1) * sizeof(float)) : NULL;
    ok = ok && tmp[r] &&
         pccl_exec_init(&execs[r], &sched[r], bufs[r].send, bufs[r].recv, tmp[r], sizeof(float),
                        pccl_kernel_reduce(PCCL_FLOAT32, PCCL_SUM),
                        pccl_kernel_divide(PCCL_FLOAT32), &pccl_mem_transport,
                        pccl_mem_world_rank(world, r), &ws[r]) == PCCL_OK;
  }
  pccl_status_t st = ok ? pccl_mem_run_all(execs, p) : PCCL_OK;
  if (!ok || st == PCCL_OK) {
    printf("FAIL %s/%s p=%d: %s\n", pccl_coll_name(al->coll), al->name, p,
           ok ? "ran without codec settings" : "setup");
    failed++;
  } else {
    passed++;
  }
  for (int r = 0; r < p && r < 3; r++) {
    pccl_exec_ws_free(&ws[r]);
    pccl_sched_free(&sched[r]);
  }
  pccl_mem_world_destroy(world);
}

/* Vectors longer than zcoll.c's chunk (PCCL_ZCHUNK = 2^18 elements: each
 * chunk its own slot and message), with a remainder chunk: blocks of
 * 2^18 + 33 elements (zring all-reduce: every rank's part of the vector). */
#define ZCHUNK ((size_t)1 << 18)

static void run_chunked(const pccl_algo_t *al) {
  static const int ps[] = {1, 2, 3, 5};
  static const pccl_dtype_t dtypes[] = {PCCL_FLOAT32, PCCL_FLOAT64};
  for (size_t pi = 0; pi < sizeof ps / sizeof ps[0] && ps[pi] <= g_max_p; pi++) {
    int p = ps[pi];
    int split = al->coll == PCCL_COLL_ALLREDUCE && strcmp(al->name, "zring") == 0;
    size_t count = (split ? (size_t)p : 1) * ZCHUNK + 33;
    for (int inplace = 0; inplace < 2; inplace++)
      for (size_t di = 0; di < sizeof dtypes / sizeof dtypes[0]; di++)
        for (int oi = 0; oi < (reduces(al->coll) && di == 0 ? 2 : 1); oi++) {
          zcase_t zc = {al,      p,          p - 1, count,
                        inplace, dtypes[di], oi ? PCCL_MAX : PCCL_SUM,
                        di ? 1e-5 : 1e-2,    &pccl_mem_transport, 0};
          run_case(&zc);
        }
  }
}

/* lossy_stages of rank counts beyond the run matrix: schedules only. */
static void check_stages_only(const pccl_algo_t *al, int p) {
  zcase_t zc = {al, p, p - 1, 1000, 0, PCCL_FLOAT32, PCCL_SUM, 1e-2, &pccl_mem_transport, 0};
  uint32_t want = expected_stages(al, p);
  const int ranks[3] = {0, p / 2, p - 1};
  int ok = 1;
  for (int i = 0; i < 3 && ok; i++) {
    pccl_sched_t s;
    pccl_status_t st = build(&zc, ranks[i], NULL, (size_t)1 << 30, &s);
    if (st != PCCL_OK) {
      printf("FAIL %s/%s p=%d rank=%d: generation: %s\n", pccl_coll_name(al->coll), al->name, p,
             ranks[i], pccl_status_string(st));
      ok = 0;
      break;
    }
    if (s.lossy_stages != want) {
      printf("FAIL %s/%s p=%d rank=%d: lossy_stages %u, the closed form says %u\n",
             pccl_coll_name(al->coll), al->name, p, ranks[i], s.lossy_stages, want);
      ok = 0;
    }
    pccl_sched_free(&s);
  }
  ok ? passed++ : failed++;
}

/* A ring moves no empty block: zring with `count` elements on p ranks, most
 * blocks empty, sends each element's block p - 1 times per ring (two rings
 * for all-reduce, one for all-gather and reduce-scatter, whose blocks are
 * count elements each: none empty) and compresses nothing more. Counted
 * over every rank's schedule against that closed form. */
static void check_empty_blocks(const pccl_algo_t *al, int p, size_t count) {
  if (strcmp(al->name, "zring") != 0) return;
  zcase_t zc = {al, p, 0, count, 0, PCCL_FLOAT32, PCCL_SUM, 1e-2, &pccl_mem_transport, 0};
  int allreduce = al->coll == PCCL_COLL_ALLREDUCE;
  size_t blocks = allreduce ? count : (size_t)p; /* the non-empty ones, one chunk each */
  size_t want = (allreduce ? 2 : 1) * blocks * (size_t)(p - 1), sends = 0;
  int ok = 1;
  for (int r = 0; r < p && ok; r++) {
    pccl_sched_t s;
    if (build(&zc, r, NULL, (size_t)1 << 30, &s) != PCCL_OK) {
      ok = 0;
      break;
    }
    for (uint32_t i = 0; i < s.nsteps; i++) sends += s.steps[i].kind == PCCL_STEP_SEND;
    pccl_sched_free(&s);
  }
  if (!ok || sends != want)
    printf("FAIL %s/%s p=%d count=%zu: %zu sends over all ranks, want %zu\n",
           pccl_coll_name(al->coll), al->name, p, count, sends, want);
  ok && sends == want ? passed++ : failed++;
}

static void run_algo(const pccl_algo_t *al) {
  static const int ps[] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12,
                           13, 14, 15, 16, 17, 18, 19, 20, 31, 32, 33};
  static const size_t counts[] = {1, 2, 33, 1000};
  static const pccl_dtype_t dtypes[] = {PCCL_FLOAT32, PCCL_FLOAT64};
  static const pccl_op_t ops[] = {PCCL_SUM, PCCL_AVG, PCCL_MIN, PCCL_MAX};
  static const double rels[] = {1e-2, 1e-5};
  int nops = reduces(al->coll) ? 4 : 1;
  if (expected_stages(al, 1) == UINT32_MAX) {
    printf("FAIL %s/%s: no closed form of its lossy stages in this test\n",
           pccl_coll_name(al->coll), al->name);
    failed++;
    return;
  }
  for (size_t pi = 0; pi < sizeof ps / sizeof ps[0]; pi++) {
    int p = ps[pi];
    if (p > g_max_p) break;
    int roots[3] = {0, p - 1, p / 2};
    int nroots = al->coll == PCCL_COLL_SCATTER ? 3 : 1;
    for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++)
      for (int inplace = 0; inplace < 2; inplace++)
        for (int ri = 0; ri < nroots; ri++) {
          if (ri > 0 && (roots[ri] == roots[0] || roots[ri] == roots[ri - 1])) continue;
          for (size_t di = 0; di < sizeof dtypes / sizeof dtypes[0]; di++)
            for (int oi = 0; oi < nops; oi++)
              for (size_t bi = 0; bi < sizeof rels / sizeof rels[0]; bi++) {
                zcase_t zc = {al,        p,          roots[ri], counts[ci],
                              inplace,   dtypes[di], ops[oi],   rels[bi],
                              &pccl_mem_transport, 0};
                run_case(&zc);
              }
          /* Once over the transport that leaves fused receives to the
           * executor (MPI peers' path). */
          if (counts[ci] == 33) {
            zcase_t zc = {al,      p,       roots[ri], 33, inplace, PCCL_FLOAT32,
                          ops[0], 1e-2, &pccl_mem_transport_staged, 0};
            run_case(&zc);
          }
        }
    /* float16: reduced through float32 and rounded each step. */
    if (p <= 3 || p == 5 || p == 8 || p == 13 || p == 32)
      for (size_t ci = 2; ci < 4; ci++)
        for (int oi = 0; oi < (nops > 1 ? 2 : 1); oi++) {
          zcase_t zc = {al,      p,          p - 1, counts[ci],        ci == 3,
                        PCCL_FLOAT16, oi ? PCCL_MAX : PCCL_SUM, 1e-2, &pccl_mem_transport, 0};
          run_case(&zc);
        }
    /* Special values (sums and averages only: min and max of a NaN are
     * unspecified). */
    if (p <= 3 || p == 5 || p == 8 || p == 13 || p == 32)
      for (size_t ci = 2; ci < 4; ci++)
        for (int inplace = 0; inplace < 2; inplace++)
          for (size_t di = 0; di < sizeof dtypes / sizeof dtypes[0]; di++)
            for (int oi = 0; oi < (nops > 1 ? 2 : 1); oi++)
              for (size_t bi = 0; bi < sizeof rels / sizeof rels[0]; bi++) {
                zcase_t zc = {al,         p,          p - 1,   counts[ci],
                              inplace,    dtypes[di], ops[oi], rels[bi],
                              &pccl_mem_transport, 1};
                run_case(&zc);
              }
    if (p > 1) check_tiny_msg(al, p);
    if (p == 2 || p == 3) check_no_lossy(al, p);
  }
  run_chunked(al);
  check_empty_blocks(al, 64, 3);
  for (int p = 34; p <= 130 && p <= 4 * g_max_p; p++) check_stages_only(al, p);
}

int main(int argc, char **argv) {
  if (argc > 1) g_max_p = atoi(argv[1]) < 1 ? 1 : atoi(argv[1]) > MAX_P ? MAX_P : atoi(argv[1]);
  if (!init_inputs()) {
    printf("FAIL out of memory for the inputs\n");
    return 1;
  }
  /* The float16 inputs must be exact in binary16 (the encoder assumes it). */
  for (int r = 0; r < MAX_P; r++)
    for (size_t j = 0; j < MAX_ELEMS; j++) {
      uint16_t h;
      store_input(PCCL_FLOAT16, &h, 0, r, j);
      if (f16_decode(h) != input(PCCL_FLOAT16, r, j)) {
        printf("FAIL float16 input encoding: rank %d element %zu\n", r, j);
        failed++;
        r = MAX_P;
        break;
      }
    }
  int nlossy = 0;
  for (int ai = 0; ai < PCCL_ALGO_COUNT; ai++) {
    const pccl_algo_t *al = &pccl_algos[ai];
    if (!al->lossy) continue;
    nlossy++;
    int before = failed;
    run_algo(al);
    printf("%-14s %-10s %s\n", pccl_coll_name(al->coll), al->name,
           failed == before ? "ok" : "FAILED");
  }
  if (nlossy == 0) {
    printf("FAIL no lossy algorithm in the registry\n");
    failed++;
  }
  for (int i = 0; i < 4 * MAX_P; i++) free(g_pool[i]);
  for (int t = 0; t < 6; t++) free(g_in[t]);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
