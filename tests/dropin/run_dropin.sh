#!/usr/bin/env bash
# run_dropin.sh - runs an unmodified MPI program without and with
# libpccl_mpi.so preloaded, and checks that
#   - every run's own checks pass (the program compares with references and
#     exits nonzero on a mismatch),
#   - every preloaded run prints the same digest of its results as the run
#     on MPI alone,
#   - the preload's stats (PCCL_MPI_STATS=1) show what they should: each
#     --expect CALL:KEY needs a nonzero count, KEY being pccl or a reason;
#     CALL:KEY=N needs exactly N (0: none).
# Usage:
#   run_dropin.sh --np N --lib LIB --mpiexec "MPIEXEC FLAGS"
#                 [--expect "CALL:KEY ..."] [--preload-arg ARG]
#                 [--preload-env "VAR=VALUE ..."] [--runs "ENV|ENV|..."]
#                 [--skip-unless "COMMAND"] -- PROGRAM [ARGS]
# --preload-arg: an argument for the program in preloaded runs only.
# --preload-env: environment for every preloaded run.
# --runs: more preloaded runs, each with its own environment (e.g. a
#   PCCL_ALGO forcing algorithms: MPICH reruns its collective tests under
#   every forced algorithm, so do we).
# --skip-unless: exit 77 (CTest's skip) when COMMAND fails.
set -u
np=2 lib= mpiexec= runs= expect= preload_arg= preload_env= skip_unless=
while [ $# -gt 0 ]; do
  case "$1" in
    --np) np=$2; shift 2 ;;
    --lib) lib=$2; shift 2 ;;
    --mpiexec) mpiexec=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --expect) expect=$2; shift 2 ;;
    --preload-arg) preload_arg=$2; shift 2 ;;
    --preload-env) preload_env=$2; shift 2 ;;
    --skip-unless) skip_unless=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "run_dropin.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] && [ -n "$lib" ] && [ -n "$mpiexec" ] || { echo "run_dropin.sh: see usage" >&2; exit 2; }
if [ -n "$skip_unless" ] && ! bash -c "$skip_unless" >/dev/null 2>&1; then
  echo "SKIP: '$skip_unless' failed (a dependency of this test is not installed)"
  exit 77
fi
prog=("$@")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# run NAME PRELOAD ENV... : runs the program under mpiexec, with the preload
# when PRELOAD is 1, and extra environment (through env, so that only the
# ranks get it, not mpiexec itself).
run() {
  local name=$1 preload=$2; shift 2
  local env=(PCCL_MPI_STATS=0) args=()
  if [ "$preload" = 1 ]; then
    # shellcheck disable=SC2206
    env=(LD_PRELOAD="$lib" $preload_env)
    [ -n "$preload_arg" ] && args=("$preload_arg")
  fi
  # shellcheck disable=SC2086
  timeout 300 $mpiexec -np "$np" env "${env[@]}" "$@" "${prog[@]}" "${args[@]}" \
    >"$tmp/$name.out" 2>"$tmp/$name.err"
  local rc=$?
  cat "$tmp/$name.out"
  if [ $rc -ne 0 ]; then
    echo "FAIL: run '$name' exited with $rc"; tail -n 30 "$tmp/$name.err"; fail=1
  fi
}

digest_of() { sed -n 's/.*digest \([0-9a-f]*\).*/\1/p' "$tmp/$1.out" | tail -n 1; }

run plain 0
ref=$(digest_of plain)
[ -n "$ref" ] || { echo "FAIL: no digest from the run on MPI alone"; fail=1; }

same_digest() {
  local d; d=$(digest_of "$1")
  if [ -z "$d" ] || [ "$d" != "$ref" ]; then
    echo "FAIL: run '$1' digest '$d' differs from MPI's '$ref'"; fail=1
  fi
}

run preload 1 PCCL_MPI_STATS=1
same_digest preload
grep '^pccl-mpi:' "$tmp/preload.err"

# A stats line: "pccl-mpi:   MPI_X   <pccl> <mpi>   key n, key n".
for want in $expect; do
  call=${want%%:*} key=${want#*:} exact=
  case "$key" in *=*) exact=${key#*=} key=${key%%=*} ;; esac
  line=$(grep -E "^pccl-mpi: +$call +[0-9]" "$tmp/preload.err")
  if [ "$key" = pccl ]; then
    n=$(echo "$line" | awk '{print $3}')
  else
    n=$(echo "$line" | grep -oE "(^| |,)$key [0-9]+" | awk '{print $NF}')
  fi
  if [ -n "$exact" ]; then
    if [ "${n:-0}" -ne "$exact" ]; then
      echo "FAIL: stats show ${n:-0} '$key' for $call, not $exact (line: '${line:-none}')"; fail=1
    fi
  elif [ -z "$n" ] || [ "$n" -eq 0 ]; then
    echo "FAIL: stats show no '$key' for $call (line: '${line:-none}')"; fail=1
  fi
done

IFS='|' read -r -a sets <<<"$runs"
i=0
for set in "${sets[@]}"; do
  [ -n "$set" ] || continue
  i=$((i + 1))
  echo "run $i: $set"
  # shellcheck disable=SC2086
  run "run$i" 1 $set
  same_digest "run$i"
done

[ $fail -eq 0 ] && echo "run_dropin.sh: PASS" || echo "run_dropin.sh: FAILED"
exit $fail
