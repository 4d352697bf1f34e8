/* algo.h - schedule generators and the table that registers them.
 *
 * A generator writes one rank's steps of a collective into a builder. The
 * collective-level generators in the table are thin: each family file also
 * exports its building blocks, which work on a group of ranks (a sub-set of
 * the communicator, mapped to communicator ranks) over blocks of any sizes,
 * so algorithms compose (all-reduce = reduce-scatter + all-gather) without a
 * second copy of any of them. */
#ifndef PCCL_ALGO_H
#define PCCL_ALGO_H

#include "schedule.h"

/* Where the ranks are: node n holds ranks members[node_off[n] ..
 * node_off[n+1]) in local order; nodes may differ in size. */
typedef struct {
  int nnodes;
  const int *node_off; /* nnodes + 1 */
  const int *members;  /* nranks */
  const int *node_of;  /* per rank */
  int *mem;            /* owns the arrays above */
} pccl_topo_t;

/* Builds *t from each rank's node (0 .. nnodes-1, every one used) and index
 * inside it (0 .. size-1 on each node). PCCL_ERR_INVALID_ARGUMENT when the
 * two do not describe such a layout. */
pccl_status_t pccl_topo_create(int nranks, const int *node_of, const int *local_of,
                               pccl_topo_t *t);
void pccl_topo_free(pccl_topo_t *t);

/* Groups of k consecutive ranks (the last may be short) as a topology, its
 * arrays in the builder's scratch or a shared table (nothing to free). */
pccl_status_t pccl_topo_groups(pccl_sb_t *sb, int nranks, int k, pccl_topo_t *t);

/* How hierarchical algorithms move data inside a node. */
typedef enum {
  PCCL_INTRA_RING = 0,     /* ring all-gather / reduce-scatter */
  PCCL_INTRA_RECURSIVE = 1 /* recursive doubling all-gather / halving reduce-scatter */
} pccl_intra_t;

/* What a generator is asked to produce. Counts follow pccl.h. */
typedef struct {
  pccl_coll_t coll;
  int nranks, rank, root;
  size_t count;
  int inplace; /* the send buffer is the documented in-place part of recv */
  const pccl_topo_t *topo; /* hierarchical algorithms only; NULL: one node */
  pccl_intra_t intra;      /* hierarchical algorithms only */
  int k;                   /* parameterized algorithms: the radix / group size; 0: default */
  /* all-gatherv and reduce-scatterv only: the blocks packed in rank order
   * (rank r's spans [boff[r], boff[r+1]) elements), and where each lands in
   * an all-gatherv's recvbuf (displs[r] elements; NULL: packed, at
   * boff[r]). Without boff, blocks of count elements each (as the
   * simulator asks). */
  const size_t *boff;
  const size_t *displs;
  /* gatherv and scatterv: boff and displs as above, at the root only;
   * elsewhere count is the rank's own block. */
  /* all-to-allv only: per rank, the counts and places (elements) of the
   * blocks sent and received, nranks each: scounts | sdispls | rcounts |
   * rdispls (in place, the send side repeats the receive side). NULL:
   * blocks of count, packed. */
  const size_t *a2a;
} pccl_coll_args_t;

typedef pccl_status_t (*pccl_gen_fn)(pccl_sb_t *sb, const pccl_coll_args_t *a);

/* The registration table: one row per (collective, algorithm): id,
 * collective, name, k (the parameter a generator reads in args.k: 0 when it
 * takes none, else its default), whether callers may choose k ("recmul:8"),
 * description, generator. Rows with a fixed k are the classic special cases
 * of a parameterized family (recursive doubling = recursive multiplying with
 * k = 2), kept under their usual names. */
/* The timed node algorithm's description, alike for each collective that has it. */
#define PCCL_SEG_CMA_DESC                                                                         \
  "seg or cma, whichever this node timed faster for the call's size class (trials on its first " \
  "calls and every 256 after); one node"

#define PCCL_ALGO_MAP(X)                                                                          \
  X(ALLGATHER_RING, ALLGATHER, "ring", 0, 0, "ring; p-1 steps, any p", pccl_gen_allgather_ring)    \
  X(ALLGATHER_RECDBL, ALLGATHER, "recdbl", 2, 0,                                                  \
    "recursive doubling (recmul with k=2); non-powers of two fold the extra ranks in first",      \
    pccl_gen_allgather_recmul)                                                                    \
  X(ALLGATHER_BRUCK, ALLGATHER, "bruck", 0, 0,                                                    \
    "Bruck; ceil(log2 p) steps, any p, one final rotation", pccl_gen_allgather_bruck)             \
  X(ALLGATHER_RECMUL, ALLGATHER, "recmul", 4, 1,                                                  \
    "recursive multiplying, radix k: log_k p rounds of k-1 partners; any p (fold)",                \
    pccl_gen_allgather_recmul)                                                                    \
  X(ALLGATHER_PRECMUL, ALLGATHER, "precmul", 4, 1,                                                \
    "permuted recursive multiplying, radix k: distance halving, one in-place cycle permutation",  \
    pccl_gen_allgather_precmul)                                                                   \
  X(ALLGATHER_KRING, ALLGATHER, "kring", 4, 1,                                                    \
    "k-ring: ring between groups of k consecutive ranks, then ring inside them",                   \
    pccl_gen_allgather_kring)                                                                     \
  X(REDUCE_SCATTER_RING, REDUCE_SCATTER, "ring", 0, 0, "ring; p-1 steps, any p", pccl_gen_rs_ring) \
  X(REDUCE_SCATTER_RECHALV, REDUCE_SCATTER, "rechalv", 2, 0,                                      \
    "recursive halving (recmul with k=2); non-powers of two fold the extra ranks in first",       \
    pccl_gen_rs_recmul)                                                                           \
  X(REDUCE_SCATTER_RECMUL, REDUCE_SCATTER, "recmul", 4, 1,                                        \
    "recursive multiplying, radix k, distance shrinking k-fold; any p (fold)", pccl_gen_rs_recmul) \
  X(REDUCE_SCATTER_KRING, REDUCE_SCATTER, "kring", 4, 1,                                          \
    "k-ring: ring inside groups of k consecutive ranks, then ring between them", pccl_gen_rs_kring) \
  X(ALLREDUCE_RING, ALLREDUCE, "ring", 0, 0, "ring reduce-scatter then ring all-gather",          \
    pccl_gen_allreduce_ring)                                                                      \
  X(ALLREDUCE_RECDBL, ALLREDUCE, "recdbl", 2, 0,                                                  \
    "recursive doubling on the whole vector (recmul with k=2)", pccl_gen_allreduce_recmul)        \
  X(ALLREDUCE_RABENSEIFNER, ALLREDUCE, "rabenseifner", 2, 1,                                      \
    "recursive-halving reduce-scatter then recursive-doubling all-gather (radix k)",              \
    pccl_gen_allreduce_rabenseifner)                                                              \
  X(ALLREDUCE_RECMUL, ALLREDUCE, "recmul", 4, 1,                                                  \
    "recursive multiplying on the whole vector, radix k; any p (fold)", pccl_gen_allreduce_recmul) \
  X(ALLREDUCE_KRING, ALLREDUCE, "kring", 4, 1, "k-ring reduce-scatter then k-ring all-gather",    \
    pccl_gen_allreduce_kring)                                                                     \
  X(BROADCAST_BINOMIAL, BROADCAST, "binomial", 0, 0, "binomial tree", pccl_gen_bcast_binomial)    \
  X(REDUCE_BINOMIAL, REDUCE, "binomial", 0, 0, "binomial tree", pccl_gen_reduce_binomial)         \
  X(REDUCE_RSGATHER, REDUCE, "rsgather", 0, 0,                                                    \
    "ring reduce-scatter, then binomial gather of the parts at the root (Rabenseifner's reduce "   \
    "with a ring): every rank reduces 1/p of the vector", pccl_gen_reduce_rsgather)               \
  X(SCATTER_BINOMIAL, SCATTER, "binomial", 0, 0, "binomial tree", pccl_gen_scatter_binomial)      \
  X(GATHER_BINOMIAL, GATHER, "binomial", 0, 0, "binomial tree", pccl_gen_gather_binomial)         \
  X(ALLTOALL_PAIRWISE, ALLTOALL, "pairwise", 0, 0, "pairwise exchange; p-1 steps",                \
    pccl_gen_alltoall_pairwise)                                                                   \
  X(ALLGATHER_HIER_RING, ALLGATHER, "hier_ring", 0, 0,                                            \
    "two-level: ring between nodes (one sub-group per local index), in-node, shuffle",           \
    pccl_gen_allgather_hier_ring)                                                                 \
  X(ALLGATHER_HIER_RECDBL, ALLGATHER, "hier_recdbl", 2, 0,                                        \
    "two-level: recursive doubling between nodes, in-node, shuffle", pccl_gen_allgather_hier_recmul) \
  X(ALLGATHER_HIER_BRUCK, ALLGATHER, "hier_bruck", 0, 0,                                          \
    "two-level: Bruck between nodes, in-node, shuffle", pccl_gen_allgather_hier_bruck)            \
  X(ALLGATHER_HIER_RECMUL, ALLGATHER, "hier_recmul", 4, 1,                                        \
    "two-level: recursive multiplying (radix k) between nodes, in-node, shuffle",                \
    pccl_gen_allgather_hier_recmul)                                                               \
  X(ALLGATHER_HIER_LEADER, ALLGATHER, "hier_leader", 2, 1,                                       \
    "two-level, one leader per node: gather to it, recursive multiplying (radix k) between "     \
    "leaders, broadcast in the node", pccl_gen_allgather_hier_leader)                             \
  X(REDUCE_SCATTER_HIER_RING, REDUCE_SCATTER, "hier_ring", 0, 0,                                  \
    "two-level: shuffle, in-node, ring between nodes", pccl_gen_rs_hier_ring)                     \
  X(REDUCE_SCATTER_HIER_RECHALV, REDUCE_SCATTER, "hier_rechalv", 2, 0,                            \
    "two-level: shuffle, in-node, recursive halving between nodes", pccl_gen_rs_hier_recmul)      \
  X(REDUCE_SCATTER_HIER_RECMUL, REDUCE_SCATTER, "hier_recmul", 4, 1,                              \
    "two-level: shuffle, in-node, recursive multiplying (radix k) between nodes",                \
    pccl_gen_rs_hier_recmul)                                                                      \
  X(REDUCE_SCATTER_HIER_LEADER, REDUCE_SCATTER, "hier_leader", 2, 1,                             \
    "two-level, one leader per node: reduce to it, recursive multiplying (radix k) between "     \
    "leaders, scatter in the node", pccl_gen_rs_hier_leader)                                      \
  X(ALLREDUCE_HIER_RING, ALLREDUCE, "hier_ring", 0, 0,                                            \
    "two-level reduce-scatter then two-level all-gather, ring between nodes",                    \
    pccl_gen_allreduce_hier_ring)                                                                 \
  X(ALLREDUCE_HIER_REC, ALLREDUCE, "hier_rec", 2, 0,                                              \
    "two-level reduce-scatter then all-gather, recursive halving / doubling between nodes",      \
    pccl_gen_allreduce_hier_recmul)                                                               \
  X(ALLREDUCE_HIER_RECMUL, ALLREDUCE, "hier_recmul", 4, 1,                                        \
    "two-level reduce-scatter then all-gather, recursive multiplying (radix k) between nodes",   \
    pccl_gen_allreduce_hier_recmul)                                                               \
  X(ALLREDUCE_HIER_RING_PIPE, ALLREDUCE, "hier_ring_pipe", 4, 1,                                \
    "hier_ring cut into k chunks that run side by side, in-node and between-node steps "        \
    "overlapping", pccl_gen_allreduce_hier_ring_pipe)                                             \
  X(ALLREDUCE_HIER_REC_PIPE, ALLREDUCE, "hier_rec_pipe", 4, 1,                                  \
    "hier_rec cut into k chunks that run side by side, in-node and between-node steps "         \
    "overlapping", pccl_gen_allreduce_hier_rec_pipe)                                              \
  X(ALLREDUCE_HIER_LEADER, ALLREDUCE, "hier_leader", 2, 1,                                      \
    "two-level, one leader per node: reduce to it, recursive multiplying (radix k) all-reduce "  \
    "between leaders, broadcast in the node", pccl_gen_allreduce_hier_leader)                     \
  X(ALLREDUCE_HIER_LEADER_RAB, ALLREDUCE, "hier_leader_rab", 2, 1,                              \
    "two-level, one leader per node: reduce to it, Rabenseifner (radix-k reduce-scatter, "       \
    "all-gather) between leaders, broadcast in the node", pccl_gen_allreduce_hier_leader_rab)     \
  X(ALLREDUCE_SEG, ALLREDUCE, "seg", 0, 0,                                                        \
    "node segment: flag and data in one cache line when small, else chunks every rank reduces "   \
    "from its peers' slots; one node", pccl_gen_seg)                                             \
  X(ALLGATHER_SEG, ALLGATHER, "seg", 0, 0,                                                        \
    "node segment: each rank copies its block in once, every peer copies it out; one node",      \
    pccl_gen_seg)                                                                                 \
  X(REDUCE_SCATTER_SEG, REDUCE_SCATTER, "seg", 0, 0,                                              \
    "node segment: each rank reduces its block straight from every peer's slot; one node",       \
    pccl_gen_seg)                                                                                 \
  X(BROADCAST_SEG, BROADCAST, "seg", 0, 0,                                                        \
    "node segment: the root copies in chunk by chunk, the others copy out; one node",            \
    pccl_gen_seg)                                                                                 \
  X(REDUCE_SEG, REDUCE, "seg", 0, 0,                                                              \
    "node segment: every rank copies in, the root reduces from the slots; one node", pccl_gen_seg) \
  X(SCATTER_SEG, SCATTER, "seg", 0, 0,                                                            \
    "node segment: the root copies every block in, each rank copies its own out; one node",      \
    pccl_gen_seg)                                                                                 \
  X(GATHER_SEG, GATHER, "seg", 0, 0,                                                              \
    "node segment: every rank copies its block in, the root copies them out; one node",          \
    pccl_gen_seg)                                                                                 \
  X(ALLTOALL_SEG, ALLTOALL, "seg", 0, 0,                                                          \
    "node segment: every rank copies all its blocks in, each copies its own out of every "       \
    "peer's slot; one node", pccl_gen_seg)                                                        \
  X(ALLREDUCE_CMA, ALLREDUCE, "cma", 0, 0,                                                        \
    "node segment for the handshake, data by cross-memory attach: each rank reduces its slice "  \
    "reading its peers' inputs and writes it into their outputs; one node", pccl_gen_seg)        \
  X(ALLGATHER_CMA, ALLGATHER, "cma", 0, 0,                                                        \
    "node segment for the handshake, data by cross-memory attach: each rank reads every peer's " \
    "block; one node", pccl_gen_seg)                                                             \
  X(BROADCAST_CMA, BROADCAST, "cma", 0, 0,                                                        \
    "node segment for the handshake, data by cross-memory attach: every rank reads the root's "  \
    "vector but its first 1/p, which the root writes; one node", pccl_gen_seg)                   \
  X(REDUCE_CMA, REDUCE, "cma", 0, 0,                                                              \
    "node segment for the handshake, data by cross-memory attach: each rank reduces its slice "  \
    "reading its peers' inputs and writes it into the root's output; one node", pccl_gen_seg)    \
  X(SCATTER_CMA, SCATTER, "cma", 0, 0,                                                            \
    "node segment for the handshake, data by cross-memory attach: every rank reads its block of " \
    "the root's input; one node", pccl_gen_seg)                                                  \
  X(GATHER_CMA, GATHER, "cma", 0, 0,                                                              \
    "node segment for the handshake, data by cross-memory attach: every rank writes its block "   \
    "into the root's output; one node", pccl_gen_seg)                                            \
  X(ALLTOALL_CMA, ALLTOALL, "cma", 0, 0,                                                          \
    "node segment for the handshake, data by cross-memory attach: every rank writes each block "  \
    "into its rank's output (in place: the segment's buffers); one node", pccl_gen_seg)          \
  X(ALLREDUCE_SEG_CMA, ALLREDUCE, "seg_cma", 0, 0,                                                \
    PCCL_SEG_CMA_DESC, pccl_gen_seg)                                                              \
  X(ALLGATHER_SEG_CMA, ALLGATHER, "seg_cma", 0, 0,                                                \
    PCCL_SEG_CMA_DESC, pccl_gen_seg)                                                              \
  X(BROADCAST_SEG_CMA, BROADCAST, "seg_cma", 0, 0,                                                \
    PCCL_SEG_CMA_DESC, pccl_gen_seg)                                                              \
  X(REDUCE_SEG_CMA, REDUCE, "seg_cma", 0, 0,                                                      \
    PCCL_SEG_CMA_DESC, pccl_gen_seg)                                                              \
  X(SCATTER_SEG_CMA, SCATTER, "seg_cma", 0, 0,                                                    \
    PCCL_SEG_CMA_DESC, pccl_gen_seg)                                                              \
  X(GATHER_SEG_CMA, GATHER, "seg_cma", 0, 0,                                                      \
    PCCL_SEG_CMA_DESC, pccl_gen_seg)                                                              \
  X(ALLTOALL_SEG_CMA, ALLTOALL, "seg_cma", 0, 0,                                                  \
    PCCL_SEG_CMA_DESC, pccl_gen_seg)                                                              \
  X(SCAN_RECDBL, SCAN, "recdbl", 0, 0,                                                            \
    "recursive doubling (Hillis-Steele): ceil(log2 p) steps of the whole vector, any p",         \
    pccl_gen_scan_recdbl)                                                                         \
  X(SCAN_CHAIN, SCAN, "chain", 0, 0,                                                              \
    "pipelined chain: each rank takes the prefix from the rank below piece by piece, folds its "  \
    "own in and passes it up", pccl_gen_scan_chain)                                               \
  X(SCAN_SEG, SCAN, "seg", 0, 0,                                                                  \
    "node segment: every rank copies in, each reduces the slots of the ranks up to it; one node", \
    pccl_gen_seg)                                                                                 \
  X(EXSCAN_RECDBL, EXSCAN, "recdbl", 0, 0,                                                        \
    "recursive doubling (Hillis-Steele), the partial and the prefix below kept apart, any p",     \
    pccl_gen_scan_recdbl)                                                                         \
  X(EXSCAN_CHAIN, EXSCAN, "chain", 0, 0,                                                          \
    "pipelined chain: each rank takes the prefix from the rank below piece by piece and passes "  \
    "it on with its own folded in", pccl_gen_scan_chain)                                          \
  X(EXSCAN_SEG, EXSCAN, "seg", 0, 0,                                                              \
    "node segment: every rank copies in, each reduces the slots of the ranks below it; one node", \
    pccl_gen_seg)                                                                                 \
  X(ALLGATHERV_RING, ALLGATHERV, "ring", 0, 0, "ring over the ranks' blocks of any size; p-1 steps", \
    pccl_gen_allgather_ring)                                                                      \
  X(ALLGATHERV_RECDBL, ALLGATHERV, "recdbl", 2, 0,                                                \
    "recursive doubling over blocks of any size (recmul with k=2); any p (fold)",                 \
    pccl_gen_allgather_recmul)                                                                    \
  X(ALLGATHERV_BRUCK, ALLGATHERV, "bruck", 0, 0,                                                  \
    "Bruck over blocks of any size; ceil(log2 p) steps, one final rotation", pccl_gen_allgather_bruck) \
  X(ALLGATHERV_RECMUL, ALLGATHERV, "recmul", 4, 1,                                                \
    "recursive multiplying, radix k, over blocks of any size; any p (fold)",                      \
    pccl_gen_allgather_recmul)                                                                    \
  X(ALLGATHERV_SEG, ALLGATHERV, "seg", 0, 0,                                                      \
    "node segment: each rank copies its block in once, every peer copies it to its place; one "  \
    "node", pccl_gen_seg)                                                                         \
  X(REDUCE_SCATTERV_RING, REDUCE_SCATTERV, "ring", 0, 0,                                          \
    "ring over the ranks' blocks of any size; p-1 steps", pccl_gen_rs_ring)                      \
  X(REDUCE_SCATTERV_RECHALV, REDUCE_SCATTERV, "rechalv", 2, 0,                                    \
    "recursive halving over blocks of any size (recmul with k=2); any p (fold)",                  \
    pccl_gen_rs_recmul)                                                                           \
  X(REDUCE_SCATTERV_RECMUL, REDUCE_SCATTERV, "recmul", 4, 1,                                      \
    "recursive multiplying, radix k, over blocks of any size; any p (fold)", pccl_gen_rs_recmul)  \
  X(REDUCE_SCATTERV_SEG, REDUCE_SCATTERV, "seg", 0, 0,                                            \
    "node segment: each rank copies its input in, reduces its own block from every peer's "      \
    "slot; one node", pccl_gen_seg)                                                              \
  X(GATHERV_LINEAR, GATHERV, "linear", 0, 0,                                                      \
    "every rank sends its block straight to the root, all at once (only the root knows the "     \
    "counts)", pccl_gen_gatherv_linear)                                                           \
  X(SCATTERV_LINEAR, SCATTERV, "linear", 0, 0,                                                    \
    "the root sends each rank its block straight, all at once (only the root knows the counts)", \
    pccl_gen_scatterv_linear)                                                                     \
  X(ALLTOALLV_PAIRWISE, ALLTOALLV, "pairwise", 0, 0,                                              \
    "pairwise exchange over blocks of any size; p-1 steps; in place, swaps through 64 KiB of "    \
    "scratch", pccl_gen_alltoallv_pairwise)                                                       \
  X(GATHERV_SEG, GATHERV, "seg", 0, 0,                                                            \
    "node segment, one round: every rank copies its block in, or says where it lies when it "    \
    "does not fit, and the root copies or reads it to its place; one node", pccl_gen_seg)        \
  X(SCATTERV_SEG, SCATTERV, "seg", 0, 0,                                                          \
    "node segment, one round: the root copies the blocks in, or says where they lie when they "  \
    "do not fit, and each rank copies or reads its own; one node", pccl_gen_seg)                 \
  X(ALLTOALLV_SEG, ALLTOALLV, "seg", 0, 0,                                                        \
    "node segment, one round: every rank copies its blocks in, or says where they lie when they " \
    "do not fit, and each copies or reads its own from every peer; one node", pccl_gen_seg)

/* Compressed (lossy) algorithms, zcoll.c: same columns. They run only for
 * the pccl_*_lossy calls, which run nothing else. */
#define PCCL_ZALGO_MAP(X)                                                                         \
  X(ALLREDUCE_ZRECDBL, ALLREDUCE, "zrecdbl", 0, 0,                                                \
    "compressed recursive doubling on the whole vector (gZCCL ReDoub)", pccl_gen_allreduce_zrecdbl) \
  X(ALLREDUCE_ZRING, ALLREDUCE, "zring", 0, 0,                                                    \
    "compressed ring: reduce-scatter compressing each partial, all-gather compressing once",      \
    pccl_gen_allreduce_zring)                                                                     \
  X(ALLGATHER_ZRING, ALLGATHER, "zring", 0, 0, "compressed ring: compress once, forward streams", \
    pccl_gen_allgather_zring)                                                                     \
  X(REDUCE_SCATTER_ZRING, REDUCE_SCATTER, "zring", 0, 0,                                          \
    "compressed ring: each partial sum compressed before it moves", pccl_gen_rs_zring)            \
  X(SCATTER_ZBINOMIAL, SCATTER, "zbinomial", 0, 0,                                                \
    "binomial tree of per-destination compressed blocks", pccl_gen_scatter_zbinomial)

typedef enum {
#define PCCL_ALGO_ENUM(id, coll, name, k, kset, desc, gen) PCCL_ALGO_##id,
  PCCL_ALGO_MAP(PCCL_ALGO_ENUM)
  PCCL_ZALGO_MAP(PCCL_ALGO_ENUM)
#undef PCCL_ALGO_ENUM
      PCCL_ALGO_COUNT
} pccl_algo_id_t;

typedef struct {
  pccl_algo_id_t id;
  pccl_coll_t coll;
  const char *name;
  int k;    /* the default parameter; 0: none */
  int kset; /* callers may choose k */
  const char *description;
  pccl_gen_fn generate;
  int lossy; /* a PCCL_ZALGO_MAP row */
} pccl_algo_t;

#define PCCL_ALGO_DECL(id, coll, name, k, kset, desc, gen) pccl_status_t gen(pccl_sb_t *, const pccl_coll_args_t *);
PCCL_ALGO_MAP(PCCL_ALGO_DECL)
PCCL_ZALGO_MAP(PCCL_ALGO_DECL)
#undef PCCL_ALGO_DECL

extern const pccl_algo_t pccl_algos[PCCL_ALGO_COUNT];

/* A set of algorithm ids (PCCL_ALGO's exclusions). */
#define PCCL_ALGO_SET_WORDS 2
typedef struct {
  uint64_t w[PCCL_ALGO_SET_WORDS];
} pccl_algo_set_t;
_Static_assert(PCCL_ALGO_COUNT <= 64 * PCCL_ALGO_SET_WORDS, "widen pccl_algo_set_t");

static inline void pccl_algo_set_add(pccl_algo_set_t *s, pccl_algo_id_t id) {
  s->w[id / 64] |= (uint64_t)1 << (id % 64);
}
static inline int pccl_algo_set_has(const pccl_algo_set_t *s, pccl_algo_id_t id) {
  return (int)(s->w[id / 64] >> (id % 64) & 1);
}

/* No algorithm's schedule needs more TMP than this many times the call's
 * largest buffer (count, or nranks * count where a buffer holds blocks);
 * tests/unit/test_sched checks every algorithm against it. The measured
 * worst is 7 (recursive multiplying all-reduce, 13 ranks). */
#define PCCL_TMP_FACTOR_MAX 64

/* The algorithm called `name` for `coll`, or NULL. */
const pccl_algo_t *pccl_algo_find(pccl_coll_t coll, const char *name);

/* An algorithm and the parameter it runs with (0 when it takes none). */
typedef struct {
  const pccl_algo_t *algo;
  int k;
} pccl_choice_t;

#define PCCL_K_MAX 1024

/* Parses "name" or "name:k" for `coll` (k in 2 .. PCCL_K_MAX, only for
 * algorithms whose k callers may choose; without it, the default).
 * PCCL_ERR_INVALID_ARGUMENT with a message in err otherwise. */
pccl_status_t pccl_choice_parse(pccl_coll_t coll, const char *text, pccl_choice_t *out, char *err,
                                size_t errlen);

/* ---- building blocks ---------------------------------------------------- */

/* A place in a buffer: where a vector of blocks begins. */
typedef struct {
  pccl_buf_t buf;
  size_t off;
} pccl_place_t;

/* A group of ranks: member i is communicator rank ranks[i] (identity when
 * ranks is NULL); `me` is this rank's index in it; `k` is the parameter of a
 * parameterized algorithm run on it (radix; below 2 means 2). */
typedef struct {
  int size, me;
  const int *ranks;
  int k;
} pccl_group_t;

static inline int pccl_group_rank(const pccl_group_t *g, int i) {
  return g->ranks ? g->ranks[i] : i;
}

/* The whole communicator as a group. */
static inline pccl_group_t pccl_group_all(const pccl_coll_args_t *a) {
  pccl_group_t g = {a->nranks, a->rank, NULL, a->k};
  return g;
}

/* Elements [boff[b], boff[b+1]) of the vector that starts at `at`. */
static inline pccl_region_t pccl_block(pccl_place_t at, const size_t *boff, int b) {
  return pccl_rg(at.buf, at.off + boff[b], boff[b + 1] - boff[b]);
}

/* Block boundaries: block i spans [boff[i], boff[i+1]) elements. */
const size_t *pccl_blocks_equal(pccl_sb_t *sb, int nblocks, size_t block);
const size_t *pccl_blocks_split_at(pccl_sb_t *sb, int nblocks, size_t first, size_t count);
static inline const size_t *pccl_blocks_split(pccl_sb_t *sb, int nblocks, size_t count) {
  return pccl_blocks_split_at(sb, nblocks, 0, count);
}
/* A ring over a group: the member this one sends to and receives from. */
typedef struct {
  int right, left;
} pccl_ring_t;

/* For a call's blocks: run[i], how many blocks from i downwards (i, i-1,
 * ..., cyclically) are empty, p when all are; and the largest block. A ring
 * jumps over the rounds that would move empty blocks only, so that a rank's
 * schedule costs its steps to build, not p rounds. Made once for the ranks
 * of a call where the blocks are shared by them (the simulator's memo), else
 * by this rank; NULL (the builder's status set) when out of memory. */
typedef struct {
  size_t largest;
  uint32_t run[];
} pccl_ring_gaps_t;
const pccl_ring_gaps_t *pccl_ring_gaps(pccl_sb_t *sb, const size_t *boff, int p);

static inline pccl_ring_t pccl_ring_of(const pccl_group_t *g) {
  pccl_ring_t r = {pccl_group_rank(g, (g->me + 1) % g->size),
                   pccl_group_rank(g, (g->me + g->size - 1) % g->size)};
  return r;
}

/* A group all-gather: block me (at `in`, or already at out+boff[me] when in
 * is NULL) ends up, with every other member's block, in the vector at `out`.
 * A group reduce-scatter: `in` holds every block; block me, reduced over the
 * group, is written at `out`. Blocks may differ in size and be empty; boff[0]
 * need not be 0. The hierarchical algorithms take these as parameters. */
typedef void (*pccl_group_ag_fn)(pccl_sb_t *sb, const pccl_group_t *g, const size_t *boff,
                                 const pccl_place_t *in, pccl_place_t out);
typedef void (*pccl_group_rs_fn)(pccl_sb_t *sb, const pccl_group_t *g, const size_t *boff,
                                 pccl_place_t in, pccl_place_t out);

/* A group algorithm run as the collective itself: every rank a member, equal
 * blocks of `count` (an all-gatherv's blocks: a->boff), from SEND into RECV. */
pccl_status_t pccl_flat_allgather(pccl_sb_t *sb, const pccl_coll_args_t *a, pccl_group_ag_fn fn);
pccl_status_t pccl_flat_reduce_scatter(pccl_sb_t *sb, const pccl_coll_args_t *a,
                                       pccl_group_rs_fn fn);

/* Recursive multiplying with radix g->k (recmul.c). */
void pccl_recmul_allgather(pccl_sb_t *sb, const pccl_group_t *g, const size_t *boff,
                           const pccl_place_t *in, pccl_place_t out);
void pccl_bruck_allgather(pccl_sb_t *sb, const pccl_group_t *g, const size_t *boff,
                          const pccl_place_t *in, pccl_place_t out);
void pccl_recmul_reduce_scatter(pccl_sb_t *sb, const pccl_group_t *g, const size_t *boff,
                                pccl_place_t in, pccl_place_t out);

/* Ring all-gather: my block (at `in`, or already at out+boff[me] if in is
 * NULL) ends up with every other member's block in `out`. */
void pccl_ring_allgather(pccl_sb_t *sb, const pccl_group_t *g, const size_t *boff,
                         const pccl_place_t *in, pccl_place_t out);

/* Ring reduce-scatter: `in` holds every block; block me, reduced over the
 * group, is written at `out`. */
void pccl_ring_reduce_scatter(pccl_sb_t *sb, const pccl_group_t *g, const size_t *boff,
                              pccl_place_t in, pccl_place_t out);

/* Binomial trees rooted at member 0 of a group (binomial.c). Broadcast: the
 * root's vector (read from *src when given, else already in data) lands in
 * data everywhere. Reduce: `in` of every member, reduced, lands in the
 * root's `out`. Scatter: the root's vector at `in` (blocks boff) is dealt
 * out, block i to member i's `out`. Gather: the reverse; member i's block is
 * at `in`, or already at out+boff[i] when in is NULL. */
void pccl_binomial_bcast(pccl_sb_t *sb, const pccl_group_t *g, const pccl_region_t *src,
                         pccl_region_t data);
void pccl_binomial_reduce(pccl_sb_t *sb, const pccl_group_t *g, pccl_region_t in,
                          pccl_region_t out);
void pccl_binomial_scatter(pccl_sb_t *sb, const pccl_group_t *g, const size_t *boff,
                           pccl_place_t in, pccl_region_t out);
void pccl_binomial_gather(pccl_sb_t *sb, const pccl_group_t *g, const size_t *boff,
                          const pccl_place_t *in, pccl_place_t out);
/* The communicator rotated so that the root is member 0 (binomial.c);
 * 0 when out of memory. */
int pccl_group_rooted(pccl_sb_t *sb, const pccl_coll_args_t *a, pccl_group_t *g);

/* The fold that runs radix-k algorithms on any p (recmul.c): P = k^rounds
 * virtual ranks, each leading a group of consecutive ranks (the first rem
 * groups hold q+1, the others q); the group's last rank leads it. */
typedef struct {
  int p, k, P, rounds;
  int q, rem;
  int group; /* this member's group */
  int v;     /* its virtual rank (its group) when it leads, else -1 */
} pccl_fold_t;

pccl_fold_t pccl_fold(int p, int k, int me);
int pccl_fold_first(const pccl_fold_t *f, int v); /* first member of group v */
int pccl_fold_real(const pccl_fold_t *f, int v);  /* the leader of group v */
/* At a group's leader: dst = local with the other members' vectors (of
 * local's length) folded in. Returns how many there were (0: nothing done). */
int pccl_fold_in(pccl_sb_t *sb, const pccl_group_t *g, const pccl_fold_t *f, pccl_region_t dst,
                 pccl_region_t local);
/* Boundaries of each virtual rank's part when member i owns block i. */
const size_t *pccl_fold_blocks(pccl_sb_t *sb, const pccl_fold_t *f, const size_t *boff);

/* Recursive multiplying all-gather among the P virtual ranks: virtual rank v
 * contributes elements [vb[v], vb[v+1]) of `out`, already in place. */
void pccl_recmul_allgather_core(pccl_sb_t *sb, const pccl_group_t *g, const pccl_fold_t *f,
                                const size_t *vb, pccl_place_t out);

/* Recursive multiplying reduce-scatter among the P virtual ranks over the
 * vector at `in` (vb as above); leaves virtual rank v's range, reduced, in a
 * TMP vector of the same layout whose start it returns. */
size_t pccl_recmul_reduce_scatter_core(pccl_sb_t *sb, const pccl_group_t *g,
                                       const pccl_fold_t *f, const size_t *vb, pccl_place_t in);

/* Whole-vector recursive multiplying all-reduce, radix g->k, over a group:
 * `in` of every member, reduced, lands in `acc`. in may be acc itself, given
 * as the same region: an in-place call passes acc, not its SEND alias, for
 * aliasing is told by buffer and offset. */
void pccl_recmul_allreduce(pccl_sb_t *sb, const pccl_group_t *g, pccl_region_t in,
                           pccl_region_t acc);

#endif /* PCCL_ALGO_H */
