#!/usr/bin/env bash
# hier_sweep.sh - the emulated-cluster measurements behind docs/results/hier:
# pccl-bench on N nodes x 2 ranks (tools/emucluster, one network namespace
# per node, links shaped to RATE Gbit/s), for all-gather and reduce-scatter:
# flat ring, flat recursive doubling/halving, the two hierarchical variants
# and the default selection, each beside Open MPI's own collective; then the
# hierarchical recursive variant again beside Open MPI's HAN component. Then
# the pictures (tools/plot/plot_bench.py, Debian's python3 + matplotlib).
#
# usage: sudo tools/bench/hier_sweep.sh OUTDIR [NODES...]   (default 2 4 8)
# env:   RATE_GBIT (default 1), SIZES ("-b 16K -e 4M -f 4"), ROUNDS (3)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: hier_sweep.sh OUTDIR [NODES...]}
shift
node_counts=("$@")
(( $# )) || node_counts=(2 4 8)
rate=${RATE_GBIT:-1}
read -r -a sizes <<< "${SIZES:--b 16K -e 4M -f 4}"
rounds=${ROUNDS:-3}
mkdir -p "$out"

bench() { # NAME NODES COLL ALGOS [MPIRUN-ARG]
    local name=$1 nodes=$2 coll=$3 algos=$4 extra=${5:-}
    local args=(--nodes "$nodes" --ranks-per-node 2 --rate-gbit "$rate")
    [[ -n $extra ]] && args+=(--mpirun-arg "$extra")
    echo "== $name: tools/emucluster ${args[*]} -- build/bin/pccl-bench -c $coll -a $algos ${sizes[*]} --rounds $rounds" >&2
    tools/emucluster "${args[@]}" -- build/bin/pccl-bench -c "$coll" -a "$algos" "${sizes[@]}" \
        --rounds "$rounds" --csv "$out/$name.csv" > "$out/$name.txt"
}

for nodes in "${node_counts[@]}"; do
    bench "allgather-n$nodes" "$nodes" allgather ring,recdbl,hier_ring,hier_recdbl,auto
    bench "reducescatter-n$nodes" "$nodes" reducescatter ring,rechalv,hier_ring,hier_rechalv,auto
    bench "allgather-n$nodes-han" "$nodes" allgather hier_recdbl "--mca coll_han_priority 100"
    bench "reducescatter-n$nodes-han" "$nodes" reducescatter hier_rechalv "--mca coll_han_priority 100"
done

plot=(/usr/bin/python3 tools/plot/plot_bench.py)
for coll in allgather reducescatter; do
    main=()
    for nodes in "${node_counts[@]}"; do main+=("$out/$coll-n$nodes.csv"); done
    "${plot[@]}" time --coll "$coll" -o "$out/$coll-time.png" "${main[@]}"
    "${plot[@]}" heatmap --coll "$coll" --algo auto -o "$out/$coll-heatmap.png" "${main[@]}"
done
