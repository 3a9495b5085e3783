#!/usr/bin/env bash
# bench/gs-compare.sh - the global scheduler (src/gs; issue "global
# scheduler", benchmarks part) against the peers measured in the same run:
# no balancer, an explicit placement, and the ideal time computed from the
# work measured on one unloaded node.  Two nodes on two cores.
#
#   hog       tests/gs/lgs.c -v 32 -i 40 -w WORK -b (an over-decomposed,
#             compute-bound ring solver, equal VPs); a CPU hog (a shell
#             loop, same priority) starts on the first core halfway
#             through (W/4, W = the work below) and runs to the end.
#             Ideal: the work over the CPU left: 2 cores until the hog
#             starts (its start measured), 1.5 after (the hog takes half
#             of its core): T = t_h + (W - 2 t_h) / 1.5.
#   skew      lgs -s $SKEW (default 2: the even VPs do 3x the odd ones'
#             work, so round-robin puts all the heavy ones on one node; 1:
#             a fixed table, up to 4x; -w SKEW_WORK so that
#             the total is about the same): ideal = W_skew / 2.
#   overhead  the balanced job (lgs, equal VPs, no hog) with UPVM_BALANCE
#             none and the default (comm): ratio default / none.
#   pairs     bench/gs/commpairs.c: 4 ping-pong pairs + 4 compute tasks
#             (and, second block, the pairs alone), started split over the
#             nodes (round robin) with the default balancer, against the
#             same started with an explicit placement (each pair on one
#             node, upvm_migrate before anything runs) without balancer,
#             and split without balancer.
#   vacate    bench/gs/vacate-bench.c: 32 ULPs of 1 MB on node 1 moved to
#             node 0 with upvm_migrate, one after the other: the lower
#             bound of `upvm vacate 1` (not in the CLI at the time of
#             writing; gs_vacate adds the balancer's period and decision);
#             where build/tools/upvm/upvm has `vacate`, also the real
#             thing: vacate-bench -V, then `upvm vacate node1`, timed
#             from the command to the last ULP running on node 0.
#   tsc       build/bench/bench_core -q: ULP yield (2 and 64 ULPs) of this
#             build, with the TSC read at every switch (src/core/sched.c
#             switch_to, cpu_tsc), against the same benchmark built from
#             the commit before the measurements went in (BASE_REV,
#             default 11cb1a9^, built once into /tmp/upvm-gs-base-REV).
#
# W (the work) is measured in every run: the CPU time (user + system) of
# lgs on one node (UPVM_NODES=1) pinned to the second core (CPU time, not
# wall time: other users' processes on the machine do not inflate it).  The policies: none, greedy, refine, comm
# (default), passive, each with the defaults (period 200 ms, threshold
# 15 %), and one tuned line: comm with UPVM_BALANCE_PERIOD=$TUNE_PERIOD
# and UPVM_BALANCE_THRESHOLD=$TUNE_THRESHOLD.
#
# UPVM does not pin node processes (src/util/cpus.c only counts the CPUs
# it may use): every job runs under `taskset -c $CPUS` at `nice -n -15`
# (as root, in an autogroup of its own at nice -15: see below), and as soon as its two node processes exist (the launcher's
# children, forked in node order) node i is pinned to the i-th core of
# CPUS (`taskset -a -p`); the hog is pinned to the first core at the same
# priority.  Runs are outermost (REPS times the whole list), so drifts in
# the background load hit every line alike; every cell is the median over
# REPS runs, ratios are medians of the per-run ratios (peer in the same
# run).  Times are wall times of the whole job (launch to exit).
#
# Usage:   bench/gs-compare.sh            # ~4 min on 2 cores (REPS=3)
#          QUICK=1 bench/gs-compare.sh    # smoke run, ~1 min
# Knobs:   REPS=N (default 3)  WORK=N (lgs -w, default 1500000: ~3.7 s
#          of work, ~1.9 s on two cores)  SKEW=1|2 (default 2)  SKEW_WORK=N (default: the same total
#          work as the equal VPs')
#          CPUS=a,b (default 0,1)  POLICIES="none greedy ..."
#          TUNE_PERIOD=ms (50)  TUNE_THRESHOLD=% (5)
#          BASE_REV=rev  (bench_core without the TSC reads; BASE=0: skip)
#          CASES="work even hog skew pairs vacate tsc" (default all; work is
#          needed by hog and skew)
#          OUT=DIR  keep the RESULT lines and the programs' stderr
#          BUILD=DIR  UPVM's CMake build directory (default build/)
set -uo pipefail

# nice works inside the session's autogroup only (CONFIG_SCHED_AUTOGROUP):
# against other users' sessions a job at nice -15 still gets an equal
# share.  As root the script runs in a session of its own and gives that
# autogroup nice -15 (only this script's processes; GS_AUTOGROUP=0: don't).
if [ "$(id -u)" = 0 ] && [ "${GS_AUTOGROUP:-1}" = 1 ] && [ -z "${GS_IN_SESSION:-}" ] &&
    [ -w /proc/self/autogroup ] && command -v setsid >/dev/null; then
    GS_IN_SESSION=1 exec setsid -w "$0" "$@"
fi
[ -n "${GS_IN_SESSION:-}" ] && echo -15 >/proc/self/autogroup 2>/dev/null

ROOT=$(cd "$(dirname "$0")/.." && pwd)
HERE=$ROOT/bench
# shellcheck source=bench/lib.sh
. "$HERE/lib.sh"
BUILD=${BUILD:-$ROOT/build}
REPS=${REPS:-3}
QUICK=${QUICK:-0}
CPUS=${CPUS:-0,1}
WORK=${WORK:-1500000}
POLICIES=${POLICIES:-none greedy refine comm passive}
TUNE_PERIOD=${TUNE_PERIOD:-50}
TUNE_THRESHOLD=${TUNE_THRESHOLD:-5}
BASE=${BASE:-1}
CASES=" ${CASES:-work even hog skew pairs vacate tsc} "
want() { case $CASES in *" $1 "*) return 0 ;; esac; return 1; }
PAIR_SECS=2
if [ "$QUICK" = 1 ]; then REPS=1; WORK=1000000; PAIR_SECS=2; fi
SKEW=${SKEW:-2}
# the same total work as the equal VPs': weights average 2 (-s 2), 45/16 (-s 1)
if [ "$SKEW" = 2 ]; then SKEW_WORK=${SKEW_WORK:-$((WORK / 2))}; else SKEW_WORK=${SKEW_WORK:-$((WORK * 32 / 45))}; fi
VPS=32 ITERS=40
RUN_TIMEOUT=120
PFLAGS=(-std=gnu11 -O2 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes)

die() { echo "gs-compare: $*" >&2; exit 1; }
note() { echo "== $*"; }
warn() { echo "== WARNING: $*" >&2; }

C0=${CPUS%%,*} C1=${CPUS#*,}
[ -n "$C0" ] && [ -n "$C1" ] && [ "$C0" != "$CPUS" ] || die "CPUS=$CPUS: two cores, a,b"

WORKDIR=$(mktemp -d /tmp/gs-compare.XXXXXX) || die "mktemp failed"
RES=$WORKDIR/results
mkdir -p "$WORKDIR/bin" && : >"$RES" && : >"$WORKDIR/stderr.log" || die "cannot write $WORKDIR"

PRIO=()
if [ "$(id -u)" = 0 ]; then PRIO=(nice -n -15); fi
LGS=$BUILD/tests/gs/progs/lgs
UPVMCC=$BUILD/tools/upvmcc/upvmcc
CORE=$BUILD/bench/bench_core
FAILS=0

# ------------------------------------------------------------- clean-up


cleanup() {
    kill_cwd_under "$WORKDIR"
    if [ -n "${OUT:-}" ]; then
        mkdir -p "$OUT" && cp "$RES" "$WORKDIR/stderr.log" "$OUT/" 2>/dev/null
    fi
    rm -rf "$WORKDIR"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

# ---------------------------------------------------------------- build

BASE_CORE=""
build() {
    command -v taskset >/dev/null || die "taskset (util-linux) missing"
    if ! { cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
            >"$WORKDIR/cmake.log" 2>&1 && cmake --build "$BUILD" >>"$WORKDIR/cmake.log" 2>&1; }; then
        grep -m5 -E 'error|undefined' "$WORKDIR/cmake.log" >&2
        die "the build failed (cmake/ninja in $BUILD)"
    fi
    [ -x "$LGS" ] || die "$LGS was not built"
    cp "$LGS" "$WORKDIR/bin/" || die "cannot copy lgs"
    for p in commpairs vacate-bench; do
        "$UPVMCC" "${PFLAGS[@]}" -o "$WORKDIR/bin/$p" "$HERE/gs/$p.c" 2>>"$WORKDIR/stderr.log" ||
            die "upvmcc could not build bench/gs/$p.c"
    done
    HAVE_VACATE=0
    grep -q 'upvm vacate' "$BUILD/tools/upvm/upvm" 2>/dev/null && HAVE_VACATE=1
    if [ "$BASE" = 1 ]; then
        local rev dir
        rev=$(git -C "$ROOT" rev-parse --short "${BASE_REV:-11cb1a9^}" 2>/dev/null) ||
            { warn "no BASE_REV in git: bench_core without TSC reads skipped"; return 0; }
        dir=/tmp/upvm-gs-base-$rev
        if [ ! -x "$dir/build/bench/bench_core" ]; then
            note "building bench_core of $rev (the build before the TSC reads) in $dir"
            rm -rf "$dir" && mkdir -p "$dir/src" &&
                git -C "$ROOT" archive "$rev" | tar -x -C "$dir/src" &&
                cmake -S "$dir/src" -B "$dir/build" -G Ninja -DCMAKE_BUILD_TYPE=Release >"$dir/build.log" 2>&1 &&
                cmake --build "$dir/build" --target bench_core >>"$dir/build.log" 2>&1 ||
                { warn "bench_core of $rev did not build ($dir/build.log)"; return 0; }
        fi
        BASE_CORE=$dir/build/bench/bench_core BASE_REVS=$rev
    fi
}

# ---------------------------------------------------------------- runs

now_s() { date +%s.%N; }
# the CPU time (user + system, s) of this shell's reaped children so far
# (FILE: what the builtin `times` wrote, run in this shell)
cpu_of() {
    awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } printf "%.3f", t }' "$1"
}
fsub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", a - b }'; }

# pin_nodes PID N: the launcher is PID's child (timeout -> lgs); its N
# children are the nodes, forked in order: node i -> the i-th core.
pin_nodes() {
    local pid=$1 n=$2 i launcher="" kids=()
    for i in $(seq 1 2000); do
        launcher=$(pgrep -P "$pid" | head -1)
        if [ -n "$launcher" ]; then
            mapfile -t kids < <(pgrep -P "$launcher" | sort -n)
            [ "${#kids[@]}" -ge "$n" ] && break
        fi
        kill -0 "$pid" 2>/dev/null || return 1
        sleep 0.001
    done
    [ "${#kids[@]}" -ge "$n" ] || { warn "node processes not found: not pinned"; return 1; }
    taskset -a -p -c "$C0" "${kids[0]}" >/dev/null 2>&1
    taskset -a -p -c "$C1" "${kids[1]}" >/dev/null 2>&1
}

# job NAME NODES HOG_DELAY [VAR=VALUE...] -- CMD...: one job in $WORKDIR/bin,
# nodes pinned, a hog on the first core after HOG_DELAY s ("-": none).
# Sets WALL (s), CPU (s: user + system of the job; meant for one-node
# runs, where it is the work W), HOG_AT (s after the start, "-"), MOVES (balancer moves),
# JOB_OUT (its stdout).
job() {
    local name=$1 nodes=$2 hog=$3 envs=() pid hp="" rc t0 t1
    shift 3
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    JOB_OUT=$WORKDIR/job.out
    : >"$WORKDIR/hog.at"
    t0=$(now_s)
    if [ "$nodes" = 1 ]; then
        (cd "$WORKDIR/bin" && exec timeout -k 5 "$RUN_TIMEOUT" env UPVM_NODES=1 "${envs[@]}" \
            taskset -c "$C1" "${PRIO[@]}" "$@") </dev/null >"$JOB_OUT" 2>"$WORKDIR/job.err" &
        pid=$!
    else
        (cd "$WORKDIR/bin" && exec timeout -k 5 "$RUN_TIMEOUT" env UPVM_NODES="$nodes" "${envs[@]}" \
            taskset -c "$CPUS" "${PRIO[@]}" "$@") </dev/null >"$JOB_OUT" 2>"$WORKDIR/job.err" &
        pid=$!
        pin_nodes "$pid" "$nodes"
    fi
    if [ "$hog" != - ]; then
        (cd "$WORKDIR/bin" && sleep "$hog" && now_s >"$WORKDIR/hog.at" &&
            exec taskset -c "$C0" "${PRIO[@]}" sh -c 'while :; do :; done') &
        hp=$!
    fi
    local c0 c1
    times >"$WORKDIR/times0"
    wait "$pid"
    rc=$?
    t1=$(now_s)
    times >"$WORKDIR/times1"
    c0=$(cpu_of "$WORKDIR/times0") c1=$(cpu_of "$WORKDIR/times1")
    CPU=$(fsub "$c1" "$c0")
    [ -n "$hp" ] && { kill "$hp" 2>/dev/null; wait "$hp" 2>/dev/null; }
    WALL=$(fsub "$t1" "$t0")
    HOG_AT=-
    [ -s "$WORKDIR/hog.at" ] && HOG_AT=$(fsub "$(cat "$WORKDIR/hog.at")" "$t0")
    MOVES=$(grep -c 'upvm-trace balance: t[0-9a-f]* node[0-9]* -> node[0-9]* .*moved in' "$WORKDIR/job.err")
    grep -v '^upvm-trace balance' "$WORKDIR/job.err" | sed "s|^|$name: |" >>"$WORKDIR/stderr.log"
    if [ "$rc" != 0 ]; then
        FAILS=$((FAILS + 1))
        echo "   ($name failed, status $rc)" >&2
        kill_cwd_under "$WORKDIR/bin"
        return 1
    fi
    return 0
}

res() { echo "RESULT $*" >>"$RES"; }

# The real vacate, where the CLI has it: vacate-bench -V puts 32 ULPs of
# 1 MB on node 1 and says READY; then `upvm vacate node1` (the job's
# control socket alone in its own XDG_RUNTIME_DIR); the program sees the
# first and the last worker arrive on node 0.  Times from the command.
vacate_cli() {
    local upvm=$BUILD/tools/upvm/upvm rt=$WORKDIR/rt out=$WORKDIR/vc.out pid rc i tcmd line
    mkdir -p -m 700 "$rt"
    (cd "$WORKDIR/bin" && exec env XDG_RUNTIME_DIR="$rt" UPVM_NODES=2 UPVM_TRACE=balance \
        timeout -k 5 60 taskset -c "$CPUS" "${PRIO[@]}" ./vacate-bench -V -n 32 -s 1) \
        </dev/null >"$out" 2>"$WORKDIR/vc.err" &
    pid=$!
    pin_nodes "$pid" 2
    for i in $(seq 1 4000); do
        grep -q '^READY' "$out" && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.005
    done
    tcmd=$(now_s)
    XDG_RUNTIME_DIR="$rt" "$upvm" vacate node1 >"$WORKDIR/vc.reply" 2>&1 ||
        sed 's/^/upvm vacate: /' "$WORKDIR/vc.reply" >>"$WORKDIR/stderr.log"
    wait "$pid"
    rc=$?
    grep -v '^upvm-trace balance' "$WORKDIR/vc.err" | sed 's/^/vacate -V: /' >>"$WORKDIR/stderr.log"
    line=$(grep '^RESULT vacate_cli' "$out") || { FAILS=$((FAILS + 1)); echo "   (vacate -V failed, status $rc)" >&2; kill_cwd_under "$WORKDIR/bin"; return 0; }
    local first empty moved mv
    first=$(echo "$line" | sed 's/.* first_rt=\([^ ]*\).*/\1/')
    empty=$(echo "$line" | sed 's/.* empty_rt=\([^ ]*\).*/\1/')
    moved=$(grep -c 'node1 -> node0 .*moved in' "$WORKDIR/vc.err")
    mv=$(grep -o 'node1 -> node0 .*moved in [0-9.]* ms' "$WORKDIR/vc.err" | sed 's/.*moved in \([0-9.]*\) ms/\1/' | medians_of)
    res vacate_cli ulps="$(echo "$line" | sed "s/.* ulps=\([0-9]*\).*/\1/")" first_ms="$(awk -v a="$first" -v b="$tcmd" 'BEGIN { printf "%.2f", (a - b) * 1000 }')" \
        empty_ms="$(awk -v a="$empty" -v b="$tcmd" 'BEGIN { printf "%.2f", (a - b) * 1000 }')" moves="$moved" move_ms="$mv"
}

# stdin: numbers; stdout: their median ("-" if none)
medians_of() { sort -g | awk '{ v[++n] = $1 } END { if (!n) print "-"; else print (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }'; }

# policy environment: "comm" or "tuned" (comm, faster and finer)
penv() {
    case $1 in
    tuned) echo "UPVM_BALANCE=comm UPVM_BALANCE_PERIOD=$TUNE_PERIOD UPVM_BALANCE_THRESHOLD=$TUNE_THRESHOLD UPVM_TRACE=balance" ;;
    none) echo "UPVM_BALANCE=none" ;;
    *) echo "UPVM_BALANCE=$1 UPVM_TRACE=balance" ;;
    esac
}

lgs_args() { echo "./lgs -v $VPS -i $ITERS -b -s $1 -w $2"; }

rep_once() {
    local W WS p ideal t_none_h="" t_none_s="" t_none_e="" rt line
    # the work, on one unloaded node (hog and skew need it)
    W="" WS=""
    if want work; then
        job work 1 - UPVM_BALANCE=none -- $(lgs_args 0 "$WORK") && W=$CPU &&
            res gs case=work pol=- wall_s="$WALL" cpu_s="$W"
        job work-skew 1 - UPVM_BALANCE=none -- $(lgs_args "$SKEW" "$SKEW_WORK") && WS=$CPU &&
            res gs case=work-skew pol=- wall_s="$WALL" cpu_s="$WS"
    fi
    # overhead: balanced job, no hog
    [ -n "$W" ] && want even && for p in none comm; do
        # shellcheck disable=SC2046
        job "even $p" 2 - $(penv "$p") -- $(lgs_args 0 "$WORK") || continue
        [ "$p" = none ] && t_none_e=$WALL
        rt=-; [ -n "$t_none_e" ] && rt=$(awk -v a="$WALL" -v b="$t_none_e" 'BEGIN { printf "%.4f", a / b }')
        res gs case=even pol="$p" wall_s="$WALL" ideal_s="$(awk -v w="$W" 'BEGIN { print w / 2 }')" \
            vs_none="$rt" moves="$MOVES"
    done
    # external load
    local hd
    hd=$(awk -v w="$W" 'BEGIN { printf "%.3f", w / 4 }')
    [ -n "$W" ] && want hog && for p in $POLICIES tuned; do
        # shellcheck disable=SC2046
        job "hog $p" 2 "$hd" $(penv "$p") -- $(lgs_args 0 "$WORK") || continue
        [ "$HOG_AT" = - ] && { warn "hog $p: the job ended before the hog started"; continue; }
        ideal=$(awk -v w="$W" -v h="$HOG_AT" 'BEGIN { if (w <= 2 * h) print w / 2; else printf "%.4f", h + (w - 2 * h) / 1.5 }')
        [ "$p" = none ] && t_none_h=$WALL
        rt=-; [ -n "$t_none_h" ] && rt=$(awk -v a="$WALL" -v b="$t_none_h" 'BEGIN { printf "%.4f", a / b }')
        res gs case=hog pol="$p" wall_s="$WALL" ideal_s="$ideal" hog_at_s="$HOG_AT" \
            to_ideal="$(awk -v a="$WALL" -v b="$ideal" 'BEGIN { printf "%.4f", a / b }')" vs_none="$rt" moves="$MOVES"
    done
    # application imbalance
    [ -n "$WS" ] && want skew && for p in $POLICIES tuned; do
        # shellcheck disable=SC2046
        job "skew $p" 2 - $(penv "$p") -- $(lgs_args "$SKEW" "$SKEW_WORK") || continue
        ideal=$(awk -v w="$WS" 'BEGIN { printf "%.4f", w / 2 }')
        [ "$p" = none ] && t_none_s=$WALL
        rt=-; [ -n "$t_none_s" ] && rt=$(awk -v a="$WALL" -v b="$t_none_s" 'BEGIN { printf "%.4f", a / b }')
        res gs case=skew pol="$p" wall_s="$WALL" ideal_s="$ideal" \
            to_ideal="$(awk -v a="$WALL" -v b="$ideal" 'BEGIN { printf "%.4f", a / b }')" vs_none="$rt" moves="$MOVES"
    done
    # communication-bound pairs
    local c cfg place pol lat_e
    want pairs && for c in 4 0; do
        lat_e=""
        for cfg in explicit:none split:none split:comm split:tuned; do
            place=${cfg%%:*} pol=${cfg#*:}
            # shellcheck disable=SC2046
            job "pairs $cfg c$c" 2 - $(penv "$pol") -- ./commpairs -p 4 -c "$c" -t "$PAIR_SECS" \
                $([ "$place" = explicit ] && printf %s -e) || continue
            line=$(grep '^RESULT commpairs' "$JOB_OUT") || continue
            lat=$(echo "$line" | sed 's/.* lat_us=\([^ ]*\).*/\1/')
            [ "$place" = explicit ] && lat_e=$lat
            rt=-; [ -n "$lat_e" ] && rt=$(awk -v a="$lat" -v b="$lat_e" 'BEGIN { if (b > 0) printf "%.4f", a / b; else print "-" }')
            res gs case=pairs-c"$c" pol="$cfg" "${line#RESULT commpairs }" vs_explicit="$rt" moves="$MOVES"
        done
    done
    # vacate, lower bound
    if want vacate && job vacate 2 - UPVM_BALANCE=none -- ./vacate-bench -n 32 -s 1; then
        line=$(grep '^RESULT vacate' "$JOB_OUT") && res "${line#RESULT }"
    fi
    if want vacate && [ "$HAVE_VACATE" = 1 ]; then vacate_cli; fi
    # the TSC reads at switches
    local b kind
    want tsc && for kind in now base; do
        b=$CORE; [ "$kind" = base ] && b=$BASE_CORE
        [ -n "$b" ] || continue
        (cd "$WORKDIR/bin" && taskset -c "$C1" "${PRIO[@]}" "$b" -q -r 7 -m 1000) >"$WORKDIR/core.out" 2>>"$WORKDIR/stderr.log" || continue
        awk -v k="$kind" -F'|' '/ULP yield, 2 ULPs/ { n = 2 } /ULP yield, 64 ULPs/ { n = 64 }
            /ULP yield, (2|64) ULPs/ { gsub(/[ ns]/, "", $3); gsub(/ /, "", $4)
                printf "RESULT tsc build=%s ulps=%d ns=%s p10_ns=%s\n", k, n, $3, $4 }' "$WORKDIR/core.out" >>"$RES"
    done
}

# --------------------------------------------------------------- tables

# shellcheck source=bench/pvm/results.sh
. "$HERE/pvm/results.sh"
extract() { results_extract "$RES" "$@"; }
num() { awk -v k="$2" -v f="${3:-%.2f}" '$1 == k { v = $2 } END { if (v == "") printf "-"; else printf f, v }' "$1"; }
xr() { awk -v k="$2" '$1 == k { v = $2 } END { if (v == "") printf "-"; else printf "%.2f×", v }' "$1"; }

# verdict FILE KEY LIMIT: "1.08×: met" / "**missed** by N %"
verdict() {
    awk -v k="$2" -v lim="$3" '$1 == k { v = $2 } END {
        if (v == "") { printf "-"; exit }
        if (v <= lim) printf "%.2f× (≤ %.2f×): met", v, lim
        else printf "%.2f× (≤ %.2f×): **missed** by %.0f %%", v, lim, (v / lim - 1) * 100 }' "$1"
}

PNAME() { case $1 in tuned) echo "comm, period $TUNE_PERIOD ms, threshold $TUNE_THRESHOLD %" ;; comm) echo "comm (default)" ;; *) echo "$1" ;; esac; }

tables() {
    local d=$WORKDIR/t p c f
    mkdir -p "$d"
    for f in cpu_s wall_s ideal_s to_ideal vs_none moves hog_at_s; do extract gs "$f" case pol >"$d/$f"; done
    for f in lat_us lat_max_us together compute_mchunks_s vs_explicit moves; do extract gs "$f" case pol >"$d/p.$f"; done
    for f in empty_ms per_ulp_us obtrusive_us obtrusive_max_us move_us bytes; do extract vacate "$f" ulps >"$d/v.$f"; done
    for f in first_ms empty_ms moves move_ms; do extract vacate_cli "$f" ulps >"$d/vc.$f"; done
    for f in ns p10_ns; do extract tsc "$f" build ulps >"$d/c.$f"; done

    echo
    echo "Work W (CPU time of lgs on one node, pinned; median of $REPS): equal VPs $(num "$d/cpu_s" work/- %.2f) s" \
        "(wall $(num "$d/wall_s" work/- %.2f) s; -w $WORK), skewed VPs $(num "$d/cpu_s" work-skew/- %.2f) s (wall $(num "$d/wall_s" work-skew/- %.2f) s; -s $SKEW -w $SKEW_WORK)."
    echo
    echo "### External load: a CPU hog on core $C0 from halfway (median of $REPS runs)"
    echo
    echo "| policy | time | ideal (W, hog at $(num "$d/hog_at_s" hog/none %.2f) s) | time / ideal | time / no balancer | moves |"
    echo "|---|---:|---:|---:|---:|---:|"
    for p in $POLICIES tuned; do
        echo "| $(PNAME "$p") | $(num "$d/wall_s" "hog/$p") s | $(num "$d/ideal_s" "hog/$p") s | $(xr "$d/to_ideal" "hog/$p") |" \
            "$(xr "$d/vs_none" "hog/$p") | $(num "$d/moves" "hog/$p" %.0f) |"
    done
    echo
    echo "### Application imbalance: lgs -s $SKEW (median of $REPS runs; ideal = W_skew / 2)"
    echo
    echo "| policy | time | ideal | time / ideal | time / no balancer | moves |"
    echo "|---|---:|---:|---:|---:|---:|"
    for p in $POLICIES tuned; do
        echo "| $(PNAME "$p") | $(num "$d/wall_s" "skew/$p") s | $(num "$d/ideal_s" "skew/$p") s | $(xr "$d/to_ideal" "skew/$p") |" \
            "$(xr "$d/vs_none" "skew/$p") | $(num "$d/moves" "skew/$p" %.0f) |"
    done
    echo
    echo "### Overhead: the balanced job (equal VPs, no hog), balancer off and on (median of $REPS runs)"
    echo
    echo "| policy | time | time / (W/2) | time / no balancer | moves |"
    echo "|---|---:|---:|---:|---:|"
    for p in none comm; do
        echo "| $(PNAME "$p") | $(num "$d/wall_s" "even/$p") s | $(awk -v a="$(num "$d/wall_s" "even/$p" %.4f)" -v b="$(num "$d/ideal_s" "even/$p" %.4f)" 'BEGIN { if (b + 0 > 0) printf "%.2f×", a / b; else printf "-" }') |" \
            "$(xr "$d/vs_none" "even/$p") | $(num "$d/moves" "even/$p" %.0f) |"
    done
    for c in 4 0; do
        echo
        echo "### Ping-pong pairs: 4 pairs$([ "$c" != 0 ] && echo " + $c compute tasks (chunks of ~40 µs, a yield after each)"), ${PAIR_SECS} s of play, then latency over 0.5 s (median of $REPS runs)"
        echo
        echo "| placement, balancer | half round trip (median pair) | worst pair | pairs together at the end | latency / explicit | compute, M chunks/s | moves |"
        echo "|---|---:|---:|---:|---:|---:|---:|"
        for p in explicit:none split:none split:comm split:tuned; do
            echo "| ${p%%:*}, $(PNAME "${p#*:}") | $(cell "$d/p.lat_us" "pairs-c$c/$p") | $(cell "$d/p.lat_max_us" "pairs-c$c/$p") |" \
                "$(num "$d/p.together" "pairs-c$c/$p" %.0f) / 4 | $(xr "$d/p.vs_explicit" "pairs-c$c/$p") |" \
                "$(num "$d/p.compute_mchunks_s" "pairs-c$c/$p" %.4f) | $(num "$d/p.moves" "pairs-c$c/$p" %.0f) |"
        done
    done
    echo
    echo "### Vacate (lower bound): 32 ULPs of 1 MB moved off node 1 by upvm_migrate, one after the other (median of $REPS runs)"
    echo
    echo "| node empty after | per ULP | obtrusiveness per ULP (median) | worst | one move, total | bytes per ULP |"
    echo "|---:|---:|---:|---:|---:|---:|"
    echo "| $(num "$d/v.empty_ms" 32 %.1f) ms | $(cell "$d/v.per_ulp_us" 32) | $(cell "$d/v.obtrusive_us" 32) |" \
        "$(cell "$d/v.obtrusive_max_us" 32) | $(cell "$d/v.move_us" 32) | $(bcell "$d/v.bytes" 32) |"
    echo
    echo "### Vacate: \`upvm vacate node1\` with the same 32 ULPs of 1 MB on node 1 (default balancer; times from the command; median of $REPS runs)"
    echo
    if [ "$HAVE_VACATE" = 1 ]; then
        echo "| first ULP on node 0 after | node 1 empty after | moves | one move, total (median, UPVM_TRACE=balance) | against the lower bound |"
        echo "|---:|---:|---:|---:|---:|"
        echo "| $(num "$d/vc.first_ms" 32 %.1f) ms | $(num "$d/vc.empty_ms" 32 %.1f) ms | $(num "$d/vc.moves" 32 %.0f) |" \
            "$(num "$d/vc.move_ms" 32 %.2f) ms | $(awk -v a="$(num "$d/vc.empty_ms" 32 %.3f)" -v b="$(num "$d/v.empty_ms" 32 %.3f)" 'BEGIN { if (b + 0 > 0 && a != "-") printf "%.1f×", a / b; else printf "-" }') |"
    else
        echo "(this build's upvm has no vacate command: not measured)"
    fi
    echo
    echo "### The always-on measurement: bench_core ULP yield per switch, with and without the TSC read (median of $REPS runs of bench_core -q -r 7; p10 beside)"
    echo
    echo "| ULPs | without (${BASE_REVS:-not built}) | p10 | with (this build) | p10 | difference (median / p10) |"
    echo "|---:|---:|---:|---:|---:|---:|"
    for c in 2 64; do
        echo "| $c | $(num "$d/c.ns" "base/$c" %.1f) ns | $(num "$d/c.p10_ns" "base/$c" %.1f) ns | $(num "$d/c.ns" "now/$c" %.1f) ns |" \
            "$(num "$d/c.p10_ns" "now/$c" %.1f) ns | $(awk -v a="$(num "$d/c.ns" "now/$c" %.3f)" -v b="$(num "$d/c.ns" "base/$c" %.3f)" \
                -v c="$(num "$d/c.p10_ns" "now/$c" %.3f)" -v e="$(num "$d/c.p10_ns" "base/$c" %.3f)" \
                'BEGIN { if (b + 0 > 0 && e + 0 > 0) printf "%+.1f ns / %+.1f ns", a - b, c - e; else printf "-" }') |"
    done

    echo
    echo "### Targets"
    echo
    echo "| target | result |"
    echo "|---|---|"
    echo "| external load, with the balancer (default, comm) ≤ 1.15× ideal | $(verdict "$d/to_ideal" hog/comm 1.15); best policy: $(best "$d/to_ideal" hog) |"
    echo "| application imbalance (lgs -s $SKEW), default ≤ 1.1× W / cores | $(verdict "$d/to_ideal" skew/comm 1.10); best policy: $(best "$d/to_ideal" skew) |"
    echo "| pairs + compute: latency with the balancer ≤ 1.2× explicit | $(verdict "$d/p.vs_explicit" pairs-c4/split:comm 1.20) |"
    echo "| pairs alone: latency with the balancer ≤ 1.2× explicit | $(verdict "$d/p.vs_explicit" pairs-c0/split:comm 1.20) |"
    echo "| overhead: balancer on / off ≤ 1.02× | $(verdict "$d/vs_none" even/comm 1.02) |"
}

bcell() { awk -v k="$2" '$1 == k { v = $2 } END { if (v == "") printf "-"; else printf "%.2f MiB", v / 1048576 }' "$1"; }
best() {
    awk -v c="$2" '{ split($1, a, "/") } a[1] == c && a[2] != "none" && (b == "" || $2 < b) { b = $2; p = a[2] }
        END { if (b == "") printf "-"; else printf "%s %.2f×", p, b }' "$1"
}

# ----------------------------------------------------------------- main

T0=$(date +%s)
note "host: $(nproc) cpus, $(uname -sr),$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
note "REPS=$REPS WORK=$WORK SKEW_WORK=$SKEW_WORK QUICK=$QUICK POLICIES=\"$POLICIES\" tuned: period $TUNE_PERIOD ms," \
    "threshold $TUNE_THRESHOLD %; cores $C0 (node 0, hog) and $C1 (node 1) ${PRIO[*]}"
build
note "load average before: $(cut -d' ' -f1-3 /proc/loadavg); autogroup: $(cat /proc/self/autogroup 2>/dev/null || echo none)"
for rep in $(seq 1 "$REPS"); do
    note "run $rep/$REPS ($(($(date +%s) - T0)) s; load $(cut -d' ' -f1 /proc/loadavg))"
    rep_once
done
note "load average after: $(cut -d' ' -f1-3 /proc/loadavg); $(($(date +%s) - T0)) s"
tables
echo
echo "UPVM $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null) ($BUILD, Release); lgs -v $VPS -i $ITERS -b; times are wall" \
    "times of the whole job; nodes pinned one per core (taskset -a -p), the hog on core $C0; ${PRIO[*]}."
if [ "$FAILS" != 0 ]; then
    echo "== WARNING: $FAILS run(s) failed and are not counted."
fi
if [ -s "$WORKDIR/stderr.log" ]; then
    echo "== WARNING: the programs wrote to stderr:"; head -c 2000 "$WORKDIR/stderr.log" | head -20
fi
