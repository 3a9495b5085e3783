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

case $case in
    isolated) case_isolated ;;
    pvm-examples) case_pvm_examples "$@" ;;
    kill) case_kill ;;
    *) echo "test-hosts: no case '$case'" >&2; exit 2 ;;
esac
finish
