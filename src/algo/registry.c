/* registry.c - the table of algorithms, generated from PCCL_ALGO_MAP, and
 * helpers shared by the generators. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo.h"

const pccl_algo_t pccl_algos[PCCL_ALGO_COUNT] = {
#define PCCL_ALGO_ROW(id, coll, name, k, kset, desc, gen)                                          \
  {PCCL_ALGO_##id, PCCL_COLL_##coll, name, k, kset, desc, gen, 0},
#define PCCL_ZALGO_ROW(id, coll, name, k, kset, desc, gen)                                         \
  {PCCL_ALGO_##id, PCCL_COLL_##coll, name, k, kset, desc, gen, 1},
    PCCL_ALGO_MAP(PCCL_ALGO_ROW) PCCL_ZALGO_MAP(PCCL_ZALGO_ROW)
#undef PCCL_ZALGO_ROW
#undef PCCL_ALGO_ROW
};

const pccl_algo_t *pccl_algo_find(pccl_coll_t coll, const char *name) {
  for (int i = 0; i < PCCL_ALGO_COUNT; i++)
    if (pccl_algos[i].coll == coll && strcmp(pccl_algos[i].name, name) == 0) return &pccl_algos[i];
  return NULL;
}

pccl_status_t pccl_choice_parse(pccl_coll_t coll, const char *text, pccl_choice_t *out, char *err,
                                size_t errlen) {
  char name[64];
  const char *colon = strchr(text, ':');
  size_t len = colon ? (size_t)(colon - text) : strlen(text);
  const pccl_algo_t *a = NULL;
  if (len < sizeof(name)) {
    memcpy(name, text, len);
    name[len] = '\0';
    a = pccl_algo_find(coll, name);
  }
  if (!a) {
    snprintf(err, errlen, "no algorithm \"%.*s\" for %s", (int)(len < 64 ? len : 64), text,
             pccl_coll_name(coll));
    return PCCL_ERR_INVALID_ARGUMENT;
  }
  *out = (pccl_choice_t){a, a->k};
  if (!colon) return PCCL_OK;
  if (!a->kset) {
    snprintf(err, errlen, "algorithm %s of %s takes no parameter (\"%s\")", a->name,
             pccl_coll_name(coll), text);
    return PCCL_ERR_INVALID_ARGUMENT;
  }
  char *end = NULL;
  errno = 0;
  long k = strtol(colon + 1, &end, 10);
  if (colon[1] == '\0' || *end != '\0' || errno == ERANGE || k < 2 || k > PCCL_K_MAX) {
    snprintf(err, errlen, "parameter of %s in \"%s\" is not an integer in [2, %d]", a->name, text,
             PCCL_K_MAX);
    return PCCL_ERR_INVALID_ARGUMENT;
  }
  out->k = (int)k;
  return PCCL_OK;
}

/* Both tables are the same on every rank: shared through the builder's memo
 * where it has one (the simulator), keyed by what they are made from. */
const size_t *pccl_blocks_equal(pccl_sb_t *sb, int nblocks, size_t block) {
  static const char tag;
  uint64_t key[3] = {(uintptr_t)&tag, (uint64_t)nblocks, block};
  int fresh;
  size_t *b = pccl_sb_shared(sb, key, sizeof key, ((size_t)nblocks + 1) * sizeof(size_t), &fresh);
  if (b && fresh)
    for (int i = 0; i <= nblocks; i++) b[i] = (size_t)i * block;
  return b;
}

/* Splits count elements from `first` on into nblocks blocks whose sizes
 * differ by at most one. */
const size_t *pccl_blocks_split_at(pccl_sb_t *sb, int nblocks, size_t first, size_t count) {
  static const char tag;
  uint64_t key[4] = {(uintptr_t)&tag, (uint64_t)nblocks, first, count};
  int fresh;
  size_t *b = pccl_sb_shared(sb, key, sizeof key, ((size_t)nblocks + 1) * sizeof(size_t), &fresh);
  size_t q = count / (size_t)nblocks, rem = count % (size_t)nblocks;
  if (b && fresh)
    for (int i = 0; i <= nblocks; i++)
      b[i] = first + (size_t)i * q + ((size_t)i < rem ? (size_t)i : rem);
  return b;
}

pccl_status_t pccl_flat_allgather(pccl_sb_t *sb, const pccl_coll_args_t *a, pccl_group_ag_fn fn) {
  pccl_group_t g = pccl_group_all(a);
  const size_t *boff = a->boff ? a->boff : pccl_blocks_equal(sb, a->nranks, a->count);
  if (!boff) return PCCL_ERR_NO_MEMORY;
  pccl_place_t in = {PCCL_BUF_SEND, 0}, out = {PCCL_BUF_RECV, 0};
  if (!a->displs) {
    fn(sb, &g, boff, &in, out);
    return PCCL_OK;
  }
  /* Blocks that do not lie packed in recvbuf: the algorithms move ranges of
   * adjacent blocks as one message, so they gather packed in scratch, and
   * each block is then copied to its place (the own one straight from the
   * input; in place it is there already). */
  pccl_place_t packed = {PCCL_BUF_TMP, pccl_sb_tmp(sb, boff[a->nranks])};
  fn(sb, &g, boff, &in, packed);
  for (int b = 0; b < a->nranks; b++) {
    pccl_region_t to = pccl_rg(PCCL_BUF_RECV, a->displs[b], boff[b + 1] - boff[b]);
    pccl_sb_copy(sb, to, b == a->rank ? pccl_rg(PCCL_BUF_SEND, 0, to.len) : pccl_block(packed, boff, b));
  }
  return PCCL_OK;
}

pccl_status_t pccl_flat_reduce_scatter(pccl_sb_t *sb, const pccl_coll_args_t *a,
                                       pccl_group_rs_fn fn) {
  pccl_group_t g = pccl_group_all(a);
  const size_t *boff = a->boff ? a->boff : pccl_blocks_equal(sb, a->nranks, a->count);
  if (!boff) return PCCL_ERR_NO_MEMORY;
  pccl_place_t in = {PCCL_BUF_SEND, 0}, out = {PCCL_BUF_RECV, 0};
  fn(sb, &g, boff, in, out);
  return PCCL_OK;
}
