#!/usr/bin/env bash
# frontier_heatmap.sh - paper-scale prediction (docs/results/sim-frontier):
# pccl-sim on the Frontier-like profile, 8 ranks per node, 64 to 2048 ranks,
# all-gather of 16 MB to 1 GB per rank, flat ring against the hierarchical
# all-gather with recursive doubling between nodes; then the heatmap of the
# predicted speedup (Debian's python3 + matplotlib).
#
# usage: tools/bench/frontier_heatmap.sh OUTDIR
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: frontier_heatmap.sh OUTDIR}
mkdir -p "$out"
for ranks in 64 128 256 512 1024 2048; do
    # pccl-bench's size convention: the whole gathered vector (ranks x per-rank size)
    lo=$((ranks * 16))M hi=$((ranks * 1024))M
    echo "== build/bin/pccl-sim --profile profiles/frontier.profile --ranks $ranks --ranks-per-node 8 -c allgather -a ring,hier_recdbl -b $lo -e $hi" >&2
    build/bin/pccl-sim --profile profiles/frontier.profile --ranks "$ranks" --ranks-per-node 8 \
        -c allgather -a ring,hier_recdbl -b "$lo" -e "$hi" --csv "$out/allgather-$ranks.csv" \
        > "$out/allgather-$ranks.txt"
done
/usr/bin/python3 tools/plot/plot_sim_heatmap.py -o "$out/allgather-heatmap.png" "$out"/allgather-*.csv
