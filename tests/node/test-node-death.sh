#!/bin/bash
# test-node-death.sh BUILD_DIR CASE - one way for a 3-node PVM job (the
# program node-death.c: thread mode, UPVM_NODES=3; or, for the proc-* cases,
# process mode, built with upvmcc and run by upvm run --nodes 3) to end or to
# lose a node, checked from outside: the exit status, what the job printed (the
# notifications, the report naming the node and its tasks), and that
# nothing of the job is left behind: no process (found by a unique word in
# the job's command line and by its session), no new file in /dev/shm or
# /tmp, and no control socket (the job's XDG_RUNTIME_DIR is the test's own,
# so that its socket is looked for there).  Every wait is bounded: a hang
# fails the test instead of blocking.
#
# CASE:
#   watched       kill -9 node1, whose tasks and host main watches (pvm_notify):
#                 both notifications come within WITHIN_MS, the job goes on, 0
#   lost          kill -9 node1, watched by nobody: report, exit status 137
#   lost-two      kill -9 node1 and node2 at once: both named, 137, no hang
#   orphans       kill -9 node2 after main returned, nobody watches: the same
#   idle-node     a 4-node job: kill -9 node3, which ran no task: the job goes
#                 on (nothing lost); then node1: report, 137
#   crash         a task on node1 segfaults, nobody watches: report, 139
#   kill-node0    kill -9 node 0 (main's node): report, 137, the rest ended
#   kill-launcher kill -9 the launcher: every node dies with it
#   sigint        SIGINT to the launcher: everything ends, 130
#   ctrl-c        SIGINT to the job's process group (a terminal's Ctrl-C): 130
#   sigterm       SIGTERM to the launcher: 143
#   sighup        SIGHUP to the launcher (its terminal closed): 129
#   sigquit       SIGQUIT to the launcher: 131
#   hup-group     SIGHUP to the job's process group (a terminal that closes
#                 sends it so): 129
#   pipe          the job writes lines forever into a pipe whose reader reads
#                 two and goes (upvm run ... | head -2): the node that writes
#                 next gets SIGPIPE; the job ends quietly (no report), 141
#   full          the job's stdout is /dev/full: its output is lost, which is
#                 said once on stderr, and the exit status is 1
#   closed        the job's stdout is closed (>&-): the same, "Bad file
#                 descriptor"
#   halt          a task on node2 calls pvm_halt: one line, every node ends,
#                 no report of a lost node, 143
#   normal        a normal end: 0, nothing printed by UPVM
#   fail          main returns 3: the job's exit status is 3
#   deadlock      every task of every node waits: report, 70
#   proc-CASE     CASE (watched, lost, crash, kill-node0, kill-launcher, ctrl-c,
#                 sighup, hup-group, pipe, full, closed, halt) in process mode
#   proc-one-CASE CASE (pipe, full, closed) in process mode, a job of one node
#                 (no launcher of its own: the program's process is the node)
set -u
build=$(cd "$1" && pwd)
repo=$(cd "$(dirname "$0")/../.." && pwd)
case=$2
mode=thread
if [ "${case#proc-}" != "$case" ]; then
    mode=process
    case=${case#proc-}
fi

# The issue asks that the others notice a dead node "within one second".
# Machines running the tests are shared and noisy, so the check is loose:
# a notification must come within WITHIN_MS of the kill.  A real delay of
# the mechanism (a missed wake-up falling back to some polling period, or
# no notice at all) still fails it.
WITHIN_MS=${WITHIN_MS:-5000}
# Bounds that only catch hangs (ASan builds are several times slower).
START_S=20   # the job starts and prints READY
END_S=10     # the job ends after the kill / by itself
LEFT_S=3     # processes killed by the kernel (PR_SET_PDEATHSIG) are gone

mark="upvm-death-mark-$case-$$-$RANDOM"
work="$PWD/node-death-$mode-$case.$$" # not in /tmp, which is watched
mkdir -p "$work" || exit 1
out="$work/out"
# The job's control socket goes to $runtime/upvm (src/node/control_path.h);
# a socket path has at most 107 bytes, hence a short directory of its own.
runtime=$(mktemp -d /tmp/upvm-ctl.XXXXXX) || exit 1
sock=
launcher=
trap 'rm -rf "$work" "$runtime"; [ -n "$launcher" ] && pkill -KILL -s "$launcher" 2>/dev/null' EXIT

fail() {
    echo "FAIL ($case): $*"
    echo "---- the job's output:"
    cat "$out" 2>/dev/null
    exit 1
}

now_ms() { date +%s%3N; }

# Files of the job in /dev/shm and /tmp are looked for twice:
#  - while it runs (uses_no_files): no process of the job has one open or
#    mapped (the transport is a memfd, which has no name there);
#  - after it ended (check_nothing_left): no new entry there.  Other
#    processes of this user come and go meanwhile (the suite's other tests
#    under ctest -j, an MPI job...), so only the names UPVM or PVM would
#    use count: those with "upvm" or "pvm" in them, less the suite's own
#    temporary directories, and less /tmp/upvm-<uid>, where the control
#    sockets of the other tests' jobs come and go (this job's goes to
#    $runtime: checked on its own).
listing() {
    find /dev/shm /tmp -mindepth 1 -maxdepth 1 -user "$(id -u)" 2>/dev/null |
        grep -i 'pvm' | grep -Ev '^/tmp/((upvm-(proc|pvmex|loader|scale|migrate|ctl|vm|vmbench|trace-summary)|pvmprobe)[.-]|ompi\.upvmhost)' |
        grep -vx "/tmp/upvm-$(id -u)" | sort
}

uses_no_files() {
    local p files
    for p in $(job_pids); do
        # (the program, its library and the test's own files count only
        # when the checkout itself is not under /tmp)
        # (ThreadSanitizer's own read-only data file, in a TSan build, is not the job's)
        files=$({ ls -l "/proc/$p/fd" | awk '{ print $NF }'; awk '{ print $6 }' "/proc/$p/maps"; } 2>/dev/null |
                grep -E '^/(tmp|dev/shm)/' | grep -vE '^/tmp/tsan\.rodata\.[0-9]+' |
                grep -vF -e "$build/" -e "$repo/" -e "$work/" -e "$runtime/" | sort -u)
        [ -z "$files" ] || fail "process $p of the job uses files in /tmp or /dev/shm: $files"
    done
}

# The pids of the job's processes still alive (a zombie is dead: it waits
# to be reaped, which a container's init may do only now and then).
job_pids() {
    local p
    for p in $({ pgrep -f -- "$mark"; [ -n "$launcher" ] && pgrep -s "$launcher"; } 2>/dev/null |
               sort -u); do
        alive "$p" && echo "$p"
    done
}

alive() {
    case $(ps -o stat= -p "$1" 2>/dev/null) in
    Z* | "") return 1 ;;
    *) return 0 ;;
    esac
}

# The job's command, and the name its tasks are listed by (a task's
# registered name in thread mode, its program's in process mode).
nodes=3
[ "$case" = idle-node ] && nodes=4 # a fourth node, which runs no task
if [ "${case#one-}" != "$case" ]; then
    nodes=1
    case=${case#one-}
fi
if [ $mode = thread ]; then
    job=(env UPVM_NODES=$nodes "$build/tests/node/node-death")
    sleeper=sleeper crasher=crasher main=main
else
    # node-death.c built with upvmcc by tests/node/CMakeLists.txt
    cp "$build/tests/node/node-death-proc" "$work/node-death-proc" ||
        { echo "FAIL: no node-death-proc: build first (cmake --build $build)"; exit 1; }
    job=("$build/tools/upvm/upvm" run --nodes $nodes "$work/node-death-proc")
    sleeper=node-death-proc crasher=node-death-proc main=node-death-proc
fi

# Start the job in its own session (so that a group signal reaches it, and
# its session id names all of it), in mode $1; wait until it is set up.
start() {
    XDG_RUNTIME_DIR=$runtime setsid "${job[@]}" "$1" "$mark" >"$out" 2>&1 &
    launcher=$!
    local deadline=$((SECONDS + START_S))
    until grep -q '^READY$' "$out" 2>/dev/null; do
        kill -0 "$launcher" 2>/dev/null || grep -q '^READY$' "$out" ||
            fail "the job ended before READY"
        [ $SECONDS -lt $deadline ] || fail "no READY within ${START_S} s"
        sleep 0.02
    done
    local sid
    sid=$(ps -o sid= -p "$launcher" | tr -d ' ') # empty: it ended already
    [ -z "$sid" ] || [ "$sid" = "$launcher" ] ||
        fail "the launcher is not the leader of its own session"
    uses_no_files
    sock=$runtime/upvm/job-$launcher.sock # node 0 made it before main went on
    if [ ! -S "$sock" ]; then
        # A job that ends at once (a deadlock found right after READY)
        # removes its socket before its launcher exits: gone with the job
        # is fine, missing from a job that goes on is not.
        local end=$((SECONDS + END_S))
        while kill -0 "$launcher" 2>/dev/null && [ $SECONDS -lt $end ]; do
            sleep 0.02
        done
        ! kill -0 "$launcher" 2>/dev/null || fail "the job has no control socket $sock"
        sock= # (ended already)
    fi
}

# pid of node $1, as the job printed it; checked to be a process of the job.
node_pid() {
    local p
    p=$(awk -v n="$1" '$1 == "node" && $2 == n && $3 == "pid" { print $4 }' "$out")
    [ -n "$p" ] || fail "no pid printed for node $1"
    [ "$p" != "$launcher" ] || fail "node $1 is the launcher"
    tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q -- "$mark" ||
        fail "pid $p (node $1) is not a process of the job"
    echo "$p"
}

# Wait for the launcher to end (within $1 s, default END_S); its exit
# status in $status.
finish() {
    local deadline=$((SECONDS + ${1:-$END_S}))
    while kill -0 "$launcher" 2>/dev/null; do
        [ $SECONDS -lt $deadline ] || fail "the job did not end within ${END_S} s (a hang)"
        sleep 0.02
    done
    wait "$launcher"
    status=$?
}

# Nothing of the job is left: no process, no file.
check_nothing_left() {
    local deadline=$((SECONDS + LEFT_S)) left
    while left=$(job_pids) && [ -n "$left" ]; do
        [ $SECONDS -lt $deadline ] ||
            fail "processes of the job are left: $(ps -o pid=,args= -p "$(echo $left | tr ' ' ,)")"
        sleep 0.05
    done
    local new
    new=$(comm -13 <(echo "$before") <(listing))
    [ -z "$new" ] || fail "new files in /dev/shm or /tmp: $new"
    [ -z "$sock" ] || [ ! -e "$sock" ] || fail "the job's control socket $sock is left"
    [ -z "$sock" ] || [ ! -e "$runtime/upvm" ] || fail "the control socket directory is left"
    launcher=
}

expect_status() {
    [ "$status" -eq "$1" ] || fail "exit status $status, expected $1"
}

expect_line() {
    grep -qF -- "$1" "$out" || fail "no line with: $1"
}

expect_no_line() {
    ! grep -q -- "$1" "$out" || fail "unexpected line matching: $1"
}

# The report of node $1's loss when nobody watched: the node, its pid, how
# it ended, every task it ran (with its program's name), the exit status.
expect_lost_report() {
    local node=$1 pid=$2 fate=$3 code=$4
    shift 4
    expect_line "upvm: node$node (pid $pid) $fate, and no task had asked to be told"
    expect_line "upvm:   its $# task(s), lost:"
    local t
    for t in "$@"; do
        grep -q "^upvm:    .* $t\( \|$\)" "$out" || fail "the report does not name $t"
    done
    expect_line "upvm: ending the job (exit status $code)"
    expect_status "$code"
}

before=$(listing)

case $case in
watched)
    start watch
    p1=$(node_pid 1)
    t0=$(now_ms)
    kill -KILL "$p1"
    finish
    expect_status 0
    for what in "PvmTaskExit t40002" "PvmTaskExit t40003"; do
        at=$(awk -v w="$what" '$0 ~ "^NOTIFY " w " AT " { print $NF }' "$out")
        [ -n "$at" ] || fail "no $what notification"
        echo "$what notification $((at - t0)) ms after the kill"
        [ $((at - t0)) -lt "$WITHIN_MS" ] || fail "$what came $((at - t0)) ms after the kill"
    done
    # the host is the machine: a node of it dying is no PvmHostDelete
    expect_no_line "^NOTIFY PvmHostDelete"
    expect_line "upvm: node1 (pid $p1) died of signal 9 (Killed); the job goes on: 2 notification(s) delivered"
    expect_line "t40002/$sleeper t40003/$sleeper"
    expect_line "OK"
    ;;
lost)
    start wait
    p1=$(node_pid 1)
    t0=$(now_ms)
    kill -KILL "$p1"
    finish
    took=$(($(now_ms) - t0))
    echo "the job ended $took ms after the kill"
    [ "$took" -lt "$WITHIN_MS" ] || fail "the job ended only $took ms after the kill"
    expect_lost_report 1 "$p1" "died of signal 9 (Killed)" 137 t40002/$sleeper t40003/$sleeper
    expect_no_line "^upvm:.*t40004" # node2's task is not lost
    ;;
lost-two)
    start wait
    p1=$(node_pid 1)
    p2=$(node_pid 2)
    # Stopped first, so that neither can answer for the other's death:
    # two kill(2) calls are never quite at once.
    kill -STOP "$p1" "$p2"
    kill -KILL "$p1" "$p2"
    finish
    expect_status 137
    # the first seen is the one decided on; the other is named with it
    grep -Eq "^upvm: node[12] \(pid ($p1|$p2)\) died of signal 9 \(Killed\), and no task" "$out" ||
        fail "no report of a lost node"
    grep -Eq "^upvm: node[12] \(pid ($p1|$p2)\) died of signal 9 \(Killed\) too$" "$out" ||
        fail "the second lost node is not named"
    for t in t40002/$sleeper t40003/$sleeper t40004/$sleeper; do
        grep -q "^upvm:    .* $t\( \|$\)" "$out" || fail "the report does not name $t"
    done
    ;;
idle-node)
    start wait
    p3=
    for p in $(pgrep -f -- "$mark"); do # the job's process that is no named node
        [ "$p" = "$launcher" ] || grep -q "^node [0-2] pid $p\$" "$out" || p3=$p
    done
    [ -n "$p3" ] || fail "no fourth node found"
    kill -KILL "$p3"
    deadline=$((SECONDS + END_S))
    until grep -q "^upvm: node3 (pid $p3) died of signal 9 (Killed); the job goes on: it ran no task\$" "$out"; do
        [ $SECONDS -lt $deadline ] || fail "no line for node3"
        sleep 0.02
    done
    # (that line is node 0's verdict: the job goes on)
    kill -0 "$launcher" 2>/dev/null || fail "the job ended when a node with no task died"
    p1=$(node_pid 1)
    kill -KILL "$p1"
    finish
    expect_lost_report 1 "$p1" "died of signal 9 (Killed)" 137 t40002/$sleeper t40003/$sleeper
    ;;
orphans)
    start orphans
    p2=$(node_pid 2)
    deadline=$((SECONDS + END_S))
    until grep -q '^MAIN RETURNS$' "$out"; do
        [ $SECONDS -lt $deadline ] || fail "main did not return"
        sleep 0.02
    done
    # main has returned: node 0 waits for the job's end, which a wave decides
    # only when every node is idle; the sleepers nap and never are
    kill -0 "$launcher" 2>/dev/null || fail "the job ended while its tasks still ran"
    kill -KILL "$p2"
    finish
    expect_lost_report 2 "$p2" "died of signal 9 (Killed)" 137 t40004/$sleeper
    ;;
crash)
    start crash
    p1=$(node_pid 1)
    finish
    expect_line "($crasher, PVM task t40005) crashed: invalid memory access"
    expect_lost_report 1 "$p1" "died of signal 11 (Segmentation fault)" 139 \
        t40002/$sleeper t40003/$sleeper t40005/$crasher
    ;;
kill-node0)
    start wait
    p0=$(node_pid 0)
    kill -KILL "$p0"
    finish
    expect_status 137
    expect_line "upvm: node0 (pid $p0), the node of the program's main, died of signal 9 (Killed)"
    expect_line "upvm:     t40001/$main"
    expect_line "upvm: ending the job's other 2 node(s) (exit status 137)"
    ;;
kill-launcher)
    start wait
    pids="$(node_pid 0) $(node_pid 1) $(node_pid 2)"
    kill -KILL "$launcher"
    finish
    expect_status 137
    # Nobody is left to remove the control socket: the next job's node 0
    # does (tests/tools/test-upvm-ctl.sh, case stale).
    [ -S "$sock" ] || fail "the control socket of a job killed with SIGKILL went (how?)"
    sock=
    check_nothing_left
    for p in $pids; do
        ! alive "$p" || fail "node process $p outlived its launcher"
    done
    ;;
sigint | ctrl-c | sigterm | sighup | sigquit | hup-group)
    start wait
    case $case in
    sigint) kill -INT "$launcher"; code=130; what="interrupted (SIGINT)" ;;
    ctrl-c) kill -INT -- "-$launcher"; code=130; what="interrupted (SIGINT)" ;;
    sigterm) kill -TERM "$launcher"; code=143; what="terminated (SIGTERM)" ;;
    sighup) kill -HUP "$launcher"; code=129; what="hangup (SIGHUP)" ;;
    sigquit) kill -QUIT "$launcher"; code=131; what="quit (SIGQUIT)" ;;
    hup-group) kill -HUP -- "-$launcher"; code=129; what="hangup (SIGHUP)" ;;
    esac
    finish
    expect_status $code
    expect_line "upvm: $what: ending the job's 3 node(s)"
    expect_no_line "died" # no node's end is taken for a failure
    ;;
pipe)
    # The job's stdout is a pipe whose reader takes two lines and goes.
    mkfifo "$work/fifo" || fail "mkfifo"
    XDG_RUNTIME_DIR=$runtime setsid "${job[@]}" chatter "$mark" >"$work/fifo" 2>"$out" &
    launcher=$!
    [ $nodes = 1 ] || sock=$runtime/upvm/job-$launcher.sock
    timeout $START_S head -2 <"$work/fifo" >"$work/got" || fail "no two lines read"
    # (from here the job's next write has no reader)
    [ "$(wc -l <"$work/got")" = 2 ] || fail "not two lines read: $(cat "$work/got")"
    finish
    expect_status 141
    expect_no_line "upvm:" # nothing failed: no node is reported dead, no task lost
    ;;
full | closed)
    # The job's output cannot be written: said once, exit status 1.
    if [ $case = full ]; then
        why="No space left on device"
        XDG_RUNTIME_DIR=$runtime setsid "${job[@]}" print "$mark" >/dev/full 2>"$out" &
    else
        why="Bad file descriptor"
        XDG_RUNTIME_DIR=$runtime setsid "${job[@]}" print "$mark" >&- 2>"$out" &
    fi
    launcher=$!
    [ $nodes = 1 ] || sock=$runtime/upvm/job-$launcher.sock
    finish $((START_S + END_S)) # the whole job, from its start
    expect_status 1
    said=$(grep -c "^upvm: writing the job's output failed: $why\$" "$out")
    [ "$said" = 1 ] || fail "the failed output is said $said time(s), not once"
    [ "$(grep -c "upvm:" "$out")" = 1 ] || fail "other lines than the one expected"
    ;;
halt)
    start halt
    finish
    expect_status 143
    expect_line "upvm: the job was halted by t40005 (pvm_halt): ending its 3 node(s)"
    [ "$(grep -c "upvm:" "$out")" = 1 ] || fail "other lines than the one expected"
    ;;
normal | fail)
    start "$case"
    finish
    expect_status $([ "$case" = fail ] && echo 3 || echo 0)
    expect_no_line "upvm:"
    ;;
deadlock)
    start deadlock
    finish
    expect_status 70
    expect_line "upvm: deadlock: every ULP of the job's 3 node(s) is blocked"
    expect_line "upvm:   node0: t40001/$main"
    expect_line "upvm:   node1: t40002/blocker"
    expect_line "upvm:   node2: t40003/blocker"
    ;;
*)
    echo "test-node-death.sh: unknown case $case"
    exit 2
    ;;
esac
check_nothing_left
echo "ok ($case)"
