#!/usr/bin/env bash
# param_sweep.sh - the emulated-cluster measurements behind docs/results/param:
# pccl-bench on NODES x 2 ranks (tools/emucluster, links shaped to RATE
# Gbit/s) for all-gather and all-reduce, every candidate the tuner weighs
# (flat, parameterized with several k, hierarchical) and the default
# selection, each beside Open MPI's own collective in the same run. The
# default selection is the tuner's: pccl-tune writes a table for this layout
# from PROFILE first (OUTDIR/tuned-nNODES.tuning), and the library loads it
# (PCCL_TUNING_FILE), so "auto" rows measure the tuner's choice.
#
# usage: sudo tools/bench/param_sweep.sh OUTDIR [NODES]   (default 8)
# env:   RATE_GBIT (default 1), SIZES ("-b 8 -e 8M -f 4"), ROUNDS (3),
#        PROFILE (profiles/emucluster.profile)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: param_sweep.sh OUTDIR [NODES]}
nodes=${2:-8}
rate=${RATE_GBIT:-1}
read -r -a sizes <<< "${SIZES:--b 8 -e 8M -f 4}"
rounds=${ROUNDS:-3}
profile=${PROFILE:-profiles/emucluster.profile}
mkdir -p "$out"
export PCCL_TUNING_FILE=$PWD/$out/tuned-n$nodes.tuning
[[ $out = /* ]] && PCCL_TUNING_FILE=$out/tuned-n$nodes.tuning
build/bin/pccl-tune --profile "$profile" --layout "$((nodes * 2)):2" -b 8 -e 8M -q \
    -o "$PCCL_TUNING_FILE"

ag=ring,bruck,recmul:2,recmul:4,recmul:8,precmul:2,precmul:4,kring:2,kring:4,hier_ring,hier_recmul:2,hier_recmul:4,auto
ar=ring,recmul:2,recmul:4,recmul:8,rabenseifner:2,rabenseifner:4,kring:2,kring:4,hier_ring,hier_recmul:2,hier_recmul:4,auto
for pair in "allgather $ag" "allreduce $ar"; do
    read -r coll algos <<< "$pair"
    args=(--nodes "$nodes" --ranks-per-node 2 --rate-gbit "$rate")
    echo "== tools/emucluster ${args[*]} -- build/bin/pccl-bench -c $coll -a $algos ${sizes[*]} --rounds $rounds" >&2
    tools/emucluster "${args[@]}" -- build/bin/pccl-bench -c "$coll" -a "$algos" "${sizes[@]}" \
        --rounds "$rounds" --csv "$out/$coll-n$nodes.csv" > "$out/$coll-n$nodes.txt"
done
