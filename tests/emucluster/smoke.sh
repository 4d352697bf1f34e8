#!/usr/bin/env bash
# Smoke test of tools/emucluster: pccl-bench all-gather on 2 emulated nodes of
# 2 ranks at 1 Gbit/s.  Checks that pccl sees 2 nodes, that every result line
# checks ok, and that the run leaves no namespace, link, /etc/netns entry or
# temp dir behind; then that --mtu reaches a node's link (as the node's kernel
# reports it) and that a bad --mtu is refused.
#
# Usage: tests/emucluster/smoke.sh [PATH-TO-pccl-bench]
# Exit status: 0 pass, 1 fail, 77 skip (not root, no netns, no mpirun).

set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
emucluster="$here/../../tools/emucluster"
bench=${1:-$here/../../build/bin/pccl-bench}
limit_s=120
out=""

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; [[ -z $out ]] || printf '%s\n' "--- output:" "$out"; exit 1; }

check_requirements() {
    local probe="emcsmoke$$"
    [[ $(id -u) -eq 0 ]] || skip "not root"
    command -v mpirun >/dev/null || skip "mpirun not found"
    command -v ip >/dev/null || skip "ip (iproute2) not found"
    ip netns add "$probe" 2>/dev/null || skip "ip netns add not permitted"
    ip netns del "$probe"
    [[ -x $bench ]] || fail "pccl-bench not found at '$bench'"
}

# Runs emucluster in the background (to learn its PID, which names everything
# it creates) under a watchdog; sets out and pid, returns its exit status.
run_emucluster() {
    local log watchdog rc
    log=$(mktemp)
    "$emucluster" --nodes 2 --ranks-per-node 2 --rate-gbit 1 -- \
        "$bench" -c allgather -b 1K -e 64K -f 8 >"$log" 2>&1 &
    pid=$!
    # The watchdog kills its sleep when stopped, so that no process keeps
    # CTest's output pipe open.
    (
        trap 'kill "$nap" 2>/dev/null; exit 0' TERM
        sleep "$limit_s" & nap=$!
        wait "$nap" && kill -TERM "$pid" 2>/dev/null
    ) >/dev/null 2>&1 &
    watchdog=$!
    wait "$pid"; rc=$?
    kill "$watchdog" 2>/dev/null; wait "$watchdog" 2>/dev/null
    out=$(cat "$log"); rm -f "$log"
    return "$rc"
}

check_output() {
    grep -q "nranks 4  nnodes 2" <<<"$out" ||
        fail "header does not say 'nranks 4  nnodes 2'"
    local results bad
    results=$(grep -E '^ +[0-9]+ ' <<<"$out")
    [[ -n $results ]] || fail "no result lines"
    bad=$(awk '$NF != "ok"' <<<"$results")
    [[ -z $bad ]] || fail "result lines whose check is not ok: $bad"
}

check_clean() {     # PID of the emucluster run
    local id="emc$1-" left
    left=$(ip netns list | grep "^$id"; ip -o link show | grep "$id";
           ls -d /etc/netns/"$id"* /tmp/"emc$1".* 2>/dev/null)
    [[ -z $left ]] || fail "left behind: $left"
}

# The MTU a node's eth0 has, read inside the node by its kernel.
check_mtu() {
    local got
    got=$("$emucluster" --nodes 1 --ranks-per-node 1 --rate-gbit 1 --mtu 4000 -- \
          cat /sys/class/net/eth0/mtu 2>/dev/null)
    [[ $got == 4000 ]] || fail "--mtu 4000: the node's eth0 has MTU '$got'"
    out=$("$emucluster" --nodes 1 --ranks-per-node 1 --rate-gbit 1 --mtu 100 -- true 2>&1)
    rc=$?
    [[ $rc -eq 2 && $out == *"--mtu must be 576..65535"* ]] ||
        fail "--mtu 100 gave exit $rc, not 2 with a clear message"
    # 2^64 + 9000: bash arithmetic would wrap it around to 9000
    out=$("$emucluster" --nodes 1 --ranks-per-node 1 --rate-gbit 1 \
          --mtu 18446744073709560616 -- true 2>&1)
    rc=$?
    [[ $rc -eq 2 && $out == *"--mtu must be a positive integer below 10^9"* ]] ||
        fail "--mtu 2^64+9000 gave exit $rc, not 2 with a clear message"
    out=""
}

main() {
    local pid rc
    check_requirements
    run_emucluster; rc=$?
    [[ $rc -eq 0 ]] || fail "tools/emucluster exited with $rc"
    check_output
    check_clean "$pid"
    local sizes
    sizes=$(grep -cE '^ +[0-9]+ ' <<<"$out")
    check_mtu
    echo "PASS: $sizes sizes ok on 2 emulated nodes, nothing left behind; --mtu reaches the links"
}

main
