/* topo.c - the node layout that hierarchical generators read. */
#include <stdlib.h>
#include <string.h>

#include "algo.h"

pccl_status_t pccl_topo_create(int nranks, const int *node_of, const int *local_of,
                               pccl_topo_t *t) {
  memset(t, 0, sizeof(*t));
  int nnodes = 0;
  for (int r = 0; r < nranks; r++) {
    if (node_of[r] < 0 || node_of[r] >= nranks || local_of[r] < 0) return PCCL_ERR_INVALID_ARGUMENT;
    if (node_of[r] >= nnodes) nnodes = node_of[r] + 1;
  }
  /* node_off (nnodes + 1), members, node_of: one block */
  int *mem = calloc((size_t)nnodes + 1 + 2 * (size_t)nranks, sizeof(int));
  if (!mem) return PCCL_ERR_NO_MEMORY;
  int *off = mem, *members = mem + nnodes + 1, *nodes = members + nranks;
  for (int r = 0; r < nranks; r++) off[node_of[r] + 1]++;
  for (int n = 0; n < nnodes; n++) off[n + 1] += off[n];
  for (int r = 0; r < nranks; r++) members[r] = -1;
  for (int r = 0; r < nranks; r++) {
    int n = node_of[r], size = off[n + 1] - off[n];
    int *slot = &members[off[n] + local_of[r]];
    if (local_of[r] >= size || *slot >= 0) { /* index out of range or taken twice */
      free(mem);
      return PCCL_ERR_INVALID_ARGUMENT;
    }
    *slot = r;
    nodes[r] = n;
  }
  for (int n = 0; n < nnodes; n++)
    if (off[n + 1] == off[n]) { /* a node number nobody has */
      free(mem);
      return PCCL_ERR_INVALID_ARGUMENT;
    }
  *t = (pccl_topo_t){nnodes, off, members, nodes, mem};
  return PCCL_OK;
}

void pccl_topo_free(pccl_topo_t *t) {
  free(t->mem);
  memset(t, 0, sizeof(*t));
}

/* The same on every rank: a shared table (pccl_sb_shared). */
pccl_status_t pccl_topo_groups(pccl_sb_t *sb, int nranks, int k, pccl_topo_t *t) {
  static const char tag;
  uint64_t key[3] = {(uintptr_t)&tag, (uint64_t)nranks, (uint64_t)k};
  int ngroups = (nranks + k - 1) / k, fresh;
  int *mem = pccl_sb_shared(sb, key, sizeof key,
                            ((size_t)ngroups + 1 + 2 * (size_t)nranks) * sizeof(int), &fresh);
  if (!mem) return PCCL_ERR_NO_MEMORY;
  int *off = mem, *members = mem + ngroups + 1, *nodes = members + nranks;
  for (int n = 0; fresh && n <= ngroups; n++) off[n] = n * k < nranks ? n * k : nranks;
  for (int r = 0; fresh && r < nranks; r++) {
    members[r] = r;
    nodes[r] = r / k;
  }
  *t = (pccl_topo_t){ngroups, off, members, nodes, NULL};
  return PCCL_OK;
}
