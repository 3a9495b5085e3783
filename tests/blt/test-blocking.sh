#!/bin/bash
# test-blocking.sh BUILD_DIR SCENARIO - a process-mode program whose
# blocking system calls run coupled to kernel contexts (tests/blt/blocking.c
# says what each scenario checks).  One node: the tasks share its
# descriptors.  Each scenario runs with the default idle policy, with
# UPVM_KC_WAIT=block, and with spin under taskset -c 0 (one CPU).
set -u
build=$(cd "$1" && pwd) || exit 2
scenario=$2
prog=$build/tests/blt/progs/blocking
[ -x "$prog" ] || { echo "no $prog: build first"; exit 1; }
fail() { echo "FAIL ($scenario): $*"; exit 1; }

run() {
    local out rc
    out=$(env UPVM_NODES=1 "$@" timeout 60 "$prog" "$scenario" 2>&1); rc=$?
    echo "$out"
    [ $rc -eq 0 ] || fail "exit status $rc ($*)"
    grep -q '^FAIL' <<<"$out" && fail "a check failed ($*)"
    [ "$(tail -n 1 <<<"$out")" = OK ] || fail "no OK at the end ($*)"
    return 0
}

if [ "$scenario" = migrate ]; then
    run UPVM_NODES=2
    run UPVM_NODES=2 UPVM_KC_WAIT=block
    echo "PASS ($scenario)"
    exit 0
fi
run UPVM_KC_WAIT=adaptive
run UPVM_KC_WAIT=block
run UPVM_KC_WAIT=spin taskset -c 0
# calls: also with two nodes (a coupled ULP's return wakes a node idling
# in its transport)
[ "$scenario" = calls ] && run UPVM_NODES=2
echo "PASS ($scenario)"
