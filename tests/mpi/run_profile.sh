#!/usr/bin/env bash
# run_profile.sh - pccl-profile end to end on 4 ranks in 2 fake nodes: a
# loaded run with a given node radix writes a profile that pccl-sim loads,
# whose node_radix, G sweep, source and comments say what the flags asked
# for; and malformed --node-radix and --min-size values end with exit
# status 2 and a message.
# Usage: run_profile.sh PCCL-PROFILE PCCL-SIM MPIEXEC [FLAGS...]
set -u
profile=$1 sim=$2; shift 2
launcher=("$@")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

out=$(PCCL_RANKS_PER_NODE=2 timeout 120 "${launcher[@]}" -np 4 "$profile" --loaded \
      --node-radix 3 --reps 1 --min-size 4K --max-size 64K -o "$dir/p.profile" --name t 2>&1)
rc=$?
[ $rc -eq 0 ] || bad "pccl-profile --loaded exited $rc: $out"
grep -qx "node_radix 3" "$dir/p.profile" || bad "no 'node_radix 3' line in the profile"
grep -q "^source .*; loaded$" "$dir/p.profile" || bad "the source line does not say 'loaded'"
grep -q "^# Loaded:" "$dir/p.profile" || bad "no '# Loaded:' comment"
grep -q "node_radix 3 (given by --node-radix)" "$dir/p.profile" || bad "node radix not marked as given"
grep -q "G sweep 4096 to 65536 bytes" "$dir/p.profile" || bad "the G sweep is not 4K to 64K"
echo "$out" | grep -q "4K .*8K .*16K .*32K" || bad "the table shows no 4K-32K sweep points"
for level in intra inter; do
  for key in L o_s o_r g G; do
    grep -Eq "^$level\.$key [0-9.e+-]+$" "$dir/p.profile" || bad "no number for $level.$key"
  done
done
"$sim" --profile "$dir/p.profile" --ranks 8 --ranks-per-node 2 -c allgather -a ring -b 1K -e 1K \
  >/dev/null 2>&1 || bad "pccl-sim cannot use the profile"

# The runs below end with status 2 on every rank; Open MPI's mpiexec then
# waits a second for processes it has signalled (odls_base_sigkill_timeout)
# before it returns, nine seconds of this test's seventeen (MPICH ignores it).
export OMPI_MCA_odls_base_sigkill_timeout=0
for v in -1 1048577 x 2.5 ""; do
  out=$(timeout 60 "${launcher[@]}" -np 2 "$profile" --node-radix "$v" -o "$dir/q.profile" 2>&1)
  rc=$?
  [ $rc -eq 2 ] || bad "--node-radix '$v' exited $rc, not 2"
  echo "$out" | grep -q "node-radix" || bad "--node-radix '$v': no message naming the option"
  [ ! -e "$dir/q.profile" ] || bad "--node-radix '$v' wrote a profile"
done
for args in "--min-size 512" "--min-size 64K --max-size 64K" "--min-size 1G" "--max-size 1K"; do
  # shellcheck disable=SC2086  # the words are the options
  out=$(timeout 60 "${launcher[@]}" -np 2 "$profile" $args -o "$dir/q.profile" 2>&1)
  rc=$?
  [ $rc -eq 2 ] || bad "'$args' exited $rc, not 2"
  echo "$out" | grep -q "size" || bad "'$args': no message naming the size"
  [ ! -e "$dir/q.profile" ] || bad "'$args' wrote a profile"
done
[ $fail -eq 0 ] && echo "run_profile: all checks passed"
exit $fail
