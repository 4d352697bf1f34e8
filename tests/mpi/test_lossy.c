/* test_lossy.c - the compressed (lossy) collectives under mpiexec.
 *
 * usage: test_lossy [--quick] [--auto-plain]
 *   --quick: no case over 1000 elements
 *   --auto-plain: automatic lossy calls must run plain algorithms even across
 *                 nodes (PCCL_TUNING_FILE names a table whose lossy rows say so)
 *
 * For pccl_allreduce_lossy, pccl_allgather_lossy, pccl_reduce_scatter_lossy
 * and pccl_scatter_lossy, under each algorithm pccl.h names for them
 * (forced with pccl_comm_set_algo) and under automatic selection: float32
 * and float64 x counts {1, 1000, 100000} x sum, avg, min, max (reducing
 * ones) x in place or not x roots {0, p-1} (scatter) x bounds 1e-2 and 1e-5
 * of the data's magnitude; float16 and bfloat16 on 1000 elements; float32
 * blocks longer than zcoll.c's 2^18-element chunks.
 * Every rank regenerates every rank's input and checks its result against a
 * reference computed here in long double: each element within the bound
 * (sums and averages: plus the rounding slack of expected()); all-reduce
 * and all-gather results bit-identical on every rank (gathered to rank 0);
 * the send buffer untouched out of place; the scatter root's own block
 * exact; pccl_lossy_t's outputs sane (stages as zcoll.c's closed forms,
 * > 0 for p > 1, stage_bound x stages <= guaranteed <= abs_bound).
 *
 * Then the errors: NULL lossy, wrong lossy->size, bounds 0 / negative / NaN
 * / infinite, integer datatypes, PCCL_PROD, codecs other than szp, each
 * with the documented status, a message and recvbuf untouched; and the
 * separation of the two families: a plain call with a lossy algorithm forced
 * (pccl_comm_set_algo or PCCL_ALGO) runs a plain algorithm, exactly, and a
 * lossy call with a plain one forced runs a lossy one.
 * Rank 0 prints "N passed, M failed"; the exit status is 0 only when every
 * check passed on every rank. */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv */
#include <math.h>
#include <mpi.h>

#include "pccl_mpi.h"
#include "refcheck.h"

static int g_rank, g_n;
static int g_nodes; /* the communicator's nodes: on one, automatic lossy calls run plain */
static int g_auto_plain; /* --auto-plain: they run plain everywhere */
static pccl_comm_t *g_comm;
static long g_pass, g_fail; /* agreed over ranks: counted alike on every rank */

/* Every rank calls this with its own verdict; a check fails if it failed
 * anywhere. Rank 0 names it. */
static void record(int ok, const char *what) {
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (all) {
    g_pass++;
  } else {
    g_fail++;
    if (g_rank == 0) printf("FAIL %s\n", what);
  }
}

/* ---- inputs ---------------------------------------------------------------- */

/* Smooth-ish data: two sine waves with a rank-dependent phase and amplitude,
 * exact zeros at scattered positions and over a whole codec block on every
 * third rank. |x| <= MAG. float16 inputs are multiples of 2^-8 and bfloat16
 * ones of 2^-5 below 8 in magnitude: exact in those types. */
#define WAVE_N 4096
#define MAG 3.0
static double g_wave[WAVE_N];

static double input(pccl_dtype_t d, int rank, size_t j) {
  double v;
  if (((size_t)rank * 3 + j * 7) % 13 == 0 || (rank % 3 == 0 && j >= 64 && j < 96))
    v = 0.0;
  else
    v = g_wave[(j + 97 * (size_t)rank) % WAVE_N] * (1.0 + 0.05 * (rank % 7)) +
        0.25 * g_wave[(3 * j + 11 * (size_t)rank + 500) % WAVE_N];
  switch (d) {
    case PCCL_FLOAT32: return (float)v;
    case PCCL_FLOAT16: return nearbyint(v * 256.0) / 256.0;
    case PCCL_BFLOAT16: return nearbyint(v * 32.0) / 32.0;
    default: return v;
  }
}

static void store(pccl_dtype_t d, void *buf, size_t i, double v) {
  uint16_t h;
  switch (d) {
    case PCCL_FLOAT32: ((float *)buf)[i] = (float)v; break;
    case PCCL_FLOAT64: ((double *)buf)[i] = v; break;
    case PCCL_FLOAT16: h = rc_f32_to_f16((float)v); memcpy((char *)buf + 2 * i, &h, 2); break;
    default: h = rc_f32_to_bf16((float)v); memcpy((char *)buf + 2 * i, &h, 2); break;
  }
}

static long double load(pccl_dtype_t d, const void *buf, size_t i) {
  uint16_t h;
  switch (d) {
    case PCCL_FLOAT32: return ((const float *)buf)[i];
    case PCCL_FLOAT64: return ((const double *)buf)[i];
    case PCCL_FLOAT16: memcpy(&h, (const char *)buf + 2 * i, 2); return rc_f16_to_f32(h);
    default: memcpy(&h, (const char *)buf + 2 * i, 2); return rc_bf16_to_f32(h);
  }
}

static long double unit_roundoff(pccl_dtype_t d) {
  switch (d) {
    case PCCL_FLOAT64: return 0x1p-53L;
    case PCCL_FLOAT32: return 0x1p-24L;
    case PCCL_FLOAT16: return 0x1p-11L;
    default: return 0x1p-8L;
  }
}

/* ---- the collectives ------------------------------------------------------ */

static const pccl_coll_t lossy_colls[] = {PCCL_COLL_ALLREDUCE, PCCL_COLL_ALLGATHER,
                                          PCCL_COLL_REDUCE_SCATTER, PCCL_COLL_SCATTER};

static int reduces(pccl_coll_t c) {
  return c == PCCL_COLL_ALLREDUCE || c == PCCL_COLL_REDUCE_SCATTER;
}

static pccl_status_t call_lossy(pccl_coll_t coll, const void *s, void *r, size_t n,
                                pccl_dtype_t d, pccl_op_t op, int root, pccl_lossy_t *l) {
  switch (coll) {
    case PCCL_COLL_ALLREDUCE: return pccl_allreduce_lossy(s, r, n, d, op, l, g_comm);
    case PCCL_COLL_ALLGATHER: return pccl_allgather_lossy(s, r, n, d, l, g_comm);
    case PCCL_COLL_REDUCE_SCATTER: return pccl_reduce_scatter_lossy(s, r, n, d, op, l, g_comm);
    case PCCL_COLL_SCATTER: return pccl_scatter_lossy(s, r, n, d, root, l, g_comm);
    default: return PCCL_ERR_INTERNAL;
  }
}

/* The lossy algorithms pccl.h names, per collective. */
static int algos_of(pccl_coll_t coll, const char **names) {
  switch (coll) {
    case PCCL_COLL_ALLREDUCE: names[0] = "zrecdbl"; names[1] = "zring"; return 2;
    case PCCL_COLL_ALLGATHER:
    case PCCL_COLL_REDUCE_SCATTER: names[0] = "zring"; return 1;
    case PCCL_COLL_SCATTER: names[0] = "zbinomial"; return 1;
    default: return 0;
  }
}

/* Compressions that can feed one element, from zcoll.c's top comment (see
 * tests/unit/test_zcoll.c); -1 for a name this test does not know. */
static long expected_stages(pccl_coll_t coll, const char *algo, int p) {
  if (coll == PCCL_COLL_ALLREDUCE && strcmp(algo, "zrecdbl") == 0) {
    long P = 1;
    while (2 * P <= p) P *= 2;
    return 2 * (P - 1) + (p > P ? P + 1 : 0);
  }
  if (coll == PCCL_COLL_ALLREDUCE && strcmp(algo, "zring") == 0) return p == 1 ? 0 : p;
  if ((coll == PCCL_COLL_ALLGATHER && strcmp(algo, "zring") == 0) ||
      (coll == PCCL_COLL_SCATTER && strcmp(algo, "zbinomial") == 0))
    return 1;
  if (coll == PCCL_COLL_REDUCE_SCATTER && strcmp(algo, "zring") == 0) return p - 1;
  return -1;
}

typedef struct {
  pccl_coll_t coll;
  const char *algo; /* NULL: automatic */
  pccl_dtype_t dtype;
  pccl_op_t op;
  size_t count;
  int inplace, root;
  double rel; /* the bound, relative to MAG */
} lcase_t;

/* Exact reduction over ranks of input element j; *abs_sum gets sum |x|. */
static long double reduce_ref(const lcase_t *c, size_t j, long double *abs_sum) {
  long double acc = input(c->dtype, 0, j), s = fabsl(acc);
  for (int q = 1; q < g_n; q++) {
    long double x = input(c->dtype, q, j);
    s += fabsl(x);
    if (c->op == PCCL_MIN) acc = x < acc ? x : acc;
    else if (c->op == PCCL_MAX) acc = x > acc ? x : acc;
    else acc += x;
  }
  if (c->op == PCCL_AVG) acc /= g_n;
  *abs_sum = s;
  return acc;
}

/* Expected output element i of this rank (*want) and how far the result may
 * be from it: the bound A (and A 2^-40: the codec checks its error in double
 * arithmetic), plus for sums the rounding any reduction order has: p-1
 * additions feed an element, each rounding by at most u |partial|,
 * |partial| <= sum|x| + A, so (p-1) u (sum|x| + A), doubled for the
 * second-order terms; AVG divides that by p and rounds once or twice more
 * (16-bit types go through float32): 2u (|avg| + A). Min, max and the data
 * movement collectives round nothing. */
static long double expected(const lcase_t *c, size_t i, long double *want) {
  long double A = (long double)(c->rel * MAG), S = 0;
  long double tol = A * (1.0L + 0x1p-40L);
  size_t n = c->count;
  switch (c->coll) {
    case PCCL_COLL_ALLGATHER: *want = input(c->dtype, (int)(i / n), i % n); return tol;
    case PCCL_COLL_SCATTER: *want = input(c->dtype, c->root, (size_t)g_rank * n + i); return tol;
    case PCCL_COLL_REDUCE_SCATTER: *want = reduce_ref(c, (size_t)g_rank * n + i, &S); break;
    default: *want = reduce_ref(c, i, &S); break;
  }
  if (c->op == PCCL_SUM || c->op == PCCL_AVG) {
    long double u = unit_roundoff(c->dtype);
    long double slack = 2.0L * (g_n - 1) * u * (S + A);
    if (c->op == PCCL_AVG) slack = slack / g_n + 2.0L * u * (fabsl(*want) + A);
    tol += slack;
  }
  return tol;
}

static void describe(char *out, size_t len, const lcase_t *c) {
  snprintf(out, len, "%s/%s np=%d %s %s count=%zu inplace=%d root=%d bound=%g",
           pccl_coll_name(c->coll), c->algo ? c->algo : "auto", g_n, rc_dtype_names[c->dtype],
           reduces(c->coll) ? rc_op_names[c->op] : "-", c->count, c->inplace, c->root,
           c->rel * MAG);
}

/* Runs one case; returns this rank's verdict, printing why it failed. */
static int run_case(const lcase_t *c) {
  char what[256];
  describe(what, sizeof what, c);
  const size_t n = c->count, p = (size_t)g_n, es = rc_size(c->dtype);
  const int multi_in = c->coll == PCCL_COLL_REDUCE_SCATTER || c->coll == PCCL_COLL_SCATTER;
  const int multi_out = c->coll == PCCL_COLL_ALLGATHER;
  const size_t send_elems = multi_in ? n * p : n, recv_elems = multi_out ? n * p : n;
  const int at_root = g_rank == c->root;
  const int has_send = c->coll != PCCL_COLL_SCATTER || at_root;
  const int inplace = c->inplace && has_send;
  unsigned char *sbuf = NULL, *rbuf = NULL, *send = NULL, *recv = NULL;
  size_t send_off = 0; /* where send lies in recv, in place, in elements */
  if (inplace) {
    if (recv_elems >= send_elems) {
      recv = rbuf = aligned_alloc(64, (recv_elems * es + 63) / 64 * 64);
      send_off = multi_out ? (size_t)g_rank * n : 0;
      send = recv + send_off * es;
    } else {
      send = sbuf = aligned_alloc(64, (send_elems * es + 63) / 64 * 64);
      recv = send + (size_t)(c->coll == PCCL_COLL_SCATTER ? c->root : g_rank) * n * es;
    }
  } else {
    if (has_send) send = sbuf = aligned_alloc(64, (send_elems * es + 63) / 64 * 64);
    recv = rbuf = aligned_alloc(64, (recv_elems * es + 63) / 64 * 64);
    memset(recv, 0x5A, recv_elems * es);
  }
  if ((has_send && !send) || !recv) {
    printf("rank %d: FAIL %s: out of memory\n", g_rank, what);
    free(sbuf);
    free(rbuf);
    return 0;
  }
  if (send)
    for (size_t i = 0; i < send_elems; i++) store(c->dtype, send, i, input(c->dtype, g_rank, i));

  const double A = c->rel * MAG;
  pccl_lossy_t l = PCCL_LOSSY_INIT(A);
  pccl_status_t st = call_lossy(c->coll, send, recv, n, c->dtype, c->op, c->root, &l);
  int ok = 1;
  const char *last = pccl_comm_last_algo(g_comm);
  if (st != PCCL_OK) {
    printf("rank %d: FAIL %s: status %s: %s\n", g_rank, what, pccl_status_string(st),
           pccl_last_error(g_comm));
    ok = 0;
  } else if (c->algo ? strcmp(last, c->algo) != 0 : (last[0] == 'z') != (g_nodes > 1 && !g_auto_plain)) {
    printf("rank %d: FAIL %s: ran algorithm \"%s\"\n", g_rank, what, last);
    ok = 0;
  }
  /* The bound's bookkeeping. */
  long want_stages = !ok ? -1 : last[0] == 'z' ? expected_stages(c->coll, last, g_n) : 0;
  if (ok && (want_stages < 0 || l.stages != want_stages || (g_n > 1 && last[0] == 'z' && l.stages <= 0) ||
             !(l.stage_bound > 0) || !(l.guaranteed <= A) ||
             !((double)l.stages * l.stage_bound <= A) ||
             !((double)l.stages * l.stage_bound <= l.guaranteed))) {
    printf("rank %d: FAIL %s (%s): lossy out: stages %d (closed form %ld), stage_bound %.17g, "
           "guaranteed %.17g, abs_bound %.17g\n",
           g_rank, what, last, (int)l.stages, want_stages, l.stage_bound, l.guaranteed, A);
    ok = 0;
  }
  for (size_t i = 0; ok && i < recv_elems; i++) {
    long double want, got = load(c->dtype, recv, i), tol = expected(c, i, &want);
    if (isfinite(got) && fabsl(got - want) <= tol) continue;
    printf("rank %d: FAIL %s (%s): element %zu is %.17Lg, want %.17Lg (error %.3Lg > %.3Lg)\n",
           g_rank, what, last, i, got, want, fabsl(got - want), tol);
    ok = 0;
  }
  /* The data did go through the codec: at a loose bound some of 1000
   * smooth values come back changed (a silent fall back to the exact
   * collective would pass every other check). */
  if (ok && last[0] == 'z' && c->coll == PCCL_COLL_ALLGATHER && n >= 1000 && c->rel >= 1e-2 &&
      (c->dtype == PCCL_FLOAT32 || c->dtype == PCCL_FLOAT64)) {
    size_t changed = 0;
    for (size_t i = 0; i < recv_elems; i++) {
      long double want;
      expected(c, i, &want);
      changed += load(c->dtype, recv, i) != want;
    }
    if (changed == 0) {
      printf("rank %d: FAIL %s: every element exact: was anything compressed?\n", g_rank, what);
      ok = 0;
    }
  }
  if (ok && c->coll == PCCL_COLL_SCATTER && at_root)
    for (size_t i = 0; i < n; i++)
      if (load(c->dtype, recv, i) != input(c->dtype, g_rank, (size_t)g_rank * n + i)) {
        printf("rank %d: FAIL %s: the root's own block is not exact at %zu\n", g_rank, what, i);
        ok = 0;
        break;
      }
  if (ok && send && !inplace)
    for (size_t i = 0; i < send_elems; i++) {
      unsigned char e[8];
      store(c->dtype, e, 0, input(c->dtype, g_rank, i));
      if (memcmp(send + i * es, e, es) != 0) {
        printf("rank %d: FAIL %s: send buffer modified at %zu\n", g_rank, what, i);
        ok = 0;
        break;
      }
    }
  /* Bit-identical results: every rank's recv gathered to rank 0. Every rank
   * takes part, whatever its verdict so far. */
  if (c->coll == PCCL_COLL_ALLREDUCE || c->coll == PCCL_COLL_ALLGATHER) {
    size_t bytes = recv_elems * es;
    unsigned char *all = g_rank == 0 ? malloc(bytes * p) : NULL;
    if (g_rank == 0 && !all) {
      printf("rank 0: FAIL %s: out of memory\n", what);
      ok = 0;
    }
    MPI_Datatype blk;
    MPI_Type_contiguous((int)bytes, MPI_UNSIGNED_CHAR, &blk);
    MPI_Type_commit(&blk);
    MPI_Gather(recv, 1, blk, all, all ? 1 : 0, blk, 0, MPI_COMM_WORLD);
    MPI_Type_free(&blk);
    for (size_t r = 1; all && r < p; r++)
      if (memcmp(all, all + r * bytes, bytes) != 0) {
        printf("rank 0: FAIL %s: rank %zu's result differs from rank 0's\n", what, r);
        ok = 0;
        break;
      }
    free(all);
  }
  free(sbuf);
  free(rbuf);
  return ok;
}

static void run_matrix(int quick) {
  static const pccl_dtype_t dtypes[] = {PCCL_FLOAT32, PCCL_FLOAT64, PCCL_FLOAT16, PCCL_BFLOAT16};
  static const pccl_op_t ops[] = {PCCL_SUM, PCCL_AVG, PCCL_MIN, PCCL_MAX};
  /* 0: longer than zcoll.c's chunk of 2^18 elements, with a remainder
   * (zring all-reduce: every rank's block; the others: the whole block). */
  static const size_t counts[] = {1, 1000, 100000, 0};
  static const double rels[] = {1e-2, 1e-5};
  char what[256];
  for (size_t ci = 0; ci < sizeof lossy_colls / sizeof lossy_colls[0]; ci++) {
    pccl_coll_t coll = lossy_colls[ci];
    const char *algos[4] = {NULL};
    int nalgos = algos_of(coll, algos + 1) + 1; /* algos[0]: automatic */
    /* The registry lists every name this test forces. */
    const char *listed[64];
    int total = 0;
    if (pccl_algo_list(coll, listed, 64, &total) != PCCL_OK) total = 0;
    for (int a = 1; a < nalgos; a++) {
      int found = 0;
      for (int k = 0; k < total && k < 64; k++) found |= strcmp(listed[k], algos[a]) == 0;
      snprintf(what, sizeof what, "pccl_algo_list(%s) lists %s", pccl_coll_name(coll), algos[a]);
      record(found, what);
    }
    for (int a = 0; a < nalgos; a++) {
      pccl_status_t st = pccl_comm_set_algo(g_comm, coll, algos[a]);
      snprintf(what, sizeof what, "pccl_comm_set_algo(%s, %s)", pccl_coll_name(coll),
               algos[a] ? algos[a] : "NULL");
      record(st == PCCL_OK, what);
      if (st != PCCL_OK) continue;
      for (size_t di = 0; di < sizeof dtypes / sizeof dtypes[0]; di++)
        for (size_t ni = 0; ni < sizeof counts / sizeof counts[0]; ni++) {
          int half = dtypes[di] == PCCL_FLOAT16 || dtypes[di] == PCCL_BFLOAT16;
          size_t count = counts[ni];
          if (count == 0) { /* chunked: float32 only */
            int split = coll == PCCL_COLL_ALLREDUCE && (!algos[a] || strcmp(algos[a], "zring") == 0);
            count = (split ? (size_t)g_n : 1) * ((size_t)1 << 18) + 1007;
            if (dtypes[di] != PCCL_FLOAT32) continue;
          }
          if ((half && count != 1000) || (quick && count > 1000)) continue;
          int nops = !reduces(coll) ? 1 : half ? 1 : count > 1000 ? 2 : 4;
          for (int oi = 0; oi < nops; oi++)
            for (int inplace = 0; inplace < (half ? 1 : 2); inplace++)
              for (int ri = 0; ri < (coll == PCCL_COLL_SCATTER && g_n > 1 ? 2 : 1); ri++)
                for (size_t bi = 0; bi < (half || count > 1000 ? 1 : 2); bi++) {
                  /* Large counts: sum and max (the op that rounds, one that does not). */
                  pccl_op_t op = count > 1000 && oi == 1 ? PCCL_MAX : ops[oi];
                  lcase_t c = {coll,    algos[a], dtypes[di],       op,
                               count,   inplace,  ri ? g_n - 1 : 0, rels[bi]};
                  describe(what, sizeof what, &c);
                  record(run_case(&c), what);
                }
        }
    }
    pccl_comm_set_algo(g_comm, coll, NULL);
  }
}

/* ---- errors --------------------------------------------------------------- */

#define NELEM 64
#define SENTINEL 0xA5

/* One call that must fail with `want`, on every rank alike: checks the
 * status, that the last error names the call, and recvbuf untouched. */
static void bad_call(pccl_coll_t coll, pccl_dtype_t d, pccl_op_t op, pccl_lossy_t *l,
                     pccl_status_t want, const char *label) {
  static double send[8 * NELEM * 8], recv[8 * NELEM * 8]; /* room for p <= 8 of any type */
  static unsigned char sentinel[sizeof recv];
  size_t n = g_n <= 8 ? NELEM : 1;
  memset(send, 0, sizeof send);
  memset(recv, SENTINEL, sizeof recv);
  memset(sentinel, SENTINEL, sizeof sentinel);
  pccl_status_t st = call_lossy(coll, send, recv, n, d, op, 0, l);
  char what[256];
  snprintf(what, sizeof what, "%s_lossy %s: status %s, want %s (\"%s\")", pccl_coll_name(coll),
           label, pccl_status_string(st), pccl_status_string(want), pccl_last_error(g_comm));
  record(st == want && strstr(pccl_last_error(g_comm), "pccl_") != NULL, what);
  snprintf(what, sizeof what, "%s_lossy %s: recvbuf untouched", pccl_coll_name(coll), label);
  record(memcmp(recv, sentinel, sizeof recv) == 0, what);
}

static void error_cases(void) {
  for (size_t ci = 0; ci < sizeof lossy_colls / sizeof lossy_colls[0]; ci++) {
    pccl_coll_t c = lossy_colls[ci];
    bad_call(c, PCCL_FLOAT32, PCCL_SUM, NULL, PCCL_ERR_INVALID_ARGUMENT, "NULL lossy");
    pccl_lossy_t l = PCCL_LOSSY_INIT(1e-3);
    l.size = sizeof(pccl_lossy_t) - 8;
    bad_call(c, PCCL_FLOAT32, PCCL_SUM, &l, PCCL_ERR_INVALID_ARGUMENT, "lossy->size too small");
    l.size = sizeof(pccl_lossy_t) + 8;
    bad_call(c, PCCL_FLOAT32, PCCL_SUM, &l, PCCL_ERR_INVALID_ARGUMENT, "lossy->size too large");
    l.size = 0;
    bad_call(c, PCCL_FLOAT32, PCCL_SUM, &l, PCCL_ERR_INVALID_ARGUMENT, "lossy->size 0");
    const double bad_bounds[] = {0.0, -0.0, -1e-3, NAN, INFINITY, -INFINITY};
    for (size_t b = 0; b < sizeof bad_bounds / sizeof bad_bounds[0]; b++) {
      pccl_lossy_t lb = PCCL_LOSSY_INIT(bad_bounds[b]);
      char label[64];
      snprintf(label, sizeof label, "abs_bound %g", bad_bounds[b]);
      bad_call(c, PCCL_FLOAT32, PCCL_SUM, &lb, PCCL_ERR_INVALID_ARGUMENT, label);
    }
    const pccl_dtype_t ints[] = {PCCL_INT32, PCCL_INT8, PCCL_UINT64};
    for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++) {
      pccl_lossy_t li = PCCL_LOSSY_INIT(1e-3);
      char label[64];
      snprintf(label, sizeof label, "dtype %s", rc_dtype_names[ints[k]]);
      bad_call(c, ints[k], PCCL_SUM, &li, PCCL_ERR_INVALID_DTYPE, label);
    }
    pccl_lossy_t lu = PCCL_LOSSY_INIT(1e-3);
    bad_call(c, (pccl_dtype_t)PCCL_DTYPE_COUNT, PCCL_SUM, &lu, PCCL_ERR_INVALID_DTYPE,
             "unknown dtype");
    if (reduces(c)) {
      bad_call(c, PCCL_FLOAT32, PCCL_PROD, &lu, PCCL_ERR_UNSUPPORTED, "PCCL_PROD");
      bad_call(c, PCCL_FLOAT32, PCCL_OP_COUNT, &lu, PCCL_ERR_INVALID_OP, "unknown op");
    }
    pccl_lossy_t lz = PCCL_LOSSY_INIT(1e-3);
    lz.codec = PCCL_CODEC_ZFP;
    bad_call(c, PCCL_FLOAT32, PCCL_SUM, &lz, PCCL_ERR_UNSUPPORTED, "codec zfp");
    lz.codec = PCCL_CODEC_COUNT;
    bad_call(c, PCCL_FLOAT32, PCCL_SUM, &lz, PCCL_ERR_UNSUPPORTED, "unknown codec");

    /* count 0 moves nothing and says so. */
    pccl_lossy_t l0 = PCCL_LOSSY_INIT(1e-3);
    l0.stages = 77;
    pccl_status_t st = call_lossy(c, NULL, NULL, 0, PCCL_FLOAT32, PCCL_SUM, 0, &l0);
    char what[128];
    snprintf(what, sizeof what, "%s_lossy count 0: status %s, stages %d", pccl_coll_name(c),
             pccl_status_string(st), (int)l0.stages);
    record(st == PCCL_OK && l0.stages == 0, what);
  }
}

/* A plain all-reduce / all-gather on int32 data, checked exactly; returns
 * the verdict and leaves the algorithm's name in *algo. */
static int plain_exact(pccl_comm_t *comm, pccl_coll_t coll, const char **algo) {
  int32_t in[NELEM], out[8 * NELEM];
  size_t n = g_n <= 8 ? NELEM : 1;
  for (size_t i = 0; i < n; i++) in[i] = g_rank * 1000 + (int32_t)i;
  pccl_status_t st = coll == PCCL_COLL_ALLREDUCE
                         ? pccl_allreduce(in, out, n, PCCL_INT32, PCCL_SUM, comm)
                         : pccl_allgather(in, out, n, PCCL_INT32, comm);
  *algo = pccl_comm_last_algo(comm);
  if (st != PCCL_OK) return 0;
  const int32_t ranksum = g_n * (g_n - 1) / 2;
  for (size_t i = 0; i < n; i++) {
    if (coll == PCCL_COLL_ALLREDUCE && out[i] != ranksum * 1000 + g_n * (int32_t)i) return 0;
    if (coll == PCCL_COLL_ALLGATHER)
      for (int r = 0; r < g_n; r++)
        if (out[(size_t)r * n + i] != r * 1000 + (int32_t)i) return 0;
  }
  return 1;
}

/* A lossy all-reduce; returns the algorithm it ran (or "" on failure). */
static const char *lossy_algo(pccl_comm_t *comm) {
  float in[NELEM], out[NELEM];
  for (int i = 0; i < NELEM; i++) in[i] = (float)(g_rank + i);
  pccl_lossy_t l = PCCL_LOSSY_INIT(1e-3);
  return pccl_allreduce_lossy(in, out, NELEM, PCCL_FLOAT32, PCCL_SUM, &l, comm) == PCCL_OK
             ? pccl_comm_last_algo(comm)
             : "";
}

static void family_separation(void) {
  char what[256];
  const char *algo;
  const pccl_coll_t colls[] = {PCCL_COLL_ALLREDUCE, PCCL_COLL_ALLGATHER};
  for (size_t k = 0; k < 2; k++) {
    pccl_status_t st = pccl_comm_set_algo(g_comm, colls[k], "zring");
    snprintf(what, sizeof what, "pccl_comm_set_algo(%s, zring)", pccl_coll_name(colls[k]));
    record(st == PCCL_OK, what);
    int ok = plain_exact(g_comm, colls[k], &algo);
    snprintf(what, sizeof what, "plain %s with zring forced: exact, ran \"%s\"",
             pccl_coll_name(colls[k]), algo);
    record(ok && algo[0] != 'z', what);
    pccl_comm_set_algo(g_comm, colls[k], NULL);
  }
  /* The other way round: a plain algorithm forced, a lossy call. Across nodes
   * a compressed algorithm runs; on one node the lossy call runs what the
   * plain call would, the forced ring. */
  pccl_comm_set_algo(g_comm, PCCL_COLL_ALLREDUCE, "ring");
  algo = lossy_algo(g_comm);
  snprintf(what, sizeof what, "lossy allreduce with ring forced ran \"%s\"", algo);
  record(g_nodes > 1 ? (algo[0] == 'z') != g_auto_plain : strcmp(algo, "ring") == 0, what);
  pccl_comm_set_algo(g_comm, PCCL_COLL_ALLREDUCE, NULL);

  /* The same through PCCL_ALGO. */
  setenv("PCCL_ALGO", "allreduce:zrecdbl,allgather:zring", 1);
  pccl_comm_t *c = NULL;
  pccl_status_t st = pccl_comm_create_mpi(MPI_COMM_WORLD, &c);
  snprintf(what, sizeof what, "PCCL_ALGO=allreduce:zrecdbl,allgather:zring accepted (%s)",
           pccl_last_error(NULL));
  record(st == PCCL_OK, what);
  if (st == PCCL_OK) {
    for (size_t k = 0; k < 2; k++) {
      int ok = plain_exact(c, colls[k], &algo);
      snprintf(what, sizeof what, "PCCL_ALGO: plain %s exact, ran \"%s\"",
               pccl_coll_name(colls[k]), algo);
      record(ok && algo[0] != 'z', what);
    }
    algo = lossy_algo(c);
    snprintf(what, sizeof what, "PCCL_ALGO: lossy allreduce ran \"%s\", want zrecdbl", algo);
    record(strcmp(algo, "zrecdbl") == 0, what);
    pccl_comm_destroy(c);
  }
  unsetenv("PCCL_ALGO");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_n);
  int quick = 0;
  for (int i = 1; i < argc; i++) {
    quick |= strcmp(argv[i], "--quick") == 0;
    g_auto_plain |= strcmp(argv[i], "--auto-plain") == 0;
  }
  for (int k = 0; k < WAVE_N; k++) g_wave[k] = 2.0 * sin(6.283185307179586 * k / 400.0);

  /* The float16 / bfloat16 inputs are exact in their types. */
  int exact = rc_selftest_half() == 0;
  for (size_t j = 0; j < 1000; j++) {
    unsigned char h[2];
    store(PCCL_FLOAT16, h, 0, input(PCCL_FLOAT16, g_rank, j));
    exact &= load(PCCL_FLOAT16, h, 0) == input(PCCL_FLOAT16, g_rank, j);
    store(PCCL_BFLOAT16, h, 0, input(PCCL_BFLOAT16, g_rank, j));
    exact &= load(PCCL_BFLOAT16, h, 0) == input(PCCL_BFLOAT16, g_rank, j);
  }
  record(exact, "half-precision references and inputs");

  pccl_status_t st = pccl_comm_create_mpi(MPI_COMM_WORLD, &g_comm);
  record(st == PCCL_OK, "pccl_comm_create_mpi");
  if (st == PCCL_OK) {
    pccl_comm_nnodes(g_comm, &g_nodes);
    run_matrix(quick);
    error_cases();
    family_separation();
    record(pccl_comm_destroy(g_comm) == PCCL_OK, "pccl_comm_destroy");
  }
  if (g_rank == 0) {
    printf("%ld passed, %ld failed\n", g_pass, g_fail);
    fflush(stdout);
  }
  MPI_Finalize();
  return g_fail ? 1 : 0;
}
