#!/usr/bin/env bash
# checks.sh - the GPU checks, on a machine with a GPU, from the repository
# root, after scripts/gpu/bundle.sh made .gpu/ elsewhere: the CUDA tests
# (several processes on the one GPU included), compute-sanitizer's memcheck,
# racecheck and synccheck on them, the kernel and codec benchmarks, and
# pccl-bench on device and on host buffers. Writes summary.txt, all.log and
# the benchmarks' CSV files to OUT (default gpu-out).
set -u
cd "$(dirname "$0")/../.."
source .gpu/env.sh
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
S=$OUT/summary.txt LOG=$OUT/all.log
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
# a call that hangs fails with the algorithm and the peers it waits for
export PCCL_TIMEOUT=20
t0=$(date +%s)
run() { # NAME SECONDS COMMAND...
  local name=$1 limit=$2 a rc
  shift 2
  a=$(date +%s%N)
  echo "=== $name: $*" >>"$LOG"
  timeout -k 5 "$limit" "$@" >>"$LOG" 2>&1
  rc=$?
  printf '%-26s rc=%-3s %7d ms\n' "$name" "$rc" "$(( ($(date +%s%N) - a) / 1000000 ))" | tee -a "$S"
}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; echo "cores $(nproc)"; } >"$S" 2>&1
run runtime 30 test_cuda_runtime auto
PCCL_CUDA=0 run runtime_off 30 test_cuda_runtime off
PCCL_CUDA=maybe run runtime_malformed 30 test_cuda_runtime malformed
run kernels 120 test_cuda_kernels
run szp 180 test_cuda_szp
for np in 2 3 4; do run coll_np$np 60 mr -np $np test_cuda_coll; done
run coll_precmul_np4 60 mr -np 4 -x PCCL_ALGO=allgather:precmul:2,allreduce:recmul:3 test_cuda_coll
run coll_hier_np4 60 mr -np 4 -x PCCL_RANKS_PER_NODE=2 test_cuda_coll
if [ -n "$CS" ]; then
  for tool in memcheck racecheck synccheck; do
    run ${tool}_kernels 150 "$CS" --tool $tool --error-exitcode 9 test_cuda_kernels
  done
  run memcheck_szp 150 "$CS" --tool memcheck --error-exitcode 9 test_cuda_szp
  run memcheck_coll_np3 150 mr -np 3 "$CS" --tool memcheck --error-exitcode 9 test_cuda_coll
  run memcheck_coll_hier_np4 150 mr -np 4 -x PCCL_RANKS_PER_NODE=2 "$CS" --tool memcheck \
    --error-exitcode 9 test_cuda_coll
fi
run kernel_bench 90 pccl-kernel-bench-gpu 256 5 "$OUT/kernel-bench-gpu.csv"
run codec_bench 90 pccl-codec-bench-gpu 256 5 "$OUT/codec-bench-gpu.csv"
for mem in cuda malloc; do
  run bench_${mem}_np4 120 mr -np 4 pccl-bench --mem $mem -b 1M -e 64M -f 8 --rounds 3 \
    --csv "$OUT/bench-$mem-np4.csv"
done
run bench_cuda_np2_all 150 mr -np 2 pccl-bench --mem cuda -c all -b 1K -e 16M -f 16 --rounds 3 \
  --csv "$OUT/bench-cuda-np2-all.csv"
echo "total $(( $(date +%s) - t0 )) s" >>"$S"
