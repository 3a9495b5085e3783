#!/bin/bash
# test-balance.sh BUILD_DIR CASE - the global scheduler (src/gs) end to end.
#
#   lgs       tests/gs/lgs.c, an over-decomposed solver (16 VPs on a ring,
#             skewed work, a barrier each iteration) on 3 nodes: the same
#             checksum with no balancer and with every policy, which runs
#             every 20 ms with a 1 % threshold; the balancer moved tasks
#             (UPVM_TRACE=balance) and nothing was lost (the checksum)
#   fire      tests/migrate/fire.c (messages of every kind, groups,
#             barriers, multi-part protocols, every message checked) with
#             the greedy and comm balancers moving its workers: the same
#             results as with none
#   colocate  a 2-task ping-pong started on 2 nodes with the defaults: the
#             default policy (comm) puts the partner with its peer
#   vacate    lgs with 16 VPs on 2 nodes, one of them holding a file: `upvm
#             vacate node1` empties node 1 within 20 s but for that one,
#             which upvm top lists with its reason; `upvm restore node1`
#             lets the balancer put work there again (within 20 s)
# Bounds only catch hangs; no timing is asserted.
set -u
build=$(cd "$1" && pwd) || exit 2
case=$2
tmp=$(mktemp -d /tmp/upvm-gs.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
LIMIT=${GTEST_LIMIT:-90}
fail() { echo "FAIL ($case): $*"; exit 1; }

prog() { cp "$build/$1" "$tmp/" || fail "no $build/$1: build first"; }

# run LOG [VAR=VALUE...] COMMAND...: in $tmp, its output in LOG; the exit
# status is the command's (124: it hung).
run() {
    local log=$1
    shift
    (cd "$tmp" && timeout -k 5 "$LIMIT" env "$@") >"$log" 2>&1
}

moved() { grep -c 'upvm-trace balance: t[0-9a-f]* node[0-9]* -> node[0-9]* .*moved in' "$1"; }

case $case in
lgs)
    prog tests/gs/progs/lgs
    args=(./lgs -v 16 -i 60 -w 40000 -s 1 -b)
    run "$tmp/none.out" UPVM_NODES=3 UPVM_BALANCE=none "${args[@]}" || { cat "$tmp/none.out"; fail "lgs without a balancer"; }
    want=$(grep '^lgs ' "$tmp/none.out") || fail "no checksum: $(cat "$tmp/none.out")"
    echo "none: $want"
    total=0
    for p in greedy refine comm passive; do
        run "$tmp/$p.out" UPVM_NODES=3 UPVM_BALANCE=$p UPVM_BALANCE_PERIOD=20 \
            UPVM_BALANCE_THRESHOLD=1 UPVM_TRACE=balance "${args[@]}" ||
            { cat "$tmp/$p.out"; fail "lgs with $p exited $?"; }
        got=$(grep '^lgs ' "$tmp/$p.out")
        [ "$got" = "$want" ] || { cat "$tmp/$p.out"; fail "$p: '$got', without a balancer: '$want'"; }
        n=$(moved "$tmp/$p.out")
        echo "$p: $got ($n moves)"
        total=$((total + n))
    done
    [ "$total" -gt 0 ] || fail "no policy moved a task (UPVM_TRACE=balance said nothing)"
    ;;
fire)
    cp "$build/tests/migrate/progs/fire" "$tmp/" || fail "no fire: build first"
    export MTEST_SEED=${MTEST_SEED:-4242}
    run "$tmp/none.out" UPVM_NODES=3 UPVM_BALANCE=none ./fire nomig || { cat "$tmp/none.out"; fail "fire without a balancer"; }
    for p in greedy comm; do
        run "$tmp/$p.out" UPVM_NODES=3 UPVM_BALANCE=$p UPVM_BALANCE_PERIOD=20 \
            UPVM_BALANCE_THRESHOLD=1 UPVM_TRACE=balance ./fire nomig ||
            { cat "$tmp/$p.out"; fail "fire with $p exited"; }
        diff <(grep '^RESULT' "$tmp/none.out") <(grep '^RESULT' "$tmp/$p.out") ||
            fail "results differ with the $p balancer"
        [ "$(grep -c '^RESULT' "$tmp/$p.out")" -gt 2 ] || fail "no results"
        echo "$p: same results ($(moved "$tmp/$p.out") moves)"
    done
    ;;
colocate)
    prog tests/gs/progs/pair
    run "$tmp/out" UPVM_NODES=2 UPVM_TRACE=balance ./pair || { cat "$tmp/out"; fail "pair exited"; }
    cat "$tmp/out"
    grep -q '^together$' "$tmp/out" || fail "the partner was not put with its peer"
    ;;
vacate)
    prog tests/gs/progs/lgs
    upvm=$build/tools/upvm/upvm
    export XDG_RUNTIME_DIR=$tmp/rt # this job's control socket alone
    mkdir -m 700 "$XDG_RUNTIME_DIR"
    (cd "$tmp" && UPVM_NODES=2 exec timeout -k 5 "$LIMIT" ./lgs -v 16 -i 1000000 -w 20000 -f) \
        >"$tmp/out" 2>&1 &
    job=$!
    trap 'kill $job 2>/dev/null; wait $job 2>/dev/null; rm -rf "$tmp"' EXIT
    # node_tasks N: the tasks `upvm tasks` lists for node N
    node_tasks() {
        local n
        n=$("$upvm" tasks 2>/dev/null | sed -n "s/^node$1 pid [0-9]*: \([0-9]*\) task.*/\1/p")
        echo "${n:-0}"
    }
    until_true() { # until_true SECONDS WHAT COMMAND...: poll with a deadline
        local end=$((SECONDS + $1)) what=$2
        shift 2
        until "$@"; do
            [ $SECONDS -lt $end ] || fail "$what: not within the bound"
            kill -0 $job 2>/dev/null || fail "$what: the job ended: $(cat "$tmp/out")"
            sleep 0.1
        done
    }
    has_tasks() { [ "$(node_tasks 1)" -ge "$1" ]; }
    until_true 20 "the job's 16 VPs" has_tasks 8
    out=$("$upvm" vacate node1) || fail "vacate: $out"
    echo "$out"
    grep -q '^ok node1 vacated' <<<"$out" || fail "vacate said: $out"
    only_held() { [ "$(node_tasks 1)" -eq 1 ]; }
    t0=$SECONDS
    until_true 20 "node 1 emptied but for the VP holding a file" only_held
    echo "node 1 emptied in $((SECONDS - t0)) s or less"
    listed() { "$upvm" top --once 2>/dev/null | grep -q 'stays on node1: .*open'; }
    until_true 10 "upvm top lists the one that stays, with its reason" listed
    "$upvm" top --once | grep 'stays on node1' | tail -1
    out=$("$upvm" restore node1) || fail "restore: $out"
    echo "$out"
    until_true 20 "work back on node 1 after restore" has_tasks 3
    echo "after restore: $(node_tasks 1) tasks on node 1"
    kill $job 2>/dev/null
    wait $job 2>/dev/null
    ;;
*)
    echo "usage: $0 BUILD_DIR lgs|fire|colocate|vacate" >&2
    exit 2
    ;;
esac
echo "PASS ($case)"
