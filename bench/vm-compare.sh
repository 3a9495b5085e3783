#!/usr/bin/env bash
# bench/vm-compare.sh - messages between a program started from a shell and
# the task it spawns, three ways, back to back in one run:
#
#   job        UPVM's default without a VM: ./pingpong is a job of its own
#              (one node per core; its child lands on another node)
#   vm         the same binary while this user's VM is up (upvm start): the
#              program joins the VM as a node of its own, its child runs
#              on one of the VM's nodes (docs/console.md)
#   pvm        genuine PVM 3.4.6: the same source built with -lpvm3, under a
#              private pvmd, direct route (its fastest)
#
# The program is the baseline's unmodified pingpong.c; every run is pinned
# to the same cores (the VM and the pvmd too) and reniced when allowed.
# Prints the median half round trip per size over REPS runs, and the
# ratios vm/job and pvm/vm.
#
# Usage:   bench/vm-compare.sh            # ~1 min on 2 cores
# Knobs:   REPS=N (default 5)  SIZES="0 1000 100000"  CPUS=0,1
#          BUILD=DIR (default build/)  PVM_BASELINE_DIR (pingpong.c's directory,
#          default tests/examples/baseline)
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
BASELINE=${PVM_BASELINE_DIR:-$ROOT/tests/examples/baseline}
REPS=${REPS:-5}
SIZES=${SIZES:-"0 1000 100000"}
CPUS=${CPUS:-0,1}
UPVM=$BUILD/tools/upvm/upvm
WORK=$(mktemp -d /tmp/upvm-vmbench.XXXXXX)
export XDG_RUNTIME_DIR=$WORK/run
mkdir -m 700 "$XDG_RUNTIME_DIR"
PIN=(taskset -c "$CPUS")
nice -n -15 true 2>/dev/null && PIN=(nice -n -15 "${PIN[@]}")
PVMD_PID=""

die() { echo "vm-compare: $*" >&2; exit 1; }
cleanup() {
    [ -S "$XDG_RUNTIME_DIR/upvm/vm.sock" ] && "$UPVM" halt >/dev/null 2>&1
    if [ -n "$PVMD_PID" ]; then
        (echo halt | PVM_TMP=$WORK/pvm timeout 10 pvm) >/dev/null 2>&1
        kill "$PVMD_PID" 2>/dev/null
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT

command -v pvmd >/dev/null && [ -f /usr/include/pvm3.h ] || die "genuine PVM missing (apt-get install pvm pvm-dev)"
[ -x "$UPVM" ] || die "no $UPVM: build UPVM first (cmake --build $BUILD)"
mkdir "$WORK/u" "$WORK/p"
"$BUILD/tools/upvmcc/upvmcc" -O2 -w -o "$WORK/u/pingpong" "$BASELINE/pingpong.c" ||
    die "upvmcc pingpong.c failed"
gcc -O2 -w -o "$WORK/p/pingpong" "$BASELINE/pingpong.c" -lpvm3 || die "gcc -lpvm3 failed"

# RESULT lines of one run, tagged with its side
run() {
    local side=$1
    shift
    timeout -k 5 120 "${PIN[@]}" "$@" -r direct -e raw -b 5 $SIZES </dev/null 2>>"$WORK/err.log" |
        sed -n "s/^RESULT pingpong /$side /p" >>"$WORK/results"
}

start_pvmd() {
    export PVM_ROOT=/usr/lib/pvm3 PVM_ARCH=LINUX64 PVM_ALLOW_ROOT=1 PVM_TMP=$WORK/pvm
    mkdir -p "$PVM_TMP"
    (cd /tmp && exec "${PIN[@]}" pvmd </dev/null >"$WORK/pvmd.out" 2>&1) &
    PVMD_PID=$!
    for _ in $(seq 1 100); do
        [ -S "$(cat "$PVM_TMP/pvmd.$(id -u)" 2>/dev/null)" ] && return 0
        sleep 0.05
    done
    die "pvmd did not start: $(cat "$WORK/pvmd.out")"
}

for rep in $(seq 1 "$REPS"); do
    echo "round $rep of $REPS" >&2
    PVMBENCH_SPAWN_DIR=$WORK/u run job "$WORK/u/pingpong"
    "${PIN[@]}" "$UPVM" start >/dev/null || die "upvm start failed"
    PVMBENCH_SPAWN_DIR=$WORK/u run vm "$WORK/u/pingpong"
    "$UPVM" halt >/dev/null || die "upvm halt failed"
    [ -n "$PVMD_PID" ] || start_pvmd
    PVMBENCH_SPAWN_DIR=$WORK/p run pvm "$WORK/p/pingpong"
done

python3 - "$WORK/results" <<'EOF'
import collections, statistics, sys
med = collections.defaultdict(list)
for line in open(sys.argv[1]):
    side, *kv = line.split()
    d = dict(x.split("=", 1) for x in kv)
    med[(side, int(d["size"]))].append(float(d["half_rtt_us"]))
sizes = sorted({s for _, s in med})
print("half round trip, median µs (runs per cell: %d)" % max(len(v) for v in med.values()))
print("%8s %10s %10s %10s %8s %8s" % ("size", "job", "vm", "pvm", "vm/job", "pvm/vm"))
for s in sizes:
    j, v, p = (statistics.median(med[(k, s)]) if med[(k, s)] else float("nan")
               for k in ("job", "vm", "pvm"))
    print("%8d %10.2f %10.2f %10.2f %8.2f %8.1f" % (s, j, v, p, v / j, p / v))
EOF
