/* memo.c - tables that every rank of one call computes alike (a collective's
 * block offsets, a two-level layout and its shuffle, a sub-group's blocks),
 * kept across the ranks the simulator generates one after another.
 *
 * The library generates its own rank's schedule only, and builds without a
 * memo. The simulator generates every rank's; each such table is O(p), so
 * without the memo generation cost O(p^2) in all: at 32,768 ranks most of a
 * two-level all-gather's simulation time went into its layout and shuffle.
 * Few tables are kept per call (a handful per layout), so a list suffices. */
#include "schedule.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  unsigned char *key;
  size_t keylen, bytes;
  void *block;
} entry_t;

struct pccl_memo {
  entry_t *e;
  size_t n, cap;
};

pccl_memo_t *pccl_memo_create(void) { return calloc(1, sizeof(pccl_memo_t)); }

void pccl_memo_destroy(pccl_memo_t *m) {
  if (!m) return;
  for (size_t i = 0; i < m->n; i++) {
    free(m->e[i].key);
    free(m->e[i].block);
  }
  free(m->e);
  free(m);
}

void *pccl_memo_get(pccl_memo_t *m, const void *key, size_t keylen, size_t bytes, int *fresh) {
  for (size_t i = 0; i < m->n; i++)
    if (m->e[i].keylen == keylen && m->e[i].bytes == bytes && !memcmp(m->e[i].key, key, keylen)) {
      *fresh = 0;
      return m->e[i].block;
    }
  if (m->n == m->cap) {
    size_t cap = m->cap ? 2 * m->cap : 16;
    entry_t *e = realloc(m->e, cap * sizeof(*e));
    if (!e) return NULL;
    m->e = e;
    m->cap = cap;
  }
  entry_t x = {malloc(keylen ? keylen : 1), keylen, bytes, calloc(1, bytes ? bytes : 1)};
  if (!x.key || !x.block) {
    free(x.key);
    free(x.block);
    return NULL;
  }
  memcpy(x.key, key, keylen);
  m->e[m->n++] = x;
  *fresh = 1;
  return x.block;
}

int pccl_memo_owns(const pccl_memo_t *m, const void *p) {
  for (size_t i = 0; m && i < m->n; i++)
    if (m->e[i].block == p) return 1;
  return 0;
}
