#!/usr/bin/env bash
# engine-bench.sh - the training engine's measurements: pccl-enginebench on
# 4, 8 and 16 ranks, with 64 and 1024 tensors, empty (coordination alone)
# and holding a small network's gradients; each table beside MPI_Allreduce
# one tensor at a time in the same run.
# Usage: scripts/engine-bench.sh [--bin DIR] [--out DIR] [--iters N]
# Writes DIR/npN-tT-sS.txt and .csv (default DIR: build/engine-bench).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/bin out=build/engine-bench iters=30
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    *) echo "usage: scripts/engine-bench.sh [--bin DIR] [--out DIR] [--iters N]" >&2; exit 2 ;;
  esac
done
[ -x "$bin/pccl-enginebench" ] || { echo "engine-bench.sh: build first (make)" >&2; exit 1; }
mkdir -p "$out"
for np in 4 8 16; do
  for tensors in 64 1024; do
    for scale in 0 1; do
      name="np$np-t$tensors-s$scale"
      cmd="scripts/mpirun.sh -np $np $bin/pccl-enginebench --tensors $tensors --scale $scale --iters $iters --csv $out/$name.csv"
      { echo "\$ $cmd"; $cmd; } | tee "$out/$name.txt"
    done
  done
done
