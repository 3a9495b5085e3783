#!/usr/bin/env bash
# bench/trace-compare.sh - what the UPVM trace costs (issue 21; docs/tracing.md),
# against the peers measured in the same run: the same programs built from
# the commit before the trace went in (BASE_REV), and this build with
# tracing off.
#
#   core      build/bench/bench_core -q: ULP yield (2 and 64 ULPs) and the
#             hand-off ping-pong, this build (the trace compiled in, off)
#             against BASE_REV's: the cost of the flag checks on the
#             switch path.  Target: off <= 1 %.
#   pingpong  build/bench/bench_pvm pingpong (the PVM baseline ping-pong
#             of ../shared/baseline/pvm/pingpong.c with UPVM's thread-mode
#             tasks, 0 and 1000 bytes, PvmDataRaw, one node: the path where
#             UPVM is fastest and the trace's share largest; 4 decimals):
#             BASE_REV, off, on.  Off <= 1 %; on: reported.
#   lgs       tests/gs/lgs.c -v 32 -i 40 -w WORK -b on 2 nodes, no
#             balancer: BASE_REV, off, on (upvm run --trace, conversion
#             not counted: the job's own time, lgs's "time" line).
#             Target: on <= 10 %.
#   rate      bench/trace/yield.c: two ULPs yielding, one SWITCH record
#             per switch: ns per switch off and on, so the cost of one
#             record and the records per second one node can write.
#   convert   `upvm trace convert` of the lgs trace: seconds per million
#             records, bytes of raw file, JSON and OTF2 per record.
#
# Every job runs under `taskset -c $CPUS` (nice -n -15 as root); runs are
# outermost (REPS times the whole list) and each cell is the median of
# REPS runs; ratios are medians of the per-run ratios against the peer of
# the same run.
#
# Usage:   bench/trace-compare.sh             # ~3 min on 2 cores (REPS=5)
#          QUICK=1 bench/trace-compare.sh     # smoke run (REPS=1)
# Knobs:   REPS=N  WORK=N (lgs -w, default 400000)  CPUS=a,b (default 0,1)
#          BASE_REV=rev (default: the commit before util/trace.h)
#          BUILD=DIR (a Release build of this tree, default build-bench/)
#          TRACE_DIR=DIR (where the raw files go; default a directory under
#          the work directory on /tmp)
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
HERE=$ROOT/bench
# shellcheck source=bench/lib.sh
. "$HERE/lib.sh"
BUILD=${BUILD:-$ROOT/build-bench}
REPS=${REPS:-7}
QUICK=${QUICK:-0}
CPUS=${CPUS:-0,1}
WORK=${WORK:-400000}
[ "$QUICK" = 1 ] && REPS=1
PFLAGS=(-O2)

die() { echo "trace-compare: $*" >&2; exit 1; }
note() { echo "== $*" >&2; }

WORKDIR=$(mktemp -d /tmp/trace-compare.XXXXXX) || die "mktemp failed"
TRACE_DIR=${TRACE_DIR:-$WORKDIR/traces}
mkdir -p "$WORKDIR/now" "$WORKDIR/base" "$TRACE_DIR" || die "cannot write $WORKDIR"
RES=$WORKDIR/results
: >"$RES"
cleanup() { kill_cwd_under "$WORKDIR"; rm -rf "$WORKDIR"; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP
PRIO=()
[ "$(id -u)" = 0 ] && PRIO=(nice -n -15)
C0=${CPUS%%,*}

# ---------------------------------------------------------------- build

# build_tree SRC BUILDDIR LOG: a Release build of SRC (what the benchmark runs)
build_tree() {
    cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release >"$3" 2>&1 &&
        cmake --build "$2" >>"$3" 2>&1
}

# progs BUILDDIR OUT: the benchmark's programs built with that tree's upvmcc
progs() {
    local cc=$1/tools/upvmcc/upvmcc
    "$cc" "${PFLAGS[@]}" -o "$2/lgs" "$ROOT/tests/gs/lgs.c" &&
        "$cc" "${PFLAGS[@]}" -o "$2/yield" "$HERE/trace/yield.c"
}

note "building this tree (Release) in $BUILD"
build_tree "$ROOT" "$BUILD" "$WORKDIR/build.log" || { tail -20 "$WORKDIR/build.log"; die "the build failed"; }
progs "$BUILD" "$WORKDIR/now" || die "upvmcc could not build the programs"
rev=$(git -C "$ROOT" rev-parse --short "${BASE_REV:-$(git -C "$ROOT" log --format=%h -1 \
    --grep='^util/trace.h: the trace record')^}" 2>/dev/null) || die "no BASE_REV in git"
BASE=/tmp/upvm-trace-base-$rev
if [ ! -x "$BASE/build/bench/bench_core" ]; then
    note "building $rev (before the trace) in $BASE"
    rm -rf "$BASE" && mkdir -p "$BASE/src" && git -C "$ROOT" archive "$rev" | tar -x -C "$BASE/src" &&
        build_tree "$BASE/src" "$BASE/build" "$BASE/build.log" || die "$rev did not build ($BASE/build.log)"
fi
progs "$BASE/build" "$WORKDIR/base" || die "upvmcc of $rev could not build the programs"

# ---------------------------------------------------------------- runs

# run WHICH KEY [VAR=VALUE...] PROG ARGS...: one job of WHICH (now|base)
# in the work directory, pinned; its RESULT lines tagged with KEY
run() {
    local which=$1 key=$2
    shift 2
    (cd "$WORKDIR" && timeout -k 5 300 taskset -c "$CPUS" "${PRIO[@]}" env "$@" \
        2>>"$WORKDIR/stderr.log") | sed -n "s|^RESULT |RESULT $which $key |p; s|^time \([0-9.]*\) s|RESULT $which $key lgs time_s=\1|p" >>"$RES"
}

trace_env() { echo "UPVM_TRACE_FILE=$TRACE_DIR/$1" "UPVM_TRACE_TOOL=/bin/true"; }

for rep in $(seq "$REPS"); do
    note "round $rep of $REPS"
    for which in base now; do
        core=$([ $which = base ] && echo "$BASE/build" || echo "$BUILD")/bench/bench_core
        taskset -c "$C0" "${PRIO[@]}" "$core" -q -r 7 | awk -F'|' -v w=$which '
            function ns(f) { sub(/ns/, "", f); return f + 0 }
            /ULP yield, 2 ULPs/ {print "RESULT " w " core y2 ns=" ns($3) " p10=" ns($4)}
            /ULP yield, 64 ULPs/ {print "RESULT " w " core y64 ns=" ns($3) " p10=" ns($4)}
            /hand-off ping-pong, yield_to/ {print "RESULT " w " core handoff ns=" ns($3) " p10=" ns($4)}' >>"$RES"
    done
    for size in 0 1000; do
        run base "pp$size" "$BASE/build/bench/bench_pvm" pingpong -e raw $size
        run now "pp$size" "$BUILD/bench/bench_pvm" pingpong -e raw $size
        # shellcheck disable=SC2046
        run on "pp$size" $(trace_env pp) "$BUILD/bench/bench_pvm" pingpong -e raw $size
    done
    lgs=(-v 32 -i 40 -w "$WORK" -b)
    run base lgs UPVM_NODES=2 UPVM_BALANCE=none "$WORKDIR/base/lgs" "${lgs[@]}"
    run now lgs UPVM_NODES=2 UPVM_BALANCE=none "$WORKDIR/now/lgs" "${lgs[@]}"
    # shellcheck disable=SC2046
    run on lgs UPVM_NODES=2 UPVM_BALANCE=none $(trace_env lgs) "$WORKDIR/now/lgs" "${lgs[@]}"
    run now rate UPVM_NODES=1 "$WORKDIR/now/yield" 4000000
    # shellcheck disable=SC2046
    run on rate UPVM_NODES=1 $(trace_env rate) "$WORKDIR/now/yield" 4000000
    rm -rf "$TRACE_DIR"/pp* "$TRACE_DIR"/rate*
done

# conversion of the last lgs trace
UPVM=$BUILD/tools/upvm/upvm
records=$("$UPVM" trace dump "$TRACE_DIR/lgs" 2>/dev/null | wc -l)
raw_bytes=$(du -sb "$TRACE_DIR/lgs.raw" | cut -f1)
t0=$(date +%s.%N)
"$UPVM" trace convert "$TRACE_DIR/lgs" >/dev/null 2>>"$WORKDIR/stderr.log" || note "the conversion failed"
t1=$(date +%s.%N)
json_bytes=$(stat -c %s "$TRACE_DIR/lgs.json" 2>/dev/null || echo 0)
otf2_bytes=$(du -sb "$TRACE_DIR/lgs.otf2" 2>/dev/null | cut -f1 || echo 0)

# ---------------------------------------------------------------- tables

# med WHICH KEY FIELD: the median of FIELD over the rounds
med() {
    grep "^RESULT $1 $2 " "$RES" | grep -o "$3=[0-9.]*" | cut -d= -f2 | sort -g |
        awk '{v[NR] = $1} END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# ratio WHICH PEER KEY FIELD: the median of the per-round ratios
ratio() {
    paste <(grep "^RESULT $1 $3 " "$RES" | grep -o "$4=[0-9.]*" | cut -d= -f2) \
        <(grep "^RESULT $2 $3 " "$RES" | grep -o "$4=[0-9.]*" | cut -d= -f2) |
        awk '$2 > 0 {print $1 / $2}' | sort -g |
        awk '{v[NR] = $1} END { if (NR == 0) print "-"; else if (NR % 2) printf "%.3f", v[(NR + 1) / 2]; else printf "%.3f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

echo "## The trace's cost (bench/trace-compare.sh, $REPS rounds, medians; base = $rev, CPUs $CPUS)"
echo
echo "| what | base ($rev) | off | on | off / base | on / off | target |"
echo "|---|---:|---:|---:|---:|---:|---|"
for k in y2 y64 handoff; do
    echo "| bench_core $k (ns per switch; p10) | $(med base "core $k" ns) ($(med base "core $k" p10)) | $(med now "core $k" ns) ($(med now "core $k" p10)) | - | $(ratio now base "core $k" ns) ($(ratio now base "core $k" p10)) | - | off ≤ 1.01 |"
done
for s in 0 1000; do
    echo "| ping-pong $s B, 1 node (half RTT µs) | $(med base pp$s half_rtt_us) | $(med now pp$s half_rtt_us) | $(med on pp$s half_rtt_us) | $(ratio now base pp$s half_rtt_us) | $(ratio on now pp$s half_rtt_us) | off ≤ 1.01 |"
done
echo "| LGS 32 VPs, 2 nodes (s) | $(med base lgs time_s) | $(med now lgs time_s) | $(med on lgs time_s) | $(ratio now base lgs time_s) | $(ratio on now lgs time_s) | on ≤ 1.10 |"
echo
off=$(med now rate ns_per_switch) on=$(med on rate ns_per_switch)
echo "### Recording rate (bench/trace/yield.c: one SWITCH record per switch)"
echo
echo "| ns per switch, off | on | one record | records per second, one node |"
echo "|---:|---:|---:|---:|"
awk -v a="$off" -v b="$on" 'BEGIN { if (b > a) printf "| %.1f | %.1f | %.1f ns | %.1f M/s |\n", a, b, b - a, 1000 / (b - a); else printf "| %s | %s | - | - |\n", a, b }'
echo
echo "### Conversion of the LGS trace"
echo
awk -v r="$records" -v rb="$raw_bytes" -v jb="$json_bytes" -v ob="$otf2_bytes" -v t="$(echo "$t1 - $t0" | bc)" \
    'BEGIN { printf "| records | raw bytes/record | JSON bytes/record | OTF2 bytes/record | convert s per M records |\n|---:|---:|---:|---:|---:|\n";
             if (r > 0) printf "| %d | %.1f | %.1f | %.1f | %.2f |\n", r, rb / r, jb / r, ob / r, t / r * 1e6 }'
