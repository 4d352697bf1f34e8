/* registry.c - the table of algorithms, generated from PCCL_ALGO_MAP, and
 * helpers shared by the generators. */
#include <string.h>

#include "algo.h"

const pccl_algo_t pccl_algos[PCCL_ALGO_COUNT] = {
#define PCCL_ALGO_ROW(id, coll, name, desc, gen) {PCCL_ALGO_##id, PCCL_COLL_##coll, name, desc, gen},
    PCCL_ALGO_MAP(PCCL_ALGO_ROW)
#undef PCCL_ALGO_ROW
};

const pccl_algo_t *pccl_algo_find(pccl_coll_t coll, const char *name) {
  for (int i = 0; i < PCCL_ALGO_COUNT; i++)
    if (pccl_algos[i].coll == coll && strcmp(pccl_algos[i].name, name) == 0) return &pccl_algos[i];
  return NULL;
}

size_t *pccl_blocks_equal(pccl_sb_t *sb, int nblocks, size_t block) {
  size_t *b = pccl_sb_scratch(sb, ((size_t)nblocks + 1) * sizeof(size_t));
  if (b)
    for (int i = 0; i <= nblocks; i++) b[i] = (size_t)i * block;
  return b;
}

/* Splits count into nblocks blocks whose sizes differ by at most one. */
size_t *pccl_blocks_split(pccl_sb_t *sb, int nblocks, size_t count) {
  size_t *b = pccl_sb_scratch(sb, ((size_t)nblocks + 1) * sizeof(size_t));
  size_t q = count / (size_t)nblocks, rem = count % (size_t)nblocks;
  if (b)
    for (int i = 0; i <= nblocks; i++) b[i] = (size_t)i * q + ((size_t)i < rem ? (size_t)i : rem);
  return b;
}

pccl_status_t pccl_flat_allgather(pccl_sb_t *sb, const pccl_coll_args_t *a, pccl_group_ag_fn fn) {
  pccl_group_t g = pccl_group_all(a);
  size_t *boff = pccl_blocks_equal(sb, a->nranks, a->count);
  if (!boff) return PCCL_ERR_NO_MEMORY;
  pccl_place_t in = {PCCL_BUF_SEND, 0}, out = {PCCL_BUF_RECV, 0};
  fn(sb, &g, boff, &in, out);
  return PCCL_OK;
}

pccl_status_t pccl_flat_reduce_scatter(pccl_sb_t *sb, const pccl_coll_args_t *a,
                                       pccl_group_rs_fn fn) {
  pccl_group_t g = pccl_group_all(a);
  size_t *boff = pccl_blocks_equal(sb, a->nranks, a->count);
  if (!boff) return PCCL_ERR_NO_MEMORY;
  pccl_place_t in = {PCCL_BUF_SEND, 0}, out = {PCCL_BUF_RECV, 0};
  fn(sb, &g, boff, in, out);
  return PCCL_OK;
}
