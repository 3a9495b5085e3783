#!/bin/bash
# test-proc.sh BUILD_DIR SCENARIO... - process-mode programs built with
# upvmcc, end to end, one scenario at a time.
#
#   test-proc.sh --list              the scenarios
#   test-proc.sh BUILD_DIR NAME...   run those (all: every one)
#
# tests/proc/CMakeLists.txt builds the programs once, with the build tree's
# upvmcc, into BUILD_DIR/tests/proc/progs, and makes one ctest test of each
# scenario (test-proc-NAME).  A scenario runs the programs it needs from a
# temporary directory of its own (they spawn copies of themselves by
# ./name), so scenarios may run in parallel.
set -u

SCENARIOS=(family refused run-spmd run-np coexist autoerr aborts run-usage bad-env
           map-limit map-limit-once heap-limit reuse pvm-path tag-output spmd-ring not-upvmcc
           upvmcc-show mpi-ranks run-hosts forks stray stack-limit stack-env stack-too-big
           bad-files crash-bad-call crash-null-call crash-overflow crash-bad-chain crash-lines
           catchout tag-tail join-all pvm-default-path hostfile-ep consecutive tls tls-cxx
           tls-refused shell-basic shell-pvm shell-overlap shell-stdin)

if [ "${1:-}" = --list ]; then
    printf '%s\n' "${SCENARIOS[@]}"
    exit 0
fi
[ $# -ge 2 ] || { echo "usage: $0 BUILD_DIR SCENARIO... (--list)" >&2; exit 2; }
build=$(cd "$1" && pwd) || exit 2
shift
cc=$build/tools/upvmcc/upvmcc
upvm=$build/tools/upvm/upvm
progs=$build/tests/proc/progs
tmp=""
trap '[ -z "$tmp" ] || rm -rf "$tmp"' EXIT
fail() { echo "FAIL ($scenario): $*"; exit 1; }

# A fresh directory holding copies of the programs named.
setup() {
    [ -z "$tmp" ] || rm -rf "$tmp"
    tmp=$(mktemp -d /tmp/upvm-proc.XXXXXX) || exit 1
    local p
    for p in "$@"; do
        [ -x "$progs/$p" ] || fail "no $progs/$p: build first (cmake --build $build)"
        cp "$progs/$p" "$tmp/" || fail "cp $p"
    done
}

# A marker no other process has in its command line: the job's programs
# get it as an argument, so that its processes (launcher, nodes, and any
# copy of a node) can be found by it.
new_marker() { marker="upvm-proc-marker-$$-$RANDOM$RANDOM"; }

# Once the job has ended, no process of it may remain: polled for up to
# 10 s (a killed process takes a moment to go).  Those found at the
# deadline (this test's own: the marker is unique) are killed, and it fails.
check_none_left() {
    local pids deadline=$((SECONDS + 10))
    while pids=$(pgrep -f -- "$marker"); do
        if [ $SECONDS -ge $deadline ]; then
            local seen
            seen=$(ps -o pid,ppid,stat,args -p "$(echo $pids | tr ' ' ,)" 2>&1)
            kill -9 $pids 2>/dev/null
            fail "processes of the job remain after it ended: $seen"
        fi
        sleep 0.05
    done
}

# ------------------------------------------------------------ scenarios

# the master started from the shell spawns copies of itself
sc_family() {
    setup family
    out=$(cd "$tmp" && timeout 20 ./family 2>&1); rc=$?
    echo "$out"
    [ $rc -eq 0 ] || fail "family exited $rc"
    grep -q '^OK$' <<<"$out" || fail "family did not report OK"
    [ "$(grep -c 'atexit handler ran' <<<"$out")" = 3 ] || fail "atexit handlers: $out"
}

# refused calls name the call and the ULP; exit() status is the job's
sc_refused() {
    setup refused
    out=$(cd "$tmp" && timeout 20 ./refused 2>&1); rc=$?
    echo "$out"
    [ $rc -eq 5 ] || fail "refused exited $rc, expected 5"
    for call in 'fork()' 'execv()' 'execlp()' 'pthread_create()' 'signal()'; do
        grep -q "upvm: ULP [0-9]* (refused.*) called $call" <<<"$out" || fail "no report for $call"
    done
}

# upvm run -n starts SPMD copies
sc_run-spmd() {
    setup refused
    out=$(cd "$tmp" && timeout 20 "$upvm" run -n 3 ./refused 2>&1); rc=$?
    [ $rc -eq 5 ] || fail "upvm run exited $rc"
    [ "$(grep -c 'refusals OK' <<<"$out")" = 3 ] || fail "upvm run -n 3: $out"
}

# thread-mode tasks of a process-mode program share that copy's globals
sc_coexist() {
    setup coexist
    out=$(cd "$tmp" && timeout 20 ./coexist 2>&1); rc=$?
    echo "$out"
    [ $rc -eq 0 ] || fail "coexist exited $rc"
}

# PvmAutoErr 2: the report, then exit(code) with the task's handlers
sc_autoerr() {
    setup autoerr
    out=$(cd "$tmp" && timeout 20 ./autoerr 2>&1); rc=$?
    [ $rc -eq 240 ] || fail "autoerr exited $rc, expected 240: $out"
    grep -q "pvm_freebuf(): No such buffer" <<<"$out" || fail "autoerr: no report: $out"
    grep -q "atexit handler ran" <<<"$out" || fail "autoerr: handler did not run: $out"
    ! grep -q "not reached" <<<"$out" || fail "autoerr: went on after the error"
}

# abort() ends only the task that calls it, with a line naming it
sc_aborts() {
    setup aborts
    out=$(cd "$tmp" && timeout 20 ./aborts 2>&1); rc=$?
    [ $rc -eq 0 ] || fail "aborts exited $rc: $out"
    grep -q "upvm: ULP [0-9]* (aborts.*) called abort(): the ULP ends with status 134" <<<"$out" \
        || fail "no abort report: $out"
    grep -q "master goes on" <<<"$out" || fail "the master did not go on: $out"
}

# upvm run -np N: mpirun's spelling of -n N
sc_run-np() {
    setup refused
    out=$(cd "$tmp" && timeout 20 "$upvm" run -np 3 ./refused 2>&1); rc=$?
    [ $rc -eq 5 ] || fail "upvm run -np 3 exited $rc: $out"
    [ "$(grep -c 'refusals OK' <<<"$out")" = 3 ] || fail "upvm run -np 3: $out"
}

# upvm run's usage errors
sc_run-usage() {
    setup
    out=$("$upvm" run 2>&1); [ $? -eq 2 ] && grep -q "no PROGRAM given" <<<"$out" || fail "upvm run without a program: $out"
    out=$("$upvm" run -n 0 ./x 2>&1); [ $? -eq 2 ] && grep -q "from 1 to 1000000" <<<"$out" || fail "upvm run -n 0: $out"
    out=$("$upvm" run --bogus ./x 2>&1); [ $? -eq 2 ] && [ "$out" = "upvm run: unknown option '--bogus' (see upvm help run)" ] || fail "upvm run --bogus: $out"
    out=$("$upvm" run -np 0 ./x 2>&1); [ $? -eq 2 ] && grep -q "^upvm run: -np wants a number of copies from 1 to 1000000" <<<"$out" || fail "upvm run -np 0: $out"
    out=$("$upvm" run -n 2>&1); [ $? -eq 2 ] && grep -q "^upvm run: -n wants a number of copies" <<<"$out" || fail "upvm run -n: $out"
    out=$(cd "$tmp" && "$upvm" run ./nosuch 2>&1); [ $? -eq 127 ] && grep -q "no such program" <<<"$out" || fail "upvm run ./nosuch: $out"
    out=$("$upvm" run --nodes 0 ./x 2>&1); [ $? -eq 2 ] && grep -q "from 1 to 32, or cores" <<<"$out" || fail "upvm run --nodes 0: $out"
    out=$("$upvm" run --placement diagonal ./x 2>&1); [ $? -eq 2 ] && grep -q "block or cyclic" <<<"$out" || fail "upvm run --placement diagonal: $out"
    out=$("$upvm" run --balance sometimes ./x 2>&1); [ $? -eq 2 ] && grep -q "none, greedy, refine, comm or passive" <<<"$out" || fail "upvm run --balance sometimes: $out"
    out=$("$upvm" frobnicate 2>&1); [ $? -eq 2 ] && grep -q "unknown command" <<<"$out" || fail "upvm frobnicate: $out"
    "$upvm" run --help | grep -q "usage: upvm run" || fail "upvm run --help"
}

# a bad UPVM_* setting of each kind refuses to start: its one line (the
# variable, the value, what it accepts, the default), exit status 2, and
# nothing of the program ran (no output); said once in a job of nodes
bad_setting() { # EXPECTED-LINE-PART VAR=VALUE... -- COMMAND...
    local want=$1 vars=() out err rc; shift
    while [ "$1" != -- ]; do vars+=("$1"); shift; done; shift
    err=$(env "${vars[@]}" timeout 20 "$@" 2>&1 >"$tmp/bad.out"); rc=$?
    [ $rc -eq 2 ] || fail "${vars[*]}: exit status $rc, expected 2: $err"
    [ ! -s "$tmp/bad.out" ] || fail "${vars[*]}: the program ran: $(cat "$tmp/bad.out")"
    [ "$(grep -c "" <<<"$err")" = 1 ] || fail "${vars[*]}: not one line: $err"
    grep -qF "$want" <<<"$err" || fail "${vars[*]}: said \"$err\", expected \"$want\""
}
sc_bad-env() {
    setup family
    local ip=$build/examples/pvm-inner-product
    bad_setting 'upvm: UPVM_NODES=abc: not a number from 1 to 32 or cores; refusing to start (unset it for the default, 1)' \
        UPVM_NODES=abc -- "$ip"
    bad_setting 'upvm: UPVM_PLACEMENT=diagonal: not cyclic or block; refusing to start (unset it for the default, cyclic)' \
        UPVM_NODES=2 UPVM_PLACEMENT=diagonal -- "$ip"
    bad_setting 'upvm: UPVM_NET_RING=12x: not a size (a byte count such as 65536, 256K, 4M; from 4K to 1G); refusing to start (unset it for the default, 1M)' \
        UPVM_NODES=2 UPVM_NET_RING=12x -- "$ip"
    # read at the start also where a job of one node would not use it
    bad_setting 'upvm: UPVM_BALANCE_PERIOD=1: not a number from 10 to 60000; refusing to start' \
        UPVM_NODES=1 UPVM_BALANCE_PERIOD=1 -- "$ip"
    bad_setting 'upvm: UPVM_WINDOW_BASE=banana: not an address (non-zero, a multiple of 0x1000, such as 0x200000000000); refusing to start (unset it for the default, 0x200000000000)' \
        UPVM_WINDOW_BASE=banana -- "$ip"
    bad_setting 'upvm: UPVM_WINDOW_BASE=0x7ffff0000000: no slot fits between it and 128 TiB' \
        UPVM_WINDOW_BASE=0x7ffff0000000 -- "$ip"
    bad_setting 'upvm: UPVM_TRACE=yes: not migrate, balance or all; refusing to start (unset it for the default, off)' \
        UPVM_TRACE=yes -- "$ip"
    # a process-mode program, alone and under upvm run
    bad_setting 'upvm: UPVM_SLOT_SIZE=3G: not a size (a power-of-two byte count such as 256M, 1G; from 64M to 1T); refusing to start (unset it for the default, 1G)' \
        UPVM_SLOT_SIZE=3G -- "$tmp/family"
    bad_setting 'upvm: UPVM_STACK_SIZE=lots: not a size' UPVM_STACK_SIZE=lots -- "$upvm" run "$tmp/family"
    bad_setting 'upvm: UPVM_ASLR=no: not keep; refusing to start (unset it for the default, off)' \
        UPVM_ASLR=no -- "$upvm" run "$tmp/family"
    bad_setting 'upvm: UPVM_KC_WAIT=nap: not adaptive, spin or block' UPVM_KC_WAIT=nap -- "$upvm" run --nodes 2 "$tmp/family"
}

# near the mapping limit a spawn is refused with the sysctl to run
sc_map-limit() {
    setup family
    out=$(cd "$tmp" && UPVM_MAP_LIMIT=1000 timeout 20 ./family 2>&1); rc=$?
    [ $rc -ne 0 ] || fail "family ran under a tiny mapping limit"
    grep -q "raise it, e.g. sudo sysctl -w vm.max_map_count=" <<<"$out" || fail "no map-limit advice: $out"
}

# the mapping limit in a job of two nodes: each node stops at it, and it is
# said once for the job (not by every refused spawn of every node)
sc_map-limit-once() {
    setup limits
    out=$(cd "$tmp" && UPVM_NODES=2 UPVM_MAP_LIMIT=3500 timeout 60 ./limits spawn 600 2>&1); rc=$?
    [ $rc -eq 0 ] || fail "limits spawn exited $rc: $out"
    local k
    k=$(sed -n 's/^started \([0-9]*\) of 600$/\1/p' <<<"$out")
    [ -n "$k" ] && [ "$k" -gt 0 ] && [ "$k" -lt 600 ] || fail "not stopped by the limit: $out"
    [ "$(grep -c 'vm.max_map_count' <<<"$out")" = 1 ] ||
        fail "the limit was said $(grep -c 'vm.max_map_count' <<<"$out") times: $(head -c 2000 <<<"$out")"
    grep -q "the most the kernel's limit of 3500 memory mappings per process allows .*(said once per job); raise it, e.g. sudo sysctl -w vm.max_map_count=" <<<"$out" ||
        fail "not the limit's line: $out"
}

# malloc at the end of a ULP's slot (64 MiB slots, to get there cheaply):
# NULL, and one line saying that the slot bounds the heap, and the setting
sc_heap-limit() {
    setup limits
    out=$(cd "$tmp" && UPVM_SLOT_SIZE=64M timeout 20 ./limits heap 4 2>&1); rc=$?
    [ $rc -eq 0 ] || fail "limits heap exited $rc: $out"
    [ "$(grep -c '^malloc NULL after [1-5][0-9] MiB$' <<<"$out")" = 2 ] || fail "malloc: $out"
    [ "$(grep -c 'its heap ends with its slot' <<<"$out")" = 1 ] ||
        fail "the slot's end was said $(grep -c 'its heap ends' <<<"$out") times: $out"
    grep -Eq "^upvm: ULP [0-9]+ \(limits, PVM task t[0-9a-f]+\) called malloc\(\): no room for 4 MiB: its heap ends with its slot \(UPVM_SLOT_SIZE=64M holds the program, its stack of 8 MiB and a heap of [0-9]+ MiB, [0-9]+ MiB of it in use\); give every slot more, e.g. UPVM_SLOT_SIZE=128M \(said once per ULP\)$" <<<"$out" ||
        fail "not the heap's line: $out"
}

# a reused slot starts from the program's initial state
sc_reuse() {
    setup reuse
    out=$(cd "$tmp" && timeout 20 ./reuse 2>&1); rc=$?
    echo "$out"
    [ $rc -eq 0 ] || fail "reuse exited $rc"
}

# spawn finds programs on PVM_PATH
sc_pvm-path() {
    setup family
    mkdir -p "$tmp/bin" && mv "$tmp/family" "$tmp/bin/fam"
    out=$(cd / && PVM_PATH="$tmp/bin" timeout 20 "$upvm" run fam 2>&1); rc=$?
    [ $rc -eq 0 ] || fail "PVM_PATH search: $rc $out"
}

# a plain ./master (one node per core) spawning 8 copies in one
# pvm_spawn: consecutive tids, spread over the nodes, one host
sc_consecutive() {
    setup consec
    local nodes
    for nodes in 1 2 3; do
        out=$(cd "$tmp" && UPVM_NODES=$nodes timeout 20 ./consec 2>&1); rc=$?
        [ $rc -eq 0 ] && grep -q '^OK$' <<<"$out" || fail "$nodes node(s): $rc $out"
        grep -q "^tids t40002\.\.t40009 on $nodes nodes, 1 host$" <<<"$out" || fail "$nodes node(s): $out"
    done
}

# thread-local variables: 1000 copies, each with its own (.tdata, .tbss, a
# 1 KiB array, a static one), across a yield, a kernel context and a
# migration; run as ./tls (the system's loader starts it) on 1 and 2 nodes
sc_tls() {
    setup tls
    # TLS_COPIES: fewer under ASan, where a migrated ULP costs tens of MiB
    # on its new node (tests/proc/CMakeLists.txt)
    local n=${TLS_COPIES:-1000}
    out=$(cd "$tmp" && UPVM_NODES=1 timeout 60 ./tls $n 2>&1); rc=$?
    [ $rc -eq 0 ] && grep -q "^tls $n copies OK, 0 moved\$" <<<"$out" || fail "1 node: $rc $out"
    out=$(cd "$tmp" && UPVM_NODES=2 timeout 60 ./tls $n 2>&1); rc=$?
    [ $rc -eq 0 ] && grep -q "^tls $n copies OK, $n moved\$" <<<"$out" || fail "2 nodes: $rc $out"
    out=$(cd "$tmp" && timeout 20 "$upvm" run -n 3 ./tls 10 2>&1); rc=$?
    [ $rc -eq 0 ] && grep -c '^tls 10 copies OK' <<<"$out" | grep -q '^3$' || fail "upvm run -n 3: $rc $out"
}

# C++ thread_local with a constructor (and a destructor: it runs at the
# ULP's exit), built by upvmcc with UPVM_CC=g++; skipped without g++
sc_tls-cxx() {
    command -v g++ >/dev/null || { echo "no g++: skipped"; exit 77; }
    setup
    cat >"$tmp/t.cc" <<'EOS'
#include <cstdio>
#include <upvm.h>
static int made;
struct Counter {
    int v;
    Counter() : v(100 + made++) {}
    ~Counter() { std::printf("dtor %d\n", v); }
};
thread_local Counter c;
int main()
{
    int *a = &c.v;
    c.v += 1;
    upvm_yield();
    upvm_couple();
    bool same = &c.v == a && c.v == 101;
    upvm_decouple();
    std::printf("tls cxx %d %s\n", c.v, same ? "same" : "DIFFERENT");
    return 0;
}
EOS
    UPVM_CC=g++ "$cc" -O2 -o "$tmp/t" "$tmp/t.cc" || fail "upvmcc with g++"
    out=$(cd "$tmp" && timeout 20 "$upvm" run -n 2 ./t 2>&1); rc=$?
    [ $rc -eq 0 ] && [ "$(grep -c '^tls cxx 101 same$' <<<"$out")" = 2 ] || fail "$rc $out"
    [ "$(grep -c '^dtor 101$' <<<"$out")" = 2 ] || fail "destructors: $out"
    out=$(cd "$tmp" && timeout 20 ./t 2>&1); rc=$?
    [ $rc -eq 0 ] && grep -q '^tls cxx 101 same$' <<<"$out" || fail "./t: $rc $out"
}

# what cannot be given per ULP is refused with the way out: a PIE with
# thread-local variables (local-exec), initial-exec, TLS descriptors
sc_tls-refused() {
    setup
    printf '#include <stdio.h>\n__thread int t = 1;\nint main(void){printf("RAN %%d\\n", t);return 0;}\n' >"$tmp/t.c"
    local how
    for how in "pie" "-ftls-model=initial-exec" "-mtls-dialect=gnu2"; do
        if [ "$how" = pie ]; then
            ${CC:-cc} -O2 -fPIC -pie -rdynamic -o "$tmp/t" "$tmp/t.c" || fail "cc $how"
        else
            "$cc" -O2 "$how" -o "$tmp/t" "$tmp/t.c" || fail "upvmcc $how"
        fi
        out=$(cd "$tmp" && timeout 20 "$upvm" run ./t 2>&1); rc=$?
        [ $rc -ne 0 ] && ! grep -q RAN <<<"$out" || fail "$how ran: $out"
        case $how in
            pie) grep -q "thread-local variables in a PIE.*rebuild it with upvmcc" <<<"$out" ;;
            -ftls*) grep -q "initial-exec thread-local access.*without" <<<"$out" ;;
            *) grep -q "TLS descriptors (-mtls-dialect=gnu2)" <<<"$out" ;;
        esac || fail "$how: $out"
    done
}

# PVM's default search path when PVM_PATH is not set (pvmd3(1), its
# DEFBINDIR): $HOME/pvm3/bin/$PVM_ARCH, then $PVM_ROOT/bin/$PVM_ARCH; a set
# PVM_PATH replaces it, as in PVM
sc_pvm-default-path() {
    setup spawnfile
    mkdir -p "$tmp/wd" "$tmp/home/pvm3/bin/LINUX64" "$tmp/home/pvm3/bin/OTHER" "$tmp/root/bin/LINUX64"
    cp "$tmp/spawnfile" "$tmp/home/pvm3/bin/LINUX64/tgt"
    cp "$tmp/spawnfile" "$tmp/home/pvm3/bin/OTHER/tgt2"
    cp "$tmp/spawnfile" "$tmp/root/bin/LINUX64/tgt3"
    local e="env -u PVM_PATH -u PVM_ARCH -u PVM_ROOT HOME=$tmp/home"
    out=$(cd "$tmp/wd" && $e timeout 20 ../spawnfile tgt 2>&1)
    grep -q "^spawn 1 " <<<"$out" && grep -q "^RAN$" <<<"$out" || fail "\$HOME/pvm3/bin/LINUX64 (PVM_ARCH unset): $out"
    out=$(cd "$tmp/wd" && $e PVM_ARCH=OTHER timeout 20 ../spawnfile tgt2 2>&1)
    grep -q "^spawn 1 " <<<"$out" && grep -q "^RAN$" <<<"$out" || fail "\$HOME/pvm3/bin/\$PVM_ARCH: $out"
    out=$(cd "$tmp/wd" && $e PVM_ROOT="$tmp/root" timeout 20 ../spawnfile tgt3 2>&1)
    grep -q "^spawn 1 " <<<"$out" && grep -q "^RAN$" <<<"$out" || fail "\$PVM_ROOT/bin/LINUX64: $out"
    out=$(cd "$tmp/wd" && $e PVM_PATH=/nonexistent timeout 20 ../spawnfile tgt 2>&1)
    grep -q "^spawn 0 -7$" <<<"$out" || fail "PVM_PATH set: the default path was searched too: $out"
    out=$(cd "$tmp/wd" && $e PVM_PATH='$HOME/pvm3/bin/${PVM_ARCH}' timeout 20 ../spawnfile tgt 2>&1)
    grep -q "^spawn 1 " <<<"$out" || fail "variables in PVM_PATH: $out"
    # upvm run looks the program up the same way
    cp "$tmp/spawnfile" "$tmp/home/pvm3/bin/LINUX64/sf"
    out=$(cd "$tmp/wd" && $e timeout 20 "$upvm" run sf ./nothing 2>&1); rc=$?
    [ $rc -eq 0 ] && grep -q "^spawn 0 -7$" <<<"$out" || fail "upvm run sf from \$HOME/pvm3/bin: $rc $out"
}

# a hostfile's ep= (and a "*" line's) is the host's search path: spawn
# finds the program there, before PVM_PATH, as PVM's pvmd does
sc_hostfile-ep() {
    [ -e "$build/src/libupvm-mpi.so" ] || { echo "SKIP: this build has no MPI transport"; exit 77; }
    setup spawnfile
    mkdir -p "$tmp/t" "$tmp/wd" "$tmp/ep1" "$tmp/ep2"
    export TMPDIR=$tmp/t
    cp "$tmp/spawnfile" "$tmp/ep1/tgt"
    cp "$tmp/spawnfile" "$tmp/ep2/tgt2"
    printf 'localhost slots=2 ep=/nonexistent:%s/ep1\n' "$tmp" >"$tmp/hf"
    out=$(cd "$tmp/wd" && PVM_PATH=/nonexistent timeout 60 "$upvm" run --hostfile ../hf ../spawnfile tgt 2>&1); rc=$?
    [ $rc -eq 0 ] && grep -q "^spawn 1 " <<<"$out" && grep -q "^RAN$" <<<"$out" || fail "ep=: $rc $out"
    ! grep -q "ep=.*ignored" <<<"$out" || fail "ep= said to be ignored: $out"
    printf '* ep=%s/ep2\nlocalhost slots=2\n' "$tmp" >"$tmp/hf"
    out=$(cd "$tmp/wd" && timeout 60 "$upvm" run --hostfile ../hf ../spawnfile tgt2 2>&1); rc=$?
    [ $rc -eq 0 ] && grep -q "^spawn 1 " <<<"$out" && grep -q "^RAN$" <<<"$out" || fail "* ep=: $rc $out"
    out=$(cd "$tmp/wd" && timeout 60 "$upvm" run --hostfile ../hf ../spawnfile tgt 2>&1); rc=$?
    grep -q "^spawn 0 -7$" <<<"$out" || fail "a program outside ep= was found: $rc $out"
}

# upvm_join_all waits for the ULPs of the program's own copy: the
# README's first program, built with upvmcc, ends with status 0 (not a
# false deadlock on the runtime's own ULP), in a one-node job and in one of
# two nodes; a PVM task's join does not wait for the tasks it spawned
sc_join-all() {
    setup joinall
    local nodes
    for nodes in 1 2; do
        out=$(cd "$tmp" && UPVM_NODES=$nodes timeout 20 ./joinall 2>&1); rc=$?
        [ $rc -eq 0 ] || fail "joinall ($nodes node(s)) exited $rc: $(tail -5 <<<"$out")"
        [ "$(grep -c '^ULP [0-9]* is worker' <<<"$out")" = 1000 ] || fail "not every worker ran: $(tail -5 <<<"$out")"
        grep -q '^joined 1000$' <<<"$out" || fail "join returned early: $(tail -5 <<<"$out")"
        out=$(cd "$tmp" && UPVM_NODES=$nodes timeout 20 ./joinall pvm 2>&1); rc=$?
        [ $rc -eq 0 ] || fail "joinall pvm ($nodes node(s)) exited $rc: $(tail -5 <<<"$out")"
        grep -q '^joined 100$' <<<"$out" || fail "the master's join: $(tail -5 <<<"$out")"
        grep -q '^joined 10$' <<<"$out" || fail "the child's join: $(tail -5 <<<"$out")"
        grep -q '^child 0$' <<<"$out" || fail "the child's result: $(tail -5 <<<"$out")"
    done
}

# output tagged with the task's tid
sc_tag-output() {
    setup family
    out=$(cd "$tmp" && timeout 20 "$upvm" run --tag-output ./family 2>&1); rc=$?
    [ $rc -eq 0 ] || fail "tagged family exited $rc: $out"
    grep -q '^\[t40001\] OK$' <<<"$out" || fail "master's line not tagged: $out"
    grep -q '^\[t4000[234]\] child 4[234]: atexit handler ran$' <<<"$out" || fail "children's lines not tagged: $out"
}

# the SPMD example of the README
sc_spmd-ring() {
    setup spmd-ring
    out=$(timeout 20 "$upvm" run -n 8 "$tmp/spmd-ring" 2>&1); rc=$?
    [ $rc -eq 0 ] && grep -q "token 36 (expected 36)" <<<"$out" || fail "spmd-ring: $rc $out"
}

# a program not built with upvmcc (refused.c by the plain compiler, not a
# PIE) is refused with the way out
sc_not-upvmcc() {
    setup nopie
    out=$(cd "$tmp" && timeout 20 "$upvm" run ./nopie 2>&1); rc=$?
    [ $rc -ne 0 ] || fail "a non-PIE ran"
    grep -q "upvmcc" <<<"$out" || fail "no advice to rebuild with upvmcc: $out"
}

# files that are not runnable programs: refused before anything runs,
# saying why (PVM: a file without x permission is PvmNoFile; a shell: 126)
sc_bad-files() {
    setup family spawnfile
    chmod 644 "$tmp/family"
    out=$(cd "$tmp" && timeout 20 "$upvm" run ./family 2>&1); rc=$?
    [ $rc -eq 126 ] || fail "upvm run of a mode-0644 file exited $rc: $out"
    grep -q "upvm run: ./family: not executable" <<<"$out" || fail "no 'not executable': $out"
    ! grep -q "OK" <<<"$out" || fail "the mode-0644 program ran: $out"
    local f
    for f in ./family family "$tmp/family"; do
        out=$(cd "$tmp" && timeout 20 ./spawnfile "$f" 2>&1); rc=$?
        [ $rc -eq 0 ] && grep -q "^spawn 0 -7$" <<<"$out" || fail "pvm_spawn($f) of a mode-0644 file: $out"
    done
    chmod 755 "$tmp/family"
    out=$(cd "$tmp" && timeout 20 ./spawnfile ./spawnfile 2>&1)
    grep -q "^spawn 1 " <<<"$out" && grep -q "^RAN$" <<<"$out" || fail "pvm_spawn of a program: $out"
    # -static-pie: refused as statically linked, not for its C library's TLS
    printf '#include <stdio.h>\nint main(void){puts("RAN");return 0;}\n' >"$tmp/sp.c"
    if ${CC:-cc} -O2 -static-pie -rdynamic -o "$tmp/sp" "$tmp/sp.c" 2>/dev/null; then
        out=$(cd "$tmp" && timeout 20 "$upvm" run ./sp 2>&1); rc=$?
        [ $rc -ne 0 ] || fail "a -static-pie program ran: $out"
        ! grep -q "^RAN$" <<<"$out" || fail "a -static-pie program ran: $out"
        grep -q "statically linked (-static-pie).*upvmcc" <<<"$out" || fail "-static-pie: $out"
        ! grep -q "thread-local" <<<"$out" || fail "-static-pie refused for TLS: $out"
    else
        echo "no static C library here: -static-pie not checked"
    fi
}

# upvmcc -show prints the command it would run: position-independent code
sc_upvmcc-show() {
    "$cc" -show -o x x.c | grep -q -- "-fPIC" || fail "upvmcc -show"
}

# a launcher's variables say 3 ranks, but MPI sees a job of one (no mpirun:
# each process alone, as when one MPI's launcher starts a program built
# with another): every rank refuses, rank 0 says why, instead of K
# separate jobs each running the whole program (mpirun itself: the
# pvm-examples-mpi test)
sc_mpi-ranks() {
    setup family
    local vars
    for vars in "OMPI_COMM_WORLD_SIZE=3 OMPI_COMM_WORLD_RANK" "PMI_SIZE=3 PMI_RANK" \
                "SLURM_STEP_NUM_TASKS=3 SLURM_PROCID"; do
        out=$(cd "$tmp" && env ${vars}=0 timeout 20 ./family 2>&1); rc=$?
        [ $rc -eq 2 ] || fail "$vars=0: exited $rc, expected 2: $out"
        grep -q "rank 0 of 3 started by .*cannot join into one job" <<<"$out" || fail "$vars=0: $out"
        ! grep -q '^OK$' <<<"$out" || fail "$vars=0: the program ran"
        out=$(cd "$tmp" && env ${vars}=2 timeout 20 ./family 2>&1); rc=$?
        [ $rc -eq 2 ] && [ -z "$out" ] || fail "$vars=2: exited $rc, said: $out"
        out=$(cd "$tmp" && env ${vars}=2 timeout 20 "$upvm" run ./family 2>&1); rc=$?
        [ $rc -eq 2 ] || fail "upvm run as $vars=2: exited $rc: $out"
    done
    # one rank of one: an ordinary job
    out=$(cd "$tmp" && OMPI_COMM_WORLD_SIZE=1 OMPI_COMM_WORLD_RANK=0 timeout 20 ./family 2>&1)
    grep -q '^OK$' <<<"$out" || fail "a job of one rank did not run: $out"
}

# upvm run --hosts / --hostfile: one job of MPI ranks started by the
# mpirun it names (here on this host, twice: two nodes, two ranks)
sc_run-hosts() {
    [ -e "$build/src/libupvm-mpi.so" ] || { echo "SKIP: this build has no MPI transport"; exit 77; }
    setup family
    mkdir "$tmp/t"
    export TMPDIR=$tmp/t # where upvm run writes mpirun's hostfile
    out=$(cd "$tmp" && timeout 60 "$upvm" run --hosts localhost:2 ./family 2>&1); rc=$?
    echo "$out"
    [ $rc -eq 0 ] || fail "upvm run --hosts exited $rc"
    grep -q '^upvm run: starting the job with: .*mpirun.* --hostfile .*/upvm run -- ./family$' \
        <<<"$out" || fail "the mpirun command was not said"
    grep -q '^OK$' <<<"$out" || fail "family did not report OK"
    [ "$(grep -c 'atexit handler ran' <<<"$out")" = 3 ] || fail "atexit handlers: $out"
    # PVM's hostfile syntax: options that mean nothing here are said, once
    printf '# two nodes here\n* lo=me\nlocalhost dx=/usr/lib/pvm3/lib/pvmd3\nlocalhost sp=1000\n' \
        >"$tmp/hostfile"
    out=$(cd "$tmp" && timeout 60 "$upvm" run --hostfile hostfile ./family 2>&1); rc=$?
    echo "$out"
    [ $rc -eq 0 ] && grep -q '^OK$' <<<"$out" || fail "upvm run --hostfile exited $rc"
    for o in lo= dx= sp=; do
        [ "$(grep -c "hostfile:[0-9]*: $o.* ignored" <<<"$out")" = 1 ] || fail "$o not said once"
    done
    ls "$TMPDIR"/upvm-hosts.* 2>/dev/null && fail "a hostfile was left in \$TMPDIR"
    # the plugin missing: every rank refuses, rank 0 says why (never 2 jobs)
    out=$(cd "$tmp" && UPVM_MPI_PLUGIN=/nonexistent/libupvm-mpi.so timeout 60 "$upvm" run \
        --hosts localhost:2 ./family 2>&1); rc=$?
    echo "$out"
    [ $rc -ne 0 ] && grep -q "cannot load UPVM's MPI transport (/nonexistent/libupvm-mpi.so)" <<<"$out" &&
        grep -q "libupvm-mpi.so beside libupvm.so, could not be loaded" <<<"$out" ||
        fail "a missing plugin: exit $rc: $out"
    ! grep -q '^OK$' <<<"$out" || fail "the program ran without its plugin"
    printf 'localhost slots=0\n' >"$tmp/badslots"
    out=$("$upvm" run --hostfile "$tmp/badslots" ./family 2>&1); rc=$?
    [ $rc -eq 2 ] && grep -q "badslots:1: slots=0: slots= wants a count from 1 to 4096" <<<"$out" ||
        fail "a bad slots=: $rc: $out"
    out=$(cd "$tmp" && UPVM_MPIRUN=/nonexistent/mpirun "$upvm" run --hosts localhost ./family 2>&1); rc=$?
    [ $rc -eq 127 ] && grep -q "cannot run /nonexistent/mpirun: No such file or directory (set UPVM_MPIRUN to your MPI's mpirun)" <<<"$out" ||
        fail "a missing mpirun: $rc: $out"
    out=$("$upvm" run --hosts 'a,,b' ./family 2>&1); rc=$?
    [ $rc -eq 2 ] && grep -q "is not a host" <<<"$out" || fail "a bad --hosts: $rc: $out"
    out=$("$upvm" run --hostfile "$tmp/none" ./family 2>&1); rc=$?
    [ $rc -eq 2 ] && grep -q "none: No such file" <<<"$out" || fail "a missing --hostfile: $rc: $out"
}

# every call that would fork the node is refused, by name (daemon(),
# syscall(SYS_fork), ...), the job ends normally and leaves no process
sc_forks() {
    setup forks
    new_marker
    (cd "$tmp" && timeout 20 ./forks "$marker" >"$tmp/out" 2>&1); rc=$?
    out=$(cat "$tmp/out")
    echo "$out"
    check_none_left
    [ $rc -eq 0 ] || fail "forks exited $rc, expected 0"
    grep -q '^forks OK$' <<<"$out" || fail "forks did not report OK"
    grep -q '^write passed$' <<<"$out" || fail "syscall(SYS_write) did not pass"
    for call in 'daemon()' 'syscall(SYS_fork)' 'syscall(SYS_vfork)' 'syscall(SYS_clone)' \
                'syscall(SYS_clone3)' 'syscall(SYS_execve)' '_Fork()' '__fork()' '__vfork()' 'forkpty()' 'clone()' '__clone()'; do
        grep -qF "called $call: not supported in a process-mode ULP" <<<"$out" || fail "no report for $call"
    done
    grep -q "upvm: ULP [0-9]* (forks, PVM task t[0-9a-f]*) called daemon()" <<<"$out" \
        || fail "the report does not name the ULP and its task"
}

# a fork that no refusal sees (made by the syscall instruction) leaves a
# copy of the node holding the job's output: the job ends all the same and
# ends it, with one node (the node does) and with two (the launcher does)
sc_stray() {
    setup stray
    local nodes
    for nodes in 1 2; do
        new_marker
        (cd "$tmp" && UPVM_NODES=$nodes timeout 20 ./stray "$marker" >"$tmp/out" 2>&1); rc=$?
        out=$(cat "$tmp/out")
        echo "$out"
        check_none_left
        [ $rc -eq 0 ] || fail "UPVM_NODES=$nodes: stray exited $rc, expected 0"
        grep -q "the parent goes on" <<<"$out" || fail "UPVM_NODES=$nodes: the parent did not go on"
    done
}

# a task's stack is the stack limit, as a process's: 12 MiB of recursion
# overflows 8 MiB with the advice to raise it, and fits under ulimit -s 16384,
# also after the task has moved to another node
sc_stack-limit() {
    setup deepstack
    out=$(cd "$tmp" && ulimit -s 8192 && timeout 20 ./deepstack 12 2>&1); rc=$?
    [ $rc -ne 0 ] || fail "12 MiB of recursion ran in an 8 MiB stack: $out"
    grep -q "overflowed its stack of 8 MiB:" <<<"$out" || fail "no overflow report: $out"
    grep -q "start the job with UPVM_STACK_SIZE=32M, or with a stack limit of that (ulimit -s 32768)" <<<"$out" \
        || fail "the advice does not name the knobs of process mode: $out"
    out=$(cd "$tmp" && ulimit -s 16384 && timeout 20 ./deepstack 12 2>&1); rc=$?
    [ $rc -eq 0 ] && grep -q "deep OK" <<<"$out" || fail "ulimit -s 16384: $rc $out"
    out=$(cd "$tmp" && timeout 20 bash -c 'ulimit -s 16384; exec "$0" run ./deepstack 12' "$upvm" 2>&1); rc=$?
    [ $rc -eq 0 ] && grep -q "deep OK" <<<"$out" || fail "upvm run under ulimit -s 16384: $rc $out"
    # the stack keeps its size when the task moves to another node
    out=$(cd "$tmp" && ulimit -s 16384 && UPVM_NODES=2 timeout 20 ./deepstack 12 move 2>&1); rc=$?
    [ $rc -eq 0 ] && grep -q "deep OK on node 1" <<<"$out" || fail "12 MiB after a move: $rc $out"
}

# UPVM_STACK_SIZE sets a task's stack, whatever the stack limit
sc_stack-env() {
    setup deepstack
    out=$(cd "$tmp" && ulimit -s 8192 && UPVM_STACK_SIZE=16M timeout 20 ./deepstack 12 2>&1); rc=$?
    [ $rc -eq 0 ] && grep -q "deep OK" <<<"$out" || fail "UPVM_STACK_SIZE=16M: $rc $out"
    out=$(cd "$tmp" && ulimit -s 65536 && UPVM_STACK_SIZE=4M timeout 20 ./deepstack 12 2>&1); rc=$?
    [ $rc -ne 0 ] && grep -q "overflowed its stack of 4 MiB:" <<<"$out" || fail "UPVM_STACK_SIZE=4M under ulimit -s 65536: $rc $out"
}

# a stack a slot cannot hold is refused at the spawn, naming the limit and
# what to change
sc_stack-too-big() {
    setup deepstack
    out=$(cd "$tmp" && UPVM_STACK_SIZE=1G timeout 20 ./deepstack 1 2>&1); rc=$?
    [ $rc -ne 0 ] || fail "a 1 GiB stack in a 1 GiB slot: $out"
    grep -q "a stack of 1 GiB (UPVM_STACK_SIZE) does not fit a slot of 1 GiB (UPVM_SLOT_SIZE): beside the program's image and a heap it holds at most 1023 MiB of stack; ask for less with UPVM_STACK_SIZE, or raise UPVM_SLOT_SIZE" <<<"$out" \
        || fail "UPVM_STACK_SIZE=1G: no refusal naming the limit: $out"
    out=$(cd "$tmp" && ulimit -s 2097152 && timeout 20 ./deepstack 1 2>&1); rc=$?
    [ $rc -ne 0 ] && grep -q "a stack of 2 GiB (ulimit -s) does not fit a slot of 1 GiB" <<<"$out" \
        || fail "ulimit -s 2097152: $rc $out"
    out=$(cd "$tmp" && ulimit -s 2097152 && UPVM_SLOT_SIZE=4G timeout 20 ./deepstack 1 2>&1); rc=$?
    [ $rc -eq 0 ] && grep -q "deep OK" <<<"$out" || fail "a 2 GiB stack in a 4 GiB slot: $rc $out"
}

# A crash of a process-mode program (crashes.c CASE): the report is
# complete (its last line is its own: the reporter did not fault), and
# the node ends with 139 (128 + SIGSEGV).  crash_report CASE sets $out.
crash_report() {
    local prog=${2:-crashes}
    setup "$prog"
    out=$(cd "$tmp" && timeout 20 "./$prog" "$1" 2>&1); rc=$?
    echo "$out"
    [ $rc -eq 139 ] || fail "crashes $1 exited $rc, expected 139"
    [ "$(tail -n 1 <<<"$out")" = "upvm: the node ends with exit status 139." ] ||
        fail "the report of $1 does not end with its own last line"
    ! grep -q "the crash report itself failed" <<<"$out" || fail "the reporter faulted"
    grep -q "backtrace of ULP [0-9]*, innermost first:" <<<"$out" || fail "no backtrace"
}

# a call through a pointer to an unmapped address: where it came from
sc_crash-bad-call() {
    crash_report bad-call
    grep -q "crashed: jumped to 0x1fff000010c0, which is not mapped: a call through a bad function pointer\.$" <<<"$out" ||
        fail "no line naming the bad address"
    grep -q "^upvm: called from bad_caller+0x[0-9a-f]* (crashes+0x[0-9a-f]*)$" <<<"$out" ||
        fail "no 'called from' line naming bad_caller"
    grep -q "#0  0x1fff000010c0 ?? (no code here)" <<<"$out" || fail "frame #0 is not the bad address"
    grep -q "main+0x" <<<"$out" || fail "the backtrace does not reach main"
}

# a call through NULL: the program's caller, not UPVM's ULP start
sc_crash-null-call() {
    crash_report null-call
    grep -q "crashed: jumped to 0x0 (NULL), which is not mapped: a call through a NULL function pointer\.$" <<<"$out" ||
        fail "no line naming NULL"
    grep -q "^upvm: called from bad_caller+0x[0-9a-f]* (crashes+0x[0-9a-f]*)$" <<<"$out" ||
        fail "no 'called from' line naming bad_caller"
}

# endless recursion overflows the ULP's stack (in its slot)
sc_crash-overflow() {
    crash_report overflow
    grep -q "overflowed its stack of 8 MiB" <<<"$out" || fail "no overflow report"
    grep -q "recurse+0x[0-9a-f]* (crashes+0x[0-9a-f]*).*(this frame [0-9]* times)" <<<"$out" ||
        fail "the recursion is not in the backtrace"
}

# a corrupt frame-pointer chain ends the backtrace with a line, no fault
sc_crash-bad-chain() {
    crash_report bad-chain
    grep -q "crashed: invalid memory access at 0x10 " <<<"$out" || fail "no crash line"
    grep -q "chain_breaker+0x" <<<"$out" || fail "no frame of chain_breaker"
    grep -q -- "-- the backtrace ends: the frame at 0x[0-9a-f]* links to 0x1fff00000000, which is not a frame further up" <<<"$out" ||
        fail "no line saying where the chain breaks"
}

# a program built with -g: each frame of the program names its source line
# (addr2line on the program's file, at the frame's address in it), the
# innermost the faulting statement, the next the call in its caller
sc_crash-lines() {
    crash_report bad-chain crashes-g
    local src
    src=$(cd "$(dirname "$0")" && pwd)/crashes.c
    fault=$(grep -n '^    \*p = 1;$' "$src" | cut -d: -f1)
    call=$(grep -n '^    chain_breaker(p);$' "$src" | cut -d: -f1)
    grep -q "#0  0x[0-9a-f]* chain_breaker+0x[0-9a-f]* (crashes-g+0x[0-9a-f]*) at crashes.c:$fault$" <<<"$out" ||
        fail "frame #0 does not name chain_breaker at crashes.c:$fault"
    grep -q "#1  0x[0-9a-f]* chain_middle+0x[0-9a-f]* (crashes-g+0x[0-9a-f]*) at crashes.c:$call$" <<<"$out" ||
        fail "frame #1 does not name chain_middle at crashes.c:$call (the call)"
    ! grep -q "addr2line" <<<"$out" || fail "a command to run by hand, though addr2line ran"
}

# pvm_catchout: caught output is carried to the catcher and written there,
# framed as genuine PVM 3.4.6 frames it (tests/pvm-reference: p13, p17),
# the catcher and its writers on one node or on different ones.  Tids
# differ with the number of nodes: they are named in the order they first
# appear ([T1], [T2], ...).
name_tids() {
    awk '{ out = ""; s = $0
           while (match(s, /\[t[0-9a-f]+\]/)) {
               t = substr(s, RSTART, RLENGTH)
               if (!(t in n)) n[t] = "[T" (++k) "]"
               out = out substr(s, 1, RSTART - 1) n[t]; s = substr(s, RSTART + RLENGTH)
           }
           print out s }'
}
sc_catchout() {
    setup catchout
    # genuine PVM's lines (p13, p17), the sections and the file's dashes ours
    local want='## print
[T1] BEGIN
[T1] stdout line 1 from child
[T1] stdout line 2 from child
[T1] partial line without newlinestderr line from child
[T1] EOF
## last
[T2] BEGIN
[T2] one
[T2] last without newline
[T2] EOF
## err
[T3] BEGIN
[T3] only stderr
[T3] EOF
## empty
[T4] BEGIN
[T4] a
[T4] 
[T4] b
[T4] EOF
## after
[T5] BEGIN
[T5] before exit
[T5] after exit
[T5] after exit, no newline
[T5] EOF
## grand
[T6] BEGIN
[T6] child before spawning grandchild
[T7] BEGIN
[T7] stdout line 1 from child
[T7] stdout line 2 from child
[T7] partial line without newlinestderr line from child
[T7] EOF
[T6] EOF
## file
-----
[T8] BEGIN
[T8] one
[T8] last without newline
[T8] EOF
-----
## notids
stdout line 1 from child
stdout line 2 from child
partial line without newlinestderr line from child
## slow
[T9] BEGIN
[T9] slow line
[T9] EOF
## killed
[T10] BEGIN
[T10] EOF
## drop
[T11] BEGIN
## stop
a

b
## end'
    local n
    for n in 1 2 3; do
        out=$(cd "$tmp" && UPVM_NODES=$n timeout 30 ./catchout 2>"$tmp/err"); rc=$?
        [ $rc -eq 0 ] || fail "UPVM_NODES=$n: exited $rc: $out $(cat "$tmp/err")"
        got=$(name_tids <<<"$out")
        [ "$got" = "$want" ] || fail "UPVM_NODES=$n: caught output differs:
$(diff <(echo "$want") <(echo "$got"))"
        # said when caught tasks still run at pvm_exit (the slow one does)
        grep -q '^libpvm \[t[0-9a-f]*\]: child task(s) still running\.  waiting\.\.\.$' "$tmp/err" ||
            fail "UPVM_NODES=$n: no waiting line: $(cat "$tmp/err")"
        # tagged as well: the catcher's own lines carry its tag
        out=$(cd "$tmp" && UPVM_NODES=$n UPVM_OUTPUT_TIDS=1 timeout 30 ./catchout 2>/dev/null)
        grep -q '^\[t[0-9a-f]*\] \[t[0-9a-f]*\] partial line without newlinestderr line from child$' <<<"$out" ||
            fail "UPVM_NODES=$n, tagged: $out"
    done
}

# tagged output: every line has the tag of the task that wrote it, also
# after pvm_exit and a last line without a newline; no newline is added
# that the program did not write, except in front of a tag that follows
# such a line
sc_tag-tail() {
    setup catchout
    (cd "$tmp" && UPVM_NODES=1 timeout 20 "$upvm" run --tag-output ./catchout -tagtail >"$tmp/out" 2>&1) ||
        fail "tagtail exited $?: $(cat "$tmp/out")"
    printf '[t40001] master line\n[t40002] child partial\n[t40001] after exit\n[t40001] no newline at end' >"$tmp/want"
    cmp -s "$tmp/want" "$tmp/out" || fail "tagged output differs: $(od -c "$tmp/out" | head -20)"
}

# system(), popen/pclose and posix_spawn from a ULP: statuses, exact
# bytes, the ULP's environment; the command's own output comes out too
sc_shell-basic() {
    setup shell
    out=$(cd "$tmp" && UPVM_NODES=1 timeout 30 ./shell basic 2>&1); rc=$?
    echo "$out"
    [ $rc -eq 0 ] || fail "shell basic exited $rc"
    [ "$(grep -c '^from-system$' <<<"$out")" = 1 ] || fail "system's output: $out"
    ! grep -q 'FAIL\|called' <<<"$out" || fail "a check failed or a call was refused"
    grep -q '^OK$' <<<"$out" || fail "no OK"
}

# slaves of a PVM master run commands (system, popen) and send their output
sc_shell-pvm() {
    setup shell
    for n in 1 2; do
        out=$(cd "$tmp" && UPVM_NODES=$n timeout 30 ./shell pvm 5 2>&1); rc=$?
        echo "$out"
        [ $rc -eq 0 ] && [ "$out" = OK ] || fail "shell pvm on $n nodes exited $rc: $out"
    done
}

# while a slave's command runs through system(), the node runs the others
sc_shell-overlap() {
    setup shell
    mkdir "$tmp/d" || fail mkdir
    out=$(cd "$tmp" && UPVM_NODES=1 timeout 30 ./shell overlap "$tmp/d" 2>&1); rc=$?
    echo "$out"
    [ $rc -eq 0 ] && [ "$out" = OK ] || fail "shell overlap exited $rc: $out"
}

# a task reads its stdin (coupled): the lines exactly, while another
# computes; its input comes only after the other one is done
sc_shell-stdin() {
    setup shell
    mkdir "$tmp/d" || fail mkdir
    out=$(cd "$tmp" && printf 'a\nb\n' | UPVM_NODES=1 timeout 30 "$upvm" run ./shell stdin "$tmp/d" 2>&1); rc=$?
    echo "$out"
    [ $rc -eq 0 ] && [ "$out" = $'line: a\nline: b\nOK' ] || fail "shell stdin exited $rc: $out"
    rm -f "$tmp/d/computed"
    out=$(cd "$tmp" && { while [ ! -e "$tmp/d/computed" ]; do sleep 0.01; done; printf 'a\nb\n'; } |
          UPVM_NODES=1 timeout 30 ./shell stdin "$tmp/d" 2>&1); rc=$?
    echo "$out"
    [ $rc -eq 0 ] && [ "$out" = $'line: a\nline: b\nOK' ] || fail "shell stdin (late input) exited $rc: $out"
    out=$(cd "$tmp" && printf 'x 12 34\n' | UPVM_NODES=1 timeout 30 ./shell scan 2>&1); rc=$?
    [ $rc -eq 0 ] && [ "$out" = $'getchar x scanf 2: 12 34\nOK' ] || fail "getchar/scanf: $rc: $out"
}

# ------------------------------------------------------------------ run

names=("$@")
[ "${names[*]}" = all ] && names=("${SCENARIOS[@]}")
for scenario in "${names[@]}"; do
    [[ " ${SCENARIOS[*]} " = *" $scenario "* ]] || { echo "no scenario '$scenario' (--list)" >&2; exit 2; }
done
for scenario in "${names[@]}"; do
    "sc_$scenario"
    echo "ok - $scenario"
done
