/* test_hazard.c - the hazard map (src/sched/hazard.c) against a per-element
 * reference: random reads and writes of ranges and strided blocks on a small
 * buffer, each checked for the steps it names.
 *
 * Reference: for every element, its last writer and its readers since.
 * Ranges only: the map must name exactly the reference's steps. With strided
 * accesses it may also name older steps that a newer write hid, but never a
 * step that did not touch the access's elements (with a write on one side),
 * and never miss one of the reference's. With strided accesses of two
 * strides on one buffer it may also name a step whose span (first to last
 * element) meets the access's span. After every access the map's
 * tree is checked (pccl_hazards_check): spans in order, apart, non-empty,
 * in heap order, and no more of them than the buffer has elements. A
 * buffer cut into many pieces keeps a tree of logarithmic depth. */
#include "schedule.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 96        /* elements */
#define STEPS 600   /* steps a sequence */
#define MAXR 64     /* readers an element keeps */
#define NONE UINT32_MAX

typedef struct {
  uint32_t writer[N];
  uint32_t readers[N][MAXR];
  int nreaders[N];
  /* every access so far: who touched which element, and how */
  unsigned char touched[STEPS][N]; /* 1 read, 2 write, 3 both */
} ref_t;

typedef struct {
  unsigned char named[STEPS];
} got_t;

static int failures, checks;

static void on_dep(void *ctx, uint32_t step) { ((got_t *)ctx)->named[step] = 1; }

static uint64_t rng = 88172645463325252ull;
static uint32_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)(rng >> 16);
}

/* The elements of an access: blocks of len every stride from off on. */
static int elems(size_t off, size_t len, size_t stride, uint32_t nb, unsigned char *in) {
  memset(in, 0, N);
  for (uint32_t b = 0; b < nb; b++)
    for (size_t i = 0; i < len; i++) {
      size_t e = off + b * stride + i;
      if (e >= N) return 0;
      in[e] = 1;
    }
  return 1;
}

static void check(const char *what, int ok, uint32_t step) {
  checks++;
  if (!ok && failures++ < 10) fprintf(stderr, "FAIL %s at step %u\n", what, step);
}

/* One access by step: the map's steps against the reference's, then the
 * reference moves on. */
typedef enum { EXACT, HIDDEN, SPANNED } slack_t; /* the extra steps a check allows */

static int access(pccl_hazards_t *h, ref_t *ref, uint32_t step, size_t off, size_t len, size_t stride, uint32_t nb,
                  int write, slack_t slack) {
  unsigned char in[N], span[N];
  if (!elems(off, len, stride, nb, in)) return 1; /* off the buffer: not tried */
  elems(off, (size_t)(nb - 1) * stride + len, 0, 1, span);
  got_t got;
  memset(&got, 0, sizeof(got));
  int ok = nb > 1 ? pccl_hazards_access_blocks(h, off, len, stride, nb, step, write, on_dep, &got)
                  : pccl_hazards_access(h, off, off + len, step, write, on_dep, &got);
  if (!ok) return 0;
  unsigned char want[STEPS] = {0};
  for (int e = 0; e < N; e++) {
    if (!in[e]) continue;
    if (ref->writer[e] != NONE) want[ref->writer[e]] = 1;
    if (write)
      for (int r = 0; r < ref->nreaders[e]; r++) want[ref->readers[e][r]] = 1;
  }
  for (uint32_t q = 0; q < step; q++) {
    if (want[q]) check("a hazard not named", got.named[q], step);
    if (got.named[q] && !want[q]) {
      int real = 0; /* q touched one of these elements, one side writing */
      int lo = N, hi = -1; /* the hull of what q touched so */
      for (int e = 0; e < N; e++)
        if (ref->touched[q][e] && (write || (ref->touched[q][e] & 2))) {
          real |= in[e];
          lo = e < lo ? e : lo;
          hi = e;
        }
      /* two strides: any step whose hull meets the access's */
      if (slack == SPANNED)
        for (int e = lo; e <= hi && !real; e++) real = span[e];
      check(slack == EXACT ? "a step named beyond the hazards" : "a step named that never met the access",
            slack != EXACT && real, step);
    }
  }
  size_t depth, nspans = pccl_hazards_check(h, &depth);
  check("the tree in order and heap order, at most one span an element", nspans <= N, step);
  for (int e = 0; e < N; e++) {
    if (!in[e]) continue;
    ref->touched[step][e] |= (unsigned char)(write ? 2 : 1);
    if (write) {
      ref->writer[e] = step;
      ref->nreaders[e] = 0;
    } else if (ref->nreaders[e] < MAXR &&
               (ref->nreaders[e] == 0 || ref->readers[e][ref->nreaders[e] - 1] != step)) {
      ref->readers[e][ref->nreaders[e]++] = step;
    }
  }
  return 1;
}

/* A sequence of steps, each reading then writing a few random places.
 * stride: 0 for ranges only, else the stride of the strided accesses (one
 * stride a buffer keeps the map's meets exact); stride2, when not 0, a
 * second one that half of them take. */
static int sequence(size_t stride, size_t stride2, int seed) {
  rng = 88172645463325252ull + (uint64_t)seed * 0x9E3779B97F4A7C15ull;
  ref_t *ref = calloc(1, sizeof(*ref));
  pccl_hazards_t *h = pccl_hazards_create();
  if (!ref || !h) return 0;
  for (int e = 0; e < N; e++) ref->writer[e] = NONE;
  int ok = 1;
  for (uint32_t step = 0; step < STEPS && ok; step++) {
    int nacc = 1 + (int)(next() % 3);
    for (int phase = 0; phase < 2 && ok; phase++) /* reads, then writes */
      for (int a = 0; a < nacc && ok; a++) {
        if ((int)(next() % 2) != phase) continue;
        size_t off = next() % N, len = 1 + next() % (next() % 4 == 0 ? N / 2 : 6);
        uint32_t nb = 1;
        size_t st = 0;
        if (stride && next() % 3 == 0) {
          st = stride2 && next() % 2 ? stride2 : stride;
          nb = 2 + next() % 8;
          if (len >= st) len = st - 1;
        }
        slack_t slack = stride == 0 ? EXACT : stride2 ? SPANNED : HIDDEN;
        ok = access(h, ref, step, off, len, st, nb, phase, slack);
      }
  }
  pccl_hazards_destroy(h);
  free(ref);
  return ok;
}

static void count_dep(void *ctx, uint32_t step) {
  size_t *c = ctx;
  c[0]++;
  c[1] = step;
}

/* A buffer written whole, then read an element at a time, in order and in
 * a scattered order: each read names the one writer, and the tree of the
 * pieces keeps a logarithmic depth (a random treap's is about 3 log2 n;
 * cutting spans once made chains as long as the pieces). */
static int pieces(size_t m, size_t step_of_walk) {
  pccl_hazards_t *h = pccl_hazards_create();
  size_t c[2] = {0, 0};
  if (!h || !pccl_hazards_access(h, 0, m, 0, 1, count_dep, c)) return 0;
  for (size_t i = 0; i < m; i++) {
    size_t e = i * step_of_walk % m; /* step_of_walk odd, m a power of two: every element once */
    c[0] = 0;
    if (!pccl_hazards_access(h, e, e + 1, (uint32_t)(i + 1), 0, count_dep, c)) return 0;
    check("a piece's read names its writer alone", c[0] == 1 && c[1] == 0, (uint32_t)i);
  }
  size_t depth, n = pccl_hazards_check(h, &depth), lg = 0;
  while ((size_t)1 << lg < m) lg++;
  check("one span an element after the pieces", n == m, 0);
  check("the pieces' tree of logarithmic depth", depth <= 4 * lg + 8, 0);
  printf("test_hazard: %zu pieces (walk %zu): tree depth %zu\n", m, step_of_walk, depth);
  pccl_hazards_destroy(h);
  return 1;
}

int main(void) {
  if (!pieces(1 << 14, 1) || !pieces(1 << 14, 4099)) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }
  for (int seed = 0; seed < 40; seed++) {
    if (!sequence(0, 0, seed) || !sequence(12, 0, seed) || !sequence(7, 0, seed) ||
        !sequence(7, 12, seed)) {
      fprintf(stderr, "out of memory\n");
      return 1;
    }
  }
  printf("test_hazard: %d checks, %d failed\n", checks, failures);
  return failures ? 1 : 0;
}
