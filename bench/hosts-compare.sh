#!/usr/bin/env bash
# bench/hosts-compare.sh - UPVM across two hosts (issue "many hosts")
# against Open MPI and genuine PVM 3.4.6 on the same two hosts, side by side
# in one run.  The hosts are emulated on this machine
# (tests/hosts/emulated-hosts.sh: a network namespace each, a veth pair to a
# bridge, its own host name and /dev/shm), so everything between them really
# crosses TCP over veth + bridge; they share the machine's cores.
#
#   ping-pong  half round trip between a task on host 1 and one on host 2,
#              0 B, 8 B and 1 MB (bandwidth = bytes / half round trip):
#                Open MPI  bench/mpi/mpi_pingpong.c (MPI_Send/MPI_Recv), one
#                          rank per host
#                PVM       the baseline's pingpong.c with -lpvm3, -r direct
#                          (task-to-task TCP), under a genuine 2-host virtual
#                          machine: a pvmd on each host
#                UPVM      the same unmodified pingpong.c built with upvmcc,
#                          `mpirun -H host1:1,host2:1 -np 2 ./pingpong -r
#                          direct`: the spawned partner lands on node 1 =
#                          host 2
#   migration  bench/migrate/migrate-bench.c under the same mpirun (node 0
#              on host 1, node 1 on host 2): a task with a 1 MB and a 64 MB
#              heap moved host 1 -> host 2 -> host 1 (upvm_migrate, timed by
#              upvm_migrate_stats), against Open MPI's one-way time for the
#              same bytes in the same run (mpi_pingpong's half round trip);
#              and a 0-byte heap (the fixed cost of a move)
#   ring       the baseline's ring.c, one int around 24 tasks (UPVM paper,
#              Figure 6), time per hop: UPVM by default (cyclic placement:
#              members alternate between the hosts, every hop crosses) and
#              with UPVM_PLACEMENT=block (members 0..11 on host 1, 12..23 on
#              host 2: 2 hops cross), genuine PVM with direct routes (its
#              pvmd places the 23 spawned tasks round robin: 12 on one
#              host, 11 on the other, contiguous; steered so that the split
#              is 12 + 12 with 2 crossing hops, as UPVM's block)
#   checks     where every task ran: bench/nodes/where.c spawned as
#              pingpong.c and ring.c spawn (tid, host name of every member),
#              for UPVM and genuine PVM; during every genuine-PVM run, its
#              processes counted in each host's namespace; during every run,
#              the bytes through host 2's link (what must cross does)
#
# UPVM's ping-pong and migration run by default (no setting) and tuned
# (TUNED below: UPVM_NET_IDLE=spin; UPVM_NET_RING=64M), side by side.
#
# Every program runs under `taskset -c $CPUS` (default 0,1) at `nice -n
# -15`, and each host gets a core of its own (HOST_CPUS, default "0 1"):
# rank r of an mpirun job (node r = host r+1) runs under `taskset -c` of
# host r+1's core, and so do a host's pvmd and its tasks.  Without that
# (mpirun has --bind-to none: the hosts believe they own every core, and
# Open MPI would bind both ranks to core 0), the kernel sometimes starts
# both spinning ranks on one core and leaves them there (Open MPI's 0 B
# ping-pong: 9 µs on two cores, 14-20 µs on one, in 3 of 5 runs seen).
# HOST_CPUS="" lets the kernel place everything within CPUS.  Repetitions are
# outermost, so drifts in the background load hit every peer alike; every
# cell is the median over REPS runs of one run's median over BLOCKS timed
# blocks (migration: of 2 x INNER moves per heap).
#
# Usage (root):  bench/hosts-compare.sh          # REPS=5: ~2 min on 2 quiet cores
#                QUICK=1 bench/hosts-compare.sh  # smoke run, ~50 s
# Knobs:  REPS=N      runs per case (default 5)
#         QUICK=1     REPS=1, 3 blocks, fewer round trips and moves
#         CASES="pingpong migrate ring"   which cases (default all three)
#         PEERS="mpi pvm upvm"            which peers (default all three)
#         CPUS=L      taskset list (default 0,1)
#         HOST_CPUS="A B"  the core of host 1 and of host 2 (default "0 1";
#                     "": no core per host, both share CPUS)
#         OUT=DIR     keep the RESULT lines, the placement lines, the logs
#         HOSTS_PREFIX, HOSTS_NET, HOSTS_NAME  the emulated hosts' prefix
#                     (upvmbench), /24 (10.213.79) and host names
#                     (upvmbhost: upvmbhost1, upvmbhost2); one run per prefix
#                     at a time, and a subnet nothing else uses
#         PVM_BASELINE_DIR  where pingpong.c and ring.c are (default
#                     ../shared/baseline/pvm next to the checkout)
#         BUILD=DIR   UPVM's CMake build directory (default build/)
# Exit status: 0; 77 with one line saying why when emulated hosts cannot be
# made here (not root, no namespaces, no Open MPI) or UPVM has no MPI
# transport; 1 when nothing could be measured.  The hosts, the pvmds and
# every process started are removed however the script ends.  Installs
# nothing (scripts/install-deps.sh --bench: pvm, openmpi-bin,
# libopenmpi-dev); a missing genuine PVM leaves its columns empty, saying
# why.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
HERE=$ROOT/bench
# shellcheck source=bench/lib.sh
. "$HERE/lib.sh"
BASELINE=${PVM_BASELINE_DIR:-$ROOT/../shared/baseline/pvm}
BUILD=${BUILD:-$ROOT/build}
REPS=${REPS:-5}
CPUS=${CPUS:-0,1}
QUICK=${QUICK:-0}
CASES=${CASES:-pingpong migrate ring}
PEERS=${PEERS:-mpi pvm upvm}
HOSTS_PREFIX=${HOSTS_PREFIX:-upvmbench}
HOSTS_NET=${HOSTS_NET:-10.213.79}
HOSTS_NAME=${HOSTS_NAME:-upvmbhost}
HOST_CPUS=${HOST_CPUS-0 1} # the core of host 1 and of host 2 ("": both hosts share CPUS)
BLOCKS=5
ISCALE=3  # ping-pong: 3x the baseline's round trips per block (3000 small, 60 of 1 MB)
TSCALE=2  # ring: 2x the baseline's 2400 hops per block
INNER=3   # migration: round trips (2 moves each) per heap, after 1 warm-up round trip
if [ "$QUICK" = 1 ]; then REPS=1; BLOCKS=3; ISCALE=1; TSCALE=1; INNER=1; fi
PP_SIZES="0 8 1048576"
MIG_MB="0 1 64" # MB; 0: the fixed cost of a move (no target, no MPI peer)
RING_N=24
RUN_TIMEOUT=180
# UPVM's tuned invocations, each measured beside the default one (side:
# setting): the idle policy that never sleeps, and a 64 MiB budget per path
# (over MPI: frames sent and not known received; a migration's window is
# half of it) instead of 1 MiB
TUNED=("upvmspin:UPVM_NET_IDLE=spin" "upvmring:UPVM_NET_RING=64M")
INSTALL_HINT="scripts/install-deps.sh --bench"
PFLAGS=(-std=gnu11 -O2 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes)
BFLAGS=(-std=gnu11 -O2 -Wall)
# the UPVM settings a run may set; unset otherwise, so that the caller's
# environment does not change the default invocation
UPVM_KNOBS=(UPVM_NODES UPVM_PLACEMENT UPVM_DELIVERY UPVM_NET_RING UPVM_NET_IDLE UPVM_NET_SPIN_NS
    UPVM_NET_SPIN_MAX_NS UPVM_OUTPUT_TIDS UPVM_TRACE)

say() { echo "hosts-compare: $*" >&2; }
skip() { say "SKIPPED: $*"; exit 77; }
die() { say "$*"; exit 1; }
note() { echo "== $*"; }
warn() { echo "== WARNING: $*" >&2; }

[ "$(id -u)" = 0 ] || skip "emulated hosts need root (network and mount namespaces): run as root"
for c in taskset ip nsenter unshare mount timeout awk; do
    command -v $c >/dev/null || skip "no '$c' command"
done

WORK=$(mktemp -d /tmp/hosts-compare.XXXXXX) || die "mktemp failed"
UBIN=$WORK/upvm # upvmcc builds
RBIN=$WORK/real # -lpvm3 builds
MBIN=$WORK/mpi  # mpicc build
PVMW=$WORK/pvm  # the genuine VM's files: agent, hostfile, /etc/hosts, PVM_TMP per host
RES=$WORK/results
PLACE=$WORK/placement
mkdir -p "$UBIN" "$RBIN" "$MBIN" "$PVMW" "$WORK/rt" && chmod 700 "$WORK/rt" && : >"$RES" &&
    : >"$PLACE" && : >"$PLACE.raw" && : >"$WORK/stderr.log" || die "cannot write $WORK"

PIN=(taskset -c "$CPUS" nice -n -15)
HOSTS=$ROOT/tests/hosts/emulated-hosts.sh
HOSTS_ENV=(UPVM_HOSTS_PREFIX="$HOSTS_PREFIX" UPVM_HOSTS_NET="$HOSTS_NET" UPVM_HOSTS_NAME="$HOSTS_NAME")
HOSTS_UP=0
UPVM_LAUNCHER=$BUILD/tools/upvm/upvm
UPVMCC=$BUILD/tools/upvmcc/upvmcc

HAVE_MPI=0 HAVE_PVM=0 HAVE_UPVM=0
SKIP_MPI="" SKIP_PVM="" SKIP_UPVM=""
PVMD_PID=""
PVM_TOOK=()   # what genuine PVM took, said under the tables

# ------------------------------------------------------------- clean-up

# SIGKILL every process whose executable is under DIR / whose cwd is (the
# UPVM ranks run our programs; mpirun and orted run with their cwd there)
kill_exe_under() {
    local dir=$1 p exe
    for p in /proc/[0-9]*; do
        exe=$(readlink "$p/exe" 2>/dev/null) || continue
        case "$exe" in "$dir"/*) kill -KILL "${p#/proc/}" 2>/dev/null ;; esac
    done
}

cleanup() {
    local st=$?
    trap - EXIT INT TERM HUP
    pvm_stop
    kill_exe_under "$UBIN"
    kill_exe_under "$MBIN"
    kill_exe_under "$RBIN"
    kill_cwd_under "$WORK"
    if [ "$HOSTS_UP" = 1 ]; then
        env "${HOSTS_ENV[@]}" "$HOSTS" down 2>>"$WORK/hosts.log" ||
            say "emulated-hosts.sh down failed: $(tail -3 "$WORK/hosts.log" | tr '\n' ' ')"
    fi
    if [ -n "${OUT:-}" ]; then
        mkdir -p "$OUT" && cp "$RES" "$PLACE" "$PLACE.raw" "$WORK/stderr.log" "$WORK/hosts.log" "$OUT/" 2>/dev/null
        for f in "$PVMW"/tmp-h*/pvml.*; do [ -f "$f" ] && cp "$f" "$OUT/$(basename "$(dirname "$f")").pvml.log"; done
        [ -f "$PVMW/agent.log" ] && cp "$PVMW/agent.log" "$OUT/pvm-agent.log"
    fi
    rm -rf "$WORK"
    exit "$st"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

# ---------------------------------------------------------------- build

peer() { case " $PEERS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
case_on() { case " $CASES " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

build() {
    [ -f "$BASELINE/pingpong.c" ] && [ -f "$BASELINE/ring.c" ] ||
        die "no pingpong.c/ring.c in $BASELINE (set PVM_BASELINE_DIR)"
    command -v mpicc >/dev/null && command -v mpirun >/dev/null ||
        skip "Open MPI is not installed (no mpicc/mpirun): $INSTALL_HINT installs openmpi-bin and libopenmpi-dev"
    # UPVM: the subject; without its MPI transport no job spans hosts
    if ! { cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
            >"$WORK/cmake.log" 2>&1 && cmake --build "$BUILD" >>"$WORK/cmake.log" 2>&1; }; then
        grep -m5 -E 'error|undefined' "$WORK/cmake.log" >&2
        die "UPVM did not build (cmake/ninja in $BUILD)"
    fi
    local v
    v=$("$UPVM_LAUNCHER" --version 2>&1)
    echo "$v" | grep -q '^MPI transport: yes' ||
        skip "this UPVM build has no MPI transport, so no job spans hosts ($(echo "$v" | grep -i mpi | head -1)); $INSTALL_HINT, then rebuild"
    if peer upvm; then
        local p ok=1
        for p in pingpong ring; do
            "$UPVMCC" "${BFLAGS[@]}" -o "$UBIN/$p" "$BASELINE/$p.c" 2>>"$WORK/stderr.log" || ok=0
        done
        "$UPVMCC" "${PFLAGS[@]}" -o "$UBIN/where" "$HERE/nodes/where.c" 2>>"$WORK/stderr.log" || ok=0
        "$UPVMCC" "${PFLAGS[@]}" -o "$UBIN/migrate-bench" "$HERE/migrate/migrate-bench.c" \
            2>>"$WORK/stderr.log" || ok=0
        if [ "$ok" = 1 ]; then HAVE_UPVM=1
        else SKIP_UPVM="upvmcc could not build the programs (stderr at the end)"; warn "$SKIP_UPVM"; fi
    else SKIP_UPVM="not in PEERS"; fi
    if peer mpi; then
        if mpicc "${PFLAGS[@]}" -o "$MBIN/mpi_pingpong" "$HERE/mpi/mpi_pingpong.c" 2>>"$WORK/stderr.log"; then
            HAVE_MPI=1
        else SKIP_MPI="mpicc could not build bench/mpi/mpi_pingpong.c"; warn "$SKIP_MPI"; fi
    else SKIP_MPI="not in PEERS"; fi
    if peer pvm; then
        if ! command -v pvmd >/dev/null || ! command -v pvm >/dev/null || [ ! -f /usr/include/pvm3.h ]; then
            SKIP_PVM="genuine PVM not installed (pvmd, pvm3.h): $INSTALL_HINT installs pvm and pvm-dev"
            warn "$SKIP_PVM"
        elif gcc "${BFLAGS[@]}" -o "$RBIN/pingpong" "$BASELINE/pingpong.c" -lpvm3 2>>"$WORK/stderr.log" &&
             gcc "${BFLAGS[@]}" -o "$RBIN/ring" "$BASELINE/ring.c" -lpvm3 2>>"$WORK/stderr.log" &&
             gcc "${PFLAGS[@]}" -o "$RBIN/where" "$HERE/nodes/where.c" -lpvm3 2>>"$WORK/stderr.log"; then
            HAVE_PVM=1
        else SKIP_PVM="gcc -lpvm3 could not build pingpong.c/ring.c/where.c"; warn "$SKIP_PVM"; fi
    else SKIP_PVM="not in PEERS"; fi
    note "UPVM $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null) ($BUILD, RelWithDebInfo): $(echo "$v" | grep -i 'mpi' | head -1)"
    note "Open MPI: $(mpirun --version 2>/dev/null | head -1); genuine PVM: $(dpkg-query -W -f='${Package} ${Version}' pvm 2>/dev/null || echo '?')"
}

# ---------------------------------------------------------------- hosts

hosts_up() {
    local rc
    HOSTS_UP=1 # from here on, cleanup takes them down (also a half-made set)
    env "${HOSTS_ENV[@]}" "$HOSTS" up 2 >"$WORK/hosts.env" 2>"$WORK/hosts.log"
    rc=$?
    if [ "$rc" = 77 ]; then
        HOSTS_UP=0
        skip "emulated hosts cannot be made here: $(sed -n 's/^emulated-hosts: SKIPPED: //p' "$WORK/hosts.log" | head -1)"
    fi
    [ "$rc" = 0 ] || die "emulated-hosts.sh up 2 failed: $(tail -3 "$WORK/hosts.log" | tr '\n' ' ')"
    # shellcheck disable=SC1090
    . "$WORK/hosts.env"
    read -ra ADDR <<<"$UPVM_HOSTS_ADDRS"
    read -ra HNAME <<<"$UPVM_HOSTS_NAMES"
    read -ra MPIRUN <<<"$UPVM_HOSTS_MPIRUN"
    LINK=/sys/class/net/$HOSTS_PREFIX-v2/statistics # host 2's veth, outside end: all it sends and gets
    note "hosts: ${HNAME[0]} = ${ADDR[0]} (netns $HOSTS_PREFIX-1), ${HNAME[1]} = ${ADDR[1]} ($HOSTS_PREFIX-2), bridge $HOSTS_PREFIX-br"
    note "mpirun: ${MPIRUN[*]} -H ${ADDR[0]}:1,${ADDR[1]}:1 -np 2"
    # rank r on host r+1's core: every mpirun job's program goes through this
    read -ra HCPU <<<"$HOST_CPUS"
    HOSTPIN=()
    if [ ${#HCPU[@]} = 2 ]; then
        printf '#!/bin/sh\n# rank r of the job on the core of host r+1\ncase $OMPI_COMM_WORLD_RANK in\n    0) exec taskset -c %s "$@" ;;\n    1) exec taskset -c %s "$@" ;;\nesac\nexec "$@"\n' \
            "${HCPU[0]}" "${HCPU[1]}" >"$WORK/hostpin"
        chmod 755 "$WORK/hostpin"
        HOSTPIN=("$WORK/hostpin")
        note "a core per host: ${HNAME[0]} on cpu ${HCPU[0]}, ${HNAME[1]} on cpu ${HCPU[1]} (HOST_CPUS)"
    elif [ -n "$HOST_CPUS" ]; then
        die "HOST_CPUS=\"$HOST_CPUS\": two cores (host 1's, host 2's), or empty"
    else
        note "no core per host (HOST_CPUS empty): the kernel places everything within cpus $CPUS"
    fi
}

link_bytes() { echo $(( $(cat "$LINK/rx_bytes") + $(cat "$LINK/tx_bytes") )); }

# ---------------------------------------------------------- genuine PVM

# The genuine VM spans the two hosts as PVM spans machines: a pvmd started
# on host 1 with a hostfile of both addresses starts the second pvmd on
# host 2 through PVM_RSH (here an agent that enters host 2's network
# namespace, with the host name and /etc/hosts of host 2, instead of rsh).
PVM_ENV=()
pvm_setup() {
    local a k
    # pvmd resolves its own host name: each host's name to its address
    { echo "127.0.0.1 localhost"
      for k in 1 2; do echo "${ADDR[k-1]} ${HNAME[k-1]}"; done; } >"$PVMW/hosts"
    printf '%s\n' "${ADDR[0]}" "${ADDR[1]}" >"$PVMW/hostfile"
    mkdir -p "$PVMW/tmp-h1" "$PVMW/tmp-h2"
    {
        echo '#!/bin/sh'
        echo '# PVM_RSH of bench/hosts-compare.sh: AGENT HOST [-l USER] [-n] COMMAND...'
        echo "# runs COMMAND on emulated host HOST: its network namespace, its host name,"
        echo "# its /etc/hosts, and a PVM_TMP of its own (pvmd.<uid>, pvml.<uid>)"
        echo "echo \"\$*\" >>$PVMW/agent.log"
        echo 'host=$1; shift'
        echo 'while [ $# -gt 0 ]; do case $1 in -l) shift 2 ;; -n) shift ;; *) break ;; esac; done'
        echo 'case $host in'
        for k in 1 2; do echo "    ${ADDR[k-1]}|${HNAME[k-1]}) k=$k ;;"; done
        echo '    *) echo "hosts-compare pvm agent: $host is not one of the emulated hosts" >&2; exit 255 ;;'
        echo 'esac'
        echo "export PVM_TMP=$PVMW/tmp-h\$k"
        if [ ${#HCPU[@]} = 2 ]; then
            echo "# a core per host: the pvmd and every task it starts there"
            echo "case \$k in 1) pin='taskset -c ${HCPU[0]}' ;; 2) pin='taskset -c ${HCPU[1]}' ;; esac"
        else
            echo "pin="
        fi
        echo "exec \$pin ip netns exec $HOSTS_PREFIX-\$k unshare --uts --mount sh -c \"hostname $HOSTS_NAME\$k && mount --bind $PVMW/hosts /etc/hosts && exec \$*\""
    } >"$PVMW/agent"
    chmod 755 "$PVMW/agent"
    PVM_ENV=(PVM_ROOT=/usr/lib/pvm3 PVM_ARCH=LINUX64 PVM_ALLOW_ROOT=1 PVM_RSH="$PVMW/agent"
        PVM_PATH="$RBIN:/usr/bin" PVMBENCH_SPAWN_DIR="$RBIN"
        PVM_EXPORT=PVM_PATH:PVM_ALLOW_ROOT:PVMBENCH_SPAWN_DIR)
}

# on host 1, in $RBIN: pvm_on1 COMMAND-STRING (run by sh -c there)
pvm_on1() { (cd "$RBIN" && exec env "${PVM_ENV[@]}" "${PIN[@]}" "$PVMW/agent" "${ADDR[0]}" "$@"); }
pvm_console() { echo "$1" | timeout 20 env "${PVM_ENV[@]}" "$PVMW/agent" "${ADDR[0]}" pvm 2>&1; }

pvm_start() {
    [ "$HAVE_PVM" = 1 ] || return 0
    local conf i
    pvm_setup
    ( cd "$RBIN" && exec env "${PVM_ENV[@]}" "${PIN[@]}" "$PVMW/agent" "${ADDR[0]}" \
        "pvmd $PVMW/hostfile" </dev/null >"$PVMW/pvmd.out" 2>&1 ) &
    PVMD_PID=$!
    for i in $(seq 1 30); do
        conf=$(pvm_console conf)
        echo "$conf" | grep -q "^2 hosts" && break
        kill -0 "$PVMD_PID" 2>/dev/null || break
        sleep 0.5
    done
    if ! echo "$conf" | grep -q "^2 hosts"; then
        SKIP_PVM="its virtual machine did not span both hosts: \`conf\` said: $(echo "$conf" | grep -E 'hosts|LINUX|rror' | tr -s ' ' | tr '\n' ';' | head -c 300); pvmd: $(tail -c 300 "$PVMW/pvmd.out" | tr '\n' ' '); host 1's log: $(tail -3 "$PVMW/tmp-h1"/pvml.* 2>/dev/null | tr '\n' ' ' | head -c 400)"
        warn "genuine-PVM columns left empty: $SKIP_PVM"
        HAVE_PVM=0
        pvm_stop
        return 0
    fi
    note "genuine PVM: a virtual machine of 2 hosts: $(echo "$conf" | awk '$3 == "LINUX64" { printf "%s%s (dtid %s)", n++ ? ", " : "", $1, $2 }')"
    PVM_TOOK+=("pvmd started on host 1 (\`pvmd HOSTFILE\`, the hostfile naming both addresses, \`PVM_ALLOW_ROOT=1\` as root), which started host 2's pvmd through \`PVM_RSH\` = a generated agent (\`ip netns exec NS unshare --uts --mount sh -c 'hostname H; mount --bind HOSTS /etc/hosts; exec CMD'\`) in place of rsh: it called \`$(grep -v "^${ADDR[0]} " "$PVMW/agent.log" | grep -m1 pvmd | cut -c1-90)\`")
    PVM_TOOK+=("each host needs its own name and an /etc/hosts that maps it to its address (pvmd resolves its own host name), and a \`PVM_TMP\` of its own (\`pvmd.<uid>\`, \`pvml.<uid>\` would collide in the shared /tmp)")
}

pvm_stop() {
    [ -n "$PVMD_PID" ] || return 0
    kill -0 "$PVMD_PID" 2>/dev/null && pvm_console halt >/dev/null 2>&1
    for _ in $(seq 1 50); do kill -0 "$PVMD_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$PVMD_PID" 2>/dev/null
    wait "$PVMD_PID" 2>/dev/null
    kill_exe_under "$RBIN"
    PVMD_PID=""
}

# PVM's pvmd gives a spawn of k tasks that names no host to its hosts in
# turn, round robin from where its last spawn stopped (assign_tasks in
# tdpro.c: a static host index, one host further after each host's share).
# pvm_steer makes the next spawn start on host 2: one-task spawns (where -n
# 2) until one lands on host 1.  The pingpong's partner then lands on host
# 2, and a ring's 23 tasks go 12 to host 2, 11 to host 1 (with the master:
# 12 + 12, 2 crossing hops).
pvm_steer() {
    local i out
    for i in 1 2 3; do
        out=$(pvm_on1 ./where -n 2 2>>"$WORK/stderr.log")
        echo "$out" | grep -q "member=1 .*hostname=${HNAME[0]}\$" && return 0
    done
    warn "could not steer genuine PVM's round robin to host 1 (where -n 2 said: $(echo "$out" | grep member=1))"
    return 1
}

# sample PROG WANT: "h1 h2", how many processes running $RBIN/PROG were
# seen in each host's network namespace (distinct pids), polled every 20 ms
# until WANT are seen or for 10 s (a process's namespace: /proc/PID/ns/net
# against the inode of /run/netns/PREFIX-K)
sample() {
    local i p ns ino1 ino2 seen1=" " seen2=" " n1=0 n2=0
    ino1=$(stat -L -c %i "/run/netns/$HOSTS_PREFIX-1") ino2=$(stat -L -c %i "/run/netns/$HOSTS_PREFIX-2")
    for i in $(seq 1 500); do
        for p in $(pgrep -x "$1"); do
            case "$seen1$seen2" in *" $p "*) continue ;; esac
            [ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$RBIN/$1" ] || continue
            ns=$(readlink "/proc/$p/ns/net" 2>/dev/null)
            case "$ns" in
                "net:[$ino1]") seen1+="$p " n1=$((n1 + 1)) ;;
                "net:[$ino2]") seen2+="$p " n2=$((n2 + 1)) ;;
            esac
        done
        [ $((n1 + n2)) -ge "$2" ] && break
        sleep 0.02
    done
    echo "$n1 $n2"
}

# ---------------------------------------------------------------- runs

# run SIDE CASE CMD...: one job, pinned, under a time limit; its RESULT
# lines go to $RES with side=SIDE added, and a line with the bytes that went
# through host 2's link meanwhile.  A run that fails leaves nothing behind.
run() {
    local side=$1 cas=$2 rc dir b0
    shift 2
    case "$side" in mpi*) dir=$MBIN ;; pvm*) dir=$RBIN ;; *) dir=$UBIN ;; esac
    b0=$(link_bytes)
    (cd "$dir" && exec timeout --foreground -k 5 "$RUN_TIMEOUT" "$@") </dev/null \
        >"$WORK/run.out" 2>>"$WORK/stderr.log"
    rc=$?
    echo "RESULT xfer side=$side case=$cas bytes=$(( $(link_bytes) - b0 ))" >>"$RES"
    sed -n "s/^RESULT \([^ ]*\)/RESULT \1 side=$side/p" "$WORK/run.out" >>"$RES"
    if [ "$rc" != 0 ]; then
        echo "   ($side $cas failed, status $rc: $(echo "$*" | sed 's,.* \./,./,' | cut -c1-80))" >&2
        case "$side" in
            pvm*) kill_exe_under "$RBIN" ;;
            *) kill_exe_under "$UBIN"; kill_exe_under "$MBIN"; kill_cwd_under "$UBIN"; kill_cwd_under "$MBIN" ;;
        esac
    fi
    return "$rc"
}

# mpijob SIDE CASE [VAR=VALUE...] -- PROGRAM ARGS: one rank on each host,
# node 0 / rank 0 on host 1; the VARs passed to the ranks with -x, every
# other UPVM setting unset
mpijob() {
    local side=$1 cas=$2 unset=() vars=() x=() k
    shift 2
    while [ $# -gt 0 ] && [ "$1" != -- ]; do vars+=("$1"); x+=(-x "${1%%=*}"); shift; done
    shift
    for k in "${UPVM_KNOBS[@]}"; do unset+=(-u "$k"); done
    run "$side" "$cas" env "${unset[@]}" "${vars[@]}" XDG_RUNTIME_DIR="$WORK/rt" PVMBENCH_SPAWN_DIR="$UBIN" \
        "${PIN[@]}" "${MPIRUN[@]}" -H "${ADDR[0]}:1,${ADDR[1]}:1" -np 2 \
        -x XDG_RUNTIME_DIR -x PVMBENCH_SPAWN_DIR "${x[@]}" "${HOSTPIN[@]}" "$@"
}

# pvmjob CASE PROG WANT ARGS...: on host 1 under the genuine VM, steered;
# how many of its processes ran on each host goes to $RES
pvmjob() {
    local cas=$1 prog=$2 want=$3 h1 h2 sp
    shift 3
    pvm_steer
    sample "$prog" "$want" >"$WORK/sample" &
    sp=$!
    run pvm "$cas" env "${PVM_ENV[@]}" "${PIN[@]}" "$PVMW/agent" "${ADDR[0]}" "./$prog $*"
    wait "$sp"
    read -r h1 h2 <"$WORK/sample"
    echo "RESULT pvmhosts side=pvm case=$cas h1=$h1 h2=$h2" >>"$RES"
}

rep_pingpong() {
    local pp=(-r direct -e raw -b "$BLOCKS" -i "$ISCALE" $PP_SIZES) t
    [ "$HAVE_MPI" = 1 ] && mpijob mpi pingpong -- ./mpi_pingpong -b "$BLOCKS" -i "$ISCALE" $PP_SIZES
    [ "$HAVE_PVM" = 1 ] && pvmjob pingpong pingpong 2 "${pp[@]}"
    [ "$HAVE_UPVM" = 1 ] || return 0
    mpijob upvm pingpong -- ./pingpong "${pp[@]}"
    for t in "${TUNED[@]}"; do mpijob "${t%%:*}" pingpong "${t#*:}" -- ./pingpong "${pp[@]}"; done
}

mig_bytes() { local mb; for mb in $MIG_MB; do [ "$mb" = 0 ] || awk -v m="$mb" 'BEGIN { printf "%d ", m * 1048576 }'; done; }

rep_migrate() {
    # Open MPI's one-way time for the same bytes: the half round trip, blocks
    # of >= 50 ms (64 MB: 5 round trips a block, after 3 warm-up ones)
    [ "$HAVE_MPI" = 1 ] && mpijob mpiraw migrate -- ./mpi_pingpong -b "$BLOCKS" -w 3 -i 0.25 -T 50 $(mig_bytes)
    [ "$HAVE_UPVM" = 1 ] || return 0
    mpijob upvm migrate -- ./migrate-bench -r "$INNER" -W 1 $MIG_MB
    local t
    for t in "${TUNED[@]}"; do mpijob "${t%%:*}" migrate "${t#*:}" -- ./migrate-bench -r "$INNER" -W 1 $MIG_MB; done
}

rep_ring() {
    local trips rg
    trips=$(awk -v n="$RING_N" -v s="$TSCALE" 'BEGIN { t = int(2400 / n * s); print t < 20 ? 20 : t }')
    rg=(-n "$RING_N" -r direct -e raw -b "$BLOCKS" -t "$trips")
    [ "$HAVE_PVM" = 1 ] && pvmjob ring ring "$RING_N" "${rg[@]}"
    [ "$HAVE_UPVM" = 1 ] && mpijob upvmc ring -- ./ring "${rg[@]}"
    [ "$HAVE_UPVM" = 1 ] && mpijob upvmb ring UPVM_PLACEMENT=block -- ./ring "${rg[@]}"
}

# ------------------------------------------------------------ placement

# hosts_of: stdin where.c's RESULT lines -> "name,name,..." in member order
hosts_of() { awk '$1 == "RESULT" && $2 == "where" { for (i = 3; i <= NF; i++) { split($i, a, "=")
                  f[a[1]] = a[2] } h[f["member"]] = f["hostname"]; if (f["member"] + 1 > n) n = f["member"] + 1 }
                  END { for (i = 0; i < n; i++) printf "%s%s", i ? "," : "", h[i] }'; }
tid_of() { awk -v m="$1" '$2 == "where" && $4 == "member=" m { sub("tid=", "", $5); print $5 }'; }

# expected N PLACEMENT: host 1 / host 2 per member (cyclic: alternating;
# block: halves; pvm12: the master and members 13.. on host 1, 1..12 on 2)
expected() {
    awk -v n="$1" -v pl="$2" -v a="${HNAME[0]}" -v b="${HNAME[1]}" 'BEGIN {
        for (j = 0; j < n; j++) {
            if (pl == "cyclic") h = j % 2; else if (pl == "block") h = j >= n / 2
            else h = j >= 1 && j <= n / 2
            printf "%s%s", j ? "," : "", h ? b : a } }'
}

# check NAME SIDE PLACEMENT N [VAR=VALUE]: where.c, spawned as the
# benchmarks spawn; one line "NAME|got|expected|tid of member 1|verdict" to $PLACE
check() {
    local name=$1 side=$2 pl=$3 n=$4 got exp verdict
    shift 4
    if [ "$side" = pvm ]; then
        pvm_steer
        (cd "$RBIN" && timeout -k 5 60 env "${PVM_ENV[@]}" "$PVMW/agent" "${ADDR[0]}" "./where -n $n") \
            >"$WORK/where.out" 2>>"$WORK/stderr.log"
    else
        local unset=() k
        for k in "${UPVM_KNOBS[@]}"; do unset+=(-u "$k"); done
        (cd "$UBIN" && timeout -k 5 60 env "${unset[@]}" "$@" XDG_RUNTIME_DIR="$WORK/rt" PVMBENCH_SPAWN_DIR="$UBIN" \
            "${MPIRUN[@]}" -H "${ADDR[0]}:1,${ADDR[1]}:1" -np 2 -x XDG_RUNTIME_DIR -x PVMBENCH_SPAWN_DIR \
            ${1:+-x "${1%%=*}"} "${HOSTPIN[@]}" ./where -n "$n") >"$WORK/where.out" 2>>"$WORK/stderr.log"
    fi
    { echo "# $name"; cat "$WORK/where.out"; } >>"$PLACE.raw"
    got=$(hosts_of <"$WORK/where.out")
    exp=$(expected "$n" "$pl")
    if [ -z "$got" ]; then verdict="**failed** (stderr at the end)"
    elif [ "$got" = "$exp" ]; then verdict=ok
    else verdict="**differs**"; fi
    echo "$name|${got:--}|$exp|$(tid_of 1 <"$WORK/where.out")|$verdict" >>"$PLACE"
}

check_placement() {
    if [ "$HAVE_UPVM" = 1 ]; then
        check "UPVM pingpong (default)" upvm cyclic 2
        check "UPVM ring $RING_N (default: cyclic)" upvm cyclic "$RING_N"
        check "UPVM ring $RING_N, UPVM_PLACEMENT=block" upvm block "$RING_N" UPVM_PLACEMENT=block
    fi
    if [ "$HAVE_PVM" = 1 ]; then
        check "genuine PVM pingpong" pvm pvm12 2
        check "genuine PVM ring $RING_N" pvm pvm12 "$RING_N"
    fi
}

# --------------------------------------------------------------- tables

# shellcheck source=bench/pvm/results.sh
. "$HERE/pvm/results.sh"
extract() { results_extract "$RES" "$@"; }

# gbs FILE KEY BYTES: BYTES / (the median in µs) in GB/s (10^9 B/s)
gbs() {
    awk -v k="$2" -v b="$3" '$1 == k { v = $2 } END {
        if (v == "" || v == 0 || b == 0) printf "-"; else printf "%.2f GB/s", b / (v * 1000) }' "$1"
}
# inv FILE A B: B / A (a speed ratio from two times) like ratio
inv() { ratio "$1" "$3" "$2"; }

# verdict FILE A B OP LIMIT: "A/B = 1.05×: met" when A/B OP LIMIT (le|ge)
verdict() {
    awk -v a="$2" -v b="$3" -v op="$4" -v lim="$5" '$1 == a { x = $2 } $1 == b { y = $2 } END {
        if (x == "" || y == "" || y == 0) { printf "-"; exit }
        r = x / y; ok = (op == "le") ? r <= lim : r >= lim
        # two decimals, three where two would round onto the limit
        f = (r - lim < 0.01 && lim - r < 0.01) ? "%.3f×" : "%.2f×"
        printf "%s: %s", (r >= 10 ? sprintf("%.0f×", r) : sprintf(f, r)), ok ? "met" : "**missed**" }' "$1"
}

why() {
    [ -n "$SKIP_MPI" ] && [ "${1:-}" != ring ] && echo "- Open MPI: $SKIP_MPI."
    [ -n "$SKIP_PVM" ] && echo "- genuine PVM: $SKIP_PVM."
    [ -n "$SKIP_UPVM" ] && echo "- UPVM: $SKIP_UPVM."
    return 0
}

sizename() { case $1 in 0) echo "0 B" ;; 8) echo "8 B" ;; 1048576) echo "1 MB" ;; *) echo "$1 B" ;; esac; }

table_pingpong() {
    local f=$WORK/pp s t row
    { extract pingpong half_rtt_us side size; extract mpi_pingpong half_rtt_us side size; } |
        grep -v '^mpiraw/' >"$f"
    echo
    echo "### Ping-pong across the two hosts: half round trip (median of $REPS runs, each the median of $BLOCKS blocks)"
    echo
    row="| size | Open MPI (MPI_Send/MPI_Recv) | genuine PVM, direct | UPVM, default |"
    for t in "${TUNED[@]}"; do row+=" UPVM, ${t#*:} |"; done
    row+=" UPVM default / Open MPI |"
    for t in "${TUNED[@]}"; do row+=" ${t#*:} / Open MPI |"; done
    echo "$row speed-up PVM / UPVM default |"
    echo "|---|---:|---:|---:|$(for t in "${TUNED[@]}"; do printf -- '---:|---:|'; done)---:|---:|"
    for s in $PP_SIZES; do
        row="| $(sizename "$s") | $(cell "$f" "mpi/$s") | $(cell_cs "$f" "pvm/$s") | $(cell_cs "$f" "upvm/$s") |"
        for t in "${TUNED[@]}"; do row+=" $(cell_cs "$f" "${t%%:*}/$s") |"; done
        row+=" $(ratio "$f" "upvm/$s" "mpi/$s") |"
        for t in "${TUNED[@]}"; do row+=" $(ratio "$f" "${t%%:*}/$s" "mpi/$s") |"; done
        echo "$row $(ratio "$f" "pvm/$s" "upvm/$s") |"
        [ "$s" -ge 100000 ] || continue
        row="| $(sizename "$s"), bandwidth | $(gbs "$f" "mpi/$s" "$s") | $(gbs "$f" "pvm/$s" "$s") | $(gbs "$f" "upvm/$s" "$s") |"
        for t in "${TUNED[@]}"; do row+=" $(gbs "$f" "${t%%:*}/$s" "$s") |"; done
        row+=" $(inv "$f" "upvm/$s" "mpi/$s") |"
        for t in "${TUNED[@]}"; do row+=" $(inv "$f" "${t%%:*}/$s" "mpi/$s") |"; done
        echo "$row $(ratio "$f" "pvm/$s" "upvm/$s") |"
    done
    echo
    echo "Bandwidth = bytes / half round trip (10^9 B/s); in its row the ratio columns are UPVM's bandwidth / Open MPI's."
    why
}

table_migrate() {
    local f=$WORK/mig b mb t row
    { extract migrate total_us side size; extract mpi_pingpong half_rtt_us side size | grep '^mpiraw/'; } >"$f"
    extract migrate bytes side size >"$f.bytes"
    extract migrate obtrusive_us side size >"$f.obtr"
    echo
    echo "### Migration between the hosts (node 0 on host 1 <-> node 1 on host 2) against Open MPI's one-way time for the same bytes (median of $REPS runs, each the median of $((2 * INNER)) moves)"
    echo
    row="| heap | Open MPI one-way (half round trip) | UPVM migration, default: total | obtrusiveness |"
    for t in "${TUNED[@]}"; do row+=" UPVM, ${t#*:}: total |"; done
    row+=" bytes moved | migration / Open MPI bandwidth, default |"
    for t in "${TUNED[@]}"; do row+=" same, ${t#*:} |"; done
    echo "$row"
    echo "|---|---:|---:|---:|$(for t in "${TUNED[@]}"; do printf -- '---:|---:|'; done)---:|---:|"
    for mb in $MIG_MB; do
        b=$(awk -v m="$mb" 'BEGIN { printf "%d", m * 1048576 }')
        row="| $mb MB | $(cell "$f" "mpiraw/$b") ($(gbs "$f" "mpiraw/$b" "$b")) |"
        [ "$b" = 0 ] && row="| 0 MB (the fixed cost) | - |"
        row+=" $(cell "$f" "upvm/$b") ($(gbs "$f" "upvm/$b" "$b")) | $(cell "$f.obtr" "upvm/$b") |"
        for t in "${TUNED[@]}"; do row+=" $(cell "$f" "${t%%:*}/$b") ($(gbs "$f" "${t%%:*}/$b" "$b")) |"; done
        row+=" $(awk -v k="upvm/$b" '$1 == k { printf ($2 < 1048576 ? "%.1f KiB" : "%.2f MiB"), ($2 < 1048576 ? $2 / 1024 : $2 / 1048576) }' "$f.bytes") |"
        row+=" $(inv "$f" "upvm/$b" "mpiraw/$b") |"
        for t in "${TUNED[@]}"; do row+=" $(inv "$f" "${t%%:*}/$b" "mpiraw/$b") |"; done
        echo "$row" | sed 's/ (-) / /g'
    done
    echo
    echo "GB/s = heap bytes / time (10^9 B/s); a move also carries the task's writable data, stack and PVM state (bytes moved).  Bandwidth ratio = Open MPI's one-way time / the migration's total."
    why
}

table_ring() {
    local f=$WORK/ring
    extract ring hop_us side n >"$f"
    echo
    echo "### Ring of $RING_N tasks on the two hosts: one int (PvmDataRaw) around, time per hop (median of $REPS runs, each the median of $BLOCKS blocks)"
    echo
    echo "| N | genuine PVM, direct (placement: round robin, 12 + 12) | UPVM, default (cyclic: every hop crosses) | UPVM, UPVM_PLACEMENT=block (2 hops cross) | speed-up PVM / UPVM block | speed-up PVM / UPVM default |"
    echo "|---:|---:|---:|---:|---:|---:|"
    echo "| $RING_N | $(cell_cs "$f" "pvm/$RING_N") | $(cell_cs "$f" "upvmc/$RING_N") | $(cell_cs "$f" "upvmb/$RING_N") |" \
        "$(ratio "$f" "pvm/$RING_N" "upvmb/$RING_N") | $(ratio "$f" "pvm/$RING_N" "upvmc/$RING_N") |"
    why ring
}

# a placement "a,a,b,..." -> "host1: 12, host2: 12 / crossing hops"
per_host() {
    awk -v l="$1" 'BEGIN { if (l == "-") { printf "-"; exit }
        n = split(l, a, ","); for (i = 1; i <= n; i++) { if (!(a[i] in c)) o[++k] = a[i]; c[a[i]]++ }
        for (i = 1; i <= n && n > 1; i++) x += a[i] != a[i % n + 1]
        for (i = 1; i <= k; i++) printf "%s%s: %d", (i > 1 ? ", " : ""), o[i], c[o[i]]
        printf "; %d hops cross", x }'
}

table_checks() {
    local name got exp tid v f=$WORK/xfer s cas need
    echo
    echo "### Where the tasks ran: bench/nodes/where.c spawned as pingpong.c / ring.c spawn (the host name each member reports)"
    echo
    echo "| job | members per host; hops crossing hosts | expected | tid of member 1 (the pingpong's partner) | verdict |"
    echo "|---|---|---|---|---|"
    while IFS='|' read -r name got exp tid v; do
        echo "| $name | $(per_host "$got") | $(per_host "$exp") | $tid | $v |"
    done <"$PLACE"
    [ -s "$PLACE" ] || echo "| (not run) | | | | |"

    # genuine PVM's processes per host in every run
    awk '$2 == "pvmhosts" { for (i = 3; i <= NF; i++) { split($i, a, "="); f[a[1]] = a[2] }
         k = f["case"] " " f["h1"] "+" f["h2"]; c[k]++ }
         END { for (k in c) print k, c[k] }' "$RES" | sort >"$WORK/pvmhosts"
    if [ -s "$WORK/pvmhosts" ]; then
        echo
        echo "Genuine PVM's processes seen in each host's namespace during its runs (host 1 + host 2, runs):" \
            "$(awk '{ printf "%s%s %s (%d run%s)", (NR > 1 ? "; " : ""), $1, $2, $3, ($3 > 1 ? "s" : "") }' "$WORK/pvmhosts")" \
            "(expected: pingpong 1+1, ring 12+12)."
    fi

    # bytes through host 2's link per run
    extract xfer bytes side case >"$f"
    echo
    echo "### Bytes through host 2's link per run (median; what must cross: the payload of the 1 MB ping-pongs, the heaps' moves)"
    echo
    echo "| run | bytes through host 2's link | payload that must cross | verdict |"
    echo "|---|---:|---:|---|"
    while read -r s _ _; do
        cas=${s#*/}
        case "$cas" in
            pingpong) need=$(awk -v b="$BLOCKS" -v i="$ISCALE" 'BEGIN { printf "%d", 2 * 1048576 * (51 + 20 * i * b) }') ;;
            migrate) case "${s%%/*}" in
                         mpiraw) need=$(awk -v b="$BLOCKS" -v m="$MIG_MB" 'BEGIN { n = split(m, a, " ")
                                     for (j = 1; j <= n; j++) s += 2 * a[j] * 1048576 * (4 + 5 * b); printf "%d", s }') ;;
                         *) need=$(awk -v r="$INNER" -v m="$MIG_MB" 'BEGIN { n = split(m, a, " ")
                                     for (j = 1; j <= n; j++) s += 2 * (r + 1) * a[j] * 1048576; printf "%d", s }') ;;
                     esac ;;
            *) need="" ;;
        esac
        awk -v k="$s" -v need="$need" '$1 == k { v = $2 } END {
            printf "| %s | %.1f MB | %s | %s |\n", k, v / 1e6, need == "" ? "-" : sprintf("%.1f MB", need / 1e6),
                need == "" ? (v > 0 ? "crossed" : "**nothing crossed**") : (v >= need ? "crossed" : "**less than the payload**") }' "$f"
    done <"$f"
}

# tuned A B OP LIMIT: the verdict of every tuned variant, A or B being
# "upvm/..." (replaced by the variant's side)
tuned() {
    local file=$1 a=$2 b=$3 t out="" sa sb
    for t in "${TUNED[@]}"; do
        sa=${a/#upvm\//${t%%:*}/} sb=${b/#upvm\//${t%%:*}/}
        out+="${out:+; }${t#*:}: $(verdict "$file" "$sa" "$sb" "$4" "$5")"
    done
    echo "$out"
}

table_targets() {
    local pp=$WORK/pp mig=$WORK/mig rg=$WORK/ring b mb
    echo
    echo "### Targets (issue \"many hosts\"), judged on the default invocation; the tuned ones beside it"
    echo
    echo "| target | UPVM, default | UPVM, tuned |"
    echo "|---|---|---|"
    echo "| latency ≤ 1.1× Open MPI, 0 B (UPVM / Open MPI) | $(verdict "$pp" upvm/0 mpi/0 le 1.1) | $(tuned "$pp" upvm/0 mpi/0 le 1.1) |"
    echo "| latency ≤ 1.1× Open MPI, 8 B | $(verdict "$pp" upvm/8 mpi/8 le 1.1) | $(tuned "$pp" upvm/8 mpi/8 le 1.1) |"
    echo "| bandwidth ≥ 0.9× Open MPI, 1 MB (Open MPI time / UPVM time) | $(verdict "$pp" mpi/1048576 upvm/1048576 ge 0.9) | $(tuned "$pp" mpi/1048576 upvm/1048576 ge 0.9) |"
    echo "| ≥ 3× faster than genuine PVM, 0 B (PVM / UPVM) | $(verdict "$pp" pvm/0 upvm/0 ge 3) | $(tuned "$pp" pvm/0 upvm/0 ge 3) |"
    echo "| ≥ 3× faster than genuine PVM, 8 B | $(verdict "$pp" pvm/8 upvm/8 ge 3) | $(tuned "$pp" pvm/8 upvm/8 ge 3) |"
    echo "| ≥ 3× faster than genuine PVM, 1 MB | $(verdict "$pp" pvm/1048576 upvm/1048576 ge 3) | $(tuned "$pp" pvm/1048576 upvm/1048576 ge 3) |"
    for mb in $MIG_MB; do
        [ "$mb" = 0 ] && continue
        b=$(awk -v m="$mb" 'BEGIN { printf "%d", m * 1048576 }')
        echo "| migration of a $mb MB heap ≥ 0.8× Open MPI's bandwidth (MPI one-way / migration total) | $(verdict "$mig" "mpiraw/$b" "upvm/$b" ge 0.8) | $(tuned "$mig" "mpiraw/$b" "upvm/$b" ge 0.8) |"
    done
    echo "| ring of $RING_N ≥ 3× faster than genuine PVM (PVM / UPVM; the ping-pong's factor, the issue sets none for the ring) | default (cyclic): $(verdict "$rg" "pvm/$RING_N" "upvmc/$RING_N" ge 3) | UPVM_PLACEMENT=block: $(verdict "$rg" "pvm/$RING_N" "upvmb/$RING_N" ge 3) |"
    if grep -q -E '\|\*\*(differs|failed)' "$PLACE" 2>/dev/null; then
        echo
        echo "**The placement check did not confirm every job's placement** (table above)."
    fi
}

# ----------------------------------------------------------------- main

# other processes using a core (>= 10% over one second), by top: this
# machine may be shared, and a busy core changes every number here
busy_others() {
    local b
    b=$(top -b -n 2 -d 1 -w 512 2>/dev/null | awk '/^top -/ { n++ }
        n == 2 && $1 ~ /^[0-9]+$/ && $9 + 0 >= 10 { printf "%s%s (pid %s) %s%%", (c++ ? ", " : ""), $12, $1, $9 }')
    echo "${b:-none}"
}

T0=$(date +%s)
note "machine: $(nproc) cpus, $(uname -sr),$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
note "REPS=$REPS BLOCKS=$BLOCKS ISCALE=$ISCALE TSCALE=$TSCALE INNER=$INNER QUICK=$QUICK CASES=\"$CASES\" PEERS=\"$PEERS\"; pinned: ${PIN[*]}"
build
hosts_up
[ "$HAVE_MPI$HAVE_PVM$HAVE_UPVM" = 000 ] && die "no peer to measure (see the warnings above)"
pvm_start
note "load average before: $(cut -d' ' -f1-3 /proc/loadavg); other processes using a core: $(busy_others)"
check_placement
for rep in $(seq 1 "$REPS"); do
    note "run $rep/$REPS: $CASES"
    case_on pingpong && rep_pingpong
    case_on migrate && rep_migrate
    case_on ring && rep_ring
done
note "load average after: $(cut -d' ' -f1-3 /proc/loadavg); other processes using a core: $(busy_others); $(($(date +%s) - T0)) s"
pvm_stop
case_on pingpong && table_pingpong
case_on migrate && table_migrate
case_on ring && table_ring
table_checks
table_targets
echo
echo "Two emulated hosts on one machine (tests/hosts/emulated-hosts.sh, prefix $HOSTS_PREFIX, $HOSTS_NET.0/24):" \
    "everything between them crosses TCP over veth + bridge, and they share the machine's $(nproc) cores." \
    "Open MPI and UPVM: \`${MPIRUN[*]} -H ${ADDR[0]}:1,${ADDR[1]}:1 -np 2\` (UPVM_HOSTS_MPIRUN:" \
    "Open MPI's TCP transport on the hosts' subnet, --bind-to none); UPVM $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)" \
    "($BUILD, RelWithDebInfo); everything under ${PIN[*]}$([ ${#HOSTPIN[@]} -gt 0 ] &&
        echo ", and each host on a core of its own: ${HNAME[0]} cpu ${HCPU[0]}, ${HNAME[1]} cpu ${HCPU[1]}")."
mpicpus=$(grep '^RESULT mpi_pingpong' "$RES" | sed -n 's/.*ranks_cpus=\([^ ]*\).*/\1/p' | sort | uniq -c |
    awk '{ printf "%s%s (%d results)", (NR > 1 ? ", " : ""), $2, $1 }')
echo
echo "Open MPI's ranks were on cpus ${mpicpus:-?} when they started timing (rank 0's, rank 1's)."
if [ ${#PVM_TOOK[@]} -gt 0 ]; then
    echo
    echo "What genuine PVM took to span the two hosts:"
    printf -- '- %s.\n' "${PVM_TOOK[@]}"
    echo "- its pvmd places a spawn that names no host round robin, continuing where its last spawn stopped: before every genuine-PVM job the script spawns \`where -n 2\` until its task lands on host 1, so that the ping-pong's partner lands on host 2 and the ring splits 12 + 12."
fi
# (Open MPI's "plm:rsh: Warning: setpgid(...) failed in parent": its agent
# had already exec'ed; harmless, not said)
if grep -qv 'plm:rsh: Warning: setpgid' "$WORK/stderr.log"; then
    echo
    echo "== WARNING: the programs wrote to stderr:"
    grep -v 'plm:rsh: Warning: setpgid' "$WORK/stderr.log" | head -c 2000 | head -20
fi
