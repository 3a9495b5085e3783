#!/bin/bash
# test-migrate-stages.sh BUILD_DIR POINT VICTIM [OUTCOME] - a node dies in
# the middle of a move (tests/migrate/stages.c).  The job runs with
# UPVM_TEST_MIGRATE_PAUSE=POINT: the node that reaches POINT of the move
# stops itself (src/migrate/migrate.c, test_pause); then VICTIM (src: the
# move's source, node 1; dst: its destination, node 2) is killed, and the
# stopped node, if it is not the victim, goes on.  The job must end by
# itself with status 0, the worker alive on one node or lost with its
# PvmTaskExit (stages.c checks which and that they agree), OUTCOME (alive
# or lost) when given, no false deadlock, and no process left.
set -u
# These programs place their tasks themselves: no balancer moving them too
# (tests/gs runs them under one).
export UPVM_BALANCE=none
build=$(cd "$1" && pwd)
point=$2 victim=$3 want=${4:-}
tmp=$(mktemp -d /tmp/upvm-migrate-stages.XXXXXX)
job=
cleanup() {
    [ -n "$job" ] && kill -9 "$job" 2>/dev/null
    pkill -9 -f "$tmp/[s]tages" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
show() { echo "--- stdout"; cat "$tmp/out"; echo "--- stderr"; cat "$tmp/err"; }
fail() { show; echo "FAIL ($point, kill $victim): $*"; exit 1; }
cp "$build/tests/migrate/progs/stages" "$tmp/stages" || fail "no stages: build first"

# until COMMAND succeeds, at most $1 seconds
poll() {
    local end=$((SECONDS + $1))
    shift
    until "$@"; do
        [ $SECONDS -lt $end ] || return 1
        sleep 0.05
    done
}

# POINT "after-local": no pause; the worker starts beside main on node 0
# (stages.c local), and VICTIM dies once the move is over
if [ "$point" = after-local ]; then
    (cd "$tmp" && UPVM_NODES=3 exec timeout 90 "$tmp/stages" local >out 2>err) &
else
    (cd "$tmp" && UPVM_NODES=3 UPVM_TEST_MIGRATE_PAUSE=$point exec timeout 90 "$tmp/stages" >out 2>err) &
fi
job=$!
poll 30 grep -q "^pids node1=" "$tmp/out" || fail "the job did not start"
read -r p1 p2 < <(sed -n 's/^pids node1=\([0-9]*\) node2=\([0-9]*\)$/\1 \2/p' "$tmp/out")
if [ "$point" = after-local ]; then
    poll 30 grep -q "^migrate: " "$tmp/out" || fail "the move did not end"
    paused=none
else
    poll 30 grep -q "paused at $point" "$tmp/err" || fail "no node paused at $point"
    paused=$(sed -n "s/^upvm-test: node [0-9]* (pid \([0-9]*\)) paused at $point$/\1/p" "$tmp/err")
fi
case $victim in src) kill_pid=$p1 ;; dst) kill_pid=$p2 ;; *) fail "victim: src or dst" ;; esac
kill -9 "$kill_pid" || fail "cannot kill $kill_pid"
if [ "$paused" != "$kill_pid" ] && [ "$paused" != none ]; then
    poll 20 bash -c "! kill -0 $kill_pid 2>/dev/null" || fail "node $kill_pid did not die"
    kill -CONT "$paused"
fi
wait "$job"
rc=$?
job=
[ $rc -ne 124 ] || fail "the job hung"
grep -q "^INCONSISTENT" "$tmp/out" && fail "the worker's fate is inconsistent"
grep -q "^outcome: " "$tmp/out" || fail "no outcome"
grep -qi "deadlock" "$tmp/err" && fail "a false deadlock report"
if [ -n "$want" ]; then
    grep -q "^outcome: $want" "$tmp/out" || fail "the outcome is not '$want'"
fi
[ $rc -eq 0 ] || fail "the job exited $rc"
# ([s]: the pattern must not match the command line of the check itself)
poll 10 bash -c "! pgrep -f '$tmp/[s]tages' >/dev/null" || fail "processes of the job left behind"
show
echo "PASS ($point, kill $victim)"
