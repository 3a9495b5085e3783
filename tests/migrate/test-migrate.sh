#!/bin/bash
# test-migrate.sh BUILD_DIR CASE - migration of process-mode tasks between
# the nodes of a job (include/upvm.h, "migration"), end to end: programs
# built with the build tree's upvmcc (by tests/migrate/CMakeLists.txt),
# run as jobs of UPVM_NODES=3 nodes.
#
# CASE (tests/migrate/CMakeLists.txt makes one ctest test of each):
#   fire       fire.c: 12 workers exchange checked messages (every receive,
#              mcast, groups, multi-part protocols) while a driver task
#              moves them ~300 times; the results equal a run without
#              migration
#   pointers   pointers.c: a task moves itself through the nodes and finds
#              its heap (a list, a tree, 32 MB), globals, function pointers,
#              literals, stack frames, setjmp buffer intact
#   libc-alloc strings libc allocated (strdup, strndup, asprintf) before a
#              move are intact after it
#   state      state.c: a task moved four ways finds all its PVM and
#              process state as it was (see state.c)
#   stdio      half a line printed before a move, the rest after it: one
#              line, with and without output tagging
#   refuse     refuse.c: every refusal gives its error and reason and
#              changes nothing (thread mode, files, sockets, bad nodes and
#              tids)
#
# Every run is bounded (timeout): a hang fails the test with the output so
# far.  MTEST_SEED fixes the random choices of fire (printed otherwise).
set -u
# These programs place their tasks themselves: no balancer moving them too
# (tests/gs runs them under one).
export UPVM_BALANCE=none
build=$(cd "$1" && pwd)
case=$2
tmp=$(mktemp -d /tmp/upvm-migrate.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export UPVM_NODES=3
# Bounds that only catch hangs (the ASan build is several times slower).
LIMIT=${MTEST_LIMIT:-50}

fail() {
    echo "FAIL ($case): $*"
    exit 1
}

# The program NAME (NAME.c built with upvmcc by tests/migrate/CMakeLists.txt),
# copied into $tmp, where it runs.
build_prog() {
    cp "$build/tests/migrate/progs/$1" "$tmp/$1" || fail "no $1: build first (cmake --build $build)"
}

# run_prog LOG ARGS...: runs the program in $tmp with the time limit; the
# exit status is the program's (124: it hung).
run_prog() {
    local log=$1
    shift
    (cd "$tmp" && timeout -k 5 "$LIMIT" "$@") >"$log" 2>&1
}

case $case in
fire | fire-lazy)
    [ "$case" = fire-lazy ] && export MTEST_LAZY=1
    build_prog fire
    seed=${MTEST_SEED:-$(( $(date +%s%N) / 1000 % 1000000 ))}
    export MTEST_SEED=$seed
    run_prog "$tmp/nomig.out" ./fire nomig
    rc=$?
    cat "$tmp/nomig.out"
    [ $rc -eq 0 ] || fail "the run without migration exited $rc"
    run_prog "$tmp/mig.out" ./fire mig
    rc=$?
    cat "$tmp/mig.out"
    [ $rc -eq 0 ] || fail "the run with migration exited $rc (seed $seed: rerun with MTEST_SEED=$seed)"
    grep -q '^OK$' "$tmp/mig.out" || fail "no OK"
    diff <(grep '^RESULT' "$tmp/nomig.out") <(grep '^RESULT' "$tmp/mig.out") ||
        fail "the results differ with migration (seed $seed)"
    [ "$(grep -c '^RESULT' "$tmp/mig.out")" -gt 2 ] || fail "no results"
    ;;
pointers | libc-alloc)
    build_prog pointers
    mode=heap
    [ "$case" = libc-alloc ] && mode=libc
    run_prog "$tmp/out" ./pointers "$mode"
    rc=$?
    cat "$tmp/out"
    [ $rc -eq 0 ] || fail "pointers $mode exited $rc"
    grep -q '^OK$' "$tmp/out" || fail "no OK"
    ! grep -q '^FAIL' "$tmp/out" || fail "failed checks"
    ;;
state)
    build_prog state
    run_prog "$tmp/out" ./state
    rc=$?
    cat "$tmp/out"
    [ $rc -eq 0 ] || fail "state exited $rc"
    grep -q '^OK$' "$tmp/out" || fail "no OK"
    [ "$(grep -c '^S: move [1-4] .*: checked$' "$tmp/out")" = 4 ] || fail "not four moves"
    grep -q "^P: S's exit notified after its moves$" "$tmp/out" || fail "no exit notification"
    ! grep -q '^FAIL' "$tmp/out" || fail "failed checks"
    ;;
stdio)
    build_prog state
    bad=
    for tags in 0 1; do
        p=''
        [ $tags = 1 ] && p='\[t[0-9a-f]+\] '
        echo "---- UPVM_OUTPUT_TIDS=$tags"
        run_prog "$tmp/out" env UPVM_OUTPUT_TIDS=$tags ./state stdio
        rc=$?
        cat "$tmp/out"
        [ $rc -eq 0 ] || { bad="$bad; tags $tags: exited $rc"; continue; }
        # stdout: three whole lines, in order
        got=$(grep -E 'part-|line ' "$tmp/out")
        want=$(printf '%s\n' "part-one part-two (0)" "line two" "line three (0)")
        [ "$(sed -E "s/^$p//" <<<"$got")" = "$want" ] && [ "$(grep -cE "^$p" <<<"$got")" = 3 ] ||
            bad="$bad; tags $tags: stdout lines cut, lost or out of order"
        grep -qE "^${p}to stderr after a move \(0\)$" "$tmp/out" ||
            bad="$bad; tags $tags: stderr line cut or lost"
    done
    [ -z "$bad" ] || fail "${bad#; }"
    ;;
refuse)
    build_prog refuse
    mkdir -p "$tmp/files"
    run_prog "$tmp/out" ./refuse "$tmp/files"
    rc=$?
    cat "$tmp/out"
    [ $rc -eq 0 ] || fail "refuse exited $rc"
    grep -q '^OK$' "$tmp/out" || fail "no OK"
    ! grep -q '^FAIL' "$tmp/out" || fail "failed checks"
    ;;
*)
    fail "unknown case"
    ;;
esac
echo ok
