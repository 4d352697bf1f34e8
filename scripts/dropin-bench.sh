#!/usr/bin/env bash
# dropin-bench.sh - an unmodified MPI program with and without the drop-in:
# runs pccl-mpibench (plain MPI) on MPI alone and under LD_PRELOAD of
# libpccl_mpi.so, twice each (or --passes N times), interleaved (plain,
# preload, plain, preload, ...), keeps each point's best time, and prints MPI's time, the preloaded time and
# their ratio beside the speedup pccl-bench reports against MPI for the same
# sizes (pccl-bench --mem malloc: ordinary buffers, as the MPI program has).
# With -t TYPE:OP (pccl-mpibench's, as short:band or double_int:maxloc) the
# program runs that datatype and op, and pccl-bench's column stays empty
# (it runs float32 sums only here).
# Usage: scripts/dropin-bench.sh [-np N] [-b MIN] [-e MAX] [-t TYPE:OP] [-c COLLS] [--passes N] [--out DIR]
# Writes DIR/dropin-npN.csv, or DIR/dropin-npN-TYPE-OP.csv with -t (default DIR: build).
set -euo pipefail
cd "$(dirname "$0")/.."
np=2 min=1K max=64M out=build type=float:sum colls=allgather,reducescatter,allreduce,broadcast,reduce passes=2
while [ $# -gt 0 ]; do
  case "$1" in
    -np) np=$2; shift 2 ;;
    -b) min=$2; shift 2 ;;
    -e) max=$2; shift 2 ;;
    -t) type=$2; shift 2 ;;
    -c) colls=$2; shift 2 ;;
    --passes) passes=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: scripts/dropin-bench.sh [-np N] [-b MIN] [-e MAX] [-t TYPE:OP] [-c COLLS] [--passes N] [--out DIR]" >&2; exit 2 ;;
  esac
done
bin=build/bin lib=$PWD/build/lib/libpccl_mpi.so
[ -x $bin/pccl-mpibench ] && [ -f "$lib" ] || { echo "dropin-bench.sh: build first (make)" >&2; exit 1; }
[[ "$passes" =~ ^[1-9][0-9]?$ ]] || { echo "dropin-bench.sh: --passes takes 1-99, not '$passes'" >&2; exit 2; }
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for pass in $(seq "$passes"); do
  scripts/mpirun.sh -np "$np" $bin/pccl-mpibench -b "$min" -e "$max" -c $colls -t "$type" -r 2 \
    --csv "$tmp/mpi$pass.csv" >/dev/null
  scripts/mpirun.sh -np "$np" env LD_PRELOAD="$lib" $bin/pccl-mpibench -b "$min" -e "$max" \
    -c $colls -t "$type" -r 2 --csv "$tmp/pre$pass.csv" >/dev/null
done
name=dropin-np$np
# pccl-bench has no barrier and no overlapped non-blocking calls: its column covers the others
bench_colls=$(echo "$colls" | tr , '\n' | grep -vxE 'barrier|i.*' | paste -sd, || true)
if [ "$type" = float:sum ] && [ -n "$bench_colls" ]; then
  scripts/mpirun.sh -np "$np" $bin/pccl-bench --mem malloc -c "$bench_colls" -b "$min" -e "$max" \
    --csv "$tmp/bench.csv" >/dev/null
else
  echo "collective" >"$tmp/bench.csv"
  [ "$type" = float:sum ] || name=$name-${type/:/-}
fi
# Join on (collective, bytes): best MPI time, best preloaded time, ratio,
# and pccl-bench's speedup for the same point.
awk -F, -v np="$np" '
  FNR == 1 { file = FILENAME; next }
  file ~ /mpi[0-9]+.csv$/ { k = $1 "," $3; if (!(k in m) || $4 < m[k]) m[k] = $4; keys[k] = 1; next }
  file ~ /pre[0-9]+.csv$/ { k = $1 "," $3; if (!(k in p) || $4 < p[k]) p[k] = $4; next }
  file ~ /bench.csv$/ { c = $1; gsub(/_/, "", c); b[c "," $6] = $11 }
  END {
    print "collective,nranks,bytes,mpi_us,preload_us,ratio,pccl_bench_speedup" > "/dev/stderr"
    for (k in keys) {
      split(k, f, ",")
      printf "%s,%s,%s,%.2f,%.2f,%.2f,%s\n", f[1], np, f[2], m[k], p[k], m[k] / p[k], (k in b) ? b[k] : "" > "/dev/stderr"
    }
  }' "$tmp"/mpi[0-9]*.csv "$tmp"/pre[0-9]*.csv "$tmp"/bench.csv \
  2>"$tmp/joined.csv"
{ head -n 1 "$tmp/joined.csv"; tail -n +2 "$tmp/joined.csv" | sort -t, -k1,1 -k3,3n; } >"$out/$name.csv"
echo "# MPI program (pccl-mpibench -t $type) on $np ranks: MPI alone vs LD_PRELOAD=libpccl_mpi.so"
echo "# ratio = MPI time / preloaded time; pccl-bench = pccl-bench's speedup over MPI, same sizes"
column -s, -t "$out/$name.csv"
echo "# written: $out/$name.csv"
