/* test_sim.c - the simulator and the profile format.
 *
 * Predictions are checked against closed forms written out here by hand from
 * the model of docs/simulator.md, never against the simulator itself: ring
 * and recursive-doubling all-gather, ring reduce-scatter with reductions, a
 * gap-limited ring, a ring whose copy overlaps its first message, the
 * compressed zring all-gather and zrecdbl all-reduce at several ratios, and
 * tiny hand-written schedules (test generators run through the real builder
 * and pccl_sim_run) where two transfers share a NIC (node radix) or a device
 * (device radix). The profile parser must round-trip through
 * pccl_profile_write, reject a list of malformed inputs with PCCL_ERR_CONFIG
 * and a line number, default the optional compress / decompress keys, and
 * survive random mutations of a good file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim.h"

static int passed, failed;

static void expect(int ok, const char *what) {
  if (ok) {
    passed++;
    return;
  }
  failed++;
  printf("FAIL %s\n", what);
}

static void expect_time(double got, double want, const char *what) {
  int ok = fabs(got - want) <= 1e-12 * fabs(want);
  if (!ok) printf("  %s: simulated %.17g s, expected %.17g s\n", what, got, want);
  expect(ok, what);
}

/* A contention-free profile: o_s <= g, gamma = copy = 0, radices off. */
static pccl_profile_t base_profile(void) {
  pccl_profile_t p;
  memset(&p, 0, sizeof p);
  strcpy(p.name, "test");
  p.ranks_per_node = 4;
  p.nics_per_node = 1;
  p.level[PCCL_LEVEL_INTRA] = (pccl_loggp_t){.L = 0.7e-6, .o_s = 0.2e-6, .o_r = 0.3e-6,
                                             .g = 0.25e-6, .G = 1.0 / 50e9};
  p.level[PCCL_LEVEL_INTER] = (pccl_loggp_t){.L = 2.1e-6, .o_s = 0.4e-6, .o_r = 0.55e-6,
                                             .g = 0.5e-6, .G = 1.0 / 25e9};
  return p;
}

/* The simulated time of float32 `algo` (compressed streams at `ratio`). */
static double run_ratio(const pccl_profile_t *p, pccl_coll_t coll, const char *algo, int nranks,
                        int per_node, size_t count, double ratio) {
  pccl_sim_case_t c = {coll, pccl_algo_find(coll, algo), 0, nranks, per_node, count, 4, ratio};
  pccl_sim_result_t r;
  pccl_status_t st = pccl_sim_run(p, &c, &r);
  if (st != PCCL_OK) {
    printf("  %s %s p=%d: %s: %s\n", pccl_coll_name(coll), algo, nranks, pccl_status_string(st),
           r.message);
    return -1;
  }
  return r.seconds;
}

static double run_time(const pccl_profile_t *p, pccl_coll_t coll, const char *algo, int nranks,
                       int per_node, size_t count) {
  return run_ratio(p, coll, algo, nranks, per_node, count, 0);
}

/* ---- closed forms ---------------------------------------------------------- */

static void test_ring_allgather(void) {
  pccl_profile_t p = base_profile();
  int ps[] = {2, 3, 7, 16};
  for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
    for (int lv = 0; lv < PCCL_LEVEL_COUNT; lv++) {
      int n = ps[i];
      size_t count = 1000;
      double m = 4.0 * (double)count;
      const pccl_loggp_t *l = &p.level[lv];
      double want = (n - 1) * (l->o_s + m * l->G + l->L + l->o_r);
      /* one node holds everyone (intra), or each rank is a node (inter) */
      double got = run_time(&p, PCCL_COLL_ALLGATHER, "ring", n, lv == PCCL_LEVEL_INTRA ? n : 1,
                            count);
      char what[96];
      snprintf(what, sizeof what, "ring all-gather p=%d %s", n, lv ? "inter" : "intra");
      expect_time(got, want, what);
    }
  }
}

static void test_recdbl_allgather(void) {
  pccl_profile_t p = base_profile();
  for (int n = 2; n <= 32; n *= 2) {
    size_t count = 3000;
    double m = 4.0 * (double)count, want = 0;
    const pccl_loggp_t *l = &p.level[PCCL_LEVEL_INTRA];
    for (int blocks = 1; blocks < n; blocks *= 2) want += l->o_s + blocks * m * l->G + l->L + l->o_r;
    char what[64];
    snprintf(what, sizeof what, "recursive doubling all-gather p=%d", n);
    expect_time(run_time(&p, PCCL_COLL_ALLGATHER, "recdbl", n, n, count), want, what);
  }
}

/* Each round: send a partial sum, receive and reduce the next; the local
 * block costs m*gamma in the fused receive-reduce. */
static void test_ring_reduce_scatter(void) {
  pccl_profile_t p = base_profile();
  p.gamma = 1.0 / 8e9;
  int n = 6;
  size_t count = 5000;
  double m = 4.0 * (double)count;
  const pccl_loggp_t *l = &p.level[PCCL_LEVEL_INTRA];
  double want = (n - 1) * (l->o_s + m * l->G + l->L + l->o_r + m * p.gamma);
  expect_time(run_time(&p, PCCL_COLL_REDUCE_SCATTER, "ring", n, n, count), want,
              "ring reduce-scatter with gamma");
}

/* The first send does not wait for the copy of the rank's own block, and
 * its o_s takes the CPU first (messages before local steps); the copy then
 * holds the CPU, and delays the first receive only when it outlasts the
 * message's flight m*G + L. */
static void test_ring_with_copy(void) {
  pccl_profile_t p = base_profile();
  int n = 5;
  size_t count = 2000;
  double m = 4.0 * (double)count;
  const pccl_loggp_t *l = &p.level[PCCL_LEVEL_INTRA];
  p.copy = 1.0 / 10e9; /* m*copy = 0.8 us < m*G + L = 0.86 us */
  double want = (n - 1) * (l->o_s + m * l->G + l->L + l->o_r);
  expect_time(run_time(&p, PCCL_COLL_ALLGATHER, "ring", n, n, count), want,
              "ring all-gather with a copy hidden behind the first message");
  p.copy = 1.0 / 1e9; /* 8 us */
  want = l->o_s + m * p.copy + l->o_r + (n - 2) * (l->o_s + m * l->G + l->L + l->o_r);
  expect_time(run_time(&p, PCCL_COLL_ALLGATHER, "ring", n, n, count), want,
              "ring all-gather with a copy that delays the first receive");
}

/* g longer than a round: the second send waits for the gap, not for data. */
static void test_gap_limited_ring(void) {
  pccl_profile_t p = base_profile();
  pccl_loggp_t *l = &p.level[PCCL_LEVEL_INTRA];
  l->g = 20e-6;
  size_t count = 100;
  double m = 400;
  double want = l->o_s + l->g + m * l->G + l->L + l->o_r;
  expect_time(run_time(&p, PCCL_COLL_ALLGATHER, "ring", 3, 3, count), want,
              "gap-limited ring all-gather p=3");
}

/* ---- compressed collectives ---------------------------------------------- */

/* base_profile with local work priced: compression and decompression at the
 * documented defaults, reductions and copies. */
static pccl_profile_t z_profile(void) {
  pccl_profile_t p = base_profile();
  p.compress = 1.0 / 1.5e9;
  p.decompress = 1.0 / 2.5e9;
  p.gamma = 1.0 / 8e9;
  p.copy = 1.0 / 12e9;
  return p;
}

/* A stream of n float32 values at ratio R (0: 1) is ceil(4n / R) bytes. */
static double stream_bytes(size_t n, double ratio) {
  return ceil(4.0 * (double)n / (ratio > 0 ? ratio : 1.0));
}

static double max2(double a, double b) { return a > b ? a : b; }

static const double z_ratios[] = {0, 1, 4, 2.5, 3};
#define NZ_RATIOS (sizeof z_ratios / sizeof z_ratios[0])

/* zring all-gather, blocks of n elements. Each rank compresses its block
 * (c = 4n*compress), then, at once, sends the stream (o_s first: messages
 * before local work) and decompresses its own copy (d = 4n*decompress). A
 * received stream is forwarded (o_s) and decompressed (d) the same way, so
 * the next receive's o_r waits for the later of the message's flight m*G + L
 * and the decompression. After p-1 hops the last stream is decompressed:
 *   c + (p-1)(o_s + max(m*G + L, d) + o_r) + d,   m = ceil(4n / ratio). */
static void test_zring_allgather(void) {
  pccl_profile_t p = z_profile();
  int ps[] = {1, 2, 3, 5, 16};
  size_t counts[] = {100, 777, 1000, 40000};
  for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
    for (size_t j = 0; j < sizeof counts / sizeof counts[0]; j++)
      for (size_t q = 0; q < NZ_RATIOS; q++)
        for (int lv = 0; lv < PCCL_LEVEL_COUNT; lv++) {
          int n = ps[i];
          size_t count = counts[j];
          const pccl_loggp_t *l = &p.level[lv];
          double m = stream_bytes(count, z_ratios[q]);
          double c = 4.0 * (double)count * p.compress, d = 4.0 * (double)count * p.decompress;
          double want = c + (n - 1) * (l->o_s + max2(m * l->G + l->L, d) + l->o_r) + d;
          double got = run_ratio(&p, PCCL_COLL_ALLGATHER, "zring", n,
                                 lv == PCCL_LEVEL_INTRA ? n : 1, count, z_ratios[q]);
          char what[128];
          snprintf(what, sizeof what, "zring all-gather p=%d n=%zu ratio %g %s", n, count,
                   z_ratios[q], lv ? "inter" : "intra");
          expect_time(got, want, what);
        }
}

/* zrecdbl all-reduce on a power of two p, n elements: the copy of the input
 * (4n*copy), then per round, on the level of that round's partner: compress
 * (c); send (o_s) then decompress the own stream (d); the partner's stream
 * arrives m*G + L after the o_s, and its o_r waits for the CPU too; then
 * decompress it (d) and add (4n*gamma):
 *   4n*copy + sum over rounds (c + o_s + max(m*G + L, d) + o_r + d + 4n*gamma). */
static void test_zrecdbl_allreduce(void) {
  pccl_profile_t p = z_profile();
  const int layouts[][2] = {{1, 1}, {2, 2}, {2, 1}, {4, 4}, {8, 2}, {16, 4}, {32, 1}};
  size_t counts[] = {100, 1000, 5000, 40000};
  for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
    for (size_t j = 0; j < sizeof counts / sizeof counts[0]; j++)
      for (size_t q = 0; q < NZ_RATIOS; q++) {
        int n = layouts[i][0], per = layouts[i][1];
        size_t count = counts[j];
        double bytes = 4.0 * (double)count, m = stream_bytes(count, z_ratios[q]);
        double c = bytes * p.compress, d = bytes * p.decompress;
        double want = bytes * p.copy;
        for (int mask = 1; mask < n; mask *= 2) {
          const pccl_loggp_t *l = &p.level[mask < per ? PCCL_LEVEL_INTRA : PCCL_LEVEL_INTER];
          want += c + l->o_s + max2(m * l->G + l->L, d) + l->o_r + d + bytes * p.gamma;
        }
        double got = run_ratio(&p, PCCL_COLL_ALLREDUCE, "zrecdbl", n, per, count, z_ratios[q]);
        char what[128];
        snprintf(what, sizeof what, "zrecdbl all-reduce p=%d per node %d n=%zu ratio %g", n, per,
                 count, z_ratios[q]);
        expect_time(got, want, what);
      }
}

/* The ratio: checked, ignored by plain algorithms, and shrinking streams. */
static void test_ratio(void) {
  pccl_profile_t p = z_profile();
  const double bad[] = {0.5, 0.999, -1, -4, NAN, INFINITY, -INFINITY};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    pccl_sim_case_t c = {PCCL_COLL_ALLREDUCE, pccl_algo_find(PCCL_COLL_ALLREDUCE, "zring"), 0, 4,
                         2, 1000, 4, bad[i]};
    pccl_sim_result_t r;
    char what[64];
    snprintf(what, sizeof what, "ratio %g rejected", bad[i]);
    expect(pccl_sim_run(&p, &c, &r) == PCCL_ERR_INVALID_ARGUMENT && strstr(r.message, "ratio"),
           what);
  }
  double plain = run_ratio(&p, PCCL_COLL_ALLREDUCE, "ring", 8, 2, 1 << 16, 0);
  expect(plain > 0 && run_ratio(&p, PCCL_COLL_ALLREDUCE, "ring", 8, 2, 1 << 16, 4) == plain,
         "a plain algorithm ignores the ratio");
  p.level[PCCL_LEVEL_INTER].G = 1.0 / 1e8; /* a network far slower than the codec */
  const char *lossy[] = {"zring", "zrecdbl"};
  for (int a = 0; a < 2; a++) {
    double t1 = run_ratio(&p, PCCL_COLL_ALLREDUCE, lossy[a], 8, 2, 1 << 20, 0);
    double t4 = run_ratio(&p, PCCL_COLL_ALLREDUCE, lossy[a], 8, 2, 1 << 20, 4);
    char what[64];
    snprintf(what, sizeof what, "%s all-reduce: ratio 4 is faster than 1", lossy[a]);
    expect(t1 > 0 && t4 > 0 && t4 < t1, what);
  }
}

/* ---- hand-written schedules: contention ----------------------------------- */

/* Who sends to whom in the current test schedule: pairs (from, to). */
static int g_pairs[8][2];
static int g_npairs;
static size_t g_bytes_override; /* nonzero: the receive expects this many elements */

static pccl_status_t gen_pairs(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  for (int i = 0; i < g_npairs; i++) {
    if (g_pairs[i][0] == a->rank)
      pccl_sb_send(sb, g_pairs[i][1], pccl_rg(PCCL_BUF_SEND, 0, a->count));
    if (g_pairs[i][1] == a->rank) {
      size_t n = g_bytes_override ? g_bytes_override : a->count;
      pccl_sb_recv(sb, g_pairs[i][0], pccl_rg(PCCL_BUF_RECV, (size_t)i * a->count, n));
    }
  }
  return PCCL_OK;
}

/* Each rank receives from the other, then sends what it received: neither
 * send can start. */
static pccl_status_t gen_deadlock(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  int other = 1 - a->rank;
  pccl_sb_recv(sb, other, pccl_rg(PCCL_BUF_RECV, 0, a->count));
  pccl_sb_send(sb, other, pccl_rg(PCCL_BUF_RECV, 0, a->count));
  return PCCL_OK;
}

static const pccl_algo_t test_pairs = {.coll = PCCL_COLL_ALLGATHER, .name = "pairs",
                                       .description = "test", .generate = gen_pairs};
static const pccl_algo_t test_deadlock = {.coll = PCCL_COLL_ALLGATHER, .name = "deadlock",
                                          .description = "test", .generate = gen_deadlock};

static pccl_status_t run_pairs(const pccl_profile_t *p, int nranks, int per_node, size_t count,
                               pccl_sim_result_t *r) {
  pccl_sim_case_t c = {PCCL_COLL_ALLGATHER, &test_pairs, 0, nranks, per_node, count, 4, 0};
  return pccl_sim_run(p, &c, r);
}

static double pairs_time(const pccl_profile_t *p, int nranks, int per_node, size_t count) {
  pccl_sim_result_t r;
  pccl_status_t st = run_pairs(p, nranks, per_node, count, &r);
  if (st != PCCL_OK) printf("  pairs: %s: %s\n", pccl_status_string(st), r.message);
  return st == PCCL_OK ? r.seconds : -1;
}

static void set_pairs(int n, const int (*pairs)[2]) {
  g_npairs = n;
  memcpy(g_pairs, pairs, (size_t)n * sizeof pairs[0]);
}

/* Two nodes of two ranks, one NIC each: 0->2 and 1->3 leave through one NIC
 * and enter through one; with node radix 1 the second waits for the first's
 * wire time. */
static void test_node_radix(void) {
  pccl_profile_t p = base_profile();
  const pccl_loggp_t *l = &p.level[PCCL_LEVEL_INTER];
  size_t count = 50000;
  double m = 4.0 * (double)count;
  double alone = l->o_s + m * l->G + l->L + l->o_r, shared = alone + m * l->G;
  const int out_pairs[][2] = {{0, 2}, {1, 3}};
  set_pairs(2, out_pairs);
  p.node_radix = 1;
  expect_time(pairs_time(&p, 4, 2, count), shared, "node radix 1: two transfers share a NIC");
  p.node_radix = 2;
  expect_time(pairs_time(&p, 4, 2, count), alone, "node radix 2: no waiting");
  p.node_radix = 0;
  expect_time(pairs_time(&p, 4, 2, count), alone, "node radix off");
  p.node_radix = 1;
  p.nics_per_node = 2; /* local ranks 0 and 1 use NICs 0 and 1 */
  expect_time(pairs_time(&p, 4, 2, count), alone, "node radix 1, two NICs: no waiting");
  p.nics_per_node = 1;
  /* outgoing only: both leave node 0's NIC for NICs of different nodes */
  const int out_only[][2] = {{0, 2}, {1, 4}};
  set_pairs(2, out_only);
  expect_time(pairs_time(&p, 6, 2, count), shared, "node radix 1: two transfers out of one NIC");
  /* incoming only: ranks of nodes 0 and 1 send to node 2, one NIC there */
  const int in_pairs[][2] = {{0, 4}, {2, 5}};
  set_pairs(2, in_pairs);
  expect_time(pairs_time(&p, 6, 2, count), shared, "node radix 1: two transfers into one NIC");
  /* three transfers through one NIC with radix 2: the third waits once */
  const int three[][2] = {{0, 3}, {1, 4}, {2, 5}};
  set_pairs(3, three);
  p.node_radix = 2;
  expect_time(pairs_time(&p, 6, 3, count), shared, "node radix 2: the third transfer waits");
}

/* The duplex factor, one rank per node: a transfer that starts while its
 * link carries data the other way (into its sender's node or out of its
 * receiver's) takes G x duplex a byte; links used one way, and transfers
 * inside a node, keep G. */
static void test_duplex(void) {
  pccl_profile_t p = base_profile();
  const pccl_loggp_t *l = &p.level[PCCL_LEVEL_INTER], *in = &p.level[PCCL_LEVEL_INTRA];
  size_t count = 50000;
  double m = 4.0 * (double)count, F = 1.5;
  double alone = l->o_s + m * l->G + l->L + l->o_r;
  double both = l->o_s + m * (l->G * F) + l->L + l->o_r;
  p.duplex = F;
  const int one_way[][2] = {{0, 1}};
  set_pairs(1, one_way);
  expect_time(pairs_time(&p, 2, 1, count), alone, "duplex: one way, G");
  /* an exchange: whichever starts second finds the link busy the other way */
  const int exchange[][2] = {{0, 1}, {1, 0}};
  set_pairs(2, exchange);
  expect_time(pairs_time(&p, 2, 1, count), both, "duplex: an exchange, G x duplex");
  /* a ring of three nodes: each link carries one transfer out, one in */
  const int ring[][2] = {{0, 1}, {1, 2}, {2, 0}};
  set_pairs(3, ring);
  expect_time(pairs_time(&p, 3, 1, count), both, "duplex: a ring, G x duplex");
  /* 2 -> 0 while 0 -> 1: node 0's link is busy outward when 2's transfer
   * into it starts (the receiver's side of the rule) */
  const int into_sender[][2] = {{0, 1}, {2, 0}};
  set_pairs(2, into_sender);
  expect_time(pairs_time(&p, 3, 1, count), both, "duplex: into a node that sends, G x duplex");
  /* 0 -> 1 then 1 -> 2: node 1's link is busy inward when its own transfer
   * out starts (the sender's side) */
  const int chain[][2] = {{0, 1}, {1, 2}};
  set_pairs(2, chain);
  expect_time(pairs_time(&p, 3, 1, count), both, "duplex: out of a node that receives, G x duplex");
  /* two one-way transfers on disjoint links */
  const int apart[][2] = {{0, 1}, {2, 3}};
  set_pairs(2, apart);
  expect_time(pairs_time(&p, 4, 1, count), alone, "duplex: disjoint links, G");
  /* an exchange inside one node: the factor is for links between nodes */
  set_pairs(2, exchange);
  expect_time(pairs_time(&p, 2, 2, count), in->o_s + m * in->G + in->L + in->o_r,
              "duplex: an exchange inside a node, intra G");
  p.duplex = 1;
  expect_time(pairs_time(&p, 2, 1, count), alone, "duplex 1: an exchange at G");
  p.duplex = 0;
  expect_time(pairs_time(&p, 2, 1, count), alone, "duplex 0 (unset): an exchange at G");
}

/* Nodes on one shared host: every message waits for a turn of host_message
 * on one of host_cores cores, first come first served, whichever nodes it
 * joins; the other costs are as without it. */
static void test_host(void) {
  pccl_profile_t p = base_profile();
  const pccl_loggp_t *l = &p.level[PCCL_LEVEL_INTER], *in = &p.level[PCCL_LEVEL_INTRA];
  size_t count = 1;
  double m = 4.0 * (double)count, H = 7e-6;
  double alone = l->o_s + m * l->G + l->L + l->o_r;
  /* two exchanges, one rank per node: four messages ready at once */
  const int two[][2] = {{0, 1}, {1, 0}, {2, 3}, {3, 2}};
  set_pairs(4, two);
  p.host_message = H;
  p.host_cores = 1;
  expect_time(pairs_time(&p, 4, 1, count), alone + 3 * H, "host, 1 core: the fourth message waits 3 turns");
  p.host_cores = 2;
  expect_time(pairs_time(&p, 4, 1, count), alone + H, "host, 2 cores: it waits one turn");
  p.host_cores = 4;
  expect_time(pairs_time(&p, 4, 1, count), alone, "host, 4 cores: no waiting");
  p.host_cores = 1;
  expect_time(pairs_time(&p, 4, 2, count), in->o_s + m * in->G + in->L + in->o_r + 3 * H,
              "host, 1 core: messages inside nodes wait their turns too");
  /* two nodes of two, both exchanges between the nodes: the host is one for
   * all nodes, so the fourth message waits 3 turns again */
  const int across[][2] = {{0, 2}, {2, 0}, {1, 3}, {3, 1}};
  set_pairs(4, across);
  expect_time(pairs_time(&p, 4, 2, count), alone + 3 * H, "host, 1 core, two nodes of two: 3 turns");
  set_pairs(4, two);
  p.host_cores = 0;
  p.host_message = 0;
  expect_time(pairs_time(&p, 4, 1, count), alone, "host unset: no waiting");
}

/* Rank 0 sends to ranks 1 and 2 inside one node (sends), or receives from
 * them (receives). */
static void test_device_radix(void) {
  pccl_profile_t p = base_profile();
  const pccl_loggp_t *l = &p.level[PCCL_LEVEL_INTRA];
  size_t count = 50000;
  double m = 4.0 * (double)count, mG = m * l->G;
  const int fan_out[][2] = {{0, 1}, {0, 2}};
  set_pairs(2, fan_out);
  /* unlimited: the second o_s overlaps the first wire; injection waits for the gap mG */
  expect_time(pairs_time(&p, 3, 3, count), l->o_s + 2 * mG + l->L + l->o_r,
              "device radix off: two sends, gap-serialized");
  p.device_radix = 1; /* the second send starts only when the first has left */
  expect_time(pairs_time(&p, 3, 3, count), 2 * l->o_s + 2 * mG + l->L + l->o_r,
              "device radix 1: second send waits for the first");
  const int fan_in[][2] = {{1, 0}, {2, 0}};
  set_pairs(2, fan_in);
  p.device_radix = 0; /* both arrive together; the receiver's CPU takes them in turn */
  expect_time(pairs_time(&p, 3, 3, count), l->o_s + mG + l->L + 2 * l->o_r,
              "device radix off: two receives");
  p.device_radix = 1; /* the second transfer waits for the first's wire time */
  expect_time(pairs_time(&p, 3, 3, count), l->o_s + 2 * mG + l->L + l->o_r,
              "device radix 1: second receive waits");
}

/* ---- errors ----------------------------------------------------------------- */

static void test_run_errors(void) {
  pccl_profile_t p = base_profile();
  const pccl_algo_t *ring = pccl_algo_find(PCCL_COLL_ALLGATHER, "ring");
  pccl_sim_case_t good = {PCCL_COLL_ALLGATHER, ring, 0, 4, 2, 10, 4, 0}, c;
  pccl_sim_result_t r;
  expect(pccl_sim_run(&p, &good, &r) == PCCL_OK && r.seconds > 0, "good case runs");
  expect(pccl_sim_run(NULL, &good, &r) == PCCL_ERR_INVALID_ARGUMENT, "NULL profile");
  expect(pccl_sim_run(&p, NULL, &r) == PCCL_ERR_INVALID_ARGUMENT, "NULL case");
  expect(pccl_sim_run(&p, &good, NULL) == PCCL_ERR_INVALID_ARGUMENT, "NULL result");
  c = good, c.nranks = 0;
  expect(pccl_sim_run(&p, &c, &r) == PCCL_ERR_INVALID_ARGUMENT, "nranks 0");
  c = good, c.nranks = -3;
  expect(pccl_sim_run(&p, &c, &r) == PCCL_ERR_INVALID_ARGUMENT, "nranks < 0");
  c = good, c.ranks_per_node = 0;
  expect(pccl_sim_run(&p, &c, &r) == PCCL_ERR_INVALID_ARGUMENT, "ranks_per_node 0");
  c = good, c.algo = NULL;
  expect(pccl_sim_run(&p, &c, &r) == PCCL_ERR_INVALID_ARGUMENT, "no algorithm");
  c = good, c.coll = PCCL_COLL_ALLREDUCE;
  expect(pccl_sim_run(&p, &c, &r) == PCCL_ERR_INVALID_ARGUMENT, "algorithm of another collective");
  c = good, c.elem_size = 0;
  expect(pccl_sim_run(&p, &c, &r) == PCCL_ERR_INVALID_ARGUMENT, "element size 0");
  c = good, c.k = 3;
  expect(pccl_sim_run(&p, &c, &r) == PCCL_ERR_INVALID_ARGUMENT, "k for ring");
  c = good, c.count = (size_t)-1 / 2;
  expect(pccl_sim_run(&p, &c, &r) == PCCL_ERR_OVERFLOW, "count overflow");
  pccl_profile_t bad = p;
  bad.level[PCCL_LEVEL_INTER].G = -1;
  expect(pccl_sim_run(&bad, &good, &r) == PCCL_ERR_CONFIG, "negative G in memory");
  bad = p;
  bad.nics_per_node = 0;
  expect(pccl_sim_run(&bad, &good, &r) == PCCL_ERR_CONFIG, "no NIC");
  bad = p;
  bad.level[PCCL_LEVEL_INTRA].L = NAN;
  expect(pccl_sim_run(&bad, &good, &r) == PCCL_ERR_CONFIG, "NaN latency");

  const int one_way[][2] = {{0, 1}};
  set_pairs(1, one_way);
  g_bytes_override = 7;
  expect(run_pairs(&p, 2, 2, 10, &r) == PCCL_ERR_INTERNAL && strstr(r.message, "bytes"),
         "message sizes differ");
  g_bytes_override = 0;
  c = good;
  c.algo = &test_deadlock;
  c.nranks = 2;
  expect(pccl_sim_run(&p, &c, &r) == PCCL_ERR_INTERNAL && strstr(r.message, "deadlock"),
         "deadlock detected");
}

/* A schedule where rank 0 sends twice to rank 1, which receives once. */
static pccl_status_t gen_unpaired(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  if (a->rank == 0) {
    pccl_sb_send(sb, 1, pccl_rg(PCCL_BUF_SEND, 0, a->count));
    pccl_sb_send(sb, 1, pccl_rg(PCCL_BUF_SEND, 0, a->count));
  } else {
    pccl_sb_recv(sb, 0, pccl_rg(PCCL_BUF_RECV, 0, a->count));
  }
  return PCCL_OK;
}

static void test_unpaired(void) {
  pccl_profile_t p = base_profile();
  const pccl_algo_t al = {.coll = PCCL_COLL_ALLGATHER, .name = "unpaired", .generate = gen_unpaired};
  pccl_sim_case_t c = {PCCL_COLL_ALLGATHER, &al, 0, 2, 2, 10, 4, 0};
  pccl_sim_result_t r;
  pccl_status_t st = pccl_sim_run(&p, &c, &r);
  expect(st == PCCL_ERR_INTERNAL && strstr(r.message, "rank 0 sends more messages to rank 1"),
         "unpaired send reported");
}

/* The node segment's step: L of the node level plus the bytes the rank
 * copies in and out (src + dst of the step) at p.copy each; refused across
 * nodes. */
static void test_sim_seg(void) {
  pccl_profile_t p = base_profile();
  p.copy = 1.0 / 20e9;
  const size_t count = 1000;
  const double m = 4.0 * (double)count, L = p.level[PCCL_LEVEL_INTRA].L;
  const struct {
    pccl_coll_t coll;
    double in, out; /* per rank, in multiples of m (p = 4) */
  } cases[] = {{PCCL_COLL_ALLREDUCE, 1, 1},      {PCCL_COLL_ALLGATHER, 1, 4},
               {PCCL_COLL_REDUCE_SCATTER, 4, 1}, {PCCL_COLL_BROADCAST, 1, 1},
               {PCCL_COLL_REDUCE, 1, 1},         {PCCL_COLL_GATHER, 1, 4},
               {PCCL_COLL_SCATTER, 4, 1},        {PCCL_COLL_ALLTOALL, 4, 4}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char what[96];
    snprintf(what, sizeof what, "seg %s on one node of 4", pccl_coll_name(cases[i].coll));
    /* the slowest rank: the root of a rooted collective moves in and out */
    expect_time(run_time(&p, cases[i].coll, "seg", 4, 4, count),
                L + (cases[i].in + cases[i].out) * m * p.copy, what);
    pccl_sim_case_t c = {cases[i].coll, pccl_algo_find(cases[i].coll, "seg"), 0, 8, 4, count, 4, 1};
    pccl_sim_result_t r;
    snprintf(what, sizeof what, "seg %s refused on two nodes", pccl_coll_name(cases[i].coll));
    expect(pccl_sim_run(&p, &c, &r) != PCCL_OK, what);
  }
}

/* Every registered algorithm simulates on a few layouts (the compressed
 * ones at ratios 1 and 4). */
static void test_all_algorithms(void) {
  pccl_profile_t p = base_profile();
  p.gamma = 1.0 / 10e9;
  p.copy = 1.0 / 20e9;
  p.compress = PCCL_PROFILE_COMPRESS_DEFAULT;
  p.decompress = PCCL_PROFILE_DECOMPRESS_DEFAULT;
  p.device_radix = 2;
  p.node_radix = 1;
  p.nics_per_node = 2;
  int layouts[][2] = {{1, 1}, {5, 2}, {12, 4}, {16, 4}, {24, 8}};
  for (int i = 0; i < PCCL_ALGO_COUNT; i++)
    for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++)
      for (int ratio = 1; ratio <= (pccl_algos[i].lossy ? 4 : 1); ratio += 3) {
        if (pccl_algos[i].generate == pccl_gen_seg) continue; /* test_sim_seg */
        pccl_sim_case_t c = {pccl_algos[i].coll, &pccl_algos[i], 0, layouts[l][0],
                             layouts[l][1], 1000, 4, ratio};
        pccl_sim_result_t r;
        pccl_status_t st = pccl_sim_run(&p, &c, &r);
        char what[128];
        snprintf(what, sizeof what, "%s %s p=%d per node %d ratio %d", pccl_coll_name(c.coll),
                 pccl_algos[i].name, c.nranks, c.ranks_per_node, ratio);
        if (st != PCCL_OK) printf("  %s: %s\n", what, r.message);
        expect(st == PCCL_OK && (c.nranks == 1 || (r.seconds > 0 && r.nmessages > 0)), what);
      }
}

/* ---- profiles ------------------------------------------------------------- */

static const char good_text[] =
    "# a test machine\n"
    "name   test-machine_1.0\n"
    "source made up for the unit test   # trailing comment\n"
    "ranks_per_node 8\n"
    "nics_per_node 4\r\n"
    "device_radix 8\n"
    "node_radix 1\n"
    "gamma 20GB/s\n"
    "copy 0.05ns\n"
    "intra.L 1.5us\n"
    "intra.o_s 300ns\n"
    "intra.o_r 0.3e3ns\n"
    "intra.g 2.5E-7\n"
    "intra.G 50GB/s\n"
    "inter.L 2us\n"
    "\t inter.o_s 1us\n"
    "inter.o_r 1.0us\n"
    "inter.g 0.001ms\n"
    "inter.G 40ps\n";

static int same_profile(const pccl_profile_t *a, const pccl_profile_t *b) {
  int same = strcmp(a->name, b->name) == 0 && strcmp(a->source, b->source) == 0 &&
             a->ranks_per_node == b->ranks_per_node && a->nics_per_node == b->nics_per_node &&
             a->device_radix == b->device_radix && a->node_radix == b->node_radix &&
             a->gamma == b->gamma && a->copy == b->copy && a->compress == b->compress &&
             a->decompress == b->decompress && a->duplex == b->duplex &&
             a->host_cores == b->host_cores && a->host_message == b->host_message;
  for (int l = 0; l < PCCL_LEVEL_COUNT; l++)
    same = same && a->level[l].L == b->level[l].L && a->level[l].o_s == b->level[l].o_s &&
           a->level[l].o_r == b->level[l].o_r && a->level[l].g == b->level[l].g &&
           a->level[l].G == b->level[l].G;
  return same;
}

/* p as pccl_profile_write writes it, in text (cap bytes); 0 when it fails. */
static int written(const pccl_profile_t *p, char *text, size_t cap) {
  text[0] = '\0';
  FILE *f = tmpfile();
  if (!f) return 0;
  int ok = pccl_profile_write(f, p) == PCCL_OK;
  rewind(f);
  text[fread(text, 1, cap - 1, f)] = '\0';
  fclose(f);
  return ok;
}

static void test_profile_good(void) {
  pccl_profile_t p, q;
  char err[256];
  pccl_status_t st = pccl_profile_parse(good_text, &p, err, sizeof err);
  if (st != PCCL_OK) printf("  %s\n", err);
  expect(st == PCCL_OK, "good profile parses");
  expect(strcmp(p.name, "test-machine_1.0") == 0 && strcmp(p.source, "made up for the unit test") == 0,
         "name and source");
  expect(p.ranks_per_node == 8 && p.nics_per_node == 4 && p.device_radix == 8 && p.node_radix == 1,
         "integers");
  expect(p.level[0].L == 1.5e-6 && p.level[0].o_s == 300e-9 && p.level[0].o_r == 0.3e-6 &&
             p.level[0].g == 2.5e-7 && p.level[1].g == 1e-6 && p.level[1].G == 40e-12 &&
             p.copy == 0.05e-9,
         "times with units read as the decimal number");
  expect(p.gamma == 1.0 / 20e9 && p.level[0].G == 1.0 / 50e9, "bandwidths inverted");

  char text[4096];
  expect(written(&p, text, sizeof text), "write");
  st = pccl_profile_parse(text, &q, err, sizeof err);
  expect(st == PCCL_OK && same_profile(&p, &q), "write then parse gives the same values");

  /* awkward doubles survive too */
  p.level[1].G = 1.0 / 3e10;
  p.gamma = 0.1 + 0.2;
  p.level[0].L = 5e-324;
  p.source[0] = '\0';
  expect(written(&p, text, sizeof text), "write awkward values");
  expect(pccl_profile_parse(text, &q, err, sizeof err) == PCCL_OK && same_profile(&p, &q),
         "awkward values round-trip");
  p.level[1].o_r = -1;
  expect(pccl_profile_write(stdout, &p) == PCCL_ERR_CONFIG, "write refuses a negative value");
  expect(pccl_profile_write(NULL, &q) == PCCL_ERR_INVALID_ARGUMENT, "write to NULL");

  char path[] = "/tmp/pccl_test_sim_XXXXXX";
  int fd = mkstemp(path);
  if (fd >= 0) {
    size_t len = strlen(good_text);
    expect(write(fd, good_text, len) == (ssize_t)len, "temporary file written");
    close(fd);
    expect(pccl_profile_load(path, &q, err, sizeof err) == PCCL_OK &&
               strcmp(q.name, "test-machine_1.0") == 0,
           "load from a file");
    unlink(path);
  }
  expect(pccl_profile_load("/nonexistent/pccl.profile", &q, err, sizeof err) ==
             PCCL_ERR_INVALID_ARGUMENT,
         "load of a missing file");
  expect(pccl_profile_parse(NULL, &q, err, sizeof err) == PCCL_ERR_INVALID_ARGUMENT, "parse NULL");
}

/* good_text with the line that starts with `key` replaced by `line` (or
 * removed when line is NULL), or with `line` appended when key is NULL. */
static void edited(char *out, size_t cap, const char *key, const char *line) {
  out[0] = '\0';
  const char *s = good_text;
  while (*s) {
    const char *nl = strchr(s, '\n');
    size_t len = nl ? (size_t)(nl - s) + 1 : strlen(s);
    const char *t = s;
    while (*t == ' ' || *t == '\t') t++;
    int hit = key && strncmp(t, key, strlen(key)) == 0 && t[strlen(key)] == ' ';
    if (!hit) {
      strncat(out, s, len);
    } else if (line) {
      strncat(out, line, cap - strlen(out) - 2);
      strcat(out, "\n");
    }
    s += len;
  }
  if (!key) strncat(out, line, cap - strlen(out) - 1);
}

/* Whether good_text with `key value` appended (line 20) is rejected with
 * that line and key named. */
static void expect_rejected_on_line_20(const char *key, const char *value) {
  char text[8192], line[64], err[256] = "", what[96];
  pccl_profile_t q;
  snprintf(line, sizeof line, "%s %s\n", key, value);
  edited(text, sizeof text, NULL, line);
  pccl_status_t st = pccl_profile_parse(text, &q, err, sizeof err);
  int named = strncmp(err, "line 20: ", 9) == 0 && strstr(err, key) != NULL;
  snprintf(what, sizeof what, "%s '%s' rejected on line 20", key, value);
  if (st != PCCL_ERR_CONFIG || !named) printf("  %s: %s\n", what, err);
  expect(st == PCCL_ERR_CONFIG && named, what);
}

static void test_profile_bad(void) {
  char longline[2100], longname[400];
  memset(longline, 'x', sizeof longline - 1);
  longline[sizeof longline - 1] = '\0';
  memcpy(longline, "source ", 7);
  snprintf(longname, sizeof longname, "name %0300d", 7);
  const struct {
    const char *key, *line;
  } cases[] = {
      {NULL, "colour blue\n"},               {NULL, "intra.L 1us\n"},
      {"inter.G", NULL},                     {"name", NULL},
      {"intra.L", "intra.L abc"},            {"intra.L", "intra.L -1us"},
      {"intra.L", "intra.L nan"},            {"intra.L", "intra.L inf"},
      {"intra.L", "intra.L 1e999"},          {"intra.L", "intra.L 0x10"},
      {"intra.L", "intra.L 25GB/s"},         {"intra.G", "intra.G 0GB/s"},
      {"intra.L", "intra.L 1.5 us"},         {"intra.L", "intra.L 1.5xs"},
      {"intra.L", "intra.L 1e"},             {"intra.L", "intra.L 1e+"},
      {"intra.L", "intra.L ."},              {"intra.L", "intra.L"},
      {"intra.L", "intra.L 2e6"},            {"intra.L", "intra.L +1"},
      {"intra.L", "intra.L 1e00001"},        {"ranks_per_node", "ranks_per_node 0"},
      {"ranks_per_node", "ranks_per_node 4.5"}, {"node_radix", "node_radix 99999999999"},
      {"device_radix", "device_radix 2000000"}, {"nics_per_node", "nics_per_node -1"},
      {"nics_per_node", "nics_per_node 4 4"}, {"name", "name my profile!"},
      {"name", longname},                    {"source", longline},
      {"source", "source tab\there"},        {NULL, "\x01\x02\n"},
      {NULL, "= 3\n"},                       {"gamma", "gamma 1GiB/s"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char text[8192], err[256] = "";
    edited(text, sizeof text, cases[i].key, cases[i].line);
    pccl_profile_t p;
    pccl_status_t st = pccl_profile_parse(text, &p, err, sizeof err);
    char what[160];
    snprintf(what, sizeof what, "malformed profile %zu (%.40s) rejected with a line number", i,
             cases[i].line ? cases[i].line : cases[i].key);
    expect(st == PCCL_ERR_CONFIG && strstr(err, "line ") != NULL, what);
  }
  pccl_profile_t p;
  char err[256];
  expect(pccl_profile_parse("", &p, err, sizeof err) == PCCL_ERR_CONFIG, "empty profile");
}

/* The optional compress / decompress keys: defaults when absent, the same
 * strictness as the other per-byte costs when present, written and read
 * back, bounded in memory. good_text has 19 lines: an appended key is on
 * line 20. */
static void test_profile_compress(void) {
  pccl_profile_t p, q;
  char text[8192], err[256] = "";
  pccl_status_t st = pccl_profile_parse(good_text, &p, err, sizeof err);
  expect(st == PCCL_OK && p.compress == PCCL_PROFILE_COMPRESS_DEFAULT &&
             p.decompress == PCCL_PROFILE_DECOMPRESS_DEFAULT,
         "compress / decompress absent: the defaults");
  expect(PCCL_PROFILE_COMPRESS_DEFAULT == 1.0 / 1.5e9 &&
             PCCL_PROFILE_DECOMPRESS_DEFAULT == 1.0 / 2.5e9,
         "defaults as documented: 1.5 and 2.5 GB/s");
  edited(text, sizeof text, NULL, "compress 1.5GB/s\ndecompress 0.4ns  # per byte\n");
  st = pccl_profile_parse(text, &p, err, sizeof err);
  if (st != PCCL_OK) printf("  %s\n", err);
  expect(st == PCCL_OK && p.compress == 1.0 / 1.5e9 && p.decompress == 0.4e-9,
         "compress as a bandwidth, decompress as a time");
  edited(text, sizeof text, NULL, "decompress 0\n");
  st = pccl_profile_parse(text, &p, err, sizeof err);
  expect(st == PCCL_OK && p.decompress == 0 && p.compress == PCCL_PROFILE_COMPRESS_DEFAULT,
         "decompress alone (0: free), compress defaulted");

  const char *bad[] = {"-1",   "abc",  "0GB/s", "nan", "inf",      "1us 2", "",
                       "2e6",  "+1",   "0x1",   "1e",  "1GiB/s",   "1.5 GB/s"};
  const char *keys[] = {"compress", "decompress"};
  for (int k = 0; k < 2; k++)
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) expect_rejected_on_line_20(keys[k], bad[i]);
  edited(text, sizeof text, NULL, "compress 1ns\ncompress 2ns\n");
  st = pccl_profile_parse(text, &q, err, sizeof err);
  expect(st == PCCL_ERR_CONFIG && strstr(err, "line 21: duplicate key 'compress' (first on line 20)"),
         "compress twice rejected");

  p.compress = 1.0 / 3e9;
  p.decompress = 0.1 + 0.2;
  expect(written(&p, text, sizeof text), "write with compress / decompress");
  expect(strstr(text, "\ncompress ") && strstr(text, "\ndecompress "), "both keys written");
  expect(pccl_profile_parse(text, &q, err, sizeof err) == PCCL_OK && same_profile(&p, &q),
         "compress / decompress round-trip");

  const double out_of_bounds[] = {-1e-9, NAN, INFINITY, 2e6};
  for (size_t i = 0; i < sizeof out_of_bounds / sizeof out_of_bounds[0]; i++)
    for (int k = 0; k < 2; k++) {
      q = p;
      *(k ? &q.decompress : &q.compress) = out_of_bounds[i];
      char what[64];
      snprintf(what, sizeof what, "check rejects %s = %g", keys[k], out_of_bounds[i]);
      expect(pccl_profile_check(&q, err, sizeof err) == PCCL_ERR_CONFIG &&
                 strstr(err, keys[k]) != NULL && pccl_profile_write(stdout, &q) == PCCL_ERR_CONFIG,
             what);
    }
}

/* The optional host keys: absent 0 (nodes with CPUs of their own), read and
 * written together, refused alone, bounded. */
static void test_profile_host(void) {
  pccl_profile_t p, q;
  char text[8192], err[256] = "";
  pccl_status_t st = pccl_profile_parse(good_text, &p, err, sizeof err);
  expect(st == PCCL_OK && p.host_cores == 0 && p.host_message == 0, "host keys absent: 0");
  expect(written(&p, text, sizeof text) && !strstr(text, "host_"), "host keys not written when unset");
  edited(text, sizeof text, NULL, "host_cores 2\nhost_message 30us\n");
  st = pccl_profile_parse(text, &q, err, sizeof err);
  if (st != PCCL_OK) printf("  %s\n", err);
  expect(st == PCCL_OK && q.host_cores == 2 && q.host_message == 30e-6, "host_cores 2, host_message 30us read");
  expect(written(&q, text, sizeof text) && pccl_profile_parse(text, &p, err, sizeof err) == PCCL_OK &&
             same_profile(&p, &q),
         "host keys round-trip");
  const char *alone[] = {"host_cores 2\n", "host_message 30us\n", "host_cores 0\nhost_message 1us\n",
                         "host_cores 2\nhost_message 0\n"};
  for (size_t i = 0; i < sizeof alone / sizeof alone[0]; i++) {
    char what[96];
    edited(text, sizeof text, NULL, alone[i]);
    st = pccl_profile_parse(text, &q, err, sizeof err);
    snprintf(what, sizeof what, "host keys one without the other rejected (case %zu)", i);
    expect(st == PCCL_ERR_CONFIG && strstr(err, "host_cores and host_message"), what);
  }
  const char *bad_cores[] = {"-1", "65537", "1.5", "x", "2us", ""};
  for (size_t i = 0; i < sizeof bad_cores / sizeof bad_cores[0]; i++)
    expect_rejected_on_line_20("host_cores", bad_cores[i]);
  const char *bad_message[] = {"-1us", "abc", "nan", "1 2", "1e7", "1GB/s"};
  for (size_t i = 0; i < sizeof bad_message / sizeof bad_message[0]; i++)
    expect_rejected_on_line_20("host_message", bad_message[i]);
  q = p;
  q.host_message = 0;
  expect(pccl_profile_check(&q, err, sizeof err) == PCCL_ERR_CONFIG && strstr(err, "host_cores") &&
             pccl_profile_write(stdout, &q) == PCCL_ERR_CONFIG,
         "check rejects host_cores without host_message");
  q = p;
  q.host_cores = -3;
  expect(pccl_profile_check(&q, err, sizeof err) == PCCL_ERR_CONFIG && strstr(err, "host_cores"),
         "check rejects host_cores -3");
}

/* The optional duplex factor: absent 0 (full duplex), a plain number in
 * [1, 100] on line 20 when present, written only when set, bounded in
 * memory. */
static void test_profile_duplex(void) {
  pccl_profile_t p, q;
  char text[8192], err[256] = "";
  pccl_status_t st = pccl_profile_parse(good_text, &p, err, sizeof err);
  expect(st == PCCL_OK && p.duplex == 0, "duplex absent: 0 (full duplex)");
  expect(written(&p, text, sizeof text), "write without duplex");
  expect(!strstr(text, "duplex"), "duplex not written when not set");
  edited(text, sizeof text, NULL, "duplex 1.5\n");
  st = pccl_profile_parse(text, &p, err, sizeof err);
  if (st != PCCL_OK) printf("  %s\n", err);
  expect(st == PCCL_OK && p.duplex == 1.5, "duplex 1.5 read");
  /* the number's forms, the bounds included */
  const struct {
    const char *text;
    double value;
  } good[] = {{"1.", 1}, {"1e0", 1}, {"2.5E1", 25}, {"1e2", 100}, {"100", 100}, {".5e1", 5}, {"1E+1", 10}};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    char line[64], what[64];
    snprintf(line, sizeof line, "duplex %s\n", good[i].text);
    edited(text, sizeof text, NULL, line);
    snprintf(what, sizeof what, "duplex %s read as %g", good[i].text, good[i].value);
    expect(pccl_profile_parse(text, &q, err, sizeof err) == PCCL_OK && q.duplex == good[i].value, what);
  }
  const char *bad[] = {"0.5", "0", "101", "1.5s", "1.5us", "-1", "abc", "nan", "1 2", "1GB/s", "",
                       "1e7", "1e-1", "100.01", "1e", "1e+", "."};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) expect_rejected_on_line_20("duplex", bad[i]);
  /* a factor's range, not a time's, in the message */
  edited(text, sizeof text, NULL, "duplex 1e7\n");
  st = pccl_profile_parse(text, &q, err, sizeof err);
  expect(st == PCCL_ERR_CONFIG && strstr(err, "1 to 100") && !strstr(err, "seconds"),
         "duplex 1e7: out of range (1 to 100)");
  edited(text, sizeof text, NULL, "duplex 2\nduplex 3\n");
  st = pccl_profile_parse(text, &q, err, sizeof err);
  expect(st == PCCL_ERR_CONFIG && strstr(err, "line 21: duplicate key 'duplex' (first on line 20)"),
         "duplex twice rejected");
  p.duplex = 1.0 + 1.0 / 3;
  expect(written(&p, text, sizeof text), "write with duplex");
  expect(pccl_profile_parse(text, &q, err, sizeof err) == PCCL_OK && same_profile(&p, &q),
         "duplex round-trips");
  const double out_of_bounds[] = {0.5, -1, NAN, INFINITY, 101};
  for (size_t i = 0; i < sizeof out_of_bounds / sizeof out_of_bounds[0]; i++) {
    q = p;
    q.duplex = out_of_bounds[i];
    char what[64];
    snprintf(what, sizeof what, "check rejects duplex = %g", out_of_bounds[i]);
    expect(pccl_profile_check(&q, err, sizeof err) == PCCL_ERR_CONFIG && strstr(err, "duplex"),
           what);
  }
}

/* Random byte edits of a good profile: OK or PCCL_ERR_CONFIG, never a crash. */
static void test_profile_mutations(void) {
  unsigned state = 12345;
  int bad = 0;
  for (int it = 0; it < 20000; it++) {
    char text[sizeof good_text + 8];
    memcpy(text, good_text, sizeof good_text);
    for (int e = 0; e < 1 + it % 4; e++) {
      state = state * 1103515245u + 12345u;
      size_t at = (state >> 8) % (sizeof good_text - 1);
      text[at] = (char)(1 + (state >> 20) % 255);
    }
    pccl_profile_t p;
    char err[256];
    pccl_status_t st = pccl_profile_parse(text, &p, err, sizeof err);
    if (st != PCCL_OK && st != PCCL_ERR_CONFIG) bad++;
    if (st == PCCL_OK && pccl_profile_check(&p, err, sizeof err) != PCCL_OK) bad++;
  }
  expect(bad == 0, "mutated profiles: OK or PCCL_ERR_CONFIG, and OK ones pass the check");
}

/* ---- rank classes ---------------------------------------------------------- */

/* Simulates c on p in full and by classes; returns whether both ran with the
 * same counts (the whole job's either way), and the two times, with whether
 * classes were taken. */
static int both_ways(const pccl_profile_t *p, pccl_sim_case_t c, double *full, double *fast,
                     int *classes) {
  pccl_sim_result_t r;
  c.full = 1;
  if (pccl_sim_run(p, &c, &r) != PCCL_OK) return 0;
  *full = r.seconds;
  size_t steps = r.nsteps, msgs = r.nmessages;
  c.full = 0;
  if (pccl_sim_run(p, &c, &r) != PCCL_OK) return 0;
  *fast = r.seconds;
  *classes = r.classes;
  return r.nsteps == steps && r.nmessages == msgs;
}

/* Where no two transfers can queue for a slot (radices off), simulating
 * one rank per class must give the full simulation's time exactly, for
 * every algorithm and layout; and the shortcut must be taken where it
 * applies (rings, recursive doubling, their two-level forms) and not on
 * nodes of unequal size. */
static void test_classes_exact(void) {
  pccl_profile_t p = base_profile();
  p.gamma = 1.0 / 10e9;
  p.copy = 1.0 / 20e9;
  p.nics_per_node = 2;
  int layouts[][2] = {{32, 4}, {48, 4}, {64, 8}, {128, 8}, {36, 8}};
  size_t counts[] = {1000, (size_t)300 << 20}; /* the second splits messages at 1 GiB */
  int taken = 0, ring_taken = 0, hier_taken = 0, uneven_taken = 0;
  for (int i = 0; i < PCCL_ALGO_COUNT; i++)
    for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++)
      for (size_t n = 0; n < 2; n++) {
        const pccl_algo_t *a = &pccl_algos[i];
        if (a->generate == pccl_gen_seg) continue;
        if (n == 1 && (a->coll != PCCL_COLL_ALLGATHER || a->lossy)) continue; /* see engine.c */
        pccl_sim_case_t c = {a->coll, a, 0, layouts[l][0], layouts[l][1], counts[n], 4, 0, 0};
        double full = -1, fast = -2;
        int classes = 0;
        int ran = both_ways(&p, c, &full, &fast, &classes);
        char what[200];
        snprintf(what, sizeof what, "classes: %s %s p=%d per node %d count %zu: %.17g s, full %.17g s",
                 pccl_coll_name(a->coll), a->name, c.nranks, c.ranks_per_node, c.count, fast, full);
        expect(ran && fast == full, what);
        taken += classes > 0;
        if (classes && strcmp(a->name, "ring") == 0) ring_taken++;
        if (classes && strcmp(a->name, "hier_recdbl") == 0) hier_taken++;
        if (classes && c.nranks % c.ranks_per_node) uneven_taken++;
      }
  printf("  classes taken in %d cases\n", taken);
  expect(ring_taken > 0 && hier_taken > 0, "classes: taken for ring and hier_recdbl");
  expect(uneven_taken == 0, "classes: never with nodes of unequal size");
}

/* A ring everywhere but on the last node, whose ranks add a copy: the
 * check must find that node and simulate every rank. */
static pccl_status_t gen_odd_node(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  pccl_status_t st = pccl_gen_allgather_ring(sb, a);
  if (st == PCCL_OK && a->topo->node_of[a->rank] == a->topo->nnodes - 1)
    pccl_sb_copy(sb, pccl_rg(PCCL_BUF_RECV, 0, 1), pccl_rg(PCCL_BUF_RECV, a->count, 1));
  return st;
}

static void test_classes_refused(void) {
  static const pccl_algo_t odd = {.coll = PCCL_COLL_ALLGATHER, .name = "odd",
                                  .generate = gen_odd_node};
  pccl_profile_t p = base_profile();
  p.copy = 1.0 / 20e9;
  pccl_sim_case_t c = {PCCL_COLL_ALLGATHER, &odd, 0, 64, 8, 1000, 4, 0, 0};
  double full = -1, fast = -2;
  int classes = -1;
  expect(both_ways(&p, c, &full, &fast, &classes) && classes == 0 && fast == full,
         "classes: refused where one node's schedules differ");
  /* With a slot limit, a job small enough is simulated whole. */
  p.node_radix = 1;
  c.algo = pccl_algo_find(PCCL_COLL_ALLGATHER, "ring");
  expect(both_ways(&p, c, &full, &fast, &classes) && classes == 0 && fast == full,
         "classes: not for a small job where transfers may queue");
}

/* max_steps: a job past it runs as classes where its schedules allow them;
 * otherwise it fails, flagged, before it is built whole. At exactly the
 * job's steps it runs whole and predicts what no limit does. Classes count
 * only the steps simulated. */
static void test_max_steps(void) {
  static const pccl_algo_t odd = {.coll = PCCL_COLL_ALLGATHER, .name = "odd",
                                  .generate = gen_odd_node};
  pccl_profile_t p = base_profile();
  p.copy = 1.0 / 20e9;
  p.node_radix = 1; /* small jobs are simulated whole */
  pccl_sim_case_t c = {PCCL_COLL_ALLGATHER, pccl_algo_find(PCCL_COLL_ALLGATHER, "ring"), 0, 64, 8,
                       1000, 4, 0, 0};
  size_t steps = 64 * (1 + 2 * 63); /* ring: its own block's copy, a send and a receive a round */
  pccl_sim_result_t free_run, r;
  expect(pccl_sim_run(&p, &c, &free_run) == PCCL_OK && free_run.nsteps == steps &&
             free_run.classes == 0 && !free_run.over_max_steps,
         "max_steps: no limit runs whole");
  c.max_steps = steps;
  expect(pccl_sim_run(&p, &c, &r) == PCCL_OK && r.seconds == free_run.seconds && r.classes == 0,
         "max_steps: a limit of the job's own steps runs whole, same prediction");
  c.max_steps = steps - 1;
  expect(pccl_sim_run(&p, &c, &r) == PCCL_OK && r.classes == 8 && r.nsteps == steps,
         "max_steps: one step under the job's runs as classes");
  c.max_steps = 8 * 127 - 1; /* under node 0's 8 ranks of 127 steps */
  pccl_status_t st = pccl_sim_run(&p, &c, &r);
  expect(st == PCCL_ERR_UNSUPPORTED && r.over_max_steps && strstr(r.message, "steps to simulate"),
         "max_steps: classes past it fail, flagged");
  c.algo = &odd; /* one node's schedules differ: no classes */
  c.max_steps = 0;
  expect(pccl_sim_run(&p, &c, &free_run) == PCCL_OK && free_run.classes == 0, "max_steps: odd runs");
  c.max_steps = free_run.nsteps - 1;
  st = pccl_sim_run(&p, &c, &r);
  expect(st == PCCL_ERR_UNSUPPORTED && r.over_max_steps,
         "max_steps: a job without classes one step past it fails, flagged");
  c.algo = NULL;
  st = pccl_sim_run(&p, &c, &r);
  expect(st != PCCL_OK && !r.over_max_steps, "max_steps: other failures are not flagged");
}

int main(void) {
  test_ring_allgather();
  test_recdbl_allgather();
  test_ring_reduce_scatter();
  test_ring_with_copy();
  test_gap_limited_ring();
  test_zring_allgather();
  test_zrecdbl_allreduce();
  test_ratio();
  test_node_radix();
  test_duplex();
  test_host();
  test_device_radix();
  test_run_errors();
  test_unpaired();
  test_all_algorithms();
  test_sim_seg();
  test_classes_exact();
  test_classes_refused();
  test_max_steps();
  test_profile_good();
  test_profile_bad();
  test_profile_compress();
  test_profile_duplex();
  test_profile_host();
  test_profile_mutations();
  printf("test_sim: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
