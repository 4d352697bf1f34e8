/* cache.h - a communicator's cache of generated schedules, keyed by
 * everything a generator reads, so repeated calls (the common case in
 * training loops) skip generation. Least recently used entries go first. */
#ifndef PCCL_CACHE_H
#define PCCL_CACHE_H

#include "schedule.h"

typedef struct {
  int coll, algo, k, root, inplace, avg;
  size_t count, elem_size;
  /* blocks of unequal size (all-gatherv): nblocks offsets and places, the
   * caller's on lookup, the entry's own copy once inserted; NULL: none */
  const size_t *blocks;
  size_t nblocks;
} pccl_sched_key_t;

#define PCCL_SCHED_CACHE_SIZE 64

typedef struct {
  pccl_sched_key_t key;
  pccl_sched_t sched;
  uint64_t used; /* 0: empty */
} pccl_sched_entry_t;

typedef struct {
  pccl_sched_entry_t e[PCCL_SCHED_CACHE_SIZE];
  uint64_t clock;
  uint64_t hits, misses;
} pccl_sched_cache_t;

/* The cached schedule for key, or NULL. */
const pccl_sched_t *pccl_cache_find(pccl_sched_cache_t *c, const pccl_sched_key_t *key);
/* Takes ownership of *s (evicting the least recently used entry if full)
 * and copies key->blocks; NULL when that copy cannot be made (*s is then
 * freed). */
const pccl_sched_t *pccl_cache_insert(pccl_sched_cache_t *c, const pccl_sched_key_t *key,
                                      pccl_sched_t *s);
void pccl_cache_clear(pccl_sched_cache_t *c);

#endif /* PCCL_CACHE_H */
