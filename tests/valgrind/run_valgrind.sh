#!/usr/bin/env bash
# run_valgrind.sh - a subset of the tests under Valgrind's memcheck: the
# library's main paths (collectives over MPI and the shm transport, the
# codec and compressed collectives, the engine's thread, abort from a second
# thread, the error contract). Uninitialised reads, invalid accesses and
# definite leaks fail the run; tests/valgrind/mpi.supp suppresses only what
# the MPI library and its runtime do.
# Usage: tests/valgrind/run_valgrind.sh [BUILD_DIR]   (default build)
# Exits 77 when valgrind is not installed.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
command -v valgrind >/dev/null 2>&1 || { echo "run_valgrind.sh: valgrind is not installed, skipped"; exit 77; }
supp=$PWD/tests/valgrind/mpi.supp
vg=(valgrind -q --error-exitcode=3 --suppressions="$supp" --leak-check=full
    --errors-for-leak-kinds=definite --track-origins=yes)
runs=(
  "2 test_coll --coll allreduce --algo ring"
  "3 test_coll --coll allgather --algo bruck"
  "3 test_coll --coll reducescatter --algo rechalv"
  "2 test_lossy"
  "2 test_errors"
  "3 test_engine results"
  "3 test_engine mismatch"
  "3 test_faults abort"
)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed=0
for run in "${runs[@]}"; do
  read -r np prog args <<<"$run"
  start=$(date +%s)
  if PCCL_CHECK=0 scripts/mpirun.sh -np "$np" "${vg[@]}" "$build/bin/$prog" $args >"$log" 2>&1; then
    echo "valgrind: $prog $args on $np ranks: clean ($(( $(date +%s) - start )) s)"
  else
    echo "valgrind: $prog $args on $np ranks: FAILED"
    cat "$log"
    failed=1
  fi
done
exit $failed
