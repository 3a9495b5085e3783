#!/usr/bin/env bash
# test-hosts.sh BUILD_DIR CASE [ARGS...] - one UPVM job over emulated hosts
# (ctest; see CMakeLists.txt here).  Runs inside `emulated-hosts.sh run N --`,
# whose environment (UPVM_HOSTS_*) names the hosts and the mpirun that
# reaches them; the hosts are removed by it however this ends.
#
# CASE:
#   isolated       (2 hosts) the set-up itself: a 2-rank mpirun of a shell
#                  command sees each host's own host name and own /dev/shm
#                  (a file made in one host's is not in the other's, nor in
#                  the machine's); then a UPVM job of one rank per host
#                  (hosts-loop) moves 20 MB each way between them, and the
#                  hosts' eth0 and TCP counters show it crossed the bridge
#   pvm-examples   (2 hosts) run-pvm-examples.sh ARGS (the examples'
#                  names) with --launch "mpirun -H host1:2,host2:1 -np 3"
#   kill           (2 hosts) hosts-loop runs on both hosts; every process of
#                  host 2 gets SIGKILL; mpirun must end within END_S with a
#                  non-zero status
#   netgone        (2 hosts) hosts-loop runs on both hosts; host 2's network
#                  goes (its eth0 down): with the TCP keepalive `upvm run
#                  --hosts` gives mpirun (shortened here), mpirun notices
#                  the lost daemon and ends the job within END_S
#   addhost        (2 hosts) upvm run --hostfile F, F naming host 2 as "&":
#                  addhost.c adds it with pvm_addhosts, spawns there by its
#                  name, deletes it (notifications), and adding an unknown
#                  host says why
#   fire           (2 hosts) migration under fire (tests/migrate/fire.c) on 3
#                  nodes, 2 on host 1 and 1 on host 2: hundreds of moves,
#                  many between hosts; the results equal a run without moves
#   trace          (2 hosts) upvm run --hosts ... --trace of
#                  tests/trace/pattern.c on 3 nodes (2 on host 1, 1 on
#                  host 2; one task moves): host 2's node measured its
#                  clock's offset (an OFFSET record), the converted trace
#                  has every message once, matched, none received before
#                  it was sent (tests/trace/check_trace.py)
#   migrate-build  (2 hosts) host 2 has another build of the program at the
#                  same path: a move of a task of host 1 there is refused
#                  with the reason, a move between host 1's nodes is not
# Every case then checks that nothing of the job is left: no process in any
# host or with the job's program or agent in its command line, no control
# socket of UPVM's (job-PID.sock, made by node 0 = rank 0: the test gives the
# job an XDG_RUNTIME_DIR of its own, so that what is there is the job's and
# not another job's of this machine), nothing in the hosts' /dev/shm (the
# job's processes run there: whatever they put in /dev/shm is there).  Every
# wait polls for its condition with a deadline.
set -u
build=$(cd "${1:?usage: test-hosts.sh BUILD_DIR CASE}" && pwd)
case=${2:?usage: test-hosts.sh BUILD_DIR CASE}
shift 2
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
hosts=$here/emulated-hosts.sh

[ -n "${UPVM_HOSTS_MPIRUN:-}" ] ||
    { echo "test-hosts: run me inside: $hosts run 2 -- $0 BUILD_DIR CASE" >&2; exit 2; }
read -ra addr <<<"$UPVM_HOSTS_ADDRS"
read -ra name <<<"$UPVM_HOSTS_NAMES"
read -ra netns <<<"$UPVM_HOSTS_NETNS"
read -ra mpirun <<<"$UPVM_HOSTS_MPIRUN"
mpirun+=(-x XDG_RUNTIME_DIR)
loop=$build/tests/hosts/hosts-loop

START_S=30   # a job starts and runs on every host
END_S=30     # mpirun ends after a host is killed
LEFT_S=10    # what a job leaves ends (Open MPI: SIGCONT, 1 s, SIGTERM, SIGKILL)

work=$(mktemp -d /tmp/upvm-hosts-test.XXXXXX) || exit 1
# UPVM's control sockets go to $XDG_RUNTIME_DIR/upvm (in /tmp: every host
# sees it, and a socket path is short)
export XDG_RUNTIME_DIR=$work/rt
# the cases move tasks themselves or count their frames: no balancer
export UPVM_BALANCE=${TEST_BALANCE:-none}
mkdir -m 700 "$XDG_RUNTIME_DIR" || exit 1
ctldir=$XDG_RUNTIME_DIR/upvm
out=$work/out
job=
trap '[ -n "$job" ] && kill -KILL "$job" 2>/dev/null; rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

FAILS=()
fail() { echo "FAIL: $*"; FAILS+=("$*"); }
info() { echo "-- $*"; }
now_ms() { date +%s%3N; }
on_host() { "$hosts" exec "$@"; }   # on_host K CMD...
# poll T CMD...: CMD until it succeeds, for at most T seconds
poll() {
    local end=$(( $(now_ms) + $1 * 1000 ))
    shift
    while ! "$@"; do
        [ "$(now_ms)" -lt "$end" ] || return 1
        sleep 0.05
    done
}

# ------------------------------------------------------------ leftovers

# Every process of the job: in a host's network namespace, or, anywhere,
# with the job's program or the launch agent in its command line (mpirun,
# orted).  "pid command" lines.
job_procs() {
    local ns p
    { for ns in "${netns[@]}"; do ip netns pids "$ns"; done
      # ([a]: not grep itself)
      grep -lsE -- "${loop%p}[p]|${UPVM_HOSTS_AGENT%t}[t]" /proc/[0-9]*/cmdline |
          sed 's,^/proc/,,; s,/cmdline$,,'
    } | sort -un | while read -r p; do
        [ "$p" != $$ ] || continue
        [ -r "/proc/$p/cmdline" ] || continue
        echo "$p $(tr '\0' ' ' <"/proc/$p/cmdline" | cut -c1-120)"
    done
}
no_job_procs() { [ -z "$(job_procs)" ]; }
# pid runs (a zombie does not)
alive() {
    local st
    st=$(sed 's/^.*) //; s/ .*//' "/proc/$1/stat" 2>/dev/null)
    [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

check_left() {
    local k e pid left
    # processes (those of a killed job may take Open MPI's SIGTERM delay)
    if ! poll $LEFT_S no_job_procs; then
        fail "processes of the job left ${LEFT_S}s after it ended:"
        job_procs | sed 's/^/     /'
    fi
    # control sockets: anything in the job's control directory
    for e in $(ls -A "$ctldir" 2>/dev/null); do
        pid=$(echo "$e" | sed -n 's/^\.\{0,1\}job-\([0-9]*\)\.\(sock\|new\)$/\1/p')
        if [ -n "$pid" ] && ! alive "$pid"; then
            fail "control socket $ctldir/$e left behind (its pid $pid is dead)"
        else
            fail "$ctldir/$e left behind"
        fi
    done
    # each host's /dev/shm (private: anything there is the job's; the
    # machine's is not the job's: its processes all run in the hosts)
    for k in $(seq 1 "$UPVM_HOSTS_N"); do
        left=$(on_host "$k" ls -A /dev/shm | tr '\n' ' ')
        [ -z "$left" ] || fail "left in ${name[k-1]}'s /dev/shm: $left"
    done
    # Open MPI's session directory of a host whose orted was killed: not
    # the job's (emulated-hosts.sh down removes it); said, not failed
    for k in $(seq 1 "$UPVM_HOSTS_N"); do
        [ ! -e "/tmp/ompi.${name[k-1]}.$(id -u)" ] ||
            info "note: /tmp/ompi.${name[k-1]}.$(id -u) is there (Open MPI's session directory: a killed orted leaves it; emulated-hosts.sh down removes it)"
    done
}

finish() {
    check_left
    if [ ${#FAILS[@]} -gt 0 ]; then
        echo "test-hosts $case: FAILED (${#FAILS[@]}):"
        printf '  - %s\n' "${FAILS[@]}"
        exit 1
    fi
    echo "test-hosts $case: ok"
    exit 0
}

# ------------------------------------------------------------ cases

# a counter of host K: the bytes of its eth0, or TCP segments (/proc/net/snmp)
eth_bytes() { on_host "$1" cat "/sys/class/net/eth0/statistics/$2_bytes"; }
tcp_segs() { on_host "$1" awk '$1 == "Tcp:" && $2 ~ /^[0-9]/ {print $11 + $12}' /proc/net/snmp; }

case_isolated() {
    local sh t0 lines
    # 1. host names and /dev/shm: each rank makes a mark in its /dev/shm
    sh='echo "rank $OMPI_COMM_WORLD_RANK host $(hostname) shm [$(ls -A /dev/shm | tr "\n" " ")]";
        touch /dev/shm/upvm-hosts-mark.$(hostname)'
    t0=$(now_ms)
    timeout -k 5 $START_S "${mpirun[@]}" -H "${addr[0]},${addr[1]}" -np 2 sh -c "$sh" >"$out" 2>&1 ||
        fail "mpirun -np 2 sh -c ...: exit status $?"
    info "mpirun -np 2 over ${name[0]} and ${name[1]} ($(( $(now_ms) - t0 )) ms):"
    sed 's/^/     /' "$out"
    grep -qx "rank 0 host ${name[0]} shm \[\]" "$out" ||
        fail "rank 0 is not alone on ${name[0]} with an empty /dev/shm"
    grep -qx "rank 1 host ${name[1]} shm \[\]" "$out" ||
        fail "rank 1 is not alone on ${name[1]} with an empty /dev/shm"
    [ "$(hostname)" != "${name[0]}" ] && [ "$(hostname)" != "${name[1]}" ] ||
        fail "this machine is called $(hostname) too"
    # 2. each host sees its own mark only, the machine neither
    sh='echo "rank $OMPI_COMM_WORLD_RANK host $(hostname) shm [$(ls -A /dev/shm | tr "\n" " ")]";
        rm -f /dev/shm/upvm-hosts-mark.*'
    timeout -k 5 $START_S "${mpirun[@]}" -H "${addr[0]},${addr[1]}" -np 2 sh -c "$sh" >"$out" 2>&1 ||
        fail "mpirun -np 2 sh -c ...: exit status $?"
    sed 's/^/     /' "$out"
    grep -qx "rank 0 host ${name[0]} shm \[upvm-hosts-mark.${name[0]} \]" "$out" ||
        fail "${name[0]}'s /dev/shm does not hold its own mark only"
    grep -qx "rank 1 host ${name[1]} shm \[upvm-hosts-mark.${name[1]} \]" "$out" ||
        fail "${name[1]}'s /dev/shm does not hold its own mark only"
    lines=$(ls /dev/shm | grep -c '^upvm-hosts-mark\.')
    [ "$lines" = 0 ] || fail "the machine's /dev/shm has a host's mark"
    # 3. frames cross TCP between the hosts: a UPVM job of one rank per host
    # sends 20 MB each way (hosts-loop: 20 rounds of 1 MB); only eth0 leads
    # from one host to the other, and the MPI frames may take TCP only
    local -a rx0 tx0 seg0 rx1 tx1 seg1
    for k in 1 2; do rx0[k]=$(eth_bytes $k rx); tx0[k]=$(eth_bytes $k tx); seg0[k]=$(tcp_segs $k); done
    t0=$(now_ms)
    timeout -k 5 $START_S "${mpirun[@]}" -H "${addr[0]},${addr[1]}" -np 2 "$loop" -n 20 -s 1000000 \
        >"$out" 2>&1 || fail "mpirun -np 2 hosts-loop: exit status $?"
    info "mpirun -np 2 hosts-loop -n 20 -s 1000000 ($(( $(now_ms) - t0 )) ms):"
    sed 's/^/     /' "$out"
    grep -qx "hosts-loop: 2 nodes exchanging: node0=${name[0]} node1=${name[1]}" "$out" ||
        fail "hosts-loop's nodes are not on ${name[0]} and ${name[1]}"
    grep -qx "hosts-loop: done: 20 rounds, 20000000 bytes each way" "$out" ||
        fail "hosts-loop did not finish its 20 rounds"
    for k in 1 2; do
        rx1[k]=$(( $(eth_bytes $k rx) - rx0[k] )); tx1[k]=$(( $(eth_bytes $k tx) - tx0[k] ))
        seg1[k]=$(( $(tcp_segs $k) - seg0[k] ))
        info "${name[k-1]} eth0: received ${rx1[k]} bytes, sent ${tx1[k]}; TCP segments in+out: ${seg1[k]}"
        [ "${rx1[k]}" -ge 20000000 ] && [ "${tx1[k]}" -ge 20000000 ] ||
            fail "${name[k-1]}'s eth0 did not carry the 20 MB each way"
        # (at least one segment per 64 KiB, the largest with TSO/GRO)
        [ "${seg1[k]}" -ge 610 ] || fail "${name[k-1]}: too few TCP segments for 40 MB"
    done
}

case_pvm_examples() {
    [ $# -gt 0 ] || { echo "test-hosts pvm-examples: no example named" >&2; exit 2; }
    local launch="$UPVM_HOSTS_MPIRUN -x XDG_RUNTIME_DIR -H ${addr[0]}:2,${addr[1]}:1 -np 3"
    info "run-pvm-examples.sh --launch \"$launch\""
    "$repo/tests/examples/run-pvm-examples.sh" "$build" \
        --prebuilt "$build/tests/examples/pvm-examples-build" --launch "$launch" "$@"
    local st=$?
    [ $st = 77 ] && exit 77
    [ $st = 0 ] || fail "run-pvm-examples.sh: exit status $st"
}

case_kill() {
    local t0 t1 p k st pids
    t0=$(now_ms)
    "${mpirun[@]}" -H "${addr[0]},${addr[1]}" -np 2 "$loop" -n 0 -s 1000 -t 120 >"$out" 2>&1 &
    job=$!
    # running on both hosts: its line says so, and a rank of it runs in each
    runs_on_both() {
        grep -qx "hosts-loop: 2 nodes exchanging: node0=${name[0]} node1=${name[1]}" "$out" || return 1
        for k in 0 1; do
            ip netns pids "${netns[k]}" | while read -r p; do
                tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null
                echo
            done | grep -q "tests/hosts/hosts-loop" || return 1
        done
    }
    if ! poll $START_S runs_on_both; then
        fail "the job did not run on both hosts within ${START_S}s"
        cat "$out"
        kill -KILL "$job" 2>/dev/null
        return
    fi
    info "running on both hosts after $(( $(now_ms) - t0 )) ms: $(cat "$out")"
    for k in 0 1; do
        info "${name[k]} (${netns[k]}):"
        for p in $(ip netns pids "${netns[k]}"); do
            echo "     $p $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-100)"
        done
    done
    for p in $(ip netns pids "${netns[0]}"); do
        tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q "^$loop " && info "rank 0 (node 0): pid $p"
    done
    info "control sockets: $(ls -A "$ctldir" 2>/dev/null | tr '\n' ' ')"
    # SIGKILL to every process of host 2 (again, until none is left)
    t1=$(now_ms)
    kill_host2() {
        pids=$(ip netns pids "${netns[1]}")
        [ -z "$pids" ] && return 0
        # shellcheck disable=SC2086
        kill -KILL $pids 2>/dev/null
        return 1
    }
    poll 5 kill_host2 || fail "processes of ${name[1]} still there 5 s after SIGKILL"
    info "killed every process of ${name[1]} (SIGKILL)"
    job_ended() { ! kill -0 "$job" 2>/dev/null; }
    if poll $END_S job_ended; then
        wait "$job"
        st=$?
        job=
        info "mpirun ended $(( $(now_ms) - t1 )) ms after the kill, exit status $st; its output:"
        sed 's/^/     /' "$out"
        [ $st != 0 ] || fail "mpirun's exit status is 0 after a host was killed"
    else
        fail "mpirun still runs ${END_S}s after ${name[1]} was killed"
        info "its output:"; sed 's/^/     /' "$out"
        info "what is left of the job:"; job_procs | sed 's/^/     /'
        kill -KILL "$job" 2>/dev/null
        wait "$job" 2>/dev/null
        job=
    fi
}

case_addhost() {
    local prog=$build/tests/hosts/addhost
    printf '# host 1, then host 2 kept out of the VM until pvm_addhosts\n%s slots=1\n&%s slots=1\n' \
        "${addr[0]}" "${addr[1]}" >"$work/hostfile"
    (cd "$work" && UPVM_MPIRUN="${mpirun[*]}" timeout -k 5 120 "$build/tools/upvm/upvm" run \
        --hostfile hostfile "$prog" "${addr[1]}" "${name[1]}") >"$out" 2>&1
    local st=$?
    sed 's/^/     /' "$out"
    [ $st = 0 ] || fail "upvm run --hostfile ... addhost: exit status $st"
    grep -qx "added ${addr[1]}: host t[0-9a-f]*, named ${name[1]}" "$out" || fail "no add of ${addr[1]}"
    grep -qx "a task spawned on ${name[1]} runs on ${name[1]}" "$out" || fail "no spawn there"
    grep -qx "deleted ${name[1]}: its task ended" "$out" || fail "no delete"
    grep -q "cannot add host nosuchhost.invalid: it is not one of this MPI job's hosts" "$out" ||
        fail "no reason for the unknown host"
    grep -q "cannot add host ${addr[1]}: its nodes were deleted from the job, and an MPI rank cannot start again" \
        "$out" || fail "no reason for adding the deleted host back"
    grep -qx OK "$out" || fail "addhost did not say OK"
}

case_fire() {
    local prog=$build/tests/migrate/progs/fire seed=${MTEST_SEED:-$(( $(now_ms) % 1000000 ))}
    local m
    for m in nomig mig; do
        (cd "$work" && MTEST_SEED=$seed timeout -k 5 200 "${mpirun[@]}" -x MTEST_SEED \
            -H "${addr[0]}:2,${addr[1]}:1" -np 3 "$prog" $m) >"$work/$m.out" 2>&1
        local st=$?
        grep -v '^RESULT' "$work/$m.out" | sed 's/^/     /'
        [ $st = 0 ] || fail "fire $m over 2 hosts: exit status $st (seed $seed)"
    done
    grep -qx OK "$work/mig.out" || fail "fire mig: no OK"
    diff <(grep '^RESULT' "$work/nomig.out") <(grep '^RESULT' "$work/mig.out") >/dev/null ||
        fail "fire: the results differ with migration (MTEST_SEED=$seed)"
    [ "$(grep -c '^RESULT' "$work/mig.out")" -gt 2 ] || fail "fire: no results"
}

# Shared virtual memory over 2 hosts, 3 ranks (tests/svm): the coherence
# stress with the central and the dynamic manager, and eventcounts; the
# pages travel over MPI between the hosts, shared memory within one; and
# UPVM_SVM=memfd refused there with its reason.
case_svm() {
    local prog st m
    for m in central dynamic; do
        prog=$build/tests/svm/svm-coherence
        (cd "$work" && SVM_TEST_OPS=1500 timeout -k 5 120 "${mpirun[@]}" -x SVM_TEST_OPS \
            -x UPVM_SVM_MANAGER=$m -H "${addr[0]}:2,${addr[1]}:1" -np 3 "$prog") >"$out" 2>&1
        st=$?
        sed 's/^/     /' "$out"
        [ $st = 0 ] || fail "svm-coherence ($m) over 2 hosts: exit status $st"
        grep -qx OK "$out" || fail "svm-coherence ($m) over 2 hosts: no OK"
    done
    (cd "$work" && timeout -k 5 120 "${mpirun[@]}" -H "${addr[0]}:2,${addr[1]}:1" -np 3 \
        "$build/tests/svm/svm-ec") >"$out" 2>&1
    st=$?
    sed 's/^/     /' "$out"
    [ $st = 0 ] || fail "svm-ec over 2 hosts: exit status $st"
    grep -qx OK "$out" || fail "svm-ec over 2 hosts: no OK"
    # one memfd per block needs one host: refused with the reason
    (cd "$work" && timeout -k 5 120 "${mpirun[@]}" -x UPVM_SVM=memfd \
        -H "${addr[0]}:2,${addr[1]}:1" -np 3 "$build/tests/svm/svm-ec") >"$out" 2>&1
    sed 's/^/     /' "$out"
    grep -q "UPVM_SVM=memfd or UPVM_SVM_SHARED) needs every node on one host, and node 2 runs on" \
        "$out" || fail "UPVM_SVM=memfd over 2 hosts: no refusal with its reason"
}

case_trace() {
    local prog=$build/tests/trace/pattern st
    (cd "$work" && UPVM_MPIRUN="${mpirun[*]}" timeout -k 5 120 "$build/tools/upvm/upvm" run \
        --hosts "${addr[0]}:2,${addr[1]}:1" --trace "$work/tr" "$prog" migrate) >"$out" 2>&1
    st=$?
    sed 's/^/     /' "$out"
    [ $st = 0 ] || fail "upvm run --hosts ... --trace pattern migrate: exit status $st"
    grep -qx "pattern ok" "$out" || fail "pattern did not say ok"
    grep -q "clock violations: 0 " "$out" || fail "the converter found receives before their sends"
    "$build/tools/upvm/upvm" trace dump "$work/tr" >"$work/dump" 2>&1 || fail "upvm trace dump"
    grep -q "OFFSET" "$work/dump" || fail "no clock offset measured (no OFFSET record)"
    grep "OFFSET" "$work/dump" | sed 's/^/     /'
    python3 "$repo/tests/trace/check_trace.py" "$work/tr" --upvm "$build/tools/upvm/upvm" \
        --expect-sends 5 --expect-barriers 3 --expect-migrations 1 --expect-location-groups 3 \
        --msg t40001:t40002:7:1024 --msg t40001:t40003:8:16 >"$work/check" 2>&1 ||
        { sed 's/^/     /' "$work/check"; fail "check_trace.py"; }
}

case_migrate_build() {
    local prog=$work/ctl-job st
    cp "$build/tests/tools/ctl-job" "$prog" || { fail "no tests/tools/ctl-job"; return; }
    # host 2 sees another build of it at the same path (a bind mount in its
    # mount namespace; nodes 0 and 1 are host 1's, node 2 host 2's)
    "$build/tools/upvmcc/upvmcc" -O0 -DANOTHER_BUILD -o "$work/ctl-job.other" \
        "$repo/tests/tools/ctl-job.c" || { fail "upvmcc ctl-job.c"; return; }
    on_host 2 mount --bind "$work/ctl-job.other" "$prog" || { fail "bind mount on host 2"; return; }
    (cd "$work" && exec "${mpirun[@]}" -H "${addr[0]}:2,${addr[1]}:1" -np 3 \
        "$prog" "$work/stop" upvm-hosts-mark) >"$out" 2>&1 &
    job=$!
    ready() { grep -qx READY "$out"; }
    if ! poll $START_S ready; then
        fail "ctl-job did not start"; sed 's/^/     /' "$out"; kill -KILL "$job"; job=; return
    fi
    local worker master
    worker=$(awk '$1 == "worker" { print $2 }' "$out")
    master=$(awk '$1 == "master" { print $2 }' "$out")
    "$build/tools/upvm/upvm" tasks >"$work/tasks" 2>&1
    sed 's/^/     /' "$work/tasks"
    # the worker runs on node1 (host 1)
    local r
    r=$("$build/tools/upvm/upvm" migrate "$worker" 2 2>&1)
    info "upvm migrate $worker 2 (to ${name[1]}): $r"
    grep -q "is not the program the task runs (its build id differs)" <<<"$r" ||
        fail "a move to the host with another build was not refused with the reason: $r"
    r=$("$build/tools/upvm/upvm" migrate "$worker" 0 2>&1)
    info "upvm migrate $worker 0 (within ${name[0]}): $r"
    grep -q "^ok $worker node1 -> node0" <<<"$r" || fail "a move within host 1 failed: $r"
    touch "$work/stop"
    job_ended() { ! kill -0 "$job" 2>/dev/null; }
    poll $END_S job_ended || fail "ctl-job did not end"
    wait "$job"
    st=$?
    job=
    sed 's/^/     /' "$out"
    [ $st = 0 ] || fail "ctl-job: exit status $st"
    grep -qx "worker answered" "$out" || fail "the worker did not answer after the moves"
    on_host 2 umount "$prog"
    : "$master"
}

case_netgone() {
    local t1 st
    # upvm run --hosts passes 10 s / 5 s x 3; shorter here, for the test's time
    "${mpirun[@]}" --mca oob_tcp_keepalive_time 3 --mca oob_tcp_keepalive_intvl 1 \
        --mca oob_tcp_keepalive_probes 3 -H "${addr[0]},${addr[1]}" -np 2 \
        "$loop" -n 0 -s 1000 -t 120 >"$out" 2>&1 &
    job=$!
    started() { grep -qx "hosts-loop: 2 nodes exchanging: node0=${name[0]} node1=${name[1]}" "$out"; }
    if ! poll $START_S started; then
        fail "the job did not start on both hosts"; cat "$out"; kill -KILL "$job"; job=; return
    fi
    # Keepalive covers an idle connection only: data not yet acknowledged
    # when the link goes is retransmitted for minutes instead (TCP's own
    # timeout).  So the network goes once host 2's connections to mpirun
    # (the bridge's address) have nothing in flight, as in a job that runs
    # for a while; the job's own frames keep flowing between the ranks.
    quiet_oob() {
        on_host 2 ss -tnH state established dst "${UPVM_HOSTS_NET%.0/24}.254" |
            awk '$2 != 0 { busy = 1 } END { exit busy }'
    }
    poll 10 quiet_oob || info "host 2's connections to mpirun still have data in flight"
    on_host 2 ip link set eth0 down || { fail "cannot take host 2's eth0 down"; return; }
    t1=$(now_ms)
    info "${name[1]}'s network is gone (eth0 down)"
    job_ended() { ! kill -0 "$job" 2>/dev/null; }
    if poll $END_S job_ended; then
        wait "$job"
        st=$?
        job=
        info "mpirun ended $(( $(now_ms) - t1 )) ms later, exit status $st; its output:"
        sed 's/^/     /' "$out"
        [ $st != 0 ] || fail "mpirun's exit status is 0 after a host's network went"
        grep -q "^upvm: node 0 is ended by a signal from outside: mpirun ends a job so when" "$out" ||
            fail "node 0 did not say why it ended"
    else
        fail "mpirun still runs ${END_S}s after ${name[1]}'s network went"
        kill -KILL "$job" 2>/dev/null
        wait "$job" 2>/dev/null
        job=
    fi
}

case $case in
    isolated) case_isolated ;;
    netgone) case_netgone ;;
    addhost) case_addhost ;;
    fire) case_fire ;;
    migrate-build) case_migrate_build ;;
    trace) case_trace ;;
    svm) case_svm ;;
    pvm-examples) case_pvm_examples "$@" ;;
    kill) case_kill ;;
    *) echo "test-hosts: no case '$case'" >&2; exit 2 ;;
esac
finish
