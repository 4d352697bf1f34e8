#!/usr/bin/env bash
# run_tune.sh - pccl-tune's --max-steps, on 64 ranks (8 per node). With no
# bound (or 0) nothing is left out. With a bound of 3000 steps, candidates
# whose whole job passes it run as rank classes where they can (ring:
# 64 x 127 = 8128 steps, but one node's 8 x 127 = 1016 as classes) and are
# left out where they cannot (k-ring with k = 3 does not divide the node),
# with a comment, and no row names them; recursive doubling (64 x 13 = 832
# steps) is never left out. -j gives the same output with any number of
# threads. Bad values exit 2.
#
# usage: run_tune.sh PCCL_TUNE PROFILE
set -u
tune=$1 profile=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

"$tune" --profile "$profile" --layout 64:8 -c allgather -b 1K -e 64K -q -o "$tmp/free" || bad "no bound: exit $?"
grep -q "left out" "$tmp/free" && bad "no bound: something left out"
"$tune" --profile "$profile" --layout 64:8 -c allgather -b 1K -e 64K -q --max-steps 0 -o "$tmp/zero" ||
    bad "--max-steps 0: exit $?"
cmp -s <(grep -v '^#' "$tmp/free") <(grep -v '^#' "$tmp/zero") || bad "--max-steps 0 is not 'no bound'"

"$tune" --profile "$profile" --layout 64:8 -c allgather -b 1K -e 64K -q --max-steps 3000 -o "$tmp/bound" ||
    bad "bound: exit $?"
left=$(sed -n 's/^# allgather \([^ ]*\) left out at [0-9, -]* B: more than 3000 steps to simulate$/\1/p' "$tmp/bound")
[ -n "$left" ] || bad "bound: nothing left out"
for a in $left; do
    grep -v '^#' "$tmp/bound" | grep -q " $a\$" && bad "bound: a row names $a, which was left out"
done
echo "$left" | grep -qx "recdbl" && bad "recdbl (832 steps) left out"
echo "$left" | grep -qx "ring" && bad "ring left out: not run as classes"
echo "$left" | grep -qx "kring:3" || bad "kring:3 (no classes) not left out"
grep -q "^allgather inf " "$tmp/bound" || bad "bound: no row for the largest size"

# A command with many layouts (and one word longer than a line) is wrapped
# into comment lines the table format accepts (255 characters at most).
long=$(printf './%.0s' $(seq 120))$(basename "$profile")
"$tune" --profile "$(dirname "$profile")/$long" --layout 16:8 --layout 32:8 --layout 64:8 \
    --layout 128:8 --layout 256:8 --layout 512:8 --layout 1024:8 --layout 2048:8 -c allgather \
    -b 1K -e 1K -q -o "$tmp/wide" || bad "many layouts: exit $?"
awk 'length($0) > 255 { exit 1 }' "$tmp/wide" || bad "a line of the table is over 255 characters"
[ "$(grep -c '^layout ' "$tmp/wide")" -eq 8 ] || bad "many layouts: not 8 sections"

# -j: the same table and CSV from one thread and from three (three layouts,
# two collectives, the lossy rows too: pairs that take different times).
# Sizes up to 64 KiB keep it near 10 s under AddressSanitizer on 2 cores.
for j in 1 3; do
    "$tune" --profile "$profile" --layout 64:8 --layout 16:8 --layout 32:8 -c allgather,allreduce \
        -b 8 -e 64K --ratio 4 -q -j $j -o "$tmp/j$j" --csv "$tmp/j$j.csv" || bad "-j $j: exit $?"
done
cmp -s <(grep -v '^#' "$tmp/j1") <(grep -v '^#' "$tmp/j3") || bad "-j 3 writes another table than -j 1"
cmp -s "$tmp/j1.csv" "$tmp/j3.csv" || bad "-j 3 writes another CSV than -j 1"
[ "$(grep -c '^layout ' "$tmp/j3")" -eq 3 ] || bad "-j 3: not 3 sections"
grep -q '^lossy allreduce ' "$tmp/j3" || bad "-j 3: no lossy rows"

for v in -1 1.5 00 ""; do
    "$tune" --profile "$profile" --layout 16:8 -b 1K -e 1K -q --max-steps "$v" > /dev/null 2>&1
    [ $? -eq 2 ] || bad "--max-steps '$v' not refused with exit 2"
done
for v in 0 65 x ""; do
    "$tune" --profile "$profile" --layout 16:8 -b 1K -e 1K -q -j "$v" > /dev/null 2>&1
    [ $? -eq 2 ] || bad "-j '$v' not refused with exit 2"
done
[ $fail -eq 0 ] && echo "run_tune: left out: $(echo $left)"
exit $fail
