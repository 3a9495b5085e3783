#!/bin/bash
# test-vm.sh BUILD_DIR SCENARIO... - the persistent VM (docs/console.md),
# end to end: upvm start / halt / console, and programs started from
# separate shells that meet in it.
#
#   test-vm.sh --list              the scenarios
#   test-vm.sh BUILD_DIR NAME...   run those
#
# Each scenario has a runtime directory of its own (XDG_RUNTIME_DIR: the
# VM's socket and log live there), so scenarios may run in parallel and
# never meet a VM of the user's; whatever way a scenario ends, its VM is
# halted and every process it started is ended (cleanup, on EXIT).
set -u

SCENARIOS=(meet pvm-examples console console-pipe spawn-output users halt-clean
           console-killed launcher-killed no-false-deadlock program-halts self-contained
           start-pvmd console-trace)

if [ "${1:-}" = --list ]; then
    printf '%s\n' "${SCENARIOS[@]}"
    exit 0
fi
[ $# -ge 2 ] || { echo "usage: $0 BUILD_DIR SCENARIO... (--list)" >&2; exit 2; }
build=$(cd "$1" && pwd) || exit 2
unset UPVM_VM # scripts/test.sh turns joining off for the other tests
shift
cc=$build/tools/upvmcc/upvmcc
upvm=$build/tools/upvm/upvm
progs=$build/tests/vm/progs
tmp=""
pids=()
other_user=""

cleanup() {
    local p
    for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
    if [ -n "${XDG_RUNTIME_DIR:-}" ] && [ -S "$XDG_RUNTIME_DIR/upvm/vm.sock" ]; then
        timeout 20 "$upvm" halt >/dev/null 2>&1
    fi
    if [ -n "$other_user" ]; then
        pkill -9 -u "$other_user" 2>/dev/null
        userdel -r "$other_user" >/dev/null 2>&1 || userdel "$other_user" >/dev/null 2>&1
    fi
    [ -z "$tmp" ] || rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
    echo "FAIL ($scenario): $*"
    [ -f "$XDG_RUNTIME_DIR/upvm/vm.log" ] && { echo "--- the VM's log:"; cat "$XDG_RUNTIME_DIR/upvm/vm.log"; }
    exit 1
}

setup() {
    tmp=$(mktemp -d /tmp/upvm-vm.XXXXXX) || exit 1
    chmod 755 "$tmp"
    export XDG_RUNTIME_DIR=$tmp/run
    mkdir -m 700 "$XDG_RUNTIME_DIR"
    [ -x "$progs/vm-service" ] || fail "no $progs/vm-service: build first"
    cp "$progs/vm-service" "$tmp/"
}

# Wait (at most $2 s, default 20) until command $1 succeeds.
wait_until() {
    local deadline=$((SECONDS + ${2:-20}))
    until eval "$1"; do
        [ $SECONDS -lt $deadline ] || return 1
        sleep 0.05
    done
}

# vm-service serving NAME in the background (its pid last in pids),
# polled until it says so
start_server() {
    (cd "$tmp" && exec ./vm-service serve "$1" >"$tmp/server.out" 2>&1) &
    pids+=($!)
    wait_until "grep -q serving '$tmp/server.out'" || fail "the server did not start: $(cat "$tmp/server.out")"
}

start_vm() {
    out=$(timeout 30 "$upvm" start 2>&1) || fail "upvm start: $out"
    grep -q "VM started (pid [0-9]*, [0-9]* nodes" <<<"$out" || fail "upvm start said: $out"
    VMPID=$(sed -n 's/.*VM started (pid \([0-9]*\),.*/\1/p' <<<"$out")
}

# The VM's processes: its launcher and the nodes it forked.
vm_procs() { echo "$VMPID $(pgrep -P "$VMPID" | tr '\n' ' ')"; }

# After a halt nothing of the VM may remain: no process, no socket, no
# shared-memory file (its segments are memfds: /dev/shm stays as it was).
# Wait (15 s at most) until none of the processes $1 runs.
wait_procs_gone() {
    local p deadline=$((SECONDS + 15))
    for p in $1; do
        while kill -0 "$p" 2>/dev/null; do
            [ $SECONDS -lt $deadline ] ||
                fail "processes of the VM remain: $(ps -o pid,args -p "$(echo $1 | tr ' ' ,)")"
            sleep 0.05
        done
    done
}

check_gone() {
    wait_procs_gone "$1"
    local left
    left=$(ls "$XDG_RUNTIME_DIR/upvm" | grep -v '^vm.log$')
    [ -z "$left" ] || fail "files left in the runtime directory: $left"
}

# ------------------------------------------------------------ scenarios

# a server and its client, started from two shells, meet through the
# mailbox and a group; the server waits for clients for as long as needed
sc_meet() {
    setup
    start_vm
    start_server svc
    for i in 1 2 3; do
        out=$(cd "$tmp" && timeout 20 ./vm-service ask svc 2>&1) || fail "client $i: $out"
        grep -q "group svc: size 2, instance [0-9]*, first is the server" <<<"$out" ||
            fail "client $i did not find the group: $out"
        grep -q "answer $i, barrier ok" <<<"$out" || fail "client $i: $out"
    done
    out=$(cd "$tmp" && timeout 20 ./vm-service stop svc 2>&1) || fail "stop: $out"
    wait "${pids[0]}"; rc=$?
    [ $rc -eq 0 ] || fail "the server exited $rc: $(cat "$tmp/server.out")"
    grep -q "server stops" "$tmp/server.out" || fail "server: $(cat "$tmp/server.out")"
    pids=()
}

# Debian's pvm-examples task0 / task1 / task_end, unmodified, from separate
# shells (the tutorial that failed with "no service running")
sc_pvm-examples() {
    setup
    local doc=${PVM_EXAMPLES_DOC:-/usr/share/doc/pvm-examples}
    [ -f "$doc/examples.tar.gz" ] || { echo "SKIP: no $doc/examples.tar.gz (pvm-examples)"; exit 77; }
    tar -xzf "$doc/examples.tar.gz" -C "$tmp" || fail "tar"
    local ex=$tmp/examples p
    for p in task0 task1 task_end; do
        "$cc" -w -o "$ex/$p" "$ex/$p.c" "$ex/taskf.c" >"$tmp/cc.out" 2>&1 || fail "upvmcc $p: $(cat "$tmp/cc.out")"
    done
    start_vm
    (cd "$ex" && exec ./task0 myservice d >"$tmp/task0.out" 2>&1) &
    pids+=($!)
    wait_until "grep -q 'waiting for service request' '$tmp/task0.out'" ||
        fail "task0 did not start: $(cat "$tmp/task0.out")"
    out=$(cd "$ex" && timeout 20 ./task1 myservice 0 d 2>&1) || fail "task1: $out"
    grep -q "welcome to my server - you are service request number 1" <<<"$out" || fail "task1: $out"
    out=$(cd "$ex" && timeout 20 ./task_end myservice 0 2>&1) || fail "task_end: $out"
    wait "${pids[0]}"; rc=$?
    pids=()
    grep -q "handled 2 service requests" "$tmp/task0.out" || fail "task0 (exit $rc): $(cat "$tmp/task0.out")"
}

# every console command, with its output checked
sc_console() {
    setup
    start_vm
    start_server cons
    stid=$(sed -n 's/serving cons as t\([0-9a-f]*\),.*/\1/p' "$tmp/server.out")
    out=$(cd "$tmp" && timeout 30 "$upvm" console -c "conf; id; version; ps -a; ps -l -a; mstat $(hostname -s) nosuchhost; pstat t$stid t7ffff; names; put answer 42; names answer; alias h help; alias; h spawn; unalias h; alias; echo one two; setenv UPVM_TEST_X=1; setenv; jobs; spawn -2 ./vm-service wait two; jobs; tasks; trace; bogus; sig; help" 2>&1) ||
        fail "console exited $?: $out"
    echo "$out"
    grep -Eq '^[0-9]+ hosts?, 1 data format$' <<<"$out" || fail "conf"
    grep -q '                    HOST     DTID     ARCH   SPEED       DSIG' <<<"$out" || fail "conf header"
    grep -Eq '^t[0-9a-f]+$' <<<"$out" || fail "id"
    grep -qx '3.4.6' <<<"$out" || fail "version"
    grep -q '                    HOST      TID   FLAG 0x COMMAND' <<<"$out" || fail "ps header"
    grep -Eq "^ +[^ ]+ +$stid +[0-9a-f]+/[a-z,]* +vm-service +\(recv from any tag any\)" <<<"$out" ||
        fail "ps -a does not show the server waiting for a message"
    grep -q '                    HOST      TID     PTID    PID   FLAG 0x COMMAND' <<<"$out" || fail "ps -l"
    grep -Eq " +$(hostname -s)  ok$" <<<"$out" || fail "mstat of this host"
    grep -q ' nosuchhost  No such host' <<<"$out" || fail "mstat nosuchhost"
    grep -Eq "^t +$stid  run$" <<<"$out" || fail "pstat of the server"
    grep -Eq '^t +7ffff  No such task$' <<<"$out" || fail "pstat of no task"
    grep -q '^<cons>:' <<<"$out" || fail "names: the server's entry"
    grep -q '^<answer>:' <<<"$out" || fail "put / names answer"
    grep -q "^h	help$" <<<"$out" || fail "alias listing"
    grep -q '^spawn       Spawn task$' <<<"$out" || fail "the alias h ran help spawn"
    grep -q '^one two$' <<<"$out" || fail "echo"
    grep -q '^UPVM_TEST_X=1$' <<<"$out" || fail "setenv"
    grep -q '^2 successful$' <<<"$out" || fail "spawn -2"
    grep -Eq '^ *1: t[0-9a-f]+ t[0-9a-f]+$' <<<"$out" || fail "jobs after spawn"
    # one spawn's copies: consecutive tids, as on one PVM host (homed on the
    # VM's node 0: they outlive the console, and reset below finds them)
    read -r t1 t2 < <(sed -n '/^2 successful$/{n;N;s/t//g;s/\n/ /p}' <<<"$out")
    [ $((16#$t2 - 16#$t1)) = 1 ] || fail "spawn -2 gave t$t1 and t$t2, not consecutive"
    grep -Eq '^node0 pid [0-9]+: ' <<<"$out" || fail "tasks"
    grep -q '^bogus: not found$' <<<"$out" || fail "unknown command"
    grep -qx 'usage: sig signum tid ...' <<<"$out" || fail "sig without arguments: no usage"
    grep -q '^  migrate ' <<<"$out" || fail "help lists migrate"
    # kill ends the server; reset ends the spawned waiters, all but the console
    out=$(timeout 30 "$upvm" console -c "kill t$stid; reset" 2>&1) || fail "kill/reset: $out"
    wait_until "! kill -0 ${pids[0]} 2>/dev/null" || fail "kill did not end the server"
    pids=()
    # a kill reaches a task on another node as a frame (PVM's is no faster):
    # a later ps lists none
    no_tasks() {
        out=$(timeout 30 "$upvm" console -c "ps -a" 2>&1) &&
            [ "$(sed -n '/FLAG 0x COMMAND/,$p' <<<"$out" | wc -l)" = 1 ]
    }
    wait_until no_tasks || fail "tasks left after reset: $out"
    out=$(timeout 30 "$upvm" console -c 'halt' 2>&1); rc=$?
    [ $rc -eq 0 ] || fail "halt: exit $rc: $out"
    check_gone "$(vm_procs)"
}

# commands read from a pipe: each echoed after the prompt, as PVM's console;
# then more consoles than the VM has slots, one after the other
sc_console-pipe() {
    setup
    start_vm
    out=$(printf 'id\nversion\nquit\n' | timeout 30 "$upvm" console 2>&1) || fail "console: $out"
    grep -q '^upvm: the VM is running already' <<<"$out" || fail "no word on the running VM: $out"
    grep -q '^pvm> version$' <<<"$out" || fail "commands not echoed: $out"
    grep -qx '3.4.6' <<<"$out" || fail "version: $out"
    [ -S "$XDG_RUNTIME_DIR/upvm/vm.sock" ] || fail "quit took the VM down"
    # more programs, one after the other, than the VM has slots for (48):
    # every one joins, as the slots of those that left are used again, and
    # no two get the same tid
    local i ids=""
    for i in $(seq 1 60); do
        out=$(timeout 30 "$upvm" console -c id 2>&1) || fail "console $i: $out"
        grep -Eqx 't[0-9a-f]+' <<<"$out" || fail "console $i did not join: $out"
        ids="$ids $out"
    done
    [ "$(tr ' ' '\n' <<<"$ids" | sed '/^$/d' | sort -u | wc -l)" = 60 ] || fail "tids reused: $ids"
}

# spawn -> : the tasks' output comes to the console, tagged [job:tid] as
# PVM's console tags it, then "[job] finished"
sc_spawn-output() {
    setup
    start_vm
    cat >"$tmp/hello.c" <<'EOF'
#include <stdio.h>
#include <pvm3.h>
int main(void) { printf("hello from t%x\n", pvm_mytid()); pvm_exit(); return 0; }
EOF
    "$cc" -o "$tmp/hello" "$tmp/hello.c" >"$tmp/cc.out" 2>&1 || fail "upvmcc: $(cat "$tmp/cc.out")"
    out=$(cd "$tmp" && timeout 30 "$upvm" console -c 'spawn -2 -> hello' 2>&1) || fail "console: $out"
    echo "$out"
    [ "$(grep -Ec '^\[1:t[0-9a-f]+\] hello from t[0-9a-f]+$' <<<"$out")" = 2 ] ||
        fail "the two tasks' lines did not come to the console, as [job:tid] line"
    grep -qx '\[1\] finished' <<<"$out" || fail "no [1] finished"
    # upvm run -n 2 in the VM: the copies run on the VM's nodes, their lines
    # come to the terminal that ran them, untagged as in a job of its own
    out=$(cd "$tmp" && timeout 30 "$upvm" run -n 2 ./hello 2>&1) || fail "upvm run: $out"
    [ "$(grep -Ec '^hello from t[0-9a-f]+$' <<<"$out")" = 2 ] || fail "upvm run -n 2 in the VM: $out"
    # a program that may use one CPU keeps its copies in its own process
    # (a VM node would only take turns with it): their tids are its slot's,
    # not the VM's node 0's (t4xxxx)
    if command -v taskset >/dev/null; then
        out=$(cd "$tmp" && timeout 30 taskset -c 0 "$upvm" run -n 2 ./hello 2>&1) ||
            fail "taskset -c 0 upvm run: $out"
        [ "$(grep -Ec '^hello from t[0-9a-f]+$' <<<"$out")" = 2 ] || fail "one CPU: $out"
        grep -q '^hello from t4' <<<"$out" && fail "one CPU: the copies ran on the VM's node 0: $out"
    fi
    # without ->, the output goes to the VM's log, as PVM's goes to the pvmd's
    out=$(cd "$tmp" && timeout 30 "$upvm" console -c 'spawn hello' 2>&1) || fail "console: $out"
    tid=$(grep -E '^t[0-9a-f]+$' <<<"$out" | tail -1)
    wait_until "grep -q 'hello from $tid' '$XDG_RUNTIME_DIR/upvm/vm.log'" || fail "no line of $tid in the log"
}

# two users' VMs do not see each other, and one cannot control the other's
sc_users() {
    [ "$(id -u)" = 0 ] || { echo "SKIP: needs root (creates a user)"; exit 77; }
    command -v useradd >/dev/null || { echo "SKIP: no useradd"; exit 77; }
    setup
    start_vm
    start_server mine
    other_user=upvmvm$$
    useradd -M -d /nonexistent -s /bin/sh "$other_user" || fail "useradd"
    local run2=$tmp/run2
    mkdir -m 700 "$run2" && chown "$other_user" "$run2"
    as_other() { su -s /bin/sh "$other_user" -c "cd / && XDG_RUNTIME_DIR=$run2 HOME=/ $*" 2>&1; }
    out=$(as_other "timeout 30 $upvm console -c 'ps -a; names'") || fail "the other user's console: $out"
    grep -q 'mine' <<<"$out" && fail "the other user sees this user's tasks or mailbox: $out"
    grep -q 'FLAG 0x COMMAND' <<<"$out" || fail "the other user's console: $out"
    # reaching into this user's VM is refused, and changes nothing
    out=$(as_other "XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR timeout 10 $upvm halt") && fail "the other user halted this VM: $out"
    kill -0 "$VMPID" || fail "this user's VM is gone"
    out=$(as_other "timeout 20 $upvm halt") || fail "the other user's halt: $out"
    kill -0 "$VMPID" || fail "the other user's halt ended this user's VM"
    out=$(cd "$tmp" && timeout 20 ./vm-service stop mine 2>&1) || fail "stop: $out"
}

# halt: every process of the VM ends, joined programs too, no file is left
sc_halt-clean() {
    setup
    start_vm
    start_server h
    local server=${pids[-1]}
    local procs
    procs="$(vm_procs) $server"
    out=$(timeout 30 "$upvm" halt 2>&1) || fail "upvm halt: $out"
    grep -q 'the VM was halted' <<<"$out" || fail "halt said: $out"
    check_gone "$procs"
    out=$(timeout 10 "$upvm" halt 2>&1) && fail "a second halt found a VM: $out"
    grep -q 'no VM is running' <<<"$out" || fail "second halt said: $out"
}

# a VM whose console was killed is found again and halted
sc_console-killed() {
    setup
    start_vm
    mkfifo "$tmp/in"
    (exec "$upvm" console <"$tmp/in" >"$tmp/console.out" 2>&1) &
    local cons=$!
    pids+=($cons)
    exec 3>"$tmp/in"
    echo id >&3
    wait_until "grep -Eq '^t[0-9a-f]+$' '$tmp/console.out'" || fail "console: $(cat "$tmp/console.out")"
    kill -9 "$cons"
    exec 3>&-
    out=$(timeout 30 "$upvm" console -c 'ps -a -x; conf' 2>&1) || fail "a new console: $out"
    grep -q 'FLAG 0x COMMAND' <<<"$out" || fail "ps: $out"
    local procs
    procs=$(vm_procs)
    out=$(timeout 30 "$upvm" halt 2>&1) || fail "halt: $out"
    check_gone "$procs"
}

# the VM's launcher killed: its nodes end, a program joined ends, and the
# next start removes what it left
sc_launcher-killed() {
    setup
    start_vm
    start_server k
    local server=${pids[-1]}
    local procs
    procs="$(vm_procs) $server"
    kill -9 "$VMPID"
    wait_procs_gone "$procs"
    grep -q 'the VM this program joined is gone' "$tmp/server.out" || fail "server: $(cat "$tmp/server.out")"
    start_vm
    out=$(timeout 30 "$upvm" halt 2>&1) || fail "halt: $out"
}

# in a VM, a task waiting for a message another program may still send is
# not a deadlock: the server outlives several of the VM's would-be probes
sc_no-false-deadlock() {
    setup
    start_vm
    start_server d
    # a self-contained job reports its deadlock within a second; a VM never
    wait_until "! kill -0 ${pids[0]} 2>/dev/null" 3 && fail "the server ended: $(cat "$tmp/server.out")"
    grep -q deadlock "$tmp/server.out" "$XDG_RUNTIME_DIR/upvm/vm.log" && fail "a deadlock was reported"
    out=$(cd "$tmp" && timeout 20 ./vm-service ask d 2>&1) || fail "client: $out"
    out=$(cd "$tmp" && timeout 20 ./vm-service stop d 2>&1) || fail "stop: $out"
}

# pvm_halt from a program started from a shell halts the VM
sc_program-halts() {
    setup
    start_vm
    cat >"$tmp/halter.c" <<'EOF'
#include <pvm3.h>
int main(void) { pvm_mytid(); pvm_halt(); return 3; }
EOF
    "$cc" -o "$tmp/halter" "$tmp/halter.c" >"$tmp/cc.out" 2>&1 || fail "upvmcc: $(cat "$tmp/cc.out")"
    local procs
    procs=$(vm_procs)
    (cd "$tmp" && timeout 20 ./halter) >/dev/null 2>&1
    check_gone "$procs"
    grep -q 'the VM was halted by t' "$XDG_RUNTIME_DIR/upvm/vm.log" || fail "log: no halt"
}

# with no VM up, a program is its own job, as before (and UPVM_VM=off keeps
# it so while one is up)
sc_self-contained() {
    setup
    out=$(cd "$tmp" && timeout 20 ./vm-service serve alone 2>&1); rc=$?
    [ $rc -eq 70 ] || fail "a lone server waiting for ever is a deadlock (70), got $rc: $out"
    grep -q 'deadlock' <<<"$out" || fail "no deadlock report: $out"
    start_vm
    out=$(cd "$tmp" && UPVM_VM=off timeout 20 ./vm-service serve alone 2>&1); rc=$?
    [ $rc -eq 70 ] || fail "UPVM_VM=off: got $rc: $out"
}

# pvm_start_pvmd from a (thread-mode) program starts the VM, which its
# first PVM call then joins; a second start says PvmDupHost (-28)
sc_start-pvmd() {
    setup
    local src
    src=$(cd "$(dirname "$0")" && pwd)
    local san=()  # a sanitized libupvm wants its runtime first
    ldd "$build/src/libupvm.so" | grep -q libasan && san=(-fsanitize=address,undefined)
    cc "${san[@]}" -I"$src/../../include" "$src/starter.c" -L"$build/src" -lupvm \
        -Wl,-rpath,"$build/src" -o "$tmp/starter" 2>"$tmp/cc.out" || fail "cc: $(cat "$tmp/cc.out")"
    out=$(timeout 30 "$tmp/starter" 2>&1) || fail "starter: $out"
    grep -q '^start 0, t' <<<"$out" || fail "the first start: $out"
    [ -S "$XDG_RUNTIME_DIR/upvm/vm.sock" ] || fail "no VM after pvm_start_pvmd"
    out=$(timeout 30 "$tmp/starter" 2>&1) || fail "starter: $out"
    grep -q '^start -28, t' <<<"$out" || fail "the second start: $out"
    out=$(timeout 30 "$upvm" halt 2>&1) || fail "halt: $out"
}

# trace: the mask, buffering and option of the console's children, as PVM
# 3.4.6's console prints them (console-trace.expected: what genuine PVM's
# console printed for these commands); spawn -@: the console traces the
# job and prints its events as PVM's console (its libpvmtrc) does
sc_console-trace() {
    setup
    local src e q p='^\[T1:t[0-9a-f]+\] '
    src=$(cd "$(dirname "$0")" && pwd)
    start_vm
    out=$(timeout 30 "$upvm" console -c 'trace; trace + send bogus recv; trace - mytid; trace buf; trace opt; trace opt bogus; trace buf 100; trace buf; trace opt time; trace opt; trace; trace - *; trace; trace *; trace pvm_send; trace; trace xpvm; trace' 2>&1) ||
        fail "console: $out"
    diff -u "$src/console-trace.expected" - <<<"$out" || fail "trace differs from PVM's console (- PVM 3.4.6, + UPVM)"
    cp "$src/trace-hello.c" "$tmp/"
    "$cc" -o "$tmp/hello" "$tmp/trace-hello.c" >"$tmp/cc.out" 2>&1 || fail "upvmcc: $(cat "$tmp/cc.out")"
    # the default mask (XPVM's): mytid, parent, send, exit; not initsend, pkint
    out=$(cd "$tmp" && timeout 30 "$upvm" console -c 'spawn -2 -@ hello' 2>"$tmp/err") || fail "console: $out"
    echo "$out"
    grep -qx '\[1\]' <<<"$out" || fail "no [1]"
    grep -Eq "$p \\* \"Machine\" \"Console 3\\.4\\.6 \\(PVM 3\\.4\\.6\\)\"$" <<<"$out" || fail "no trace file head"
    grep -Eq "$p#1802: \"host_add\\(0\\)\"$" <<<"$out" || fail "no host_add description"
    grep -Eq "$p\"host_add\\(0\\)\" \\{ [0-9]+, [0-9]+, [0-9]+, \\[[0-9]+\\] \\{ \"[^\"]+\" \\}, " <<<"$out" ||
        fail "no host_add"
    for e in 'newtask(0)' 'spntask(0)' 'endtask(0)' 'mytid(0.0)' 'mytid(1.1)' 'parent(1.1)' \
             'send(0.0)' 'send(1.1)' 'exit(0.0)'; do
        q=$(sed 's/[().]/\\&/g' <<<"$e")
        [ "$(grep -Ec "$p\"$q\" \\{ " <<<"$out")" = 2 ] || fail "not 2 $e records"
        [ "$(grep -Ec "$p#[0-9]+: \"$q\"$" <<<"$out")" = 1 ] || fail "$e not described once"
    done
    grep -Eq '^\[T1:t80000000\] #1150: "newtask\(0\)"$' <<<"$out" || fail "newtask's number"
    grep -Eq "$p#1094: \"send\\(0\\.0\\)\"$" <<<"$out" || fail "send's number"
    grep -Eq "$p#2095: \"send\\(1\\.1\\)\"$" <<<"$out" || fail "send's exit number"
    grep -Eq "$p\"output\\(0\\)\" \\{ [0-9]+, [0-9]+, [0-9]+, \\[[0-9]+\\] \\{ \"hello from t[0-9a-f]+\" \\} \\};;$" <<<"$out" ||
        fail "the tasks' output is not the trace's output events"
    grep -Eq "$p\"(initsend|pkint)" <<<"$out" && fail "initsend/pkint traced: not in the default mask"
    grep -qx '\[1\] finished' <<<"$out" || fail "no [1] finished"
    grep -qx '\[1\] libpvmtrc: Trace File Complete' "$tmp/err" || fail "stderr: $(cat "$tmp/err")"
    [ "$(grep -c 'libpvmtrc: Task TID=0x[0-9a-f]* Connected to Console' "$tmp/err")" = 2 ] ||
        fail "stderr: $(cat "$tmp/err")"
    # one event only, buffered, to a file
    out=$(cd "$tmp" && timeout 30 "$upvm" console -c "trace - *; trace + send; trace buf 4096; spawn -@$tmp/trc hello" 2>&1) ||
        fail "console: $out"
    grep -qx '\[1\] finished' <<<"$out" || fail "-@file: no [1] finished: $out"
    grep -q 'send(0.0)' <<<"$out" && fail "-@file: events on the terminal"
    grep -q '"send(0.0)" { ' "$tmp/trc" || fail "-@file: no send event in the file: $(cat "$tmp/trc")"
    grep -Eq '"(mytid|exit)\(' "$tmp/trc" && fail "-@file: events not in the mask"
    out=$(timeout 30 "$upvm" halt 2>&1) || fail "halt: $out"
}

for scenario in "$@"; do
    case " ${SCENARIOS[*]} " in
        *" $scenario "*) "sc_$scenario" ;;
        *) echo "unknown scenario $scenario (--list)"; exit 2 ;;
    esac
done
echo "PASS: $*"
