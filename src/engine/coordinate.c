/* coordinate.c - one coordination cycle: which pending requests are ready
 * on every rank, in one global order.
 *
 * With the response cache on, every cycle starts with one AND-allreduce of
 * a bitvector: word 0 holds inverted flags (so AND yields OR: someone has an
 * uncached request, someone stops, someone invalidated an entry), then one
 * bit per cache position "I have this tensor pending", then one bit per
 * position "still valid on my side". Positions set everywhere are ready;
 * positions someone invalidated (a request that no longer matches its
 * entry, or one stalled too long) are evicted everywhere, and their
 * requests are negotiated afresh. Only when someone has an uncached request
 * does the cycle go on to rank 0. With the cache off every cycle negotiates.
 *
 * Negotiation: every rank sends rank 0 the requests it has not announced
 * (MPI_Gather of lengths, MPI_Gatherv of bytes); rank 0 records them, and a
 * name is answered once every rank has sent it: OK when all agree, else an
 * error naming what each rank passed. Group members are answered together
 * once the whole group is. The answers go to every rank (MPI_Bcast), which
 * cache them in that order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"

enum { FLAG_UNCACHED = 1, FLAG_STOP = 2, FLAG_INVALID = 4 };

#define PCCL_CTL_POLLS 64      /* tests before the first nap */
#define PCCL_CTL_NAP_NS 20000  /* then 20 us between tests */

typedef struct {
  char name[PCCL_NAME_BYTES];
  pccl_sig_t *sigs; /* per rank */
  uint8_t *have;
  int nhave;
  double first_seen, last_warned;
} record_t;

typedef struct { /* complete members of a group not yet complete */
  int size, done, failed;
  char why[PCCL_ERROR_LEN];
  record_t **held;
  int nheld;
} group_t;

struct pccl_coord {
  int p;
  pccl_strmap_t table;  /* name -> record_t */
  record_t **recs;      /* every incomplete record, for the stall check */
  size_t nrecs, caprecs;
  pccl_strmap_t groups; /* group name -> group_t */
  pccl_wbuf_t answer;   /* this cycle's answers */
  uint32_t nanswers;
};

pccl_status_t pccl_coord_create(pccl_engine_t *e) {
  pccl_coord_t *c = calloc(1, sizeof(*c));
  if (!c) return PCCL_ERR_NO_MEMORY;
  c->p = e->size;
  if (!pccl_strmap_init(&c->table, 256) || !pccl_strmap_init(&c->groups, 16)) {
    pccl_coord_destroy(c);
    return PCCL_ERR_NO_MEMORY;
  }
  e->coord = c;
  return PCCL_OK;
}

static void record_free(record_t *r) {
  if (!r) return;
  free(r->sigs);
  free(r->have);
  free(r);
}

static void group_free(const char *key, void *value, void *ctx) {
  (void)key, (void)ctx;
  group_t *g = value;
  for (int k = 0; k < g->nheld; k++) record_free(g->held[k]);
  free(g->held);
  free(g);
}

void pccl_coord_destroy(pccl_coord_t *c) {
  if (!c) return;
  for (size_t i = 0; i < c->nrecs; i++) record_free(c->recs[i]);
  free(c->recs);
  pccl_strmap_each(&c->groups, group_free, NULL);
  pccl_strmap_free(&c->table);
  pccl_strmap_free(&c->groups);
  free(c->answer.data);
  free(c);
}

/* "0-2,5" for the ranks whose flag is `want`. */
static void rank_list(const uint8_t *flags, int p, int want, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = '\0';
  for (int r = 0; r < p; r++) {
    if ((flags[r] != 0) != want) continue;
    int last = r;
    while (last + 1 < p && (flags[last + 1] != 0) == want) last++;
    if (n < len)
      n += (size_t)snprintf(buf + n, len - n, last > r ? "%s%d-%d" : "%s%d", n ? "," : "", r, last);
    r = last;
  }
}

/* ---- the coordinator's side of a negotiation ---- */

static void answer(pccl_coord_t *c, const char *name, const pccl_sig_t *sig, pccl_status_t st,
                   const char *why) {
  pccl_w_str(&c->answer, name);
  pccl_w_sig(&c->answer, sig);
  pccl_w_u32(&c->answer, (uint32_t)st);
  pccl_w_str(&c->answer, why);
  c->nanswers++;
}

/* Empty when every rank agrees, else what each passed (by distinct
 * signature, with its ranks). */
static void disagreement(const pccl_coord_t *c, const record_t *r, char *why, size_t len) {
  int p = c->p, agree = 1;
  for (int k = 1; k < p && agree; k++) agree = pccl_sig_equal(&r->sigs[0], &r->sigs[k]);
  why[0] = '\0';
  if (agree) return;
  uint8_t *same = calloc((size_t)p, 1), *seen = calloc((size_t)p, 1);
  if (!same || !seen) {
    snprintf(why, len, "tensor '%s': ranks submitted it with different arguments", r->name);
    free(same), free(seen);
    return;
  }
  size_t n = (size_t)snprintf(why, len, "tensor '%s': ranks disagree:", r->name);
  for (int k = 0; k < p; k++) {
    if (seen[k]) continue;
    for (int j = 0; j < p; j++) same[j] = !seen[j] && pccl_sig_equal(&r->sigs[k], &r->sigs[j]);
    for (int j = 0; j < p; j++) seen[j] |= same[j];
    char desc[PCCL_ERROR_LEN / 2], ranks[128];
    pccl_sig_describe(&r->sigs[k], desc, sizeof desc);
    rank_list(same, p, 1, ranks, sizeof ranks);
    if (n < len) n += (size_t)snprintf(why + n, len - n, "%s %s on rank%s %s", k ? ";" : "", desc,
                                       strchr(ranks, ',') || strchr(ranks, '-') ? "s" : "", ranks);
  }
  free(same);
  free(seen);
}

static group_t *group_of(pccl_coord_t *c, const pccl_sig_t *sig) {
  group_t *g = pccl_strmap_get(&c->groups, sig->group);
  if (g) return g;
  g = calloc(1, sizeof(*g));
  if (!g) return NULL;
  g->held = calloc((size_t)sig->group_size, sizeof(*g->held));
  if (!g->held || !pccl_strmap_put(&c->groups, sig->group, g)) {
    free(g->held);
    free(g);
    return NULL;
  }
  g->size = sig->group_size;
  return g;
}

/* A record every rank has sent: answer it, or hold it for its group. A
 * group is answered whole once all its members are complete: OK when every
 * member is, else every member gets the first member's error. */
static void complete(pccl_coord_t *c, record_t *r) {
  char why[PCCL_ERROR_LEN];
  disagreement(c, r, why, sizeof why);
  const pccl_sig_t *sig = &r->sigs[0];
  if (sig->group_size <= 0) {
    answer(c, r->name, sig, why[0] ? PCCL_ERR_MISMATCH : PCCL_OK, why);
    record_free(r);
    return;
  }
  group_t *g = group_of(c, sig);
  if (!g || sig->group_size != g->size || g->done >= g->size) {
    answer(c, r->name, sig, g ? PCCL_ERR_MISMATCH : PCCL_ERR_NO_MEMORY,
           g ? "its members disagree on the size of their group" : "out of memory on rank 0");
    record_free(r);
    return;
  }
  char key[PCCL_NAME_BYTES]; /* r, and sig with it, may be freed below */
  snprintf(key, sizeof key, "%s", sig->group);
  if (why[0]) {
    answer(c, r->name, sig, PCCL_ERR_MISMATCH, why);
    if (!g->failed) g->failed = 1, snprintf(g->why, sizeof g->why, "%s", why);
    record_free(r);
  } else {
    g->held[g->nheld++] = r;
  }
  g->done++;
  if (g->failed || g->done == g->size) {
    char gwhy[PCCL_ERROR_LEN];
    snprintf(gwhy, sizeof gwhy, "group '%.100s' cannot run: %.380s", key, g->why);
    for (int k = 0; k < g->nheld; k++) {
      answer(c, g->held[k]->name, &g->held[k]->sigs[0], g->failed ? PCCL_ERR_MISMATCH : PCCL_OK,
             g->failed ? gwhy : "");
      record_free(g->held[k]);
    }
    g->nheld = 0;
  }
  if (g->done == g->size) {
    group_free(key, g, NULL);
    pccl_strmap_del(&c->groups, key);
  }
}

static void unlist(pccl_coord_t *c, record_t *r) {
  for (size_t i = 0; i < c->nrecs; i++)
    if (c->recs[i] == r) {
      c->recs[i] = c->recs[--c->nrecs];
      break;
    }
  pccl_strmap_del(&c->table, r->name);
}

static record_t *record_new(pccl_coord_t *c, const char *name, double now) {
  record_t *r = calloc(1, sizeof(*r));
  if (!r) return NULL;
  r->sigs = calloc((size_t)c->p, sizeof(*r->sigs));
  r->have = calloc((size_t)c->p, 1);
  if (c->nrecs == c->caprecs) {
    size_t cap = c->caprecs ? c->caprecs * 2 : 64;
    record_t **recs = realloc(c->recs, cap * sizeof(*recs));
    if (recs) c->recs = recs, c->caprecs = cap;
  }
  if (!r->sigs || !r->have || c->nrecs == c->caprecs || !pccl_strmap_put(&c->table, name, r)) {
    record_free(r);
    return NULL;
  }
  snprintf(r->name, sizeof r->name, "%s", name);
  r->first_seen = now; /* last_warned 0: not yet */
  c->recs[c->nrecs++] = r;
  return r;
}

/* Takes one rank's announcements. Returns 0 for a malformed message. */
static int take_announcements(pccl_coord_t *c, int from, pccl_rbuf_t *in, int *stop, double now) {
  *stop |= pccl_r_u32(in) != 0;
  uint32_t n = pccl_r_u32(in);
  for (uint32_t i = 0; i < n && !in->failed; i++) {
    char name[PCCL_NAME_BYTES];
    pccl_sig_t sig;
    pccl_r_str(in, name, sizeof name);
    pccl_r_sig(in, &sig);
    double age = pccl_r_u32(in) / 1e3;
    if (in->failed) break;
    record_t *r = pccl_strmap_get(&c->table, name);
    if (!r && !(r = record_new(c, name, now))) {
      answer(c, name, &sig, PCCL_ERR_NO_MEMORY, "out of memory on rank 0");
      continue;
    }
    if (now - age < r->first_seen) r->first_seen = now - age;
    if (r->have[from]) continue; /* cannot happen: names are unique per rank */
    r->have[from] = 1;
    r->sigs[from] = sig;
    if (++r->nhave == c->p) {
      unlist(c, r);
      complete(c, r);
    }
  }
  return !in->failed;
}

/* ---- every rank's side ---- */

static pccl_status_t mpi_error(const pccl_engine_t *e, int rc, const char *what, char *why,
                               size_t len) {
  if (rc == PCCL_CTL_TIMEOUT) {
    snprintf(why, len, "the engine's %s made no progress for %.1f s (PCCL_TIMEOUT): a rank died, "
             "is stuck, or stopped running its engine; the engine has stopped", what, e->ctl_timeout);
    return PCCL_ERR_TIMEOUT;
  }
  char msg[MPI_MAX_ERROR_STRING];
  int n = 0;
  MPI_Error_string(rc, msg, &n);
  snprintf(why, len, "the engine's %s failed: %s", what, msg);
  return PCCL_ERR_MPI;
}

/* The control collectives run non-blocking and are waited for with a few
 * tests back to back, then short sleeps. A blocking call would poll the
 * whole time (Open MPI yields at most), taking the core from the ranks this
 * one waits for and from the training's own threads. Every rank's engine
 * cycles without pause, so a wait longer than PCCL_TIMEOUT means a rank is
 * gone or stuck: PCCL_CTL_TIMEOUT (the request is left behind; the engine stops). */
int pccl_ctl_wait(const pccl_engine_t *e, int rc, MPI_Request *req) {
  int done = 0;
  double start = MPI_Wtime();
  for (int polls = 0; rc == MPI_SUCCESS && !done; polls++) {
    rc = PMPI_Test(req, &done, MPI_STATUS_IGNORE);
    if (done || polls < PCCL_CTL_POLLS) continue;
    if (e->ctl_timeout > 0 && MPI_Wtime() - start > e->ctl_timeout) return PCCL_CTL_TIMEOUT;
    nanosleep(&(struct timespec){0, PCCL_CTL_NAP_NS}, NULL);
  }
  return rc;
}

/* Requests not yet announced and not in the cache. Announced requests are
 * indexed by name (by_name), for the answers; cached ones never need it. */
static void write_announcements(pccl_engine_t *e, pccl_wbuf_t *w, int stop_here, double now) {
  uint32_t n = 0;
  for (size_t i = 0; i < e->npending; i++) {
    pccl_req_t *r = e->pending[i];
    if (r->announced || pccl_rcache_find(&e->cache, r->name) >= 0) continue;
    if (!pccl_strmap_put(&e->by_name, r->name, r)) continue; /* next cycle, then */
    r->announced = 2; /* in this message */
    n++;
  }
  pccl_w_u32(w, (uint32_t)stop_here);
  pccl_w_u32(w, n);
  for (size_t i = 0; i < e->npending; i++) {
    pccl_req_t *r = e->pending[i];
    if (r->announced != 2) continue;
    double age = now - r->t_submit;
    pccl_w_str(w, r->name);
    pccl_w_sig(w, &r->sig);
    pccl_w_u32(w, age < 4e6 ? (uint32_t)(age * 1e3) : 4000000000u);
    r->announced = 1;
  }
}

/* Rank 0: every rank's announcements in, answers out. */
static pccl_status_t coordinator_round(pccl_engine_t *e, const pccl_wbuf_t *mine, int *stop,
                                       char *why, size_t len) {
  pccl_coord_t *c = e->coord;
  int p = e->size, mylen = (int)mine->len, rc;
  int *lens = malloc((size_t)p * 2 * sizeof(int));
  if (!lens) return snprintf(why, len, "out of memory"), PCCL_ERR_NO_MEMORY;
  int *displs = lens + p;
  MPI_Request req;
  rc = pccl_ctl_wait(e, MPI_Igather(&mylen, 1, MPI_INT, lens, 1, MPI_INT, 0, e->ctl, &req), &req);
  if (rc != MPI_SUCCESS) return free(lens), mpi_error(e, rc, "MPI_Gather", why, len);
  size_t total = 0;
  for (int r = 0; r < p; r++) displs[r] = (int)total, total += (size_t)lens[r];
  uint8_t *all = malloc(total ? total : 1);
  if (!all || total > INT32_MAX) {
    free(lens), free(all);
    return snprintf(why, len, "out of memory for %zu bytes of requests", total), PCCL_ERR_NO_MEMORY;
  }
  rc = pccl_ctl_wait(e, MPI_Igatherv(mine->data, mylen, MPI_BYTE, all, lens, displs, MPI_BYTE, 0, e->ctl, &req),
                &req);
  if (rc != MPI_SUCCESS) return free(lens), free(all), mpi_error(e, rc, "MPI_Gatherv", why, len);
  double now = MPI_Wtime();
  c->answer.len = 0;
  c->nanswers = 0;
  pccl_w_u32(&c->answer, 0); /* stop flag and count, patched below */
  pccl_w_u32(&c->answer, 0);
  int ok = 1;
  for (int r = 0; r < p && ok; r++) {
    pccl_rbuf_t in = {all + displs[r], (size_t)lens[r], 0, 0};
    ok = take_announcements(c, r, &in, stop, now);
  }
  free(lens);
  free(all);
  if (!ok || c->answer.failed)
    return snprintf(why, len, ok ? "out of memory for the answers" : "a malformed request list reached rank 0"),
           ok ? PCCL_ERR_NO_MEMORY : PCCL_ERR_INTERNAL;
  uint8_t head[8] = {(uint8_t)*stop, 0, 0, 0, (uint8_t)c->nanswers, (uint8_t)(c->nanswers >> 8),
                     (uint8_t)(c->nanswers >> 16), (uint8_t)(c->nanswers >> 24)};
  memcpy(c->answer.data, head, sizeof head);
  return PCCL_OK;
}

/* Every rank: the answers, into the cache and the ready list. */
static pccl_status_t take_answers(pccl_engine_t *e, pccl_rbuf_t *in, int *stop, double now,
                                  char *why, size_t len) {
  *stop |= pccl_r_u32(in) != 0;
  uint32_t n = pccl_r_u32(in);
  uint64_t negotiated = 0;
  for (uint32_t i = 0; i < n; i++) {
    char name[PCCL_NAME_BYTES], msg[PCCL_ERROR_LEN];
    pccl_sig_t sig;
    pccl_r_str(in, name, sizeof name);
    pccl_r_sig(in, &sig);
    pccl_status_t st = (pccl_status_t)pccl_r_u32(in);
    pccl_r_str(in, msg, sizeof msg);
    pccl_req_t *r = in->failed ? NULL : pccl_strmap_get(&e->by_name, name);
    if (!r) return snprintf(why, len, "rank 0's answers are malformed"), PCCL_ERR_INTERNAL;
    if (e->timeline.f) pccl_timeline_span(&e->timeline, r->tid, "negotiate", r->t_seen, now);
    pccl_engine_unpend(e, r);
    negotiated++;
    if (st != PCCL_OK) {
      pccl_engine_complete(e, r, st, "%s", msg);
      continue;
    }
    /* the cache must change the same way on every rank, or positions stop
     * naming the same tensors: failing here stops the engine */
    if (e->cache_capacity && pccl_rcache_insert(&e->cache, name, &sig) < 0)
      return snprintf(why, len, "out of memory for the response cache"), PCCL_ERR_NO_MEMORY;
    if (!pccl_engine_push_ready(e, r)) {
      pccl_engine_complete(e, r, PCCL_ERR_NO_MEMORY, "out of memory");
      continue;
    }
  }
  pccl_engine_stats_t d = {.negotiated = negotiated};
  pccl_engine_count(e, &d);
  return PCCL_OK;
}

static pccl_status_t negotiate(pccl_engine_t *e, int stop_here, int *stop, char *why, size_t len) {
  pccl_wbuf_t mine = {0};
  double now = MPI_Wtime();
  write_announcements(e, &mine, stop_here, now);
  if (mine.failed) return free(mine.data), snprintf(why, len, "out of memory"), PCCL_ERR_NO_MEMORY;
  pccl_status_t st = PCCL_OK;
  uint64_t bytes = mine.len + 4;
  if (e->rank == 0) st = coordinator_round(e, &mine, stop, why, len);
  else {
    int mylen = (int)mine.len;
    MPI_Request req;
    int rc = pccl_ctl_wait(e, MPI_Igather(&mylen, 1, MPI_INT, NULL, 0, MPI_INT, 0, e->ctl, &req), &req);
    if (rc == MPI_SUCCESS)
      rc = pccl_ctl_wait(e, MPI_Igatherv(mine.data, mylen, MPI_BYTE, NULL, NULL, NULL, MPI_BYTE, 0, e->ctl, &req),
                    &req);
    if (rc != MPI_SUCCESS) st = mpi_error(e, rc, "MPI_Gatherv", why, len);
  }
  free(mine.data);
  /* even a failed coordinator broadcasts, so that no rank waits forever */
  int alen = st == PCCL_OK && e->rank == 0 ? (int)e->coord->answer.len : -1;
  if (e->rank != 0 && st != PCCL_OK) return st;
  MPI_Request req;
  int rc = pccl_ctl_wait(e, MPI_Ibcast(&alen, 1, MPI_INT, 0, e->ctl, &req), &req);
  if (rc != MPI_SUCCESS) return mpi_error(e, rc, "MPI_Bcast", why, len);
  if (alen < 0) return st != PCCL_OK ? st : (snprintf(why, len, "rank 0 failed to negotiate"), PCCL_ERR_INTERNAL);
  uint8_t *data = e->rank == 0 ? e->coord->answer.data : malloc(alen ? (size_t)alen : 1);
  int got = data != NULL;
  if (!got) data = (uint8_t *)&alen; /* still take part, then fail */
  rc = pccl_ctl_wait(e, MPI_Ibcast(got ? data : NULL, got ? alen : 0, MPI_BYTE, 0, e->ctl, &req), &req);
  bytes += 4 + (uint64_t)alen;
  pccl_engine_stats_t d = {.coordinator_cycles = 1, .coordination_bytes = bytes};
  pccl_engine_count(e, &d);
  if (rc != MPI_SUCCESS || !got) {
    if (got && e->rank != 0) free(data);
    return rc != MPI_SUCCESS ? mpi_error(e, rc, "MPI_Bcast", why, len)
                             : (snprintf(why, len, "out of memory"), PCCL_ERR_NO_MEMORY);
  }
  pccl_rbuf_t in = {data, (size_t)alen, 0, 0};
  st = take_answers(e, &in, stop, MPI_Wtime(), why, len);
  if (e->rank != 0) free(data);
  return st;
}

/* ---- the bitvector ---- */

#define HIT(pos) (e->bits[1 + (pos) / 64] |= 1ull << ((pos) % 64))
#define INVALIDATE(pos) (e->bits[1 + nw + (pos) / 64] &= ~(1ull << ((pos) % 64)))
#define IS_SET(base, pos) ((e->bits[1 + (base) + (pos) / 64] >> ((pos) % 64)) & 1)

/* Whether group `g` is among the n names in `broken`. */
static int listed(char (*broken)[PCCL_NAME_BYTES], size_t n, const char *g) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(broken[i], g) == 0) return 1;
  return 0;
}

/* Fills the bitvector from the pending requests; returns the flags. */
static uint64_t fill_bits(pccl_engine_t *e, size_t nw, double now) {
  uint64_t flags = 0;
  memset(e->bits + 1, 0, nw * 8);
  memset(e->bits + 1 + nw, 0xff, nw * 8);
  /* A group runs whole: one member that is not a hit sends the whole group
   * to rank 0 (its cached members are invalidated). */
  char (*broken)[PCCL_NAME_BYTES] = NULL;
  size_t nbroken = 0;
  for (size_t i = 0; i < e->npending; i++) {
    pccl_req_t *r = e->pending[i];
    if (r->announced) continue;
    int pos = pccl_rcache_find(&e->cache, r->name);
    int stalled = pos >= 0 && e->stall_s > 0 && r->t_hit > 0 && now - r->t_hit > e->stall_s;
    int hit = pos >= 0 && !stalled && pccl_sig_equal(&e->cache.entries[pos].sig, &r->sig);
    if (pos < 0) flags |= FLAG_UNCACHED;
    else if (!hit) flags |= FLAG_INVALID, INVALIDATE(pos);
    else {
      HIT(pos);
      e->at_pos[pos] = r;
      if (r->t_hit == 0) r->t_hit = now;
    }
    if (!hit && r->sig.group_size > 0 && !listed(broken, nbroken, r->sig.group)) {
      void *b = realloc(broken, (nbroken + 1) * sizeof(*broken));
      if (b) broken = b, snprintf(broken[nbroken++], PCCL_NAME_BYTES, "%s", r->sig.group);
    }
  }
  for (size_t i = 0; nbroken && i < e->npending; i++) {
    pccl_req_t *r = e->pending[i];
    int pos = pccl_rcache_find(&e->cache, r->name);
    if (!r->announced && pos >= 0 && r->sig.group_size > 0 && listed(broken, nbroken, r->sig.group))
      flags |= FLAG_INVALID, INVALIDATE(pos);
  }
  free(broken);
  return flags;
}

/* Ready positions whose group is not whole this cycle wait for the next.
 * Every rank must decide alike, so when the map of counts (group name ->
 * ready members) cannot be built, the counts come from a scan instead. */
static uintptr_t members_ready(const pccl_engine_t *e, int cap, const char *group) {
  uintptr_t n = 0;
  for (int q = 0; q < cap; q++)
    n += IS_SET(0, q) && e->cache.entries[q].sig.group_size > 0 &&
         strcmp(e->cache.entries[q].sig.group, group) == 0;
  return n;
}

static void drop_partial_groups(pccl_engine_t *e, int cap) {
  pccl_strmap_t counts = {0};
  int any = 0, mapped = 1;
  for (int pos = 0; pos < cap; pos++) {
    const pccl_sig_t *s = &e->cache.entries[pos].sig;
    if (!IS_SET(0, pos) || s->group_size <= 0) continue;
    if (!any++) mapped = pccl_strmap_init(&counts, 16);
    uintptr_t n = mapped ? (uintptr_t)pccl_strmap_get(&counts, s->group) : 0;
    mapped = mapped && pccl_strmap_put(&counts, s->group, (void *)(n + 1));
  }
  if (!any) return;
  for (int pos = 0; pos < cap; pos++) {
    const pccl_sig_t *s = &e->cache.entries[pos].sig;
    if (!IS_SET(0, pos) || s->group_size <= 0) continue;
    uintptr_t n = mapped ? (uintptr_t)pccl_strmap_get(&counts, s->group) : members_ready(e, cap, s->group);
    if (n < (uintptr_t)s->group_size) e->bits[1 + pos / 64] &= ~(1ull << (pos % 64));
  }
  pccl_strmap_free(&counts);
}

static pccl_status_t bitvector_round(pccl_engine_t *e, int stop_here, uint64_t *any, char *why,
                                     size_t len) {
  int cap = e->cache.capacity;
  size_t nw = ((size_t)cap + 63) / 64, words = 1 + 2 * nw;
  double now = MPI_Wtime();
  uint64_t flags = fill_bits(e, nw, now) | (stop_here ? FLAG_STOP : 0);
  e->bits[0] = ~flags;
  int rc = pccl_bitand_run(e, e->bitand, e->bits, &e->ctl_done);
  if (rc != MPI_SUCCESS) return mpi_error(e, rc, "bitvector all-reduce", why, len);
  *any = ~e->bits[0];
  uint64_t hits = 0;
  for (int pos = 0; pos < cap; pos++) {
    int valid = (int)IS_SET(nw, pos);
    if (!valid) { /* someone's request no longer matches, or stalled */
      e->bits[1 + pos / 64] &= ~(1ull << (pos % 64));
      pccl_rcache_evict(&e->cache, pos);
    }
  }
  drop_partial_groups(e, cap);
  now = MPI_Wtime();
  for (int pos = 0; pos < cap; pos++) {
    if (!IS_SET(0, pos)) continue;
    pccl_req_t *r = e->at_pos[pos]; /* this rank set the bit, this cycle */
    if (e->timeline.f) pccl_timeline_span(&e->timeline, r->tid, "negotiate", r->t_seen, now);
    pccl_engine_unpend(e, r);
    pccl_rcache_touch(&e->cache, pos);
    hits++;
    if (!pccl_engine_push_ready(e, r))
      pccl_engine_complete(e, r, PCCL_ERR_NO_MEMORY, "out of memory");
  }
  pccl_engine_stats_t d = {.cache_hits = hits, .coordination_bytes = 2 * 8 * words};
  pccl_engine_count(e, &d);
  return PCCL_OK;
}

/* ---- the stall check (rank 0, every cycle, no communication) ---- */

static void stall_check(pccl_engine_t *e) {
  pccl_coord_t *c = e->coord;
  double now = MPI_Wtime();
  char msg[PCCL_ERROR_LEN];
  size_t n = 0;
  int stalled = 0;
  for (size_t i = 0; i < c->nrecs; i++) {
    record_t *r = c->recs[i];
    if (now - r->first_seen < e->stall_s) continue;
    if (r->last_warned > 0 && now - r->last_warned < e->stall_s) continue; /* once per period */
    r->last_warned = now;
    char missing[128];
    rank_list(r->have, c->p, 0, missing, sizeof missing);
    if (n < sizeof msg)
      n += (size_t)snprintf(msg + n, sizeof msg - n, "%s'%s' (%.1f s) missing on rank%s %s",
                            stalled ? "; " : "", r->name, now - r->first_seen,
                            strchr(missing, ',') || strchr(missing, '-') ? "s" : "", missing);
    stalled++;
  }
  if (!stalled) return;
  char full[PCCL_ERROR_LEN];
  snprintf(full, sizeof full, "pccl engine: %d tensor%s submitted by some ranks and not others: %.420s",
           stalled, stalled > 1 ? "s" : "", msg);
  fprintf(stderr, "%s\n", full);
  pthread_mutex_lock(&e->lock);
  snprintf(e->warning, sizeof e->warning, "%s", full);
  e->stats.stall_warnings++;
  pthread_mutex_unlock(&e->lock);
}

pccl_status_t pccl_coordinate(pccl_engine_t *e, int stop_here, int *stop, char *why, size_t len) {
  uint64_t any = FLAG_UNCACHED;
  pccl_status_t st = PCCL_OK;
  *stop = 0;
  if (e->cache_capacity) {
    st = bitvector_round(e, stop_here, &any, why, len);
    *stop = (any & FLAG_STOP) != 0;
  }
  if (st == PCCL_OK && (any & (FLAG_UNCACHED | FLAG_INVALID))) {
    st = negotiate(e, stop_here, stop, why, len);
    clock_gettime(CLOCK_MONOTONIC, &e->ctl_done);
  }
  if (st == PCCL_OK && e->rank == 0 && e->stall_s > 0) stall_check(e);
  return st;
}
