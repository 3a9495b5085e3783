#!/bin/bash
# test-cxx.sh BUILD_DIR SCENARIO... - C++ PVM programs (docs/cxx.md), end
# to end, one scenario at a time: tasks.cc built with upvmcc and g++
# (process mode) and with g++ and libupvm (thread mode, tasks-threads),
# by tests/cxx/CMakeLists.txt into BUILD_DIR/tests/cxx/progs.
#
#   test-cxx.sh --list              the scenarios
#   test-cxx.sh BUILD_DIR NAME...   run those
set -u

SCENARIOS=(process run nodes uncaught uncaught-master new migrate migrate-run balance move-in-catch threads ulps)

if [ "${1:-}" = --list ]; then
    printf '%s\n' "${SCENARIOS[@]}"
    exit 0
fi
[ $# -ge 2 ] || { echo "usage: $0 BUILD_DIR SCENARIO... (--list)" >&2; exit 2; }
build=$(cd "$1" && pwd) || exit 2
shift
upvm=$build/tools/upvm/upvm
progs=$build/tests/cxx/progs
export UPVM_VM=off
tmp=""
trap '[ -z "$tmp" ] || rm -rf "$tmp"' EXIT
fail() { echo "FAIL ($scenario): $*"; exit 1; }

# In an ASan build the sanitizer's operator new is the one bound, not
# UPVM's: a C++ task's new'd objects are then the node's, and its moves
# are refused unless UPVM_CXX_MIGRATE=1 (docs/cxx.md)
asan=false
ldd "$build/src/libupvm.so" | grep -q libasan && asan=true

# A fresh directory holding copies of the programs named.
setup() {
    [ -z "$tmp" ] || rm -rf "$tmp"
    tmp=$(mktemp -d /tmp/upvm-cxx.XXXXXX) || exit 1
    local p
    for p in "$@"; do
        [ -x "$progs/$p" ] || fail "no $progs/$p: build first (cmake --build $build)"
        cp "$progs/$p" "$tmp/" || fail "cp $p"
    done
}

count() { grep -cE -- "$1" <<<"$out"; }

# The master's verdict: "master: N workers OK", COPIES times.
master_ok() { # $1: workers that report, $2: masters (default 1)
    [ "$(count "^master: $1 workers OK\$")" = "${2:-1}" ] || fail "no 'master: $1 workers OK': $out"
}

# Every worker's five iostream lines, each whole, once per master.
iostream_ok() { # $1: workers, $2: masters (default 1)
    local n=$1 copies=${2:-1} k i
    for ((k = 0; k < n; k++)); do
        for ((i = 0; i < 5; i++)); do
            [ "$(count "^worker $k writes line $i with iostream\$")" = "$copies" ] ||
                fail "worker $k's iostream line $i is not there $copies time(s), whole: $out"
        done
    done
}

# Process mode: each worker's global constructed once, its destructor and
# its function-local static's run at its end.
statics_ok() { # $1: workers whose statics end (the others ended by an exception)
    [ "$(count '^worker [0-9]+: global destroyed \(constructed 1 time\)$')" = "$1" ] ||
        fail "global destructors (constructed once) not $1: $out"
    [ "$(count '^worker [0-9]+: local static destroyed$')" = "$1" ] ||
        fail "function-local static destructors not $1: $out"
    [ "$(count 'constructed [02-9]')" = 0 ] || fail "a global constructed more than once: $out"
}

# ------------------------------------------------------------ scenarios

# ./tasks from the shell: 6 process-mode tasks throw and catch at once
sc_process() {
    setup tasks
    out=$(cd "$tmp" && timeout 60 ./tasks 6 2>&1); rc=$?
    [ $rc -eq 0 ] || fail "exit status $rc: $out"
    master_ok 6; iostream_ok 6; statics_ok 6
}

# upvm run: one master with 8 workers; two masters with 3 workers each
sc_run() {
    setup tasks
    out=$(cd "$tmp" && timeout 60 "$upvm" run ./tasks 8 2>&1); rc=$?
    [ $rc -eq 0 ] || fail "upvm run ./tasks 8: exit status $rc: $out"
    master_ok 8; iostream_ok 8; statics_ok 8
    out=$(cd "$tmp" && timeout 60 "$upvm" run -n 2 ./tasks 3 2>&1); rc=$?
    [ $rc -eq 0 ] || fail "upvm run -n 2 ./tasks 3: exit status $rc: $out"
    master_ok 3 2; iostream_ok 3 2; statics_ok 6
}

# a job of 3 nodes: the workers are spread over them (each node finds the
# C++ runtime when it first loads the program)
sc_nodes() {
    setup tasks
    out=$(cd "$tmp" && UPVM_NODES=3 timeout 60 ./tasks 9 2>&1); rc=$?
    [ $rc -eq 0 ] || fail "exit status $rc: $out"
    master_ok 9; iostream_ok 9; statics_ok 9
}

# worker 0 lets an exception escape: it alone ends, with a report naming
# it, the exception's type and what(); the master gets its PvmTaskExit
sc_uncaught() {
    setup tasks
    out=$(cd "$tmp" && timeout 60 ./tasks 6 uncaught 2>&1); rc=$?
    [ $rc -eq 0 ] || fail "exit status $rc: $out"
    [ "$(count '^upvm: ULP [0-9]+ \(tasks, PVM task t[0-9a-f]+\) ended by an uncaught C\+\+ exception of type WorkerError, what\(\): "worker 0: nobody catches this": the task ends with status 134')" = 1 ] ||
        fail "no single report of the uncaught exception: $out"
    master_ok 5; statics_ok 5
    [ "$(count '^worker 0 writes')" = 0 ] || fail "worker 0 went on after its exception: $out"
}

# the master's own uncaught exception: the job's exit status is 134
sc_uncaught-master() {
    setup tasks
    out=$(cd "$tmp" && timeout 60 ./tasks 3 uncaught-master 2>&1); rc=$?
    [ $rc -eq 134 ] || fail "exit status $rc, not 134: $out"
    master_ok 3
    grep -qE '^upvm: ULP [0-9]+ \(tasks[^)]*\) ended by an uncaught C\+\+ exception of type std::length_error, what\(\): "the master gives up"' <<<"$out" ||
        fail "no report of the master's exception: $out"
}

# operator new's forms in a task (tasks.cc's new_forms), on its heap; not
# in the ASan build, whose operator new is the sanitizer's
sc_new() {
    $asan && { echo "skip: the ASan build's operator new is not UPVM's"; exit 77; }
    setup tasks
    out=$(cd "$tmp" && UPVM_SLOT_SIZE=1G timeout 60 ./tasks 1 new 2>&1); rc=$?
    [ $rc -eq 0 ] || fail "exit status $rc: $out"
    grep -qx 'new: OK' <<<"$out" || fail "no 'new: OK': $out"
    grep -q 'called operator new: no room for 2048.00 GiB: its heap ends with its slot' <<<"$out" ||
        fail "no message naming the slot's end: $out"
}

# Each worker held its containers across both moves: the master printed
# what it sent, "worker K holds worker K started on node A ... | arrived on
# node B (move 1) | arrived on node C (move 2)", each node the next.
held_ok() { # $1: workers, $2: nodes
    local k a
    for ((k = 0; k < $1; k++)); do
        a=$(sed -nE "s/^master: worker $k holds worker $k started on node ([0-9]+) with 2\.5 \| .*/\1/p" <<<"$out")
        [ -n "$a" ] || fail "worker $k's containers did not come back: $out"
        grep -qx "master: worker $k holds worker $k started on node $a with 2\.5 | arrived on node $(((a + 1) % $2)) (move 1) | arrived on node $(((a + 2) % $2)) (move 2)" <<<"$out" ||
            fail "worker $k's containers do not name the nodes it moved through: $out"
    done
}

# each worker fills a string, a vector, a map and a new'd vector of
# strings, moves to the next node, checks and grows them, throws there,
# and moves on again; the master checks what it sends back.  In an ASan
# build (another operator new) the tasks move without containers, with
# UPVM_CXX_MIGRATE=1
sc_migrate() {
    setup tasks
    if $asan; then
        out=$(cd "$tmp" && UPVM_CXX_MIGRATE=1 UPVM_NODES=3 timeout 60 ./tasks 6 migrate-light 2>&1); rc=$?
    else
        out=$(cd "$tmp" && UPVM_NODES=3 timeout 60 ./tasks 6 migrate 2>&1); rc=$?
    fi
    [ $rc -eq 0 ] || fail "exit status $rc: $out"
    master_ok 6; iostream_ok 6; statics_ok 6
    $asan || held_ok 6 3
}

# the same under upvm run, whose nodes load the program's libraries before
# they fork (the same addresses in each: src/run/start.c)
sc_migrate-run() {
    $asan && { echo "skip: the ASan build's operator new is not UPVM's"; exit 77; }
    setup tasks
    out=$(cd "$tmp" && timeout 60 "$upvm" run --nodes 3 ./tasks 6 migrate 2>&1); rc=$?
    [ $rc -eq 0 ] || fail "exit status $rc: $out"
    master_ok 6; iostream_ok 6; statics_ok 6; held_ok 6 3
}

# the balancer moves C++ tasks: 6 workers on 2 nodes, the heavy ones
# together, each working on the containers it holds (tasks.cc's busy);
# the greedy policy every 20 ms must move some (UPVM_TRACE=balance) and
# every worker's numbers stay right.  In an ASan build it must move none
sc_balance() {
    setup tasks
    out=$(cd "$tmp" && UPVM_NODES=2 UPVM_BALANCE=greedy UPVM_BALANCE_PERIOD=20 \
          UPVM_BALANCE_THRESHOLD=1 UPVM_TRACE=balance timeout 60 ./tasks 6 balance 2>&1); rc=$?
    [ $rc -eq 0 ] || fail "exit status $rc: $out"
    master_ok 6; statics_ok 6
    local moves
    moves=$(count 'upvm-trace balance: t[0-9a-f]+ node[0-9]+ -> node[0-9]+ .*moved in')
    if $asan; then
        [ "$moves" = 0 ] || fail "the balancer moved C++ tasks with ASan's operator new: $out"
    else
        [ "$moves" -gt 0 ] || fail "the balancer moved no C++ task: $out"
    fi
}

# upvm_migrate of a task inside a catch block is refused, with the reason;
# after it the task moves (in an ASan build only with UPVM_CXX_MIGRATE=1,
# else refused naming the operator new bound)
sc_move-in-catch() {
    setup tasks
    local flag=UPVM_CXX_MIGRATE=0
    $asan && flag=UPVM_CXX_MIGRATE=1
    out=$(cd "$tmp" && env $flag UPVM_NODES=2 timeout 60 ./tasks 4 move-in-catch 2>&1); rc=$?
    [ $rc -eq 0 ] || fail "exit status $rc: $out"
    grep -q '^master: refused in a catch block: t[0-9a-f]* (tasks) is handling a C++ exception' <<<"$out" ||
        fail "no refusal naming the exception: $out"
    grep -q '^master: moved after the catch block$' <<<"$out" || fail "no move after: $out"
    $asan || return 0
    out=$(cd "$tmp" && UPVM_NODES=2 timeout 60 ./tasks 4 move-in-catch 2>&1); rc=$?
    [ $rc -eq 0 ] || fail "without UPVM_CXX_MIGRATE: exit status $rc: $out"
    grep -q '^master: not moved after the catch block: -24 t[0-9a-f]* (tasks) cannot move: its program links the C++ runtime (libstdc++), and the operator new bound in this node is not UPVM.s.*UPVM_CXX_MIGRATE=1' <<<"$out" ||
        fail "without UPVM_CXX_MIGRATE: no refusal naming the operator new: $out"
}

# thread mode: a C++ program linked with libupvm, UPVM_TASK workers
sc_threads() {
    setup tasks-threads
    out=$(cd "$tmp" && timeout 60 ./tasks-threads 6 2>&1); rc=$?
    [ $rc -eq 0 ] || fail "exit status $rc: $out"
    master_ok 6; iostream_ok 6
}

# thread mode without PVM: plain ULPs throw, yield and couple to kernel
# contexts inside their catch blocks, and rethrow their own exceptions
sc_ulps() {
    setup tasks-threads
    out=$(cd "$tmp" && timeout 60 ./tasks-threads 8 ulps 2>&1); rc=$?
    [ $rc -eq 0 ] || fail "exit status $rc: $out"
    grep -q '^ulps: 8 OK$' <<<"$out" || fail "no 'ulps: 8 OK': $out"
}

for scenario in "$@"; do
    declare -F "sc_$scenario" >/dev/null || { echo "unknown scenario $scenario" >&2; exit 2; }
    "sc_$scenario"
    echo "ok: $scenario"
done
