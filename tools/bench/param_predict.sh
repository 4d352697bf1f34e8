#!/usr/bin/env bash
# param_predict.sh - what the simulator predicts for param_sweep.sh's
# candidates on the emulated cluster (profiles/emucluster.profile, measured
# there by pccl-profile), and how its ranking compares with the measurement
# (tools/plot/compare_sim.py): tables, CSV and pictures next to the sweep's.
#
# usage: tools/bench/param_predict.sh OUTDIR [NODES]   (OUTDIR holds the sweep)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: param_predict.sh OUTDIR [NODES]}
nodes=${2:-8}
ranks=$((nodes * 2))
ag=ring,bruck,recmul:2,recmul:4,recmul:8,precmul:2,precmul:4,kring:2,kring:4,hier_ring,hier_recmul:2,hier_recmul:4
ar=ring,recmul:2,recmul:4,recmul:8,rabenseifner:2,rabenseifner:4,kring:2,kring:4,hier_ring,hier_recmul:2,hier_recmul:4
for pair in "allgather $ag" "allreduce $ar"; do
    read -r coll algos <<< "$pair"
    build/bin/pccl-sim --profile profiles/emucluster.profile --ranks "$ranks" --ranks-per-node 2 \
        -c "$coll" -a "$algos" -b 8 -e 8M -f 4 --csv "$out/$coll-n$nodes-sim.csv" > "$out/$coll-n$nodes-sim.txt"
    /usr/bin/python3 tools/plot/compare_sim.py "$out/$coll-n$nodes.csv" "$out/$coll-n$nodes-sim.csv" \
        -o "$out/$coll-n$nodes-compare.png" --csv "$out/$coll-n$nodes-compare.csv" \
        | tee "$out/$coll-n$nodes-compare.txt"
done
