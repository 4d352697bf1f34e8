#!/usr/bin/env bash
# small-calls.sh - where a small collective on device buffers spends its
# time when several processes share one GPU: pccl-bench --mem cuda on 2
# processes, 1K-256K, broadcast/gather/exscan/scan, plain, with --sync, with
# PCCL_SHM=0 (MPI underneath), with the root on rank 1, with Open MPI not
# yielding, and under CUDA MPS (one GPU context for all processes). Run on
# the GPU machine from the repository root after scripts/gpu/bundle.sh;
# prints one line per case (collective, algorithm, bytes, microseconds).
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
source .gpu/env.sh
B="mr -np 2"
P="pccl-bench --mem cuda -b 1K -e 256K -f 16 --rounds 3 --no-mpi -c broadcast,gather,exscan,scan"
s() { # CASE COMMAND...: one line per collective and size
  local name=$1
  shift
  timeout 60 "$@" --csv "$OUT/small-$name.csv" >/dev/null 2>"$OUT/small-$name.err" || echo "$name: rc=$?"
  awk -F, -v c="$name" 'NR>1 {printf "%-8s %-10s %-16s %8s %8.1f us\n", c, $1, $2, $6, $7}' "$OUT/small-$name.csv"
}
s default $B $P
s sync $B $P --sync
s shm0 $B -x PCCL_SHM=0 $P
s root1 $B $P -r 1
s yield0 $B --mca mpi_yield_when_idle 0 $P
if command -v nvidia-cuda-mps-control >/dev/null; then
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps CUDA_MPS_LOG_DIRECTORY=/tmp/mpsl; mkdir -p /tmp/mps /tmp/mpsl
  nvidia-cuda-mps-control -d && sleep 1 && s mps $B -x CUDA_MPS_PIPE_DIRECTORY $P; echo quit | nvidia-cuda-mps-control
fi
