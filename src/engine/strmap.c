/* strmap.c - a small chained hash map from strings to pointers: the
 * engine's name indexes (pending requests, names in flight, the response
 * cache, the coordinator's table). Keys are copied. */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

struct pccl_strmap_node {
  pccl_strmap_node_t *next;
  void *value;
  char key[];
};

/* FNV-1a: short keys, no adversary. */
static size_t hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ull;
  return (size_t)h;
}

int pccl_strmap_init(pccl_strmap_t *m, size_t expected) {
  size_t n = 16;
  while (n < expected * 2) n *= 2;
  m->slots = calloc(n, sizeof(*m->slots));
  m->nslots = m->slots ? n : 0;
  m->count = 0;
  return m->slots != NULL;
}

void pccl_strmap_free(pccl_strmap_t *m) {
  for (size_t i = 0; i < m->nslots; i++) {
    pccl_strmap_node_t *n = m->slots[i];
    while (n) {
      pccl_strmap_node_t *next = n->next;
      free(n);
      n = next;
    }
  }
  free(m->slots);
  memset(m, 0, sizeof(*m));
}

static pccl_strmap_node_t **find(const pccl_strmap_t *m, const char *key) {
  pccl_strmap_node_t **at = &m->slots[hash(key) & (m->nslots - 1)];
  while (*at && strcmp((*at)->key, key) != 0) at = &(*at)->next;
  return at;
}

void *pccl_strmap_get(const pccl_strmap_t *m, const char *key) {
  if (!m->nslots) return NULL;
  pccl_strmap_node_t *n = *find(m, key);
  return n ? n->value : NULL;
}

static void grow(pccl_strmap_t *m) {
  size_t n = m->nslots * 2;
  pccl_strmap_node_t **slots = calloc(n, sizeof(*slots));
  if (!slots) return; /* stays correct, only slower */
  for (size_t i = 0; i < m->nslots; i++) {
    pccl_strmap_node_t *node = m->slots[i];
    while (node) {
      pccl_strmap_node_t *next = node->next;
      size_t at = hash(node->key) & (n - 1);
      node->next = slots[at];
      slots[at] = node;
      node = next;
    }
  }
  free(m->slots);
  m->slots = slots;
  m->nslots = n;
}

int pccl_strmap_put(pccl_strmap_t *m, const char *key, void *value) {
  if (!m->nslots) return 0;
  pccl_strmap_node_t **at = find(m, key);
  if (*at) {
    (*at)->value = value;
    return 1;
  }
  size_t len = strlen(key) + 1;
  pccl_strmap_node_t *n = malloc(sizeof(*n) + len);
  if (!n) return 0;
  memcpy(n->key, key, len);
  n->value = value;
  n->next = NULL;
  *at = n;
  if (++m->count > m->nslots) grow(m);
  return 1;
}

void pccl_strmap_del(pccl_strmap_t *m, const char *key) {
  if (!m->nslots) return;
  pccl_strmap_node_t **at = find(m, key);
  if (!*at) return;
  pccl_strmap_node_t *n = *at;
  *at = n->next;
  free(n);
  m->count--;
}

void pccl_strmap_each(const pccl_strmap_t *m, void (*fn)(const char *key, void *value, void *ctx),
                      void *ctx) {
  for (size_t i = 0; i < m->nslots; i++)
    for (pccl_strmap_node_t *n = m->slots[i]; n; n = n->next) fn(n->key, n->value, ctx);
}
