#!/usr/bin/env bash
# run_dead_peer.sh - a rank killed in the middle of a job (test_faults dead):
# every survivor must get PCCL_ERR_TIMEOUT and say "rank R: survived".
# Open MPI ends the whole job when a rank dies unless mpirun has
# --enable-recovery; with it the survivors go on, get pccl's timeout, and end
# the job with MPI_Abort (MPI_Finalize would wait for the dead rank). Other
# MPIs: skipped (exit 77).
# Usage: run_dead_peer.sh NP MPIEXEC [FLAGS...] -- PROGRAM
set -u
np=$1; shift
launcher=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do launcher+=("$1"); shift; done
shift
if ! "${launcher[0]}" --version 2>&1 | grep -q "Open MPI\|OpenRTE"; then
  echo "SKIP: needs Open MPI's mpirun --enable-recovery"; exit 77
fi
out=$(timeout 60 "${launcher[@]}" --enable-recovery -np "$np" "$@" dead 2>&1)
echo "$out" | grep -v "PMIX ERROR"
fail=0
for r in $(seq 0 $((np - 2))); do
  echo "$out" | grep -q "^rank $r: survived" || { echo "FAIL: rank $r did not survive with an error"; fail=1; }
done
exit $fail
