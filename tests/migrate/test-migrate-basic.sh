#!/bin/bash
# test-migrate-basic.sh BUILD_DIR CASE - a task moved around 3 nodes while
# it answers messages (pingmove); a task that moves itself with 8 MB of
# heap, the job's first task moves and its exit status comes back,
# refusals (selfmove).  --list: the cases; tests/migrate/CMakeLists.txt
# makes one ctest test of each.
set -u
# These programs place their tasks themselves: no balancer moving them too
# (tests/gs runs them under one).
export UPVM_BALANCE=none
CASES="pingmove selfmove"
[ "${1:-}" = --list ] && { printf '%s\n' $CASES; exit 0; }
[ $# -eq 2 ] && [[ " $CASES " = *" $2 "* ]] || { echo "usage: $0 BUILD_DIR {${CASES// /|}}" >&2; exit 2; }
build=$(cd "$1" && pwd)
case=$2
tmp=$(mktemp -d /tmp/upvm-migrate.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL ($case): $*"; exit 1; }
# $case.c, built with upvmcc by tests/migrate/CMakeLists.txt
cp "$build/tests/migrate/progs/$case" "$tmp/$case" || fail "no $case: build first (cmake --build $build)"

out=$(cd "$tmp" && UPVM_NODES=3 timeout 60 "./$case" 2>&1); rc=$?
echo "$out"
case $case in
pingmove)
    [ $rc -eq 0 ] || fail "pingmove exited $rc"
    grep -q '^sum 9800 ok 1$' <<<"$out" || fail "pingmove: wrong answers after migrations"
    grep -q '^moved to 2 (node_of 2)' <<<"$out" || fail "pingmove: node_of after a move"
    ;;
selfmove)
    [ $rc -eq 7 ] || fail "selfmove exited $rc, expected 7 (its first task's status, from node 1)"
    grep -q '^OK self' <<<"$out" || fail "selfmove: state not intact after moving itself"
    grep -q '^master: rc 0: on node 1$' <<<"$out" || fail "the first task did not move"
    grep -q 'with a file: rc -24: .*holds open files or sockets (fd [0-9]* /dev/null)' <<<"$out" ||
        fail "no refusal naming the open file"
    grep -q 'bad node: rc -2: t[0-9a-f]* cannot move to node 99: it is not a running node' <<<"$out" || fail "bad node"
    ;;
esac
echo "PASS"
