/* cache.c - schedule cache; see cache.h. A linear scan of 64 entries costs
 * far less than the smallest collective. */
#include "cache.h"

#include <stdlib.h>
#include <string.h>

static int same(const pccl_sched_key_t *a, const pccl_sched_key_t *b) {
  return a->coll == b->coll && a->algo == b->algo && a->k == b->k && a->root == b->root &&
         a->inplace == b->inplace && a->avg == b->avg && a->count == b->count &&
         a->elem_size == b->elem_size && a->nblocks == b->nblocks &&
         (!a->nblocks || memcmp(a->blocks, b->blocks, a->nblocks * sizeof(size_t)) == 0);
}

static void entry_free(pccl_sched_entry_t *e) {
  pccl_sched_free(&e->sched);
  free((void *)e->key.blocks);
}

const pccl_sched_t *pccl_cache_find(pccl_sched_cache_t *c, const pccl_sched_key_t *key) {
  for (int i = 0; i < PCCL_SCHED_CACHE_SIZE; i++) {
    if (c->e[i].used && same(&c->e[i].key, key)) {
      c->e[i].used = ++c->clock;
      c->hits++;
      return &c->e[i].sched;
    }
  }
  c->misses++;
  return NULL;
}

const pccl_sched_t *pccl_cache_insert(pccl_sched_cache_t *c, const pccl_sched_key_t *key,
                                      pccl_sched_t *s) {
  int victim = 0;
  for (int i = 1; i < PCCL_SCHED_CACHE_SIZE; i++)
    if (c->e[i].used < c->e[victim].used) victim = i;
  pccl_sched_entry_t *e = &c->e[victim];
  if (e->used) entry_free(e);
  e->used = 0;
  size_t *blocks = NULL;
  if (key->nblocks && !(blocks = malloc(key->nblocks * sizeof(size_t)))) {
    pccl_sched_free(s);
    return NULL;
  }
  if (blocks) memcpy(blocks, key->blocks, key->nblocks * sizeof(size_t));
  e->key = *key;
  e->key.blocks = blocks;
  e->sched = *s;
  e->used = ++c->clock;
  memset(s, 0, sizeof(*s));
  return &e->sched;
}

void pccl_cache_clear(pccl_sched_cache_t *c) {
  for (int i = 0; i < PCCL_SCHED_CACHE_SIZE; i++)
    if (c->e[i].used) entry_free(&c->e[i]);
  memset(c, 0, sizeof(*c));
}
