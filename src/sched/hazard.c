/* hazard.c - which earlier steps a new access to a buffer must wait for.
 *
 * A buffer is kept as disjoint spans, each holding the step that last wrote
 * it and the steps that read it since. A read waits for the spans' writers;
 * a write waits for their writers and readers, then owns its range alone.
 * These are exactly the element-wise hazards: an older access to the range
 * that is not named is ordered before a named one already.
 *
 * The spans live in a treap ordered by offset, so that an access costs a
 * logarithmic search plus the spans it meets.
 *
 * A strided access (a shuffle's copy of many blocks in one step) is not cut
 * into its blocks, which would make a two-level all-gather's shuffle O(p)
 * accesses a rank: it is kept whole in a list of its own, checked by every
 * later access that may meet it, and it names the spans that meet its
 * blocks without changing them. A later access may then name a step that a
 * newer write hid; that order holds anyway, through the newer write. The buffer's earlier accesses
 * used to be scanned backwards to a write that covered the new one; a
 * reduce-scatter whose messages split into many pieces then scanned
 * hundreds of unrelated pieces per write (hier_rechalv, 64 ranks, 1 TiB:
 * 97 M accesses visited for 232 k that met), and building grew with the
 * square of a rank's steps. */
#include "schedule.h"

#include <stdlib.h>

#define NIL UINT32_MAX
#define NONE UINT32_MAX

typedef struct {
  size_t off, end;
  uint32_t write;  /* the last writer; NONE: never written */
  size_t readers;  /* the readers since, a list in h->reader; SIZE_MAX: none */
  uint32_t left, right, prio;
} span_t;

/* Lists of readers share their tails (a span split in two keeps one list),
 * so an entry is never changed once written. */
typedef struct {
  uint32_t step;
  size_t next;
} reader_t;

/* A strided access: blocks of len elements every stride from off on, the
 * last one ending at end. */
typedef struct {
  size_t off, end, len, stride;
  uint32_t step, write;
} blocks_t;

struct pccl_hazards {
  blocks_t *blocks;
  size_t nblocks, blocks_cap;
  span_t *span;
  uint32_t nspan, span_cap, free_span, root;
  reader_t *reader;
  size_t nreader, reader_cap;
  uint32_t *found; /* the spans an access meets, in order */
  size_t found_cap;
  uint32_t seed;
};

#define S(i) (h->span[i])

pccl_hazards_t *pccl_hazards_create(void) {
  pccl_hazards_t *h = calloc(1, sizeof(*h));
  if (h) {
    h->root = NIL;
    h->free_span = NIL;
    h->seed = 2463534242u;
  }
  return h;
}

void pccl_hazards_destroy(pccl_hazards_t *h) {
  if (!h) return;
  free(h->blocks);
  free(h->span);
  free(h->reader);
  free(h->found);
  free(h);
}

/* A new span, not yet in the tree; NIL when out of memory. */
static uint32_t new_span(pccl_hazards_t *h, size_t off, size_t end, uint32_t write, size_t readers) {
  uint32_t i = h->free_span;
  if (i != NIL) {
    h->free_span = S(i).left;
  } else {
    size_t cap = h->span_cap;
    if ((size_t)h->nspan + 1 >= NIL ||
        !pccl_sched_grow((void **)&h->span, &cap, (size_t)h->nspan + 1, sizeof(span_t)))
      return NIL;
    h->span_cap = (uint32_t)cap;
    i = h->nspan++;
  }
  h->seed ^= h->seed << 13; /* xorshift32: the same tree on every run */
  h->seed ^= h->seed >> 17;
  h->seed ^= h->seed << 5;
  S(i) = (span_t){off, end, write, readers, NIL, NIL, h->seed};
  return i;
}

/* Splits t into the spans before key (*l) and those from it on (*r); no
 * span may cross key (cut first). */
static void split(pccl_hazards_t *h, uint32_t t, size_t key, uint32_t *l, uint32_t *r) {
  if (t == NIL) {
    *l = *r = NIL;
  } else if (S(t).end <= key) {
    split(h, S(t).right, key, &S(t).right, r);
    *l = t;
  } else {
    split(h, S(t).left, key, l, &S(t).left);
    *r = t;
  }
}

/* Joins two trees, every span of a before every span of b. */
static uint32_t merge(pccl_hazards_t *h, uint32_t a, uint32_t b) {
  if (a == NIL) return b;
  if (b == NIL) return a;
  if (S(a).prio > S(b).prio) {
    S(a).right = merge(h, S(a).right, b);
    return a;
  }
  S(b).left = merge(h, a, S(b).left);
  return b;
}

/* Cuts the span across key, if any, in two with its state. The new half
 * goes in as any new span, with a priority of its own: one shared with
 * the old half (the heap order kept by placing it where the old one was)
 * made chains of equal priorities that grew with every cut. */
static int cut(pccl_hazards_t *h, size_t key) {
  uint32_t t = h->root;
  while (t != NIL && !(S(t).off < key && key < S(t).end)) t = key < S(t).off ? S(t).left : S(t).right;
  if (t == NIL) return 1;
  uint32_t n = new_span(h, key, S(t).end, S(t).write, S(t).readers), l, r;
  if (n == NIL) return 0;
  S(t).end = key;
  split(h, h->root, key, &l, &r);
  h->root = merge(h, merge(h, l, n), r);
  return 1;
}

static int collect(pccl_hazards_t *h, uint32_t t, size_t *n) {
  if (t == NIL) return 1;
  if (!collect(h, S(t).left, n)) return 0;
  if (!pccl_sched_grow((void **)&h->found, &h->found_cap, *n + 1, sizeof(uint32_t))) return 0;
  h->found[(*n)++] = t;
  return collect(h, S(t).right, n);
}

static int add_reader(pccl_hazards_t *h, uint32_t s, uint32_t step) {
  if (!pccl_sched_grow((void **)&h->reader, &h->reader_cap, h->nreader + 1, sizeof(reader_t))) return 0;
  h->reader[h->nreader] = (reader_t){step, S(s).readers};
  S(s).readers = h->nreader++;
  return 1;
}

/* The read of [off, end) by `step`: names the spans' writers, joins their
 * readers, and covers the bytes no span holds with spans of its own. */
static uint32_t read_range(pccl_hazards_t *h, size_t n, size_t off, size_t end, uint32_t step,
                           pccl_hazard_fn fn, void *ctx) {
  uint32_t m = NIL;
  size_t at = off;
  for (size_t i = 0; i <= n; i++) {
    uint32_t s = i < n ? h->found[i] : NIL;
    size_t next = s != NIL ? S(s).off : end;
    if (at < next) { /* bytes nothing touched yet */
      uint32_t g = new_span(h, at, next, NONE, SIZE_MAX);
      if (g == NIL || !add_reader(h, g, step)) return NIL - 1;
      m = merge(h, m, g);
    }
    if (s == NIL) break;
    if (S(s).write != NONE) fn(ctx, S(s).write);
    if (!add_reader(h, s, step)) return NIL - 1;
    S(s).left = S(s).right = NIL;
    m = merge(h, m, s);
    at = S(s).end;
  }
  return m;
}

/* The write of [off, end) by `step`: names the spans' writers and readers,
 * then one span replaces them. */
static uint32_t write_range(pccl_hazards_t *h, size_t n, size_t off, size_t end, uint32_t step,
                            pccl_hazard_fn fn, void *ctx) {
  for (size_t i = 0; i < n; i++) {
    uint32_t s = h->found[i];
    if (S(s).write != NONE) fn(ctx, S(s).write);
    for (size_t r = S(s).readers; r != SIZE_MAX; r = h->reader[r].next) fn(ctx, h->reader[r].step);
    S(s).left = h->free_span;
    h->free_span = s;
  }
  uint32_t w = new_span(h, off, end, step, SIZE_MAX);
  return w == NIL ? NIL - 1 : w;
}

/* Whether b has an element in [off, end). */
static int blocks_meet(const blocks_t *b, size_t off, size_t end) {
  if (end <= b->off || b->end <= off) return 0;
  size_t first = off < b->off + b->len ? 0 : (off - b->off - b->len) / b->stride + 1;
  size_t at = b->off + first * b->stride;
  return at < b->end && at < end;
}

/* Whether two strided accesses share an element. Of one stride they are
 * compared by their blocks' places within it (the bounds checked already);
 * of different strides they are taken to meet: a dependency too many,
 * never one too few. */
static int blocks_meet_blocks(const blocks_t *a, const blocks_t *b) {
  if (a->end <= b->off || b->end <= a->off) return 0;
  if (a->stride != b->stride) return 1;
  size_t s = a->stride, r = (b->off % s + s - a->off % s) % s; /* b's blocks start r after a's */
  return r < a->len || s - r < b->len;
}

/* Names the strided accesses an access to [off, end) (or to the blocks of
 * x, when x is not NULL) must follow. */
static void name_blocks(const pccl_hazards_t *h, size_t off, size_t end, const blocks_t *x, int write,
                        pccl_hazard_fn fn, void *ctx) {
  for (size_t i = 0; i < h->nblocks; i++) {
    const blocks_t *b = &h->blocks[i];
    if ((write || b->write) && (x ? blocks_meet_blocks(b, x) : blocks_meet(b, off, end))) fn(ctx, b->step);
  }
}

/* Names the writers (and, for a write, the readers) of the spans in t that
 * meet x's blocks. */
static void name_spans(const pccl_hazards_t *h, uint32_t t, const blocks_t *x, int write, pccl_hazard_fn fn,
                       void *ctx) {
  while (t != NIL) {
    if (x->off < S(t).off) name_spans(h, S(t).left, x, write, fn, ctx);
    if (blocks_meet(x, S(t).off, S(t).end)) {
      if (S(t).write != NONE) fn(ctx, S(t).write);
      if (write)
        for (size_t r = S(t).readers; r != SIZE_MAX; r = h->reader[r].next) fn(ctx, h->reader[r].step);
    }
    if (S(t).end >= x->end) return;
    t = S(t).right;
  }
}

int pccl_hazards_access_blocks(pccl_hazards_t *h, size_t off, size_t len, size_t stride, uint32_t nblocks,
                               uint32_t step, int write, pccl_hazard_fn fn, void *ctx) {
  if (nblocks < 2 || stride <= len) { /* no gaps between the blocks: one range */
    size_t end = off + (nblocks > 1 ? (size_t)(nblocks - 1) * stride : 0) + len;
    return pccl_hazards_access(h, off, end, step, write, fn, ctx);
  }
  if (len == 0) return 1;
  blocks_t x = {off, off + (size_t)(nblocks - 1) * stride + len, len, stride, step, (uint32_t)write};
  name_blocks(h, 0, 0, &x, write, fn, ctx);
  name_spans(h, h->root, &x, write, fn, ctx);
  if (!pccl_sched_grow((void **)&h->blocks, &h->blocks_cap, h->nblocks + 1, sizeof(blocks_t))) return 0;
  h->blocks[h->nblocks++] = x;
  return 1;
}

int pccl_hazards_access(pccl_hazards_t *h, size_t off, size_t end, uint32_t step, int write,
                        pccl_hazard_fn fn, void *ctx) {
  if (off >= end) return 1;
  name_blocks(h, off, end, NULL, write, fn, ctx);
  if (!cut(h, off) || !cut(h, end)) return 0;
  uint32_t l, mr, m, r;
  split(h, h->root, off, &l, &mr);
  split(h, mr, end, &m, &r);
  size_t n = 0;
  int ok = collect(h, m, &n);
  if (ok) m = write ? write_range(h, n, off, end, step, fn, ctx) : read_range(h, n, off, end, step, fn, ctx);
  if (!ok || m == NIL - 1) return 0; /* out of memory: the builder fails as a whole */
  h->root = merge(h, merge(h, l, m), r);
  return 1;
}

/* Walks t checking the treap: spans non-empty, in order and apart, each
 * after `*at`, priorities not above the parent's; counts them into *n and
 * keeps the deepest level reached in *depth. */
static int check_tree(const pccl_hazards_t *h, uint32_t t, uint32_t parent_prio, size_t level, size_t *at,
                      size_t *n, size_t *depth) {
  if (t == NIL) return 1;
  *depth = level > *depth ? level : *depth;
  if (S(t).prio > parent_prio || !check_tree(h, S(t).left, S(t).prio, level + 1, at, n, depth)) return 0;
  if (S(t).off >= S(t).end || S(t).off < *at) return 0;
  *at = S(t).end;
  ++*n;
  return check_tree(h, S(t).right, S(t).prio, level + 1, at, n, depth);
}

size_t pccl_hazards_check(const pccl_hazards_t *h, size_t *depth) {
  size_t at = 0, n = 0;
  *depth = 0;
  return check_tree(h, h->root, UINT32_MAX, 1, &at, &n, depth) ? n : SIZE_MAX;
}
