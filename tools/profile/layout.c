/* layout.c - which ranks pccl-profile pairs with rank 0: nodes as the
 * library sees them (src/core/comm.c): MPI's shared-memory split, or, when
 * PCCL_RANKS_PER_NODE=M is set, M consecutive ranks per node. The intra pair
 * is rank 0 and the lowest other rank of its node, the inter pair rank 0 and
 * the lowest rank of another node. The host measurement pairs every node
 * with a neighbour (find_partners). */
#include <stdlib.h>

#include "config.h"
#include "profile_tool.h"

/* PCCL_RANKS_PER_NODE as the library reads it (empty counts as unset). */
static int read_fake_per_node(long *per_node, char *err, size_t errlen) {
  const char *rpn = getenv("PCCL_RANKS_PER_NODE");
  *per_node = 0;
  if (!rpn || !rpn[0]) return PROF_EXIT_OK;
  if (pccl__parse_int("PCCL_RANKS_PER_NODE", rpn, 1, 1L << 30, per_node, err, errlen) != PCCL_OK)
    return PROF_EXIT_USAGE;
  return PROF_EXIT_OK;
}

/* This rank's node, named by its lowest world rank. */
static int node_leader(int rank, long per_node) {
  if (per_node > 0) return (int)(rank / per_node * per_node);
  MPI_Comm local;
  int leader = rank;
  PROF_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local));
  PROF_MPI(MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, local));
  PROF_MPI(MPI_Comm_free(&local));
  return leader;
}

/* Nodes 2j and 2j + 1 (numbered by their lowest ranks) pair their i-th
 * ranks; an odd node out, and the ranks of the larger node past the
 * smaller's count, have no partner. The nodes' members are listed once, in
 * rank order (off[n] .. off[n+1] in member), so this is linear in the ranks. */
static void find_partners(prof_layout_t *lay, const int *leader, int rank) {
  int size = lay->size, N = lay->nnodes;
  int *node = malloc((size_t)size * sizeof *node), *off = calloc((size_t)N + 1, sizeof *off);
  int *member = malloc((size_t)size * sizeof *member), *fill = calloc((size_t)N, sizeof *fill);
  if (!node || !off || !member || !fill) prof_die("out of memory");
  for (int r = 0, n = 0; r < size; r++) /* a node's leader comes before its members */
    node[r] = leader[r] == r ? n++ : node[leader[r]];
  for (int r = 0; r < size; r++) off[node[r] + 1]++;
  for (int n = 0; n < N; n++) off[n + 1] += off[n];
  lay->partner = -1;
  lay->npartnered = 0;
  for (int r = 0; r < size; r++) member[off[node[r]] + fill[node[r]]++] = r;
  for (int n = 0; n < N; n++) {
    int other = n ^ 1;
    if (other >= N) continue;
    int pairs = off[n + 1] - off[n] < off[other + 1] - off[other] ? off[n + 1] - off[n]
                                                                  : off[other + 1] - off[other];
    lay->npartnered += pairs;
    for (int i = 0; i < pairs; i++)
      if (member[off[n] + i] == rank) lay->partner = member[off[other] + i];
  }
  free(node);
  free(off);
  free(member);
  free(fill);
}

int prof_find_layout(prof_layout_t *lay, char *err, size_t errlen) {
  int rank, st = read_fake_per_node(&lay->fake_per_node, err, errlen), worst = st;
  PROF_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  PROF_MPI(MPI_Comm_size(MPI_COMM_WORLD, &lay->size));
  /* Every rank reads its own environment; all stop if any one cannot. */
  PROF_MPI(MPI_Allreduce(&st, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
  if (worst != PROF_EXIT_OK) {
    if (st == PROF_EXIT_OK) snprintf(err, errlen, "another rank has a malformed PCCL_RANKS_PER_NODE");
    return worst;
  }
  int mine = node_leader(rank, lay->fake_per_node);
  int *leader = malloc((size_t)lay->size * sizeof *leader);
  if (!leader) prof_die("out of memory");
  PROF_MPI(MPI_Allgather(&mine, 1, MPI_INT, leader, 1, MPI_INT, MPI_COMM_WORLD));
  lay->nnodes = lay->ranks_per_node = 0;
  lay->peer[PCCL_LEVEL_INTRA] = lay->peer[PCCL_LEVEL_INTER] = -1;
  for (int r = 0; r < lay->size; r++) {
    if (leader[r] == r) lay->nnodes++;
    int same = leader[r] == leader[0];
    if (same) lay->ranks_per_node++;
    pccl_level_t lvl = same ? PCCL_LEVEL_INTRA : PCCL_LEVEL_INTER;
    if (r > 0 && lay->peer[lvl] < 0) lay->peer[lvl] = r;
  }
  find_partners(lay, leader, rank);
  free(leader);
  return PROF_EXIT_OK;
}
