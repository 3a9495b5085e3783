#!/bin/bash
# test-migrate-node-death.sh BUILD_DIR - a move to a node that dies before
# it answers ends with PvmHostFail and its reason; the task stays, the job
# goes on, and no node process is left behind.
set -u
# These programs place their tasks themselves: no balancer moving them too
# (tests/gs runs them under one).
export UPVM_BALANCE=none
build=$(cd "$1" && pwd)
tmp=$(mktemp -d /tmp/upvm-migrate-death.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# deadmove.c, built with upvmcc by tests/migrate/CMakeLists.txt
cp "$build/tests/migrate/progs/deadmove" "$tmp/deadmove" || fail "no deadmove: build first (cmake --build $build)"

out=$(cd "$tmp" && UPVM_NODES=2 timeout 60 ./deadmove 2>&1); rc=$?
echo "$out"
[ $rc -ne 124 ] || fail "the job hung"
grep -q "^migrate: rc $(printf '%d' -22): node 1 died before it could take the task" <<<"$out" ||
    fail "the move did not end with PvmHostFail and its reason"
grep -q '^still on node 0$' <<<"$out" || fail "the task is not on node 0 any more"
grep -q '^task exit ok$' <<<"$out" || fail "no PvmTaskExit notification"
[ $rc -eq 0 ] || fail "the job exited $rc"
pgrep -f "$tmp/deadmove" >/dev/null && fail "node processes left behind"
echo "PASS"
