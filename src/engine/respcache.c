/* respcache.c - the response cache. Every rank holds the same entries at
 * the same positions: insertions follow rank 0's answer order, uses follow
 * the global execution order, and evictions are decided from the
 * bitvector's result, which every rank has. Least recently used goes first
 * when full. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

int pccl_rcache_init(pccl_rcache_t *c, int capacity) {
  memset(c, 0, sizeof(*c));
  if (capacity <= 0) return 1;
  c->entries = calloc((size_t)capacity, sizeof(*c->entries));
  if (!c->entries || !pccl_strmap_init(&c->index, (size_t)capacity)) {
    free(c->entries);
    c->entries = NULL;
    return 0;
  }
  c->capacity = capacity;
  return 1;
}

void pccl_rcache_free(pccl_rcache_t *c) {
  free(c->entries);
  pccl_strmap_free(&c->index);
  memset(c, 0, sizeof(*c));
}

int pccl_rcache_find(const pccl_rcache_t *c, const char *name) {
  if (!c->capacity) return -1;
  uintptr_t v = (uintptr_t)pccl_strmap_get(&c->index, name);
  return (int)v - 1;
}

void pccl_rcache_evict(pccl_rcache_t *c, int pos) {
  pccl_rentry_t *e = &c->entries[pos];
  if (!e->live) return;
  pccl_strmap_del(&c->index, e->name);
  e->live = 0;
}

void pccl_rcache_touch(pccl_rcache_t *c, int pos) { c->entries[pos].used = ++c->clock; }

int pccl_rcache_insert(pccl_rcache_t *c, const char *name, const pccl_sig_t *sig) {
  if (!c->capacity) return -1;
  int pos = pccl_rcache_find(c, name);
  if (pos < 0) { /* the first free position, else the least recently used */
    int lru = 0;
    for (int i = 0; i < c->capacity && pos < 0; i++) {
      if (!c->entries[i].live) pos = i;
      else if (c->entries[i].used < c->entries[lru].used) lru = i;
    }
    if (pos < 0) pos = lru;
    pccl_rcache_evict(c, pos);
  }
  pccl_rentry_t *e = &c->entries[pos];
  if (!pccl_strmap_put(&c->index, name, (void *)(uintptr_t)(pos + 1))) return -1;
  memcpy(e->name, name, strlen(name) + 1);
  e->sig = *sig;
  e->live = 1;
  pccl_rcache_touch(c, pos);
  return pos;
}
