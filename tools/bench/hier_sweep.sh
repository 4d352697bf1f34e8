#!/usr/bin/env bash
# hier_sweep.sh - the emulated-cluster measurements behind docs/results/hier:
# pccl-bench on N nodes x 2 ranks (tools/emucluster, one network namespace
# per node, links shaped to RATE Gbit/s), for all-gather and reduce-scatter:
# flat ring, flat recursive doubling/halving, the three hierarchical variants
# and the default selection, each beside Open MPI's own collective; then the
# all-gathers again beside Open MPI's HAN component (HAN has no
# reduce-scatter: with it on, MPI_Reduce_scatter_block is the default one). Then
# the pictures (tools/plot/plot_bench.py, Debian's python3 + matplotlib).
#
# usage: sudo tools/bench/hier_sweep.sh OUTDIR [NODES...]   (default 2 4 8)
# env:   RATE_GBIT (default 1), SIZES ("-b 16K -e 4M -f 4"), ROUNDS (3),
#        COLLS ("allgather reducescatter"),
#        REPEAT (1): runs of each case, one after another, appended to its
#        files (tools/plot/hier_summary.py and plot_bench.py take medians)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: hier_sweep.sh OUTDIR [NODES...]}
shift
node_counts=("$@")
(( $# )) || node_counts=(2 4 8)
rate=${RATE_GBIT:-1}
read -r -a sizes <<< "${SIZES:--b 16K -e 4M -f 4}"
rounds=${ROUNDS:-3}
repeat=${REPEAT:-1}
read -r -a colls <<< "${COLLS:-allgather reducescatter}"
mkdir -p "$out"

bench() { # NAME NODES COLL ALGOS [MPIRUN-ARG]
    local name=$1 nodes=$2 coll=$3 algos=$4 extra=${5:-}
    local args=(--nodes "$nodes" --ranks-per-node 2 --rate-gbit "$rate")
    [[ -n $extra ]] && args+=(--mpirun-arg "$extra")
    : > "$out/$name.txt"
    for ((run = 1; run <= repeat; run++)); do
        echo "== $name, run $run of $repeat: tools/emucluster ${args[*]} -- build/bin/pccl-bench -c $coll -a $algos ${sizes[*]} --rounds $rounds" >&2
        tools/emucluster "${args[@]}" -- build/bin/pccl-bench -c "$coll" -a "$algos" "${sizes[@]}" \
            --rounds "$rounds" --csv "$out/$name.run.csv" >> "$out/$name.txt"
        if ((run == 1)); then mv "$out/$name.run.csv" "$out/$name.csv"
        else tail -n +2 "$out/$name.run.csv" >> "$out/$name.csv"; rm "$out/$name.run.csv"; fi
    done
}

declare -A algos=([allgather]=ring,recdbl,hier_ring,hier_recdbl,hier_leader,auto
                  [reducescatter]=ring,rechalv,hier_ring,hier_rechalv,hier_leader,auto)
for coll in "${colls[@]}"; do
    [[ -n ${algos[$coll]:-} ]] || { echo "hier_sweep.sh: COLLS: '$coll' is not allgather or reducescatter" >&2; exit 2; }
done
for nodes in "${node_counts[@]}"; do
    for coll in "${colls[@]}"; do
        bench "$coll-n$nodes" "$nodes" "$coll" "${algos[$coll]}"
    done
    if [[ " ${colls[*]} " == *" allgather "* ]]; then
        bench "allgather-n$nodes-han" "$nodes" allgather hier_leader,hier_recdbl,auto \
            "--mca coll_han_priority 100"
    fi
done

plot=(/usr/bin/python3 tools/plot/plot_bench.py)
for coll in "${colls[@]}"; do
    main=()
    for nodes in "${node_counts[@]}"; do main+=("$out/$coll-n$nodes.csv"); done
    "${plot[@]}" time --coll "$coll" -o "$out/$coll-time.png" "${main[@]}"
    "${plot[@]}" heatmap --coll "$coll" --algo auto -o "$out/$coll-heatmap.png" "${main[@]}"
done
