#!/usr/bin/env bash
# soak.sh [MINUTES] - hours of random jobs, not in CI: each round builds
# nothing new, it runs tests/soak/soak.c (built once with upvmcc) as a
# process-mode job of 2 to 4 nodes with random workers, checked messages
# and random moves, and in half the rounds kills a random node (not node 0)
# at a random moment.  Every round must end by itself with "SOAK OK"
# (soak.c checks its invariants: answers intact, every lost worker's
# PvmTaskExit came, moves refused only for a node's death) and exit status
# 0, with no process of the job and no file in /dev/shm or /tmp left.
# Prints a line per round and a summary; exits 1 at the first failure,
# keeping that round's output in the directory it names.
#   MINUTES (default 60); SEED (default: the time) makes a run repeatable;
#   BUILD (default build/) has the upvmcc to use.
set -u
cd "$(dirname "$0")/.."
minutes=${1:-60}
seed=${SEED:-$(date +%s)}
build=${BUILD:-build}
upvmcc=$build/tools/upvmcc/upvmcc
[ -x "$upvmcc" ] || { echo "soak.sh: no $upvmcc: build first (cmake --build $build)" >&2; exit 2; }
work=$(mktemp -d /tmp/upvm-soak.XXXXXX)
"$upvmcc" -O2 -o "$work/soak" tests/soak/soak.c || { echo "soak.sh: cannot build soak.c" >&2; exit 2; }
RANDOM=$((seed % 32768))
end=$((SECONDS + minutes * 60))
rounds=0 kills=0 sent=0 moves=0 refused=0 lost=0
shm_before=$(ls /dev/shm | sort)
echo "soak.sh: seed $seed, $minutes min, in $work"

fail() {
    echo "soak.sh: round $rounds FAILED: $*"
    echo "--- its output ($work/round.out):"; tail -40 "$work/round.out"
    pkill -9 -f "$work/[s]oak" 2>/dev/null
    exit 1
}

while [ $SECONDS -lt $end ]; do
    rounds=$((rounds + 1))
    nodes=$((2 + RANDOM % 3)) workers=$((1 + RANDOM % 24)) steps=$((1000 + RANDOM % 4000))
    rseed=$((RANDOM * 32768 + RANDOM)) kill_node=0
    [ $((RANDOM % 2)) -eq 0 ] && kill_node=$((1 + RANDOM % (nodes - 1)))
    mark=soakmark$rounds
    (cd "$work" && UPVM_NODES=$nodes exec timeout 300 "$work/soak" $rseed $steps $workers $mark \
        >"$work/round.out" 2>&1) &
    job=$!
    if [ $kill_node -gt 0 ]; then
        t0=$SECONDS
        until grep -q '^READY$' "$work/round.out"; do
            kill -0 $job 2>/dev/null || break
            [ $((SECONDS - t0)) -lt 60 ] || fail "no READY within 60 s"
            sleep 0.05
        done
        # a random moment of the run (a round takes ~1-10 s)
        sleep "0.$((RANDOM % 4))$((RANDOM % 10))"
        pid=$(sed -n "s/^node $kill_node pid \([0-9]*\)$/\1/p" "$work/round.out" | head -1)
        what="node $kill_node (no task there)"
        if [ -n "$pid" ] && kill -0 $job 2>/dev/null && kill -9 "$pid" 2>/dev/null; then
            kills=$((kills + 1))
            what="node $kill_node killed"
        elif [ -n "$pid" ]; then
            what="node $kill_node: the round ended first"
        fi
    else
        what="no kill"
    fi
    wait $job
    rc=$?
    [ $rc -ne 124 ] || fail "the job hung (300 s)"
    grep -q '^SOAK FAIL' "$work/round.out" && fail "an invariant broke"
    [ $rc -eq 0 ] || fail "exit status $rc (nodes $nodes, workers $workers, kill node $kill_node)"
    line=$(grep '^SOAK OK' "$work/round.out") || fail "no SOAK OK line"
    left=$(pgrep -f "$work/[s]oak" | tr '\n' ' ')
    t0=$SECONDS
    while [ -n "$left" ] && [ $((SECONDS - t0)) -lt 10 ]; do
        sleep 0.05
        left=$(pgrep -f "$work/[s]oak" | tr '\n' ' ')
    done
    [ -z "$left" ] || fail "processes left: $left"
    [ "$(ls /dev/shm | sort)" = "$shm_before" ] || fail "a file left in /dev/shm"
    for kv in sent moves refused lost; do
        v=$(sed -n "s/.* $kv=\([0-9]*\).*/\1/p" <<<"$line")
        eval "$kv=\$(( $kv + ${v:-0} ))"
    done
    echo "round $rounds: $nodes nodes, $workers workers, $what: $line"
done
rm -rf "$work"
echo "soak.sh: PASSED: $rounds rounds in $minutes min (seed $seed): $kills node(s) killed," \
     "$sent checked messages, $moves moves ($refused refused by a node's death)," \
     "$lost worker(s) lost with their node"
