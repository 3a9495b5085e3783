#!/usr/bin/env bash
# test-debug.sh BUILD_DIR CASE - gdb with UPVM (docs/debugging.md), driven
# in batch mode on a process-mode program built with upvmcc -g -O0
# (dbgprog.c):
#   run     upvm run --gdb: a breakpoint by file:line set before any task
#           exists is hit in a task; bt names the program's functions with
#           dbgprog.c:LINE; info locals shows a local's value; upvm ulps
#           lists the tasks' tids and the program; upvm bt TID of a
#           suspended task is symbolised
#   attach  upvm attach JOB NODE to a job of two nodes that waits: the same
#           through the job's control socket, on the node of the leader
#   migrate a task moved (upvm migrate) to the leader's node: gdb there
#           shows its frames symbolised, gdb on the node it left has it no more
# Exit 77 (skipped) only where ptrace is not permitted (said why).
set -uo pipefail
build=$(cd "$1" && pwd) || exit 2
case_=$2
here=$(cd "$(dirname "$0")" && pwd)
upvm=$build/tools/upvm/upvm
prog=$build/tests/debug/dbgprog
src=$here/dbgprog.c
export UPVM_VM=off
tmp=$(mktemp -d /tmp/upvm-debug.XXXXXX) || exit 1
job=""
cleanup() {
    [ -z "$job" ] || kill "$job" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL ($case_): $*"; exit 1; }

command -v gdb >/dev/null || fail "gdb is not installed: run scripts/install-deps.sh"
[ -x "$prog" ] || fail "no $prog: build first (cmake --build $build)"

# ptrace may be refused (a container's seccomp profile, Yama): then
# nothing here can work, and that is not UPVM's failure.
probe=$(gdb -nx -batch -ex run --args /bin/true 2>&1)
if grep -qiE "ptrace: Operation not permitted|Could not trace|Couldn't get registers|not permitted" <<<"$probe"; then
    echo "skipped: this system does not let gdb trace processes (ptrace): $probe"
    exit 77
fi
if [ "$case_" = attach ] && [ "$(id -u)" -ne 0 ] &&
   [ "$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)" -ge 1 ]; then
    echo "skipped: kernel.yama.ptrace_scope >= 1 lets a non-root gdb attach only to its own children"
    exit 77
fi

line_of() { grep -n "$1" "$src" | cut -d: -f1; }
tally_line=$(line_of BREAK-TALLY)
tick_line=$(line_of BREAK-TICK)

expect() { # PATTERN WHAT: in $out
    grep -qE -- "$1" <<<"$out" || fail "$2 (no /$1/ in gdb's output above)"
}

# Poll for a file to hold a line, for up to 30 s.
wait_file() {
    local deadline=$((SECONDS + 30))
    until [ -s "$1" ]; do
        [ $SECONDS -lt $deadline ] || fail "$1 did not appear within 30 s"
        kill -0 "$job" 2>/dev/null || fail "the job ended before it was ready"
        sleep 0.05
    done
}

# The checks both cases share, on gdb's output: a stop in the program,
# symbolised frames, a local, the task list, a suspended task's frames.
check_session() { # STOP_FUNCTION STOP_LINE LOCAL VALUE
    expect "^Breakpoint [0-9.]+, $1 \(.*\) at .*dbgprog\.c:$2" "the breakpoint at dbgprog.c:$2 was not hit in a task"
    expect "^#0 +$1 \(.*\) at .*dbgprog\.c:$2" "bt does not start in $1 at dbgprog.c:$2"
    expect "^#1 .* in lead \(.*\) at .*dbgprog\.c:[0-9]+" "bt does not name lead with its line"
    expect "^#2 .* in main \(.*\) at .*dbgprog\.c:[0-9]+" "bt does not name main with its line"
    expect "^$3 = $4\$" "info locals (after next) does not show $3 = $4"
    expect "^ +[0-9]+ +t[0-9a-f]+ +(running|ready) +dbgprog +$prog " "upvm ulps does not list the leader with its tid and program"
    expect "^ +[0-9]+ +t[0-9a-f]+ +blocked +dbgprog +$prog .*pvm_recv" "upvm ulps does not list a follower waiting in pvm_recv"
    expect "^#[0-9]+ .* in follow \(leader=[0-9]+\) at .*dbgprog\.c:[0-9]+" "upvm bt TID of a suspended task is not symbolised (follow, dbgprog.c)"
    expect "^#[0-9]+ .* in main \(.*\) at .*dbgprog\.c:[0-9]+" "upvm bt TID does not reach the program's main"
}

# gdb commands: stop at LINE, show, step over it (its local is set), list
# the ULPs, then the backtrace of
# the first task that waits in pvm_recv (found by the script), then end.
commands() { # LINE END
    cat <<GDB
set breakpoint pending on
set pagination off
break dbgprog.c:$1
continue
bt
next
info locals
upvm ulps
python
import re
out = gdb.execute("upvm ulps", to_string=True)
tids = re.findall(r"^ +\d+ +(t[0-9a-f]+) +blocked +dbgprog .*pvm_recv", out, re.M)
print("suspended follower: %s" % (tids[0] if tids else "none"))
if tids:
    gdb.execute("upvm bt %s" % tids[0])
end
delete
$2
GDB
}

# A job of two nodes, no balancing (the tasks stay where they start),
# ready: the leader wrote "ready PID" with its node's pid when all its
# followers had written.  Sets job, node_pid, tasks (upvm tasks), node
# (the leader's node number).
start_waiting_job() {
    (cd "$tmp" && exec "$upvm" run --nodes 2 --balance none -n 5 "$prog" "$tmp/ready" \
        >"$tmp/job.out" 2>&1) &
    job=$!
    wait_file "$tmp/ready"
    read -r _ node_pid <"$tmp/ready"
    tasks=$("$upvm" tasks --job "$job" 2>&1) || fail "upvm tasks --job $job: $tasks"
    node=$(sed -n "s/^node\([0-9]*\) pid $node_pid:.*/\1/p" <<<"$tasks")
    [ -n "$node" ] || fail "the leader's node (pid $node_pid) is not in: $tasks"
}

case $case_ in
run)
    commands "$tally_line" kill >"$tmp/cmds"
    out=$(cd "$tmp" && UPVM_GDB="gdb -nx -batch -x $tmp/cmds" timeout 120 \
          "$upvm" run --gdb --nodes 1 -n 3 "$prog" "$tmp/ready" 2>&1)
    rc=$?
    echo "$out"
    [ $rc -ne 124 ] || fail "upvm run --gdb did not end within 120 s"
    check_session tally "$tally_line" total 1
    expect "^upvm: node 0 waits for you before its tasks start" "upvm run --gdb did not say node 0 waits"
    ;;
attach)
    start_waiting_job
    commands "$tick_line" detach >"$tmp/cmds"
    out=$(UPVM_GDB="gdb -nx -batch -x $tmp/cmds" timeout 120 "$upvm" attach "$job" "$node" 2>&1)
    rc=$?
    echo "$out"
    [ $rc -ne 124 ] || fail "upvm attach did not end within 120 s"
    n=$(sed -n 's/^Breakpoint [0-9.]*, tick (n=\([0-9]*\)).*/\1/p' <<<"$out" | head -n 1)
    check_session tick "$tick_line" beat "${n:-N}"
    kill -0 "$job" 2>/dev/null || fail "the job did not survive gdb's detach"
    ;;
migrate)
    start_waiting_job
    # a follower on the other node (every dbgprog there is one): to the leader's
    other=$((1 - node))
    tid=$(awk -v n="node$other" '$1 == n { getline; for (i = 1; i <= NF; i++)
                                               if ($i ~ /\/dbgprog$/) { print $i; exit } }' \
          <<<"$tasks" | sed 's,/.*,,')
    [ -n "$tid" ] || fail "no task on node$other in: $tasks"
    moved=$("$upvm" migrate --job "$job" "$tid" "$node" 2>&1) || fail "upvm migrate $tid $node: $moved"
    printf 'upvm images\nupvm bt %s\n' "$tid" >"$tmp/cmds"
    out=$(UPVM_GDB="gdb -nx -batch -x $tmp/cmds" timeout 120 "$upvm" attach "$job" "$node" 2>&1)
    echo "$out"
    expect "^#[0-9]+ .* in follow \(leader=[0-9]+\) at .*dbgprog\.c:[0-9]+" "gdb on node$node does not show the arrived $tid's frames symbolised"
    out=$(UPVM_GDB="gdb -nx -batch -x $tmp/cmds" timeout 120 "$upvm" attach "$job" "$other" 2>&1)
    echo "$out"
    expect "no task or ULP $tid here" "gdb on node$other still has $tid"
    ! grep -q "in follow (leader" <<<"$out" || fail "node$other still shows $tid's frames"
    ;;
*)
    echo "usage: $0 BUILD_DIR run|attach|migrate" >&2
    exit 2
    ;;
esac
echo "test-debug $case_: ok"
