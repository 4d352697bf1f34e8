#!/usr/bin/env bash
# sim_scale.sh - how pccl-sim's cost grows with the ranks (issue 28): the
# Frontier-like profile, 8 ranks per node, 1,024 to 65,536 ranks, all-gather
# and reduce-scatter of 1 MiB per rank, each algorithm in its own process
# (so the peak memory is that run's), wall time and peak resident memory
# from /usr/bin/time beside pccl-sim's own generation and simulation times.
# Writes OUTDIR/scale.csv and prints the table.
#
# usage: tools/bench/sim_scale.sh OUTDIR [MAX_RANKS]
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: sim_scale.sh OUTDIR [MAX_RANKS]}
max=${2:-65536}
mkdir -p "$out"
csv=$out/scale.csv
echo "collective,algorithm,nranks,bytes,time_us,messages,steps,gen_wall_s,sim_wall_s,classes,wall_s,peak_mib" > "$csv"
run() { # COLL ALGO RANKS
    local coll=$1 algo=$2 ranks=$3 size=$(( $3 ))M tmp
    tmp=$(mktemp)
    /usr/bin/time -f "%e %M" -o "$tmp.time" build/bin/pccl-sim --profile profiles/frontier.profile \
        --ranks "$ranks" --ranks-per-node 8 -c "$coll" -a "$algo" -b "$size" -e "$size" \
        --csv "$tmp" > /dev/null
    read -r wall kib < "$tmp.time"
    tail -n 1 "$tmp" | awk -F, -v w="$wall" -v k="$kib" \
        '{printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%.0f\n", $1,$2,$4,$6,$7,$11,$12,$13,$14,$18,w,k/1024}' >> "$csv"
    tail -n 1 "$csv"
    rm -f "$tmp" "$tmp.time"
}
for ranks in 1024 2048 4096 8192 16384 32768 65536; do
    [ "$ranks" -le "$max" ] || break
    for algo in hier_recdbl recmul:4 hier_leader ring; do run allgather "$algo" "$ranks"; done
    for algo in hier_rechalv recmul:4 hier_leader ring; do run reducescatter "$algo" "$ranks"; done
done
