#!/usr/bin/env bash
# run_profile.sh - pccl-profile end to end on 4 ranks in 2 fake nodes: a
# loaded run with a given node radix writes a profile that pccl-sim loads,
# whose node_radix, G sweep, source and comments say what the flags asked
# for; --host-cores adds the host keys from the pairs' exchange; and
# malformed --node-radix, --host-cores and --min-size values end with exit
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

# --host-cores: the pairs' exchange (4 ranks: both nodes' ranks paired) gives
# host_message = cores x the time of an exchange / 4, as the comment says.
out=$(PCCL_RANKS_PER_NODE=2 timeout 120 "${launcher[@]}" -np 4 "$profile" --host-cores 1 --reps 1 \
      --min-size 4K --max-size 8K -o "$dir/h.profile" --name h 2>&1)
rc=$?
[ $rc -eq 0 ] || bad "pccl-profile --host-cores 1 exited $rc: $out"
grep -qx "host_cores 1" "$dir/h.profile" || bad "no 'host_cores 1' line in the profile"
t_all=$(sed -n 's/^# Host: 4 ranks exchanged 1 byte between nodes at once in \([0-9.e+-]*\) s .*/\1/p' "$dir/h.profile")
msg=$(sed -n 's/^host_message \([0-9.e+-]*\)$/\1/p' "$dir/h.profile")
[ -n "$t_all" ] && [ -n "$msg" ] || bad "no '# Host:' comment or host_message line"
awk -v a="$t_all" -v m="$msg" 'BEGIN { exit !(m > 0 && m / (a / 4) > 0.9999 && m / (a / 4) < 1.0001) }' ||
  bad "host_message $msg is not 1 x $t_all / 4"
"$sim" --profile "$dir/h.profile" --ranks 8 --ranks-per-node 2 -c allgather -a ring -b 1K -e 1K \
  >/dev/null 2>&1 || bad "pccl-sim cannot use the profile with host keys"
grep -q "host_" "$dir/p.profile" && bad "host keys written without --host-cores"

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
for v in 0 -1 65537 x 1.5 ""; do
  out=$(timeout 60 "${launcher[@]}" -np 2 "$profile" --host-cores "$v" -o "$dir/q.profile" 2>&1)
  rc=$?
  [ $rc -eq 2 ] || bad "--host-cores '$v' exited $rc, not 2"
  echo "$out" | grep -q "host-cores" || bad "--host-cores '$v': no message naming the option"
done
# more cores than exchanging ranks (4 on 2 nodes), or one node: nothing to measure
for rpn in 2 4; do
  out=$(PCCL_RANKS_PER_NODE=$rpn timeout 60 "${launcher[@]}" -np 4 "$profile" --host-cores 4 \
        -o "$dir/q.profile" 2>&1)
  rc=$?
  [ $rc -eq 2 ] || bad "--host-cores 4 on 4 ranks, $rpn a node, exited $rc, not 2"
  echo "$out" | grep -q "host-cores 4 needs more ranks" || bad "--host-cores 4, $rpn a node: no message"
  [ ! -e "$dir/q.profile" ] || bad "--host-cores 4, $rpn a node: wrote a profile"
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
