/* test_coll.c - checks one pccl collective against an independent reference.
 *
 * usage: test_coll --coll NAME [--algo NAME] [--quick] [--max-report K]
 *   NAME: allgather reducescatter allreduce broadcast reduce scatter gather alltoall
 *   --algo     force the algorithm (pccl_comm_set_algo) and check that every
 *              call with count > 0 reports it through pccl_comm_last_algo
 *   --quick    skip the 2^20+3 element cases
 *   --max-report K  print details of up to K failures per rank (default 1)
 *   --timing   print (stderr) the time spent filling buffers, in pccl and checking
 *
 * Every rank regenerates every rank's deterministic input and computes the
 * expected result with its own scalar code (refcheck.h); the output is
 * compared bit for bit. Matrix: counts {0, 1, 7, 1000} x every dtype x every
 * op (reductions) x {out-of-place, in-place} x roots {0, nranks/2, nranks-1}
 * (rooted collectives), integer wrap-around cases, and 2^20+3 elements for a
 * subset of dtypes/ops. Rank 0 prints "N passed, M failed" at the end; the
 * exit status is 0 only when every case passed on every rank.
 */
#include <mpi.h>

#include "pccl_mpi.h"
#include "refcheck.h"

typedef enum {
  K_DATA,     /* arbitrary bits (data movement only) */
  K_SMALL,    /* integers in [-2,2] (signed, float) or [0,4] (unsigned) */
  K_PROD,     /* +-1, and +-2 on at most two ranks per index */
  K_WRAPSUM,  /* values near the type's limits: sums wrap around */
  K_WRAPPROD  /* large odd values: products wrap around */
} kind_t;
static const char *const kind_names[] = {"data", "small", "prod", "wrapsum", "wrapprod"};

typedef struct {
  pccl_coll_t coll;
  pccl_dtype_t dtype;
  int op; /* pccl_op_t, or -1 for data movement */
  size_t count;
  int inplace;
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
static double g_t_call, g_t_check, g_t_setup; /* seconds spent, for --timing */

/* ---- reference values --------------------------------------------------- */

static inline int64_t val_logical(const tcase_t *c, int r, size_t idx) {
  const uint32_t h = rc_mix32((uint32_t)r, idx, c->seed);
  const pccl_dtype_t d = c->dtype;
  const int sgn = rc_is_signed_int(d) || rc_is_float(d);
  switch (c->kind) {
    case K_SMALL:
      return sgn ? (int64_t)(h % 5u) - 2 : (int64_t)(h % 5u);
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

/* Element idx of rank r's send buffer. */
static inline void in_elem(const tcase_t *c, int r, size_t idx, unsigned char *dst) {
  if (c->kind == K_DATA) {
    const uint64_t h = rc_mix64((uint32_t)r, idx, c->seed);
    memcpy(dst, &h, rc_size(c->dtype)); /* little-endian: low bytes */
    return;
  }
  rc_store(c->dtype, dst, val_logical(c, r, idx));
}

/* Element idx of the reduction over all ranks' send buffers. */
static void red_elem(const tcase_t *c, size_t idx, unsigned char *dst) {
  const pccl_dtype_t d = c->dtype;
  const int op = c->op, n = g_n;
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
    if (op == PCCL_AVG) {
      switch (d) {
        case PCCL_FLOAT32: {
          volatile float s = (float)acc, nn = (float)n;
          float x = s / nn;
          memcpy(dst, &x, 4);
        } break;
        case PCCL_FLOAT64: {
          volatile double x = acc / (double)n;
          double y = x;
          memcpy(dst, &y, 8);
        } break;
        case PCCL_FLOAT16: {
          volatile float s = (float)acc, nn = (float)n;
          uint16_t x = rc_f32_to_f16(s / nn);
          memcpy(dst, &x, 2);
        } break;
        case PCCL_BFLOAT16: {
          volatile float s = (float)acc, nn = (float)n;
          uint16_t x = rc_f32_to_bf16(s / nn);
          memcpy(dst, &x, 2);
        } break;
        default: break;
      }
    } else {
      rc_store(d, dst, (int64_t)acc);
    }
    return;
  }
  /* Integers: wrap like unsigned arithmetic of the same width. */
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
    }
  }
  uint64_t t = acc & mask;
  if (op == PCCL_AVG) {
    if (sgn) {
      int64_t s;
      if (bits < 64 && (t >> (bits - 1)) & 1u)
        s = -(int64_t)((~t & mask) + 1); /* sign-extend */
      else
        s = (int64_t)t;
      s = s / (int64_t)n; /* C integer division */
      t = (uint64_t)s;
    } else {
      t = t / (uint64_t)n;
    }
  }
  rc_store(d, dst, (int64_t)t);
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
  snprintf(buf, len,
           "rank %d coll %s algo %s dtype %s op %s count %zu inplace %d root %s (inputs %s, seed %u, nranks %d)",
           g_rank, rc_coll_names[c->coll],
           g_algo ? g_algo : pccl_comm_last_algo(g_comm) ? pccl_comm_last_algo(g_comm) : "(null)",
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
  char e[20], g[20], msg[256];
  rc_hex(exp, rc_size(c->dtype), e);
  rc_hex(got, rc_size(c->dtype), g);
  snprintf(msg, sizeof msg, "%s: first differing index %zu expected 0x%s got 0x%s", what, idx, e,
           g);
  report_msg(c, msg);
}

#define CHUNK 4096
static unsigned char g_tmp[CHUNK * 8];

static void gen_expected(const tcase_t *c, const chk_t *k, size_t start, size_t n,
                         unsigned char *dst, unsigned char sentinel) {
  const size_t es = rc_size(c->dtype);
  switch (k->m) {
    case M_FIXED:
      for (size_t i = 0; i < n; i++) in_elem(c, k->a, k->off + start + i, dst + i * es);
      break;
    case M_BLOCKS:
      for (size_t i = 0; i < n; i++) {
        const size_t e = start + i;
        in_elem(c, (int)(e / c->count), k->off + e % c->count, dst + i * es);
      }
      break;
    case M_RED:
      for (size_t i = 0; i < n; i++) red_elem(c, k->off + start + i, dst + i * es);
      break;
    case M_SENT:
      memset(dst, sentinel, n * es);
      break;
  }
}

static int run_check(const tcase_t *c, const chk_t *k, unsigned char sentinel) {
  const size_t es = rc_size(c->dtype);
  for (size_t s = 0; s < k->nelem; s += CHUNK) {
    const size_t n = k->nelem - s < CHUNK ? k->nelem - s : CHUNK;
    gen_expected(c, k, s, n, g_tmp, sentinel);
    const unsigned char *got = k->p + s * es;
    if (memcmp(g_tmp, got, n * es) != 0) {
      for (size_t i = 0; i < n; i++)
        if (memcmp(g_tmp + i * es, got + i * es, es) != 0) {
          report_elem(c, k->what, s + i, g_tmp + i * es, got + i * es);
          return 0;
        }
    }
  }
  return 1;
}

static void fill_input(const tcase_t *c, unsigned char *p, int r, size_t off, size_t nelem) {
  const size_t es = rc_size(c->dtype);
  for (size_t i = 0; i < nelem; i++) in_elem(c, r, off + i, p + i * es);
}

static int algo_known(const char *name) {
  for (int i = 0; i < g_nalgos; i++)
    if (g_algos[i] && strcmp(g_algos[i], name) == 0) return 1;
  return 0;
}

/* ---- one case ------------------------------------------------------------ */

/* Runs one case on this rank; returns 1 when everything checked here passed. */
static int run_case(const tcase_t *c) {
  const double ts = MPI_Wtime();
  const pccl_dtype_t d = c->dtype;
  const size_t es = rc_size(d), cnt = c->count, n = (size_t)g_n, r = (size_t)g_rank;
  const int root = c->root, is_root = g_rank == root;
  const unsigned char sent = (c->seed & 1u) ? 0xA5 : 0x5C;
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

#define ALLOC(buf, elems)                                           \
  do {                                                              \
    if (!rc_buf_alloc(&(buf), (elems) * es, sent)) {                \
      report_msg(c, "test could not allocate its buffers");         \
      ok = 0;                                                       \
      goto out;                                                     \
    }                                                               \
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

  if (!c->inplace) {
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
      default:
        break;
    }
  }

  const double t0 = MPI_Wtime();
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
    default: break;
  }
  const double t1 = MPI_Wtime();
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
      if (!la || strcmp(la, g_algo) != 0) {
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
  g_t_check += MPI_Wtime() - t1;
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
  if (A.base) rc_buf_free(&A);
  if (B.base) rc_buf_free(&B);
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
  for (int ri = 0; ri < nroots; ri++)
    for (int inplace = 0; inplace < 2; inplace++) {
      tcase_t c = {coll, dtype, op, count, inplace, roots[ri], kind, g_seed++};
      record(run_case(&c));
    }
}

static void run_matrix(pccl_coll_t coll, int quick) {
  const size_t counts[] = {0, 1, 7, 1000};
  const int red = rc_is_reduction(coll);
  for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++)
    for (int d = 0; d < PCCL_DTYPE_COUNT; d++) {
      if (!red) {
        run_variants(coll, (pccl_dtype_t)d, -1, counts[ci], K_DATA);
        continue;
      }
      for (int op = 0; op < PCCL_OP_COUNT; op++)
        run_variants(coll, (pccl_dtype_t)d, op, counts[ci], op == PCCL_PROD ? K_PROD : K_SMALL);
    }
  if (red) {
    /* Integer wrap-around: a saturating or widening implementation fails. */
    const pccl_dtype_t ints[] = {PCCL_INT8, PCCL_UINT8, PCCL_INT32,
                                 PCCL_UINT32, PCCL_INT64, PCCL_UINT64};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
      run_variants(coll, ints[i], PCCL_SUM, 1000, K_WRAPSUM);
      run_variants(coll, ints[i], PCCL_AVG, 1000, K_WRAPSUM);
      run_variants(coll, ints[i], PCCL_PROD, 1000, K_WRAPPROD);
    }
  }
  if (!quick) {
    const size_t big = ((size_t)1 << 20) + 3;
    if (red) {
      const pccl_dtype_t sums[] = {PCCL_INT8, PCCL_INT32, PCCL_FLOAT32, PCCL_FLOAT64,
                                   PCCL_BFLOAT16};
      for (size_t i = 0; i < sizeof sums / sizeof sums[0]; i++)
        run_variants(coll, sums[i], PCCL_SUM, big, K_SMALL);
      run_variants(coll, PCCL_FLOAT32, PCCL_MAX, big, K_SMALL);
    } else {
      const pccl_dtype_t dts[] = {PCCL_INT8, PCCL_INT32, PCCL_FLOAT32, PCCL_FLOAT64,
                                  PCCL_BFLOAT16};
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
            "  NAME: allgather reducescatter allreduce broadcast reduce scatter gather "
            "alltoall\n");
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
      if (coll < 0) {
        if (g_rank == 0) fprintf(stderr, "test_coll: unknown collective \"%s\"\n", name);
        usage();
        MPI_Finalize();
        return 2;
      }
    } else if (strcmp(argv[i], "--algo") == 0 && i + 1 < argc) {
      g_algo = argv[++i];
    } else if (strcmp(argv[i], "--quick") == 0) {
      quick = 1;
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
      fprintf(stderr, "timing (max over ranks): setup %.3f s, pccl calls %.3f s, checks %.3f s\n",
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
