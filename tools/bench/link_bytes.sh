#!/usr/bin/env bash
# link_bytes.sh - bytes each emulated node sends per call of one all-gather
# algorithm, counted on the links themselves: while pccl-bench makes 5 calls
# (its probing call, one warm-up, three timed; no MPI rows, no checking) on
# NODES x 2 ranks at 1 Gbit/s, the root namespace samples the rx_bytes of
# each node's bridge-side veth (what that node transmitted) every 50 ms.
# Prints MiB per call per node; setup traffic is included, so small sizes
# read high.
#
# usage: sudo tools/bench/link_bytes.sh SIZE ALGO [ALGO...]   (env: NODES, default 8)
set -euo pipefail
cd "$(dirname "$0")/../.."
size=${1:?usage: link_bytes.sh SIZE ALGO [ALGO...]}
shift
[[ $# -gt 0 ]] || { echo "usage: link_bytes.sh SIZE ALGO [ALGO...]" >&2; exit 2; }
nodes=${NODES:-8}
calls=5 # pccl-bench's probing call, -w 1, -n 3
log=$(mktemp)
sampler=
cleanup() { [[ -n $sampler ]] && kill "$sampler" 2>/dev/null; rm -f "$log"; }
trap cleanup EXIT
for algo in "$@"; do
    : >"$log"
    # emucluster names each node's bridge-side veth emc<pid>-<node>
    ( while :; do
          for f in /sys/class/net/emc*-[0-9]*/statistics/rx_bytes; do
              [[ -e $f ]] && echo "$f $(<"$f")"
          done 2>/dev/null
          sleep 0.05
      done ) >>"$log" &
    sampler=$!
    tools/emucluster --nodes "$nodes" --ranks-per-node 2 --rate-gbit 1 -- \
        "$PWD/build/bin/pccl-bench" -c allgather -a "$algo" -b "$size" -e "$size" \
        -n 3 -w 1 --rounds 1 --check 0 --no-mpi >/dev/null
    kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true
    sampler=
    awk -v a="$algo" -v calls="$calls" '
        { split($1, p, "/"); k = split(p[5], w, "-"); node = w[k] + 0 }
        !(node in first) { first[node] = $2; if (node + 1 > n) n = node + 1 }
        { last[node] = $2 }
        END {
            printf "%s: MiB sent per call, node 0..%d:", a, n - 1
            for (i = 0; i < n; i++) printf " %.2f", (last[i] - first[i]) / calls / 1048576
            printf "\n"
        }' "$log"
done
