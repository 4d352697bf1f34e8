/* select.c - which algorithm runs a call: the forced one (lossy ones only
 * for lossy calls, plain ones only for plain calls), else the tuning
 * table's row for the layout and size (across nodes), else the rules below.
 * The rules: for each collective, rows of
 * (largest size, algorithm) walked in order; the first row whose bound holds
 * and whose rank count is reached (and not exceeded, where a row has a most)
 * wins. Logarithmic-step algorithms take
 * small sizes, where latency rules; bandwidth-optimal ones take the rest. */
#include "select.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  pccl_coll_t coll;
  size_t max_bytes;
  int min_ranks;
  int multi_node; /* only where ranks span several nodes and some node holds more than one */
  int max_nodes;  /* only up to this many nodes; 0: any number */
  pccl_algo_id_t algo;
  int seg; /* only where the communicator has a node segment (one node); 2: whose
            * ranks may also read and write each other's memory (algorithm cma) */
  /* max_bytes is per hop of a chain: the bound is max_bytes x (p - 1) /
   * ceil(log2 p), where a pipeline's fill of p - 1 hops stops costing more
   * than log2 p whole-vector steps */
  int per_hop;
  /* > 0: only for a skewed v-call (PCCL_SELECT_SKEWED) on at least this
   * many nodes */
  int skewed_nodes;
  int max_ranks; /* only up to this many ranks; 0: any number */
} rule_t;

/* Bruck needs ceil(log2 p) rounds against ring's p-1, but pays two local
 * copies of the whole output for its rotation: with 2 or 3 ranks the rounds
 * are equal and ring wins (measured: 0.85x of Open MPI at 64 KiB on 2 ranks). */
/* All-reduce of 2-4 KiB: Rabenseifner's half-size messages stay under Open
 * MPI's 4 KiB shared-memory eager limit where recursive doubling's full-size
 * one does not (measured on 2 ranks: 0.82x of Open MPI with recdbl, 1.13x
 * with rabenseifner at 4 KiB). The tuner of a later issue replaces such
 * hand-set rows with measured ones. */
static const rule_t rules[] = {
    /* Several nodes: the two-level algorithms (see hier.c). The smallest
     * sizes take the leader variants, which send fewer, larger messages
     * between nodes; then, on up to 8 nodes, the all-gather takes ring
     * between nodes: its N-1 steps cost little against the transfer there,
     * and each node sends to one neighbour and receives from another, where
     * recursive doubling exchanges both ways over one connection, which the
     * emulated links serve a third slower (docs/emucluster.md). More nodes
     * keep recursive doubling / halving while latency matters, ring where
     * bandwidth does. Emulated cluster, 2-8 nodes x 2 ranks, 10 and 1
     * Gbit/s, medians of 3 runs (docs/results/hier, hier-1gbit): hier_leader
     * the fastest or within 5% at 16 and 64 KiB in all 16 cells; from 256
     * KiB hier_ring all-gather within 10% of the fastest in 10 of 12 cells
     * (hier_recdbl: 5 of 12), hier_rechalv reduce-scatter in 10 of 12
     * (hier_ring: 10 of 12). */
    {PCCL_COLL_ALLGATHER, 64 << 10, 1, 1, 0, PCCL_ALGO_ALLGATHER_HIER_LEADER, 0, 0, 0, 0},
    {PCCL_COLL_ALLGATHER, SIZE_MAX, 1, 1, 8, PCCL_ALGO_ALLGATHER_HIER_RING, 0, 0, 0, 0},
    {PCCL_COLL_ALLGATHER, 4 << 20, 1, 1, 0, PCCL_ALGO_ALLGATHER_HIER_RECDBL, 0, 0, 0, 0},
    {PCCL_COLL_ALLGATHER, SIZE_MAX, 1, 1, 0, PCCL_ALGO_ALLGATHER_HIER_RING, 0, 0, 0, 0},
    {PCCL_COLL_REDUCE_SCATTER, 64 << 10, 1, 1, 0, PCCL_ALGO_REDUCE_SCATTER_HIER_LEADER, 0, 0, 0, 0},
    {PCCL_COLL_REDUCE_SCATTER, 4 << 20, 1, 1, 0, PCCL_ALGO_REDUCE_SCATTER_HIER_RECHALV, 0, 0, 0, 0},
    {PCCL_COLL_REDUCE_SCATTER, SIZE_MAX, 1, 1, 0, PCCL_ALGO_REDUCE_SCATTER_HIER_RING, 0, 0, 0, 0},
    /* All-reduce across nodes: up to 32 KiB one leader per node (reduce,
     * recursive doubling between leaders, broadcast), then the two-level
     * all-reduce, cut into 4 chunks that overlap from a size set first
     * at 1 MiB (measured at 512 KiB and 2 MiB: the bound lies between)
     * and then as at the end of this comment. Emulated
     * cluster, 8 nodes x 2 and 4 x 4 ranks, 1 and 10 Gbit/s, one run each
     * of pccl-bench -a hier_rec,hier_leader,hier_ring_pipe,hier_rec_pipe
     * beside Open MPI (docs/results/allreduce-nodes): 8 B-32 KiB
     * hier_leader 0.82-2.65x Open MPI, hier_rec 0.40-1.01x; 2-8 MiB
     * hier_ring_pipe:4 0.87-1.37x, hier_rec 0.99-1.31x. Above 32 KiB, up
     * to 64 KiB, the leaders exchange Rabenseifner's way (hier_leader_rab):
     * the same four cells, 5 rounds (leader-rab-*): at 64 KiB
     * hier_leader_rab 0.97-1.33x Open MPI, hier_rec 0.86-1.00x,
     * hier_leader 0.43-1.16x; at 32 KiB hier_leader is still ahead in 3 of
     * the 4, at 128 KiB hier_rec in 2 (and within 10% in the others).
     * Above 512 KiB the two-level all-reduce is cut into 4 chunks that
     * overlap: up to 1 MiB and above 2 MiB up to 4 MiB with recursive
     * halving and doubling between nodes (hier_rec_pipe), at 2 MiB and
     * above 4 MiB with ring there (hier_ring_pipe). The same four cells,
     * 5 rounds of every candidate, two passes, and one pass of 3 rounds
     * beside the default (docs/results/allreduce-nodes-2): 1 MiB
     * hier_rec_pipe:4 0.87-1.36x Open MPI (below 1.0 on 8 x 2 at 10 Gbit/s,
     * and once, 0.97x, on 4 x 4 there), hier_rec 0.84-1.24x (and one run
     * of 1.81x); 2 MiB hier_ring_pipe:4
     * 0.86-1.59x, hier_rec_pipe:4 0.81-1.38x; 4 MiB hier_rec_pipe:4
     * 0.88-1.42x, hier_ring_pipe:4 0.81-1.39x; 8 MiB even; 16-32 MiB
     * hier_ring_pipe:4 ahead in 6 of 8. */
    {PCCL_COLL_ALLREDUCE, 32 << 10, 1, 1, 0, PCCL_ALGO_ALLREDUCE_HIER_LEADER, 0, 0, 0, 0},
    {PCCL_COLL_ALLREDUCE, 64 << 10, 1, 1, 0, PCCL_ALGO_ALLREDUCE_HIER_LEADER_RAB, 0, 0, 0, 0},
    {PCCL_COLL_ALLREDUCE, 512 << 10, 1, 1, 0, PCCL_ALGO_ALLREDUCE_HIER_REC, 0, 0, 0, 0},
    {PCCL_COLL_ALLREDUCE, 1 << 20, 1, 1, 0, PCCL_ALGO_ALLREDUCE_HIER_REC_PIPE, 0, 0, 0, 0},
    {PCCL_COLL_ALLREDUCE, 2 << 20, 1, 1, 0, PCCL_ALGO_ALLREDUCE_HIER_RING_PIPE, 0, 0, 0, 0},
    {PCCL_COLL_ALLREDUCE, 4 << 20, 1, 1, 0, PCCL_ALGO_ALLREDUCE_HIER_REC_PIPE, 0, 0, 0, 0},
    {PCCL_COLL_ALLREDUCE, SIZE_MAX, 1, 1, 0, PCCL_ALGO_ALLREDUCE_HIER_RING_PIPE, 0, 0, 0, 0},
    /* One node with a segment (src/transport/seg). Small calls take its
     * buffers (seg): a call's fixed cost rules there. From 16 KiB (8 KiB for
     * broadcast) the all-reduce, all-gather, broadcast and reduce take
     * seg_cma, which times the buffers against cma (seg.c's direct calls:
     * the segment for two handshakes, the data by cross-memory attach) on
     * the node's first calls of each size class and keeps the faster. No
     * fixed row can: this machine runs in two modes, lines written by one
     * core reaching the other fast or several times slower, sometimes
     * switching within a run; the buffers' rounds follow the mode, cma
     * costs the same in both. pccl-bench -a seg_cma,seg,cma, two runs on 2
     * ranks and one on 4, 16 KiB-64 MiB, malloc buffers
     * (docs/results/timed): 2-rank all-reduce of 256 KiB seg 1.30-1.33x
     * Open MPI, cma 2.90-3.02x; 2-rank reduce of 1 MiB seg 0.75x in one run
     * and 2.25x in the other, cma 1.28x and 1.15x; seg_cma's speedup at
     * least 0.9 of the better path's at 47 of 56 points (median 0.97). */
    {PCCL_COLL_ALLREDUCE, 16 << 10, 1, 0, 0, PCCL_ALGO_ALLREDUCE_SEG, 1, 0, 0, 0},
    {PCCL_COLL_ALLREDUCE, SIZE_MAX, 1, 0, 0, PCCL_ALGO_ALLREDUCE_SEG_CMA, 2, 0, 0, 0},
    /* Without cross-memory attach: the segment up to 4 MiB on 2 ranks, at
     * every size from 3. */
    {PCCL_COLL_ALLREDUCE, 4 << 20, 1, 0, 0, PCCL_ALGO_ALLREDUCE_SEG, 1, 0, 0, 0},
    {PCCL_COLL_ALLREDUCE, SIZE_MAX, 3, 0, 0, PCCL_ALGO_ALLREDUCE_SEG, 1, 0, 0, 0},
    /* Without cross-memory attach, all-gathers larger than 16 KiB take the
     * segment from 4 ranks up to 8 MiB, else Bruck or the ring (below). */
    {PCCL_COLL_ALLGATHER, 16 << 10, 1, 0, 0, PCCL_ALGO_ALLGATHER_SEG, 1, 0, 0, 0},
    {PCCL_COLL_ALLGATHER, SIZE_MAX, 1, 0, 0, PCCL_ALGO_ALLGATHER_SEG_CMA, 2, 0, 0, 0},
    {PCCL_COLL_ALLGATHER, 8 << 20, 4, 0, 0, PCCL_ALGO_ALLGATHER_SEG, 1, 0, 0, 0},
    {PCCL_COLL_REDUCE_SCATTER, 64 << 10, 1, 0, 0, PCCL_ALGO_REDUCE_SCATTER_SEG, 1, 0, 0, 0},
    {PCCL_COLL_REDUCE_SCATTER, 128 << 10, 4, 0, 0, PCCL_ALGO_REDUCE_SCATTER_SEG, 1, 0, 0, 0},
    /* Broadcast: from 4 ranks the segment up to 64 KiB, then seg_cma (the
     * segment alone where cross-memory attach is refused). With more ranks
     * than cores seg_cma goes direct (seg.c, crowded_direct): 4 ranks on
     * the 2-core AMD EPYC family 25 host, pccl-bench -c broadcast -a
     * seg,cma -b 32K -e 32M -f 4 --rounds 7, two runs: 128 KiB seg
     * 0.50-0.68x Open MPI, cma 0.93-1.23x; 512 KiB-32 MiB seg 0.53-0.95x,
     * cma 1.12-2.78x (docs/results/zen4). On 2 ranks seg_cma up to 1 MiB:
     * the direct call's root writes half of the vector while the other rank
     * reads the rest (seg.c, broadcast_move); pccl-bench -c broadcast -a
     * auto,seg_cma,cma,binomial -b 16K -e 64M -f 4, two runs, malloc
     * buffers: 256 KiB seg_cma 1.66-1.72x Open MPI, binomial 1.60-1.64x; 1
     * MiB 2.56-2.73x against 1.85-2.49x; from 4 MiB binomial as fast or
     * faster (docs/results/bcast-share). On 3 ranks seg_cma up to 64 KiB, then the
     * binomial tree over the shm transport, whose two sides share a large
     * copy too (Xeon host, 64 KiB: seg_cma 1.08-1.24x, binomial
     * 0.88-1.00x). Without cross-memory attach the segment takes 2-3 ranks
     * up to 32 KiB (at 16 KiB, aligned buffers: seg 1.11x Open MPI,
     * binomial 0.90x; docs/results/seg). */
    {PCCL_COLL_BROADCAST, 8 << 10, 1, 0, 0, PCCL_ALGO_BROADCAST_SEG, 1, 0, 0, 0},
    {PCCL_COLL_BROADCAST, 64 << 10, 4, 0, 0, PCCL_ALGO_BROADCAST_SEG, 1, 0, 0, 0},
    {PCCL_COLL_BROADCAST, SIZE_MAX, 4, 0, 0, PCCL_ALGO_BROADCAST_SEG_CMA, 2, 0, 0, 0},
    {PCCL_COLL_BROADCAST, SIZE_MAX, 4, 0, 0, PCCL_ALGO_BROADCAST_SEG, 1, 0, 0, 0},
    {PCCL_COLL_BROADCAST, 1 << 20, 1, 0, 0, PCCL_ALGO_BROADCAST_SEG_CMA, 2, 0, 0, 2},
    {PCCL_COLL_BROADCAST, 64 << 10, 1, 0, 0, PCCL_ALGO_BROADCAST_SEG_CMA, 2, 0, 0, 0},
    {PCCL_COLL_BROADCAST, 32 << 10, 1, 0, 0, PCCL_ALGO_BROADCAST_SEG, 1, 0, 0, 0},
    /* Reduce: without cross-memory attach, the segment up to 32 KiB and from
     * 3 ranks, the binomial tree between on 2 ranks (docs/results/seg). */
    {PCCL_COLL_REDUCE, 16 << 10, 1, 0, 0, PCCL_ALGO_REDUCE_SEG, 1, 0, 0, 0},
    {PCCL_COLL_REDUCE, SIZE_MAX, 1, 0, 0, PCCL_ALGO_REDUCE_SEG_CMA, 2, 0, 0, 0},
    {PCCL_COLL_REDUCE, 32 << 10, 1, 0, 0, PCCL_ALGO_REDUCE_SEG, 1, 0, 0, 0},
    {PCCL_COLL_REDUCE, SIZE_MAX, 3, 0, 0, PCCL_ALGO_REDUCE_SEG, 1, 0, 0, 0},
    {PCCL_COLL_REDUCE, 8 << 20, 1, 0, 0, PCCL_ALGO_REDUCE_BINOMIAL, 0, 0, 0, 0},
    {PCCL_COLL_REDUCE, SIZE_MAX, 1, 0, 0, PCCL_ALGO_REDUCE_SEG, 1, 0, 0, 0},
    {PCCL_COLL_ALLGATHER, 64 << 10, 4, 0, 0, PCCL_ALGO_ALLGATHER_BRUCK, 0, 0, 0, 0},
    {PCCL_COLL_ALLGATHER, SIZE_MAX, 1, 0, 0, PCCL_ALGO_ALLGATHER_RING, 0, 0, 0, 0},
    {PCCL_COLL_REDUCE_SCATTER, 64 << 10, 1, 0, 0, PCCL_ALGO_REDUCE_SCATTER_RECHALV, 0, 0, 0, 0},
    {PCCL_COLL_REDUCE_SCATTER, SIZE_MAX, 1, 0, 0, PCCL_ALGO_REDUCE_SCATTER_RING, 0, 0, 0, 0},
    {PCCL_COLL_ALLREDUCE, 2 << 10, 1, 0, 0, PCCL_ALGO_ALLREDUCE_RECDBL, 0, 0, 0, 0},
    {PCCL_COLL_ALLREDUCE, 4 << 10, 1, 0, 0, PCCL_ALGO_ALLREDUCE_RABENSEIFNER, 0, 0, 0, 0},
    {PCCL_COLL_ALLREDUCE, 16 << 10, 1, 0, 0, PCCL_ALGO_ALLREDUCE_RECDBL, 0, 0, 0, 0},
    /* On 2 ranks the ring makes the same two exchanges as Rabenseifner's
     * but reduces straight into the result, without scratch and a copy:
     * 1.43-1.53x Open MPI at 128-512 KiB against 1.13-1.17x (malloc
     * buffers, two runs of pccl-bench -c allreduce -a ring,rabenseifner). */
    {PCCL_COLL_ALLREDUCE, 1 << 20, 3, 0, 0, PCCL_ALGO_ALLREDUCE_RABENSEIFNER, 0, 0, 0, 0},
    {PCCL_COLL_ALLREDUCE, SIZE_MAX, 1, 0, 0, PCCL_ALGO_ALLREDUCE_RING, 0, 0, 0, 0},
    {PCCL_COLL_BROADCAST, SIZE_MAX, 1, 0, 0, PCCL_ALGO_BROADCAST_BINOMIAL, 0, 0, 0, 0},
    {PCCL_COLL_REDUCE, SIZE_MAX, 1, 0, 0, PCCL_ALGO_REDUCE_BINOMIAL, 0, 0, 0, 0},
    /* Where the node's ranks may read and write each other's memory,
     * seg_cma (the buffers timed against direct calls, see seg.c) from 16
     * KiB in all (a scatter's 8 KiB a block): each block then crosses
     * once. 2 ranks, pccl-bench -c scatter,gather,alltoall -a
     * seg,cma,seg_cma,binomial,pairwise -b 8K -e 16M -f 4, malloc buffers
     * (docs/results/rooted-cma): from 32 KiB seg_cma 1.40-1.56x Open MPI
     * for the scatter (buffers 0.65-1.09x), 1.26-2.48x for the gather
     * (0.78-1.21x), 0.95-1.26x for the all-to-all (0.47-0.87x). The
     * binomial tree (one message) scatters 2 ranks' blocks from 256 KiB
     * faster still, 1.70-1.85x against 1.40-1.56x; on 4 ranks it made
     * 0.75-1.30x against direct's 1.10-1.85x. */
    {PCCL_COLL_SCATTER, 8 << 10, 1, 0, 0, PCCL_ALGO_SCATTER_SEG, 1, 0, 0, 0},
    {PCCL_COLL_SCATTER, 128 << 10, 1, 0, 0, PCCL_ALGO_SCATTER_SEG_CMA, 2, 0, 0, 0},
    {PCCL_COLL_SCATTER, SIZE_MAX, 3, 0, 0, PCCL_ALGO_SCATTER_SEG_CMA, 2, 0, 0, 0},
    {PCCL_COLL_GATHER, 16 << 10, 1, 0, 0, PCCL_ALGO_GATHER_SEG, 1, 0, 0, 0},
    {PCCL_COLL_GATHER, SIZE_MAX, 1, 0, 0, PCCL_ALGO_GATHER_SEG_CMA, 2, 0, 0, 0},
    {PCCL_COLL_ALLTOALL, 16 << 10, 1, 0, 0, PCCL_ALGO_ALLTOALL_SEG, 1, 0, 0, 0},
    {PCCL_COLL_ALLTOALL, SIZE_MAX, 1, 0, 0, PCCL_ALGO_ALLTOALL_SEG_CMA, 2, 0, 0, 0},
    /* Without cross-memory attach, scatter, gather, all-to-all: the
     * segment on one node while it wins (an earlier host).
     * pccl-bench -c gather,scatter,alltoall -a seg,binomial,pairwise, 2 and
     * 4 ranks, malloc buffers (docs/results/rooted): gather seg 1.07-21x
     * Open MPI at every size, binomial 0.35-1.52x; scatter seg 1.04-6.7x up
     * to 64 KiB a block, binomial ahead from 256 KiB a block on 2 ranks
     * (1.40-1.55x against 1.00-1.17x); all-to-all seg 1.28-6.8x up to 128
     * KiB in all, 0.82-0.99x at 512 KiB against pairwise's 0.72-0.81x. */
    {PCCL_COLL_SCATTER, 64 << 10, 1, 0, 0, PCCL_ALGO_SCATTER_SEG, 1, 0, 0, 0},
    {PCCL_COLL_SCATTER, SIZE_MAX, 1, 0, 0, PCCL_ALGO_SCATTER_BINOMIAL, 0, 0, 0, 0},
    {PCCL_COLL_GATHER, SIZE_MAX, 1, 0, 0, PCCL_ALGO_GATHER_SEG, 1, 0, 0, 0},
    {PCCL_COLL_GATHER, SIZE_MAX, 1, 0, 0, PCCL_ALGO_GATHER_BINOMIAL, 0, 0, 0, 0},
    {PCCL_COLL_ALLTOALL, 512 << 10, 1, 0, 0, PCCL_ALGO_ALLTOALL_SEG, 1, 0, 0, 0},
    {PCCL_COLL_ALLTOALL, SIZE_MAX, 1, 0, 0, PCCL_ALGO_ALLTOALL_PAIRWISE, 0, 0, 0, 0},
    /* Prefix reductions: the segment on one node; elsewhere recursive
     * doubling while latency rules, the pipelined chain from where its
     * log2 p whole vectors cost more than the pipeline's fill of p - 1
     * hops. pccl-sim, scan, recdbl against chain: the crossover grows as
     * (p - 1) / log2 p, near 400 KiB on 16 ranks, 700 KiB on 64 and 3.5 MiB
     * on 512 (Frontier profile), near 200 KiB on 16 ranks of the emulated
     * cluster. Measured there (8 nodes x 2, 10 Gbit/s, pccl-bench --sync:
     * calls that do not overlap) it lies lower: recdbl 1.11-1.45x Open MPI
     * at 8 B-4 KiB against the chain's 0.84-0.93x, the chain ahead from 32
     * KiB (0.91-0.98x against 0.84-0.92x). 8 KiB x (p - 1) / log2 p: 30 KiB
     * on 16 ranks (docs/results/scan). In a plain loop of calls the chain is
     * ahead at every size: its low ranks run calls ahead of the high ones
     * (docs/results/README.md). An exscan
     * of 2 ranks is one message, from rank 0's input to rank 1's output,
     * which the chain sends with a single copy where the segment makes
     * two: pccl-bench -c exscan -a seg,chain, 2 ranks, malloc buffers, seg
     * 1.76x and 1.11x Open MPI at 8 and 16 KiB against chain's 0.86-0.87x;
     * at 32-128 KiB chain 0.90-0.97x, seg 0.60-0.82x; from 256 KiB chain
     * 1.26-1.71x, seg 0.45-1.16x. On 4 ranks seg 1.64-3.22x at 4 KiB-64 MiB
     * against chain's 0.96-1.90x (docs/results/scan). */
    {PCCL_COLL_SCAN, SIZE_MAX, 1, 0, 0, PCCL_ALGO_SCAN_SEG, 1, 0, 0, 0},
    {PCCL_COLL_SCAN, 8 << 10, 1, 0, 0, PCCL_ALGO_SCAN_RECDBL, 0, 1, 0, 0},
    {PCCL_COLL_SCAN, SIZE_MAX, 1, 0, 0, PCCL_ALGO_SCAN_CHAIN, 0, 0, 0, 0},
    {PCCL_COLL_EXSCAN, 16 << 10, 1, 0, 0, PCCL_ALGO_EXSCAN_SEG, 1, 0, 0, 0},
    {PCCL_COLL_EXSCAN, SIZE_MAX, 3, 0, 0, PCCL_ALGO_EXSCAN_SEG, 1, 0, 0, 0},
    /* 2 ranks, one node */
    {PCCL_COLL_EXSCAN, SIZE_MAX, 1, 0, 0, PCCL_ALGO_EXSCAN_CHAIN, 1, 0, 0, 0},
    {PCCL_COLL_EXSCAN, 8 << 10, 1, 0, 0, PCCL_ALGO_EXSCAN_RECDBL, 0, 1, 0, 0},
    {PCCL_COLL_EXSCAN, SIZE_MAX, 1, 0, 0, PCCL_ALGO_EXSCAN_CHAIN, 0, 0, 0, 0},
    /* All-gatherv (blocks of unequal size; equal ones run as an all-gather):
     * the all-gather's flat rows, but across nodes recursive doubling takes
     * the small sizes: emulated 4 nodes x 2 ranks, 10 Gbit/s, pccl-bench -c
     * allgatherv -a ring,recdbl,bruck at 1-64 KiB: recdbl 1.25-1.35x Open
     * MPI at 1-16 KiB and 0.98x at 64 KiB, bruck 0.97-1.03x, ring
     * 0.54-0.72x (docs/results/allgatherv/emu-4x2-10gbit-algos.txt). */
    {PCCL_COLL_ALLGATHERV, 64 << 10, 1, 1, 0, PCCL_ALGO_ALLGATHERV_RECDBL, 0, 0, 0, 0},
    {PCCL_COLL_ALLGATHERV, 16 << 10, 1, 0, 0, PCCL_ALGO_ALLGATHERV_SEG, 1, 0, 0, 0},
    {PCCL_COLL_ALLGATHERV, 8 << 20, 4, 0, 0, PCCL_ALGO_ALLGATHERV_SEG, 1, 0, 0, 0},
    {PCCL_COLL_ALLGATHERV, 64 << 10, 4, 0, 0, PCCL_ALGO_ALLGATHERV_BRUCK, 0, 0, 0, 0},
    /* One rank holding PCCL_SKEW times the mean or more: the ring's every
     * step waits for its block, which crosses nnodes - 1 links one after
     * another, against recursive doubling's log2 nnodes. Emulated 10
     * Gbit/s, pccl-bench --vcounts heavy (the last rank half of the data),
     * ring against recdbl: on 8 nodes x 1 and 8 x 2 recdbl 1.12-1.59x
     * faster at 4-16 MiB (at 1 MiB 1.11x and 0.88x), on 4 x 1 and 4 x 2
     * the ring as fast or faster at every size (docs/results/skew). The
     * first row keeps the ring where it held. */
    {PCCL_COLL_ALLGATHERV, 2 << 20, 1, 0, 0, PCCL_ALGO_ALLGATHERV_RING, 0, 0, 8, 0},
    {PCCL_COLL_ALLGATHERV, SIZE_MAX, 1, 0, 0, PCCL_ALGO_ALLGATHERV_RECDBL, 0, 0, 8, 0},
    {PCCL_COLL_ALLGATHERV, SIZE_MAX, 1, 0, 0, PCCL_ALGO_ALLGATHERV_RING, 0, 0, 0, 0},
    /* Reduce-scatterv: the reduce-scatter's rows. */
    {PCCL_COLL_REDUCE_SCATTERV, 64 << 10, 1, 0, 0, PCCL_ALGO_REDUCE_SCATTERV_SEG, 1, 0, 0, 0},
    {PCCL_COLL_REDUCE_SCATTERV, 128 << 10, 4, 0, 0, PCCL_ALGO_REDUCE_SCATTERV_SEG, 1, 0, 0, 0},
    {PCCL_COLL_REDUCE_SCATTERV, 64 << 10, 1, 0, 0, PCCL_ALGO_REDUCE_SCATTERV_RECHALV, 0, 0, 0, 0},
    /* Skewed, on 8 nodes: recursive halving 1.21-1.56x faster than the
     * ring at 4-16 MiB (at 1 MiB 1.52x and 0.75x); on 4 nodes within 9% of
     * it either way (docs/results/skew). */
    {PCCL_COLL_REDUCE_SCATTERV, 2 << 20, 1, 0, 0, PCCL_ALGO_REDUCE_SCATTERV_RING, 0, 0, 8, 0},
    {PCCL_COLL_REDUCE_SCATTERV, SIZE_MAX, 1, 0, 0, PCCL_ALGO_REDUCE_SCATTERV_RECHALV, 0, 0, 8, 0},
    {PCCL_COLL_REDUCE_SCATTERV, SIZE_MAX, 1, 0, 0, PCCL_ALGO_REDUCE_SCATTERV_RING, 0, 0, 0, 0},
    /* Gatherv, scatterv, all-to-allv: each rank sees only its own counts,
     * so the choice may not hang on a size (ranks would choose apart). On
     * one node the segment, where the ranks may read each other's memory
     * (its one round reads large blocks where they lie). */
    {PCCL_COLL_GATHERV, SIZE_MAX, 1, 0, 0, PCCL_ALGO_GATHERV_SEG, 2, 0, 0, 0},
    {PCCL_COLL_SCATTERV, SIZE_MAX, 1, 0, 0, PCCL_ALGO_SCATTERV_SEG, 2, 0, 0, 0},
    {PCCL_COLL_ALLTOALLV, SIZE_MAX, 1, 0, 0, PCCL_ALGO_ALLTOALLV_SEG, 2, 0, 0, 0},
    {PCCL_COLL_GATHERV, SIZE_MAX, 1, 0, 0, PCCL_ALGO_GATHERV_LINEAR, 0, 0, 0, 0},
    {PCCL_COLL_SCATTERV, SIZE_MAX, 1, 0, 0, PCCL_ALGO_SCATTERV_LINEAR, 0, 0, 0, 0},
    {PCCL_COLL_ALLTOALLV, SIZE_MAX, 1, 0, 0, PCCL_ALGO_ALLTOALLV_PAIRWISE, 0, 0, 0, 0},
};

/* A rule's size bound on this communicator. */
static size_t bound(const pccl_comm_t *comm, const rule_t *r) {
  if (!r->per_hop || comm->size < 2) return r->max_bytes;
  int log2p = 0;
  while ((1 << log2p) < comm->size) log2p++;
  return r->max_bytes * (size_t)(comm->size - 1) / (size_t)log2p;
}

static int excluded(const pccl_comm_t *comm, pccl_algo_id_t id) {
  return pccl_algo_set_has(&comm->excluded, id);
}

#define NRULES (sizeof(rules) / sizeof(rules[0]))

/* The rules compiled for one communicator: per collective, the rows whose
 * conditions other than the size hold for it (they never change: its
 * layout, its segment, PCCL_ALGO's exclusions), and what is left when
 * every row's choice is excluded. Walking the whole table on every call
 * cost more than a small call's data (perf: a quarter of the call layer). */
struct pccl_sel {
  int n[PCCL_COLL_COUNT];
  struct {
    size_t max_bytes;
    pccl_choice_t choice;
    int skewed;
  } row[PCCL_COLL_COUNT][NRULES];
  pccl_choice_t rest[PCCL_COLL_COUNT];
};

static int rule_holds(const pccl_comm_t *comm, const rule_t *r) {
  int multi_node = comm->nnodes > 1 && comm->nnodes < comm->size;
  int seg = comm->seg ? 1 + pccl_seg_runs_cma(comm->seg, r->coll) : 0;
  return comm->size >= r->min_ranks && (!r->max_ranks || comm->size <= r->max_ranks) &&
         (multi_node || !r->multi_node) && seg >= r->seg &&
         (!r->max_nodes || comm->nnodes <= r->max_nodes) && comm->nnodes >= r->skewed_nodes &&
         !excluded(comm, r->algo);
}

/* The first flat algorithm not excluded (the table lists them first; each
 * runs on any layout). */
static pccl_choice_t first_flat(const pccl_comm_t *comm, pccl_coll_t coll) {
  for (int i = 0; i < PCCL_ALGO_COUNT; i++)
    if (pccl_algos[i].coll == coll && !pccl_algos[i].lossy && !excluded(comm, pccl_algos[i].id) &&
        pccl_algos[i].generate != pccl_gen_seg && strncmp(pccl_algos[i].name, "hier", 4) != 0)
      return (pccl_choice_t){&pccl_algos[i], pccl_algos[i].k};
  return (pccl_choice_t){NULL, 0};
}

static struct pccl_sel *compile(pccl_comm_t *comm) {
  struct pccl_sel *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  for (size_t i = 0; i < NRULES; i++) {
    const rule_t *r = &rules[i];
    if (!rule_holds(comm, r)) continue;
    int *n = &t->n[r->coll];
    t->row[r->coll][*n].max_bytes = bound(comm, r);
    t->row[r->coll][*n].skewed = r->skewed_nodes > 0;
    t->row[r->coll][(*n)++].choice = (pccl_choice_t){&pccl_algos[r->algo], pccl_algos[r->algo].k};
  }
  for (int c = 0; c < PCCL_COLL_COUNT; c++) t->rest[c] = first_flat(comm, (pccl_coll_t)c);
  return t;
}

pccl_seg_path_t pccl__seg_path(pccl_algo_id_t id) {
  switch (id) {
  case PCCL_ALGO_ALLREDUCE_CMA:
  case PCCL_ALGO_ALLGATHER_CMA:
  case PCCL_ALGO_BROADCAST_CMA:
  case PCCL_ALGO_REDUCE_CMA:
  case PCCL_ALGO_SCATTER_CMA:
  case PCCL_ALGO_GATHER_CMA:
  case PCCL_ALGO_ALLTOALL_CMA: return PCCL_SEG_DIRECT;
  case PCCL_ALGO_ALLREDUCE_SEG_CMA:
  case PCCL_ALGO_ALLGATHER_SEG_CMA:
  case PCCL_ALGO_BROADCAST_SEG_CMA:
  case PCCL_ALGO_REDUCE_SEG_CMA:
  case PCCL_ALGO_SCATTER_SEG_CMA:
  case PCCL_ALGO_GATHER_SEG_CMA:
  case PCCL_ALGO_ALLTOALL_SEG_CMA: return PCCL_SEG_TIMED;
  default: return PCCL_SEG_BUFFERS;
  }
}

int pccl__seg_takes_nb(const pccl_comm_t *comm, pccl_choice_t ch, pccl_coll_t coll) {
  return pccl__seg_path(ch.algo->id) == PCCL_SEG_BUFFERS && pccl_seg_takes_nb(comm->seg, coll);
}

/* A non-blocking call that the segment does not take so (its timed and
 * direct paths, the v-collectives) goes past its rows to the next that
 * fits; so does pccl's own (PCCL_SELECT_NO_SEG). Where the buffers lie
 * plays no part: ranks may differ, and a call on device buffers runs on
 * the segment through a host mirror (coll.c). */
static int usable(const pccl_comm_t *comm, pccl_choice_t ch, unsigned flags, pccl_coll_t coll) {
  if (ch.algo->generate != pccl_gen_seg) return 1;
  if (flags & PCCL_SELECT_NO_SEG) return 0;
  return !(flags & PCCL_SELECT_NB) || pccl__seg_takes_nb(comm, ch, coll);
}

pccl_choice_t pccl__select(pccl_comm_t *comm, pccl_coll_t coll, size_t bytes, unsigned flags) {
  if (comm->forced[coll].algo && !comm->forced[coll].algo->lossy && !(flags & PCCL_SELECT_UNFORCED))
    return comm->forced[coll];
  if (comm->tune_sec) {
    pccl_choice_t ch = pccl_tune_lookup(&comm->tune, comm->tune_sec, coll, 0, bytes);
    if (ch.algo && !excluded(comm, ch.algo->id) && usable(comm, ch, flags, coll)) return ch;
  }
  if (!comm->sel && !(comm->sel = compile(comm))) { /* out of memory: walk the table */
    for (size_t i = 0; i < NRULES; i++) {
      pccl_choice_t ch = {&pccl_algos[rules[i].algo], pccl_algos[rules[i].algo].k};
      if (rules[i].coll == coll && bytes <= bound(comm, &rules[i]) && rule_holds(comm, &rules[i]) &&
          (!rules[i].skewed_nodes || (flags & PCCL_SELECT_SKEWED)) && usable(comm, ch, flags, coll))
        return ch;
    }
    return first_flat(comm, coll);
  }
  const struct pccl_sel *t = comm->sel;
  for (int i = 0; i < t->n[coll]; i++)
    if (bytes <= t->row[coll][i].max_bytes &&
        (!t->row[coll][i].skewed || (flags & PCCL_SELECT_SKEWED)) &&
        usable(comm, t->row[coll][i].choice, flags, coll))
      return t->row[coll][i].choice;
  return t->rest[coll];
}

/* Compressed collectives: a forced lossy algorithm; else, on one node, what
 * the plain call would run (exact, so within any bound): memory moves
 * gigabytes a second and compressing costs more than it saves (4 ranks,
 * 8 MiB all-reduce: zring 38 ms, plain ring 4 ms; docs/results/zcoll/
 * local-np4.txt); else the tuning table's lossy rows (pccl-tune --ratio,
 * compressed or plain, whichever it predicts faster); else recursive doubling
 * for small all-reduces (few rounds, each compressing little), the ring for
 * the rest. */
pccl_choice_t pccl__select_lossy(pccl_comm_t *comm, pccl_coll_t coll, size_t bytes) {
  if (comm->forced[coll].algo && comm->forced[coll].algo->lossy) return comm->forced[coll];
  if (comm->nnodes == 1) return pccl__select(comm, coll, bytes, 0); /* lossy calls are host-only */
  if (comm->tune_sec) {
    pccl_choice_t ch = pccl_tune_lookup(&comm->tune, comm->tune_sec, coll, 1, bytes);
    if (ch.algo) return ch;
  }
  pccl_algo_id_t id;
  switch (coll) {
  case PCCL_COLL_ALLREDUCE:
    id = bytes <= (64 << 10) ? PCCL_ALGO_ALLREDUCE_ZRECDBL : PCCL_ALGO_ALLREDUCE_ZRING;
    break;
  case PCCL_COLL_ALLGATHER: id = PCCL_ALGO_ALLGATHER_ZRING; break;
  case PCCL_COLL_REDUCE_SCATTER: id = PCCL_ALGO_REDUCE_SCATTER_ZRING; break;
  case PCCL_COLL_SCATTER: id = PCCL_ALGO_SCATTER_ZBINOMIAL; break;
  default: return (pccl_choice_t){NULL, 0};
  }
  return (pccl_choice_t){&pccl_algos[id], 0};
}
