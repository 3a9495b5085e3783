#!/bin/bash
# test-upvm-ctl.sh BUILD_DIR CASE - a job's control socket and the commands
# that use it (upvm jobs, tasks, migrate, top, vacate, restore), from outside, on 2-node process-mode
# jobs of ctl-job.c (a master on node 0 that waits until a file exists, a
# worker on node1 blocked in pvm_recv).  Every wait is bounded: a hang
# fails the test instead of blocking it.
#
# CASE:
#   usage       upvm migrate / jobs / top / vacate / restore usage errors (2),
#               --help, no job (1), a socket directory with loose
#               permissions is refused
#   jobs        two jobs: upvm jobs lists both; the socket is 0600 in a 0700
#               directory; the job's replies (bad tid, node out of range),
#               malformed requests (top, vacate and restore's too), a silent and a mute client do not stop
#               others being served; several jobs need --job; both end
#               normally and leave nothing
#   sigterm     SIGTERM to the launcher: the socket is gone
#   kill-node0  kill -9 of node 0: the socket is gone
#   stale       a socket left by an earlier job with the launcher's pid is
#               replaced; kill -9 of the launcher leaves its socket, which
#               upvm ignores and the next job removes
#   tmpdir      without a usable XDG_RUNTIME_DIR: /tmp/upvm-<uid>
#   refused     a directory owned by someone else (as root) or too open: the
#               job says so and runs on
#   flood       100 clients that connect and say nothing, then 100 that
#               send half a request and stall: upvm tasks, jobs and migrate
#               are answered within their 2 s all the same (the oldest idle
#               clients are closed, told why), and every client is let in
#   titles      the nodes in ps and top: comm upvm-nodeK, cmdline "upvm: node
#               K of job PID (command line)", of a job started directly and
#               one by upvm run; the launcher keeps its name (77: a kernel
#               without PR_SET_MM_MAP)
#   top         upvm top --once, and upvm top on a terminal (script(1)) until
#               the job ends; upvm vacate / restore: a node, a host, no such
#               node or host.  The balancer's table and answers when the job
#               has one (src/gs), else its "error: ..." (status 1)
#   migrate     a migration there and back (the worker answers after it), and
#               one of the job's first task (started from the shell)
#   mpi         the same from a job of two MPI ranks (mpirun -np 2 over TCP):
#               its socket is node 0's (no launcher of ours), upvm tasks
#               asks every node, names their hosts; upvm restore HOST asks
#               for both nodes; nothing left at the end
set -u
build=$(cd "$1" && pwd)
case=$2
upvm=$build/tools/upvm/upvm
raw=$build/tests/tools/ctl-raw

START_S=20   # a job starts and prints READY (ASan builds are slow)
END_S=10     # a job ends after its stop file, a signal, a kill

mark="upvm-ctl-mark-$case-$$-$RANDOM"
# A short directory: a socket path has at most 107 bytes.  test-node-death
# does not count it among the files jobs leave in /tmp.
work=$(mktemp -d /tmp/upvm-ctl.XXXXXX) || exit 1
export XDG_RUNTIME_DIR=$work/run
mkdir -m 700 "$XDG_RUNTIME_DIR"
sockdir=$XDG_RUNTIME_DIR/upvm
launchers=()
cleanup() {
    local l
    for l in "${launchers[@]}"; do pkill -KILL -s "$l" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT

fail() {
    echo "FAIL ($case): $*"
    local f
    for f in "$work"/out*; do
        [ -e "$f" ] && { echo "---- $(basename "$f"):"; cat "$f"; }
    done
    exit 1
}

# ctl-job.c, built with upvmcc by tests/tools/CMakeLists.txt
cp "$build/tests/tools/ctl-job" "$work/ctl-job" || fail "no ctl-job: build first (cmake --build $build)"

# start N HOW [PRE]: job N, in its own session, started HOW (run: by upvm
# run --nodes 2; direct: as ./ctl-job with UPVM_NODES=2), after the shell
# command PRE (in the process that becomes the launcher: $BASHPID is its
# pid).  Waits for READY; sets L[N] (launcher), W[N] (worker tid), P0[N]
# (node 0's pid), S[N] (its socket, when XDG_RUNTIME_DIR is ours).
declare -a L W P0 S
start() {
    local n=$1 how=$2 pre=${3:-:} out="$work/out$1"
    local cmd=(./ctl-job "$work/stop$n" "$mark")
    [ "$how" = run ] && cmd=("$upvm" run --nodes 2 "${cmd[@]}")
    [ "$how" = mpirun ] && cmd=($MPIRUN -np 2 "${cmd[@]}")
    (cd "$work" && eval "$pre" && UPVM_NODES=2 exec setsid "${cmd[@]}") >"$out" 2>&1 &
    L[n]=$!
    launchers+=("${L[n]}")
    local deadline=$((SECONDS + START_S))
    until grep -q '^READY$' "$out" 2>/dev/null; do
        kill -0 "${L[n]}" 2>/dev/null || grep -q '^READY$' "$out" || fail "job $n ended before READY"
        [ $SECONDS -lt $deadline ] || fail "job $n: no READY within ${START_S} s"
        sleep 0.02
    done
    W[n]=$(awk '$1 == "worker" { print $2 }' "$out")
    P0[n]=$(awk '$1 == "node0" && $2 == "pid" { print $3 }' "$out")
    S[n]=$sockdir/job-${L[n]}.sock
    [ "$how" = mpirun ] && S[n]=$sockdir/job-${P0[n]}.sock # node 0 made it
}

# end N [SIGNAL PID]: make job N end (its stop file, or SIGNAL to PID), wait
# for it; its exit status in $status.
end() {
    local n=$1
    if [ $# -gt 1 ]; then kill "-$2" "$3"; else touch "$work/stop$n"; fi
    local deadline=$((SECONDS + END_S))
    while kill -0 "${L[n]}" 2>/dev/null; do
        [ $SECONDS -lt $deadline ] || fail "job $n did not end within ${END_S} s"
        sleep 0.02
    done
    wait "${L[n]}"
    status=$?
    # nodes die with their launcher (PR_SET_PDEATHSIG): soon, not at once
    deadline=$((SECONDS + 3))
    while pgrep -f -- "$mark" | grep -qx "${P0[n]}"; do
        [ $SECONDS -lt $deadline ] || fail "node 0 of job $n outlived it"
        sleep 0.02
    done
}

# run EXPECTED_STATUS PATTERN CMD...: CMD exits so and prints PATTERN (grep -E).
run() {
    local want=$1 pat=$2 got
    shift 2
    out=$(timeout 20 "$@" 2>&1)
    got=$?
    [ "$got" -eq "$want" ] || fail "$* exited $got, expected $want: $out"
    grep -Eq -- "$pat" <<<"$out" || fail "$* did not say /$pat/: $out"
}

mode_of() { stat -c %a "$1"; }

# The socket of job N is there, 0600 and ours, in a 0700 directory of ours.
expect_private() {
    local s=$1 d
    d=$(dirname "$s")
    [ -S "$s" ] || fail "no control socket $s"
    [ "$(mode_of "$s")" = 600 ] || fail "$s has mode $(mode_of "$s"), expected 600"
    [ "$(mode_of "$d")" = 700 ] || fail "$d has mode $(mode_of "$d"), expected 700"
    [ "$(stat -c %u "$s")" = "$(id -u)" ] && [ "$(stat -c %u "$d")" = "$(id -u)" ] ||
        fail "$s or its directory is not ours"
}

expect_gone() {
    [ ! -e "$1" ] || fail "$1 is left after the job ended"
}

case $case in
usage)
    run 2 "wants a TID and a NODE" "$upvm" migrate
    run 2 "wants a TID and a NODE" "$upvm" migrate t40001
    run 2 "bad TID" "$upvm" migrate t4000g 1
    run 2 "bad TID" "$upvm" migrate 0 1
    run 2 "bad TID" "$upvm" migrate 0x80000000 1
    run 2 "bad NODE" "$upvm" migrate t40001 node64
    run 2 "bad NODE" "$upvm" migrate t40001 one
    run 2 "^upvm migrate: unknown option '-1' \(see upvm help migrate\)$" "$upvm" migrate t40001 -1
    run 2 "^upvm migrate: unknown option '--frob' \(see upvm help migrate\)$" "$upvm" migrate --frob t40001 1
    run 2 "--job wants the pid" "$upvm" migrate --job abc t40001 1
    run 2 "unexpected argument '2'" "$upvm" migrate t40001 1 2
    run 2 "^upvm jobs: unexpected argument 'all' \(see upvm help jobs\)$" "$upvm" jobs all
    run 0 "^usage: upvm migrate \[--job PID\] \[--lazy\] TID NODE" "$upvm" migrate --help
    run 0 "^usage: upvm jobs" "$upvm" jobs -h
    run 0 "^  upvm migrate \[--job PID\] \[--lazy\] TID NODE" "$upvm" --help
    # top, vacate, restore
    run 2 "--interval wants seconds from 0.1 to 3600" "$upvm" top --interval 0
    run 2 "--interval wants seconds" "$upvm" top --interval
    run 2 "--interval wants seconds" "$upvm" top --interval 1s
    run 2 "--job wants the pid" "$upvm" top --job 0
    run 2 "unexpected argument 'node1'" "$upvm" top node1
    run 2 "wants a NODE or a HOST" "$upvm" vacate
    run 2 "wants a NODE or a HOST" "$upvm" restore --job 4194000
    run 2 "bad NODE or HOST" "$upvm" vacate node64
    run 2 "bad NODE or HOST" "$upvm" restore 99
    run 2 "bad NODE or HOST" "$upvm" vacate 'host/x'
    run 2 "unexpected argument '2'" "$upvm" vacate 1 2
    run 2 "unknown option '-1'" "$upvm" restore -1
    run 2 "--job wants the pid" "$upvm" vacate --job abc 1
    run 0 "^usage: upvm top \[--once\] \[--interval SECONDS\] \[--job PID\]" "$upvm" top --help
    run 0 "^usage: upvm vacate \[--job PID\] NODE\|HOST" "$upvm" vacate -h
    run 0 "^usage: upvm vacate .*
 +upvm restore \[--job PID\] NODE\|HOST" "$upvm" restore --help
    for c in top vacate restore; do
        run 0 "^  upvm $c \[--" "$upvm" --help
        run 0 "^  upvm $c \[--" "$upvm" help
    done
    # no job: nothing to list, nothing to migrate
    run 0 "^no running UPVM job of yours \(none in $sockdir\)" "$upvm" jobs
    run 1 "no running UPVM job of yours" "$upvm" migrate t80001 0
    run 1 "no job with pid 4194000 \(no $sockdir/job-4194000.sock\)" \
        "$upvm" migrate --job 4194000 t80001 0
    run 1 "^upvm top: no running UPVM job of yours" "$upvm" top --once
    run 1 "^upvm top: no running UPVM job of yours" "$upvm" top
    run 1 "^upvm vacate: no running UPVM job of yours" "$upvm" vacate 1
    run 1 "^upvm restore: no job with pid 4194000" "$upvm" restore --job 4194000 somehost
    # a directory others may enter is not used
    mkdir -m 755 "$sockdir"
    run 1 "$sockdir has mode 0755; it must be 0700" "$upvm" jobs
    run 1 "$sockdir has mode 0755; it must be 0700" "$upvm" migrate t80001 0
    ;;
jobs)
    start 0 run
    expect_private "${S[0]}"
    run 0 "^ *${L[0]} +2 +ctl-job$" "$upvm" jobs
    # the job's replies; the only job needs no --job
    run 1 "^error: .*t80063" "$upvm" migrate t80063 0 # node1 says it
    run 1 "^error: no task t100001 in this job$" "$upvm" migrate t100001 0 # no node4
    run 1 "^error: no node7 in this job \(its nodes: node0 node1\)$" "$upvm" migrate "${W[0]}" 7
    run 1 "^error: no node9 in this job" "$upvm" migrate "0x${W[0]#t}" node9
    # what upvm never sends
    run 0 "^error: unknown request 'frob' \(ping, tasks, top, migrate <tid> <node>, vacate <node>, restore <node>\)$" "$raw" send "${S[0]}" $'frob\n'
    run 0 "^error: top takes no arguments$" "$raw" send "${S[0]}" $'top 1\n'
    run 0 "^error: vacate wants <node> or <host>$" "$raw" send "${S[0]}" $'vacate\n'
    run 0 "^error: restore wants <node> or <host>$" "$raw" send "${S[0]}" $'restore 1 2\n'
    run 0 "^error: bad node 'node64' \(a number, node1 ..., or a host name\)$" "$raw" send "${S[0]}" $'vacate node64\n'
    run 0 "^error: bad node '-1'" "$raw" send "${S[0]}" $'restore -1\n'
    run 0 "^error: bad node 'a/b'" "$raw" send "${S[0]}" $'vacate a/b\n'
    run 0 "^error: no node7 in this job \(its nodes: node0 node1\)$" "$raw" send "${S[0]}" $'vacate node7\n'
    run 0 "^error: no node of this job runs on host no-such.host \(its nodes: node0 node1\)$" \
        "$raw" send "${S[0]}" $'restore\tno-such.host\r\n'
    run 0 "^error: tasks takes no arguments$" "$raw" send "${S[0]}" $'tasks 1\n'
    run 0 "^error: unknown request ''" "$raw" send "${S[0]}" $'\n'
    run 0 "^error: bad tid 'zz'" "$raw" send "${S[0]}" $'migrate zz 1\n'
    run 0 "^error: bad node 'x'" "$raw" send "${S[0]}" $'migrate t1 x\n'
    run 0 "^error: migrate wants <tid> <node> \[lazy\]$" "$raw" send "${S[0]}" $'migrate t1 1 2\n'
    run 0 "^error: ping takes no arguments$" "$raw" send "${S[0]}" $'ping me\n'
    run 0 "^error: request too long$" "$raw" send "${S[0]}" "$(printf 'x%.0s' {1..300})"
    run 0 "^job ${L[0]} nodes 2 program ctl-job$" "$raw" send "${S[0]}" $'ping\n'
    run 0 "^job ${L[0]} nodes 2 program ctl-job$" "$raw" send "${S[0]}" "ping" # ended by EOF
    # a client that says nothing, and one that never reads its reply, hold
    # no one up
    "$raw" silent "${S[0]}" 3000 >"$work/silent" 2>&1 &
    silent=$!
    "$raw" mute "${S[0]}" $'migrate t80001 9\n' || fail "the mute client could not connect"
    run 0 "^ *${L[0]} +2 +ctl-job$" "$upvm" jobs
    run 1 "^error: no node5" "$upvm" migrate "${W[0]}" 5
    wait $silent
    [ ! -s "$work/silent" ] || fail "the silent client was told: $(cat "$work/silent")"
    # a second job: upvm migrate wants --job
    start 1 direct
    expect_private "${S[1]}"
    run 0 "^ *${L[0]} +2 +ctl-job$" "$upvm" jobs
    run 0 "^ *${L[1]} +2 +ctl-job$" "$upvm" jobs
    run 2 "2 jobs are running; say which with --job PID" "$upvm" migrate "${W[0]}" 0
    grep -Eq "^ *${L[1]} +2 +ctl-job$" <<<"$out" || fail "the error does not list job ${L[1]}: $out"
    run 1 "^error: no node5" "$upvm" migrate --job "${L[1]}" "${W[1]}" 5
    end 0
    [ "$status" -eq 0 ] || fail "job 0 exited $status"
    grep -q "^worker answered$" "$work/out0" || fail "job 0's worker did not answer"
    expect_gone "${S[0]}"
    run 0 "^ *${L[1]} +2 +ctl-job$" "$upvm" jobs
    run 1 "job ${L[0]}|no job with pid ${L[0]}" "$upvm" migrate --job "${L[0]}" "${W[0]}" 0
    end 1
    [ "$status" -eq 0 ] || fail "job 1 exited $status"
    expect_gone "${S[1]}"
    expect_gone "$sockdir" # removed once empty
    ;;
sigterm)
    start 0 run
    expect_private "${S[0]}"
    end 0 TERM "${L[0]}"
    [ "$status" -eq 143 ] || fail "exit status $status, expected 143"
    expect_gone "${S[0]}"
    expect_gone "$sockdir"
    ;;
kill-node0)
    start 0 direct
    expect_private "${S[0]}"
    end 0 KILL "${P0[0]}"
    [ "$status" -eq 137 ] || fail "exit status $status, expected 137"
    expect_gone "${S[0]}"
    expect_gone "$sockdir"
    ;;
stale)
    # what a crashed earlier job with the same pid left: replaced
    start 0 run 'mkdir -p -m 700 "$sockdir" && "$raw" stale "$sockdir/job-$BASHPID.sock"'
    expect_private "${S[0]}"
    run 0 "^ *${L[0]} +2 +ctl-job$" "$upvm" jobs
    # SIGKILL to the launcher leaves its socket: upvm sees no job there,
    # and keeps it
    end 0 KILL "${L[0]}"
    [ -S "${S[0]}" ] || fail "the socket of a job killed with SIGKILL went (how?)"
    run 0 "^no running UPVM job of yours" "$upvm" jobs
    run 1 "job ${L[0]} has ended" "$upvm" migrate --job "${L[0]}" "${W[0]}" 0
    [ -S "${S[0]}" ] || fail "upvm removed a socket"
    # the next job removes it, once it serves
    start 1 direct
    run 0 "^ *${L[1]} +2 +ctl-job$" "$upvm" jobs
    expect_gone "${S[0]}"
    end 1
    [ "$status" -eq 0 ] || fail "job 1 exited $status"
    expect_gone "${S[1]}"
    ;;
tmpdir)
    # XDG_RUNTIME_DIR names no directory: /tmp/upvm-<uid>, which other jobs
    # (of the suite running beside this test) may share
    export XDG_RUNTIME_DIR=$work/none
    sockdir=/tmp/upvm-$(id -u)
    start 0 run
    expect_private "${S[0]}"
    run 0 "^ *${L[0]} +2 +ctl-job$" "$upvm" jobs
    run 1 "^error: no node3" "$upvm" migrate --job "${L[0]}" "${W[0]}" 3
    end 0
    [ "$status" -eq 0 ] || fail "exit status $status"
    expect_gone "${S[0]}"
    ;;
refused)
    mkdir -m 711 "$sockdir"
    start 0 run
    grep -q "^upvm: no control socket for this job (upvm migrate cannot reach it): $sockdir has mode 0711; it must be 0700 (chmod 700 $sockdir)$" \
        "$work/out0" || fail "no line about the directory's mode"
    expect_gone "${S[0]}"
    run 1 "has mode 0711" "$upvm" jobs
    end 0
    [ "$status" -eq 0 ] || fail "a job without a control socket exited $status"
    if [ "$(id -u)" = 0 ]; then # only root can give a directory away
        chmod 700 "$sockdir"
        chown 65534 "$sockdir"
        start 1 direct
        grep -q "upvm: no control socket for this job .*: $sockdir is owned by uid 65534, not by you (uid 0)" \
            "$work/out1" || fail "no line about the directory's owner"
        run 1 "is owned by uid 65534" "$upvm" migrate "${W[1]}" 0
        end 1
        [ "$status" -eq 0 ] || fail "a job without a control socket exited $status"
    fi
    ;;
flood)
    start 0 run
    for text in "" "tas"; do
        # the clients stay 4 s: past the moment upvm is answered, which
        # must not wait for their 5 s timeouts.  The file is emptied here:
        # the background job's own redirection may come after the polling
        # below has read the last round's "held 100".
        : >"$work/out-hold"
        "$raw" hold "${S[0]}" 100 "$text" 4000 >"$work/out-hold" 2>&1 &
        holder=$!
        deadline=$((SECONDS + 5))
        until grep -q '^held' "$work/out-hold"; do
            kill -0 $holder 2>/dev/null || grep -q '^held' "$work/out-hold" || fail "ctl-raw hold ended"
            [ $SECONDS -lt $deadline ] || fail "ctl-raw hold did not connect within 5 s"
            sleep 0.02
        done
        grep -q '^held 100$' "$work/out-hold" ||
            fail "the job let in $(cat "$work/out-hold") of 100 clients (${text:-idle})"
        run 0 "^node1 pid [0-9]+: 1 task$" "$upvm" tasks
        run 0 "^ *${L[0]} +2 +ctl-job$" "$upvm" jobs
        run 1 "^error: no node5" "$upvm" migrate "${W[0]}" 5
        # the oldest idle were closed to make room, and told why
        wait $holder || fail "ctl-raw hold failed: $(cat "$work/out-hold")"
        grep -q '^closed by the job [0-9]*, the first told: error: closed unanswered: 64 clients were connected' \
            "$work/out-hold" || fail "ctl-raw hold: $(cat "$work/out-hold")"
    done
    end 0
    [ "$status" -eq 0 ] || fail "exit status $status"
    expect_gone "${S[0]}"
    ;;
top)
    start 0 run
    # Without a balancer (src/gs not wired into the job) top, vacate and
    # restore are refused; with one, its table starts with a line "node ...".
    out=$(timeout 20 "$upvm" top --once 2>&1)
    got=$?
    if [ $got -eq 1 ] && grep -Eq "^error: this job has no balancer$" <<<"$out"; then
        balancer=no
        run 1 "^error: this job has no balancer$" "$upvm" top # not a terminal: once
        run 1 "^error: this job has no balancer$" "$upvm" vacate node1
        run 1 "^error: this job has no balancer$" "$upvm" restore 1
    else
        balancer=yes
        [ $got -eq 0 ] || fail "upvm top --once exited $got: $out"
        [ "$(head -c 4 <<<"$out")" = node ] || fail "upvm top --once: no table: $out"
        grep -Eq '^ *(node)? *1\b' <<<"$out" || fail "upvm top --once: no line for node1: $out"
        run 0 "^node" "$upvm" top --job "${L[0]}" # not a terminal: once
        [ "$(head -c 4 <<<"$out")" = node ] || fail "upvm top: no table: $out"
        run 0 "^ok .*node1" "$upvm" vacate node1
        run 0 "^ok .*node1" "$upvm" restore 1
    fi
    echo "balancer: $balancer"
    run 1 "^error: no node5 in this job \(its nodes: node0 node1\)$" "$upvm" vacate node5
    run 1 "^error: no node5 in this job \(its nodes: node0 node1\)$" "$upvm" restore 5
    # a job of one host: no node is on a host by name
    run 1 "^error: no node of this job runs on host $(hostname -s) \(its nodes: node0 node1\)$" \
        "$upvm" vacate "$(hostname -s)"
    if [ $balancer = yes ] && command -v script >/dev/null; then
        # on a terminal (script's): redrawn until q, Ctrl-C, or the job's end
        mkfifo "$work/keys"
        for key in q $'\003' end; do
            script -qfec "$upvm top --interval 0.1" /dev/null <"$work/keys" >"$work/out-top" 2>&1 &
            topper=$!
            exec 3>"$work/keys"
            deadline=$((SECONDS + 5))
            until [ "$(grep -c $'\e\\[H\e\\[2J' "$work/out-top")" -ge 2 ]; do
                kill -0 $topper 2>/dev/null || fail "upvm top on a terminal ended"
                [ $SECONDS -lt $deadline ] || fail "upvm top on a terminal: not 2 tables in 5 s"
                sleep 0.02
            done
            if [ "$key" = end ]; then end 0; else printf %s "$key" >&3; fi
            deadline=$((SECONDS + 5))
            while kill -0 $topper 2>/dev/null; do
                [ $SECONDS -lt $deadline ] || fail "upvm top did not end (${key@Q})"
                sleep 0.02
            done
            wait $topper || fail "upvm top on a terminal exited $? (${key@Q})"
            exec 3>&-
            ended=$(grep -c "^upvm top: the job ended" "$work/out-top")
            [ "$ended" = "$([ $key = end ] && echo 1 || echo 0)" ] ||
                fail "upvm top (${key@Q}): $(cat -v "$work/out-top")"
        done
        deadline=$((SECONDS + 5))
        while kill -0 $topper 2>/dev/null; do
            [ $SECONDS -lt $deadline ] || fail "upvm top did not end with the job"
            sleep 0.02
        done
        wait $topper || fail "upvm top on a terminal exited $?"
        grep -q "^upvm top: the job ended" "$work/out-top" || fail "upvm top did not say the job ended"
    else
        end 0
    fi
    [ "$status" -eq 0 ] || fail "exit status $status"
    expect_gone "${S[0]}"
    ;;
migrate)
    start 0 run
    # watching it: every task, on its node
    master=$(awk '$1 == "master" { print $2 }' "$work/out0")
    run 0 "^node1 pid [0-9]+: 1 task$" "$upvm" tasks
    grep -Eq "^node0 pid ${P0[0]}: " <<<"$out" || fail "upvm tasks: node 0's pid: $out"
    grep -Eq "^ .*\b$master/ctl-job\b" <<<"$out" || fail "upvm tasks: no $master: $out"
    [ "$(grep -A1 '^node1 ' <<<"$out" | tail -1)" = " ${W[0]}/ctl-job" ] ||
        fail "upvm tasks: ${W[0]} is not listed on node1: $out"
    t='[0-9]+\.[0-9] (us|ms|s)'
    run 0 "^ok ${W[0]} node1 -> node0 in $t \(obtrusiveness $t, [0-9.]+ (B|KiB|MiB|GiB)\)$" \
        "$upvm" migrate "${W[0]}" 0
    run 0 "^node1 pid [0-9]+: 0 tasks$" "$upvm" tasks --job "${L[0]}"
    grep -A1 '^node0 ' <<<"$out" | grep -q " ${W[0]}/ctl-job" ||
        fail "upvm tasks: ${W[0]} is not listed on node0 after its move: $out"
    run 0 "^ok ${W[0]} node0 -> node1 in " "$upvm" migrate "${W[0]}" node1
    # a lazy move: the worker's memory follows it (it answers below)
    run 0 "^ok ${W[0]} node1 -> node0 in " "$upvm" migrate --lazy "${W[0]}" 0
    # the job's first task (started from the shell) moves too; node 0
    # still gets its exit status
    run 0 "^ok [t0-9a-f]+ node0 -> node1 in " \
        "$upvm" migrate "$(awk '$1 == "master" { print $2 }' "$work/out0")" 1
    end 0
    [ "$status" -eq 0 ] || fail "exit status $status"
    grep -q "^worker answered$" "$work/out0" || fail "the worker did not answer after its moves"
    expect_gone "${S[0]}"
    ;;
mpi)
    [ -e "$build/src/libupvm-mpi.so" ] && [ -n "${UPVM_TEST_MPIRUN:-}" ] ||
        { echo "SKIP: no MPI transport in this build"; exit 77; }
    MPIRUN="$UPVM_TEST_MPIRUN --mca btl tcp,self"
    start 0 mpirun
    expect_private "${S[0]}"
    run 0 "^ +${P0[0]} +2 +ctl-job$" "$upvm" jobs
    host=$(hostname -s)
    run 0 "^node1 pid [0-9]+ on $host(:1)?: 1 task$" "$upvm" tasks
    grep -Eq "^node0 pid ${P0[0]} on $host(:0)?: " <<<"$out" || fail "upvm tasks: node 0: $out"
    [ "$(grep -A1 '^node1 ' <<<"$out" | tail -1)" = " ${W[0]}/ctl-job" ] ||
        fail "upvm tasks: ${W[0]} is not listed on node1: $out"
    run 0 "^ok ${W[0]} node1 -> node0 in " "$upvm" migrate "${W[0]}" 0
    run 0 "^node1 pid [0-9]+ on .*: 0 tasks$" "$upvm" tasks
    # a host names every node of the job there: each answers (the
    # balancer's words, "; " between them), or the job has no balancer
    out=$(timeout 20 "$upvm" restore "$host" 2>&1)
    grep -Eq "^error: this job has no balancer$|^(ok|error).*node0.*; .*node1|^(ok|error).*node1.*; .*node0" \
        <<<"$out" || fail "upvm restore $host: $out"
    echo "upvm restore $host: $out"
    run 1 "^error: no node of this job runs on host no-such-host \(its nodes: node0 node1\)$" \
        "$upvm" vacate no-such-host
    run 0 "^ok ${W[0]} node0 -> node1 in " "$upvm" migrate "${W[0]}" node1
    # a lazy move: the worker's memory follows it (it answers below)
    run 0 "^ok ${W[0]} node1 -> node0 in " "$upvm" migrate --lazy "${W[0]}" 0
    end 0
    [ "$status" -eq 0 ] || fail "exit status $status"
    grep -q "^worker answered$" "$work/out0" || fail "the worker did not answer after its moves"
    expect_gone "${S[0]}"
    ;;
titles)
    # the nodes a launcher forked are named in ps and top (src/node/title.h):
    # comm upvm-nodeK, cmdline "upvm: node K of job PID (the command line)";
    # the launcher, the process the user started, keeps its own name
    start 0 direct
    start 1 run
    for n in 0 1; do
        nodes=$(pgrep -P "${L[n]}" | sort -n)
        [ "$(wc -w <<<"$nodes")" = 2 ] || fail "job $n: not 2 nodes under ${L[n]}: $nodes"
        seen=""
        for p in $nodes; do
            comm=$(cat "/proc/$p/comm") && cmdline=$(tr '\0' ' ' <"/proc/$p/cmdline") ||
                fail "job $n: node $p went away"
            [[ $comm =~ ^upvm-node([01])$ ]] || fail "job $n: node $p has comm '$comm'"
            k=${BASH_REMATCH[1]}
            if [ "$cmdline" != "${cmdline#upvm: }" ]; then :
            elif [ "$n" = 0 ] && [[ $cmdline == *"$mark"* ]]; then
                echo "SKIP: this kernel keeps a node's command line (no PR_SET_MM_MAP): $cmdline"
                end 0; end 1; exit 77
            fi
            want="upvm: node $k of job ${L[n]} ("
            [ "$n" = 1 ] && want+="$upvm run --nodes 2 "
            want+="./ctl-job $work/stop$n $mark) "
            [ "$cmdline" = "$want" ] || fail "job $n node $k: cmdline '$cmdline', expected '$want'"
            seen+=$k
        done
        [ "$seen" = 01 ] || [ "$seen" = 10 ] || fail "job $n: nodes named $seen, expected 0 and 1"
        [ "$(awk '$1 == "node0" && $2 == "pid" { print $3 }' "$work/out$n")" = \
          "$(pgrep -P "${L[n]}" -x upvm-node0)" ] || fail "job $n: node 0's pid is not upvm-node0's"
        launcher=$(tr '\0' ' ' <"/proc/${L[n]}/cmdline")
        want=$([ "$n" = 1 ] && echo upvm || echo ctl-job)
        [ "$(cat "/proc/${L[n]}/comm")" = "$want" ] ||
            fail "job $n: the launcher's comm is '$(cat "/proc/${L[n]}/comm")', expected $want"
        [[ $launcher == *"ctl-job $work/stop$n $mark "* && $launcher != upvm:* ]] ||
            fail "job $n: the launcher's cmdline changed: $launcher"
    done
    end 0
    [ "$status" -eq 0 ] || fail "job 0: exit status $status"
    end 1
    [ "$status" -eq 0 ] || fail "job 1: exit status $status"
    ;;
*)
    echo "test-upvm-ctl.sh: unknown case $case"
    exit 2
    ;;
esac
echo "ok ($case)"
