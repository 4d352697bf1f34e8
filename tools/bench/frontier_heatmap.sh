#!/usr/bin/env bash
# frontier_heatmap.sh - paper-scale prediction (docs/results/sim-frontier):
# pccl-sim on the Frontier-like profile, 8 ranks per node, 64 to 32,768
# ranks, all-gather and reduce-scatter of 1 MB to 1 GB per rank, flat ring
# against the two-level algorithms with recursive doubling / halving between
# nodes; then one heatmap of the predicted speedup per collective (Debian's
# python3 + matplotlib).
#
# A two-level call's messages are split at 1 GiB, so past a few thousand
# ranks its steps grow as ranks^2 x size; cells past about 2^25 steps in all
# (4 GB per rank at 2,048 ranks, scaled by (2048 / ranks)^2) are left out and
# show blank: the largest kept take up to about 4 minutes each here.
# (Reduce-scatter's bound was a quarter of that while building its schedule
# cost the square of its message pieces; the hazard map, src/sched/hazard.c,
# made it linear.)
#
# usage: [COLLS="allgather reducescatter"] tools/bench/frontier_heatmap.sh OUTDIR [MAX_RANKS]
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: frontier_heatmap.sh OUTDIR [MAX_RANKS]}
max=${2:-32768}
mkdir -p "$out"
declare -A two_level=([allgather]=hier_recdbl [reducescatter]=hier_rechalv)
for coll in ${COLLS:-allgather reducescatter}; do
    for ((ranks = 64; ranks <= max; ranks *= 2)); do
        # the largest per-rank size kept, in MB: 4096 x (2048 / ranks)^2, at
        # most 1 GB
        top=$((4096 * 2048 / ranks * 2048 / ranks))
        [ "$top" -le 1024 ] || top=1024
        # pccl-bench's size convention: the whole vector (ranks x per-rank size)
        lo=$((ranks * 1))M hi=$((ranks * top))M
        echo "== build/bin/pccl-sim --profile profiles/frontier.profile --ranks $ranks --ranks-per-node 8 -c $coll -a ring,${two_level[$coll]} -b $lo -e $hi -f 4" >&2
        build/bin/pccl-sim --profile profiles/frontier.profile --ranks "$ranks" --ranks-per-node 8 \
            -c "$coll" -a "ring,${two_level[$coll]}" -b "$lo" -e "$hi" -f 4 \
            --csv "$out/$coll-$ranks.csv" > "$out/$coll-$ranks.txt"
    done
    /usr/bin/python3 tools/plot/plot_sim_heatmap.py --algo "${two_level[$coll]}" \
        -o "$out/$coll-heatmap.png" "$out/$coll"-*.csv
done
