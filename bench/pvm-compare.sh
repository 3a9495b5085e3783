#!/usr/bin/env bash
# bench/pvm-compare.sh - PVM messaging in UPVM against genuine PVM 3.4.6,
# measured side by side in one run, everything pinned to one core.
#
#   ping-pong  half round trip between two tasks, 0 1 512 1000 10000 100000
#              bytes, PvmDataRaw / PvmDataInPlace / PvmDataDefault (XDR)
#              (UPVM paper, Figure 3)
#   forward    the same ping-pong without packing or unpacking in the loop:
#              the master sends one packed message again and again, the
#              partner sends on what it received (pvm_setsbuf(pvm_getrbuf())),
#              0 1000 100000 bytes, raw and in place (bench/pvm/forward_proto.h)
#   ring       a token (one int) around 2 4 8 16 24 tasks, time per hop
#   mcast      pvm_mcast of 1 KiB and 100 KiB to 2 4 8 16 32 tasks, each
#              acknowledging with a 0-byte message; time per multicast
#
# Genuine PVM runs with direct task-to-task routes (PvmRouteDirect) and
# through its daemon, against a private pvmd started here and halted on
# exit (also on failure or Ctrl-C).  Its programs: ping-pong and ring are
# the baseline's (built from PVM_BASELINE_DIR, not copied), mcast is
# bench/pvm/mcast.c and forward is bench/pvm/forward.c.  UPVM runs build/bench/bench_pvm (one process, the
# tasks are ULPs), with delivery strategy share (and copy where it matters).
#
# Usage:   bench/pvm-compare.sh               # ~2-3 min on 2 cores
#          QUICK=1 bench/pvm-compare.sh       # smoke run, ~10 s
# Knobs:   REPS=N    runs per case (default 5; medians of the runs' medians)
#          CPU=N     core everything is pinned to (default 0)
#          QUICK=1   REPS=1, 3 blocks of >= 5 ms, 1/5 of the real iterations
#          SIDES=both|upvm|real   which side to measure (default both)
#          OUT=DIR   keep the raw RESULT lines and logs in DIR
#          PVM_BASELINE_DIR  where pingpong.c and ring.c are
#                    (default ../shared/baseline/pvm next to the checkout)
#          BUILD=DIR UPVM's CMake build directory (default build/)
#          INSTALL=1 apt-get install pvm pvm-dev when missing (root)
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
HERE=$ROOT/bench
BASELINE=${PVM_BASELINE_DIR:-$ROOT/../shared/baseline/pvm}
BUILD=${BUILD:-$ROOT/build}
REPS=${REPS:-5}
CPU=${CPU:-0}
QUICK=${QUICK:-0}
SIDES=${SIDES:-both}
BLOCKS=5; BLOCK_MS=20; ISCALE=1
if [ "$QUICK" = 1 ]; then REPS=1; BLOCKS=3; BLOCK_MS=5; ISCALE=0.2; fi
PP_ENCS="raw inplace default"
PP_SIZES="0 1 512 1000 10000 100000"
RING_NS="2 4 8 16 24"
MC_NS="2 4 8 16 32"
MC_SIZES="1024 102400"
FW_ENCS="raw inplace"
FW_SIZES="0 1000 100000"
ROUTES="direct daemon"
RUN_TIMEOUT=300

die() { echo "pvm-compare: $*" >&2; exit 1; }
note() { echo "== $*"; }

WORK=$(mktemp -d /tmp/pvm-compare.XXXXXX) || die "mktemp failed"
BIN=$WORK/bin
RES=$WORK/results
mkdir -p "$BIN" && : >"$RES" && : >"$WORK/stderr.log" || die "cannot write $WORK"
UPVM_BIN=""

PIN=(taskset -c "$CPU")
if [ "$(id -u)" = 0 ]; then PIN+=(nice -n -15); fi

# ------------------------------------------------------------- clean-up

# pvmd_start, pvmd_stop (halts the pvmd, kills what is left under $BIN)
PVMD_DIR=$WORK/vm
PVMD_BIN=$BIN
# shellcheck source=bench/pvm/pvmd.sh
. "$HERE/pvm/pvmd.sh"

cleanup() {
    pvmd_stop
    if [ -n "${OUT:-}" ]; then
        mkdir -p "$OUT" && cp "$RES" "$WORK/stderr.log" "$OUT/" 2>/dev/null
        [ -f "$WORK/vm/pvml.$(id -u)" ] && cp "$WORK/vm/pvml.$(id -u)" "$OUT/pvml.log"
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

# ---------------------------------------------------------------- build

check_tools() {
    command -v taskset >/dev/null || die "taskset (util-linux) missing"
    [ "$SIDES" = upvm ] && return 0
    if ! command -v pvmd >/dev/null || [ ! -f /usr/include/pvm3.h ]; then
        [ "${INSTALL:-0}" = 1 ] || die "PVM missing: apt-get install pvm pvm-dev (or INSTALL=1)"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
            apt-get install -y -qq pvm pvm-dev >/dev/null || die "apt-get failed"
    fi
    [ -f "$BASELINE/pingpong.c" ] && [ -f "$BASELINE/ring.c" ] ||
        die "no pingpong.c/ring.c in $BASELINE (set PVM_BASELINE_DIR)"
}

build_real() {
    local cc=(gcc -std=gnu11 -O2 -Wall)
    "${cc[@]}" -o "$BIN/pingpong" "$BASELINE/pingpong.c" -lpvm3 &&
        "${cc[@]}" -o "$BIN/ring" "$BASELINE/ring.c" -lpvm3 &&
        "${cc[@]}" -Wextra -Werror -Wshadow -Wstrict-prototypes \
            -Wmissing-prototypes -I "$HERE/pvm" -o "$BIN/mcast" \
            "$HERE/pvm/mcast.c" -lpvm3 &&
        "${cc[@]}" -Wextra -Werror -Wshadow -Wstrict-prototypes \
            -Wmissing-prototypes -I "$HERE/pvm" -o "$BIN/forward" \
            "$HERE/pvm/forward.c" -lpvm3 || die "build of the genuine-PVM programs failed"
    note "genuine PVM programs built in $BIN (from $BASELINE and $HERE/pvm)"
}

# The UPVM side is optional: if it does not build, its columns stay empty.
build_upvm() {
    if cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
            >"$WORK/cmake.log" 2>&1 &&
        cmake --build "$BUILD" --target bench_pvm >>"$WORK/cmake.log" 2>&1; then
        UPVM_BIN=$BUILD/bench/bench_pvm
        note "UPVM side: $UPVM_BIN"
    else
        echo "== WARNING: bench_pvm did not build; UPVM columns will be empty:" >&2
        grep -m5 -E 'error|undefined' "$WORK/cmake.log" >&2
    fi
}

# ---------------------------------------------------------------- runs

# run LABEL CMD...: one master under a time limit; RESULT lines -> $RES
run() {
    local label=$1; shift
    timeout --foreground -k 5 "$RUN_TIMEOUT" "${PIN[@]}" "$@" \
        >>"$RES" 2>>"$WORK/stderr.log" || echo "   ($label failed: $*)" >&2
}

upvm() { # bench_pvm, spawning by registered name
    [ -n "$UPVM_BIN" ] || return 0
    run upvm env -u PVMBENCH_SPAWN_DIR "$UPVM_BIN" "$@" -b "$BLOCKS" -T "$BLOCK_MS"
}

side() { [ "$SIDES" = both ] || [ "$SIDES" = "$1" ]; }

rep_pingpong() {
    local enc d route
    for enc in $PP_ENCS; do
        for d in share copy; do side upvm && upvm pingpong -e "$enc" -d "$d"; done
        for route in $ROUTES; do
            side real && run real "$BIN/pingpong" -r "$route" -e "$enc" \
                -b "$BLOCKS" -i "$ISCALE"
        done
    done
}

rep_forward() {
    local enc route
    for enc in $FW_ENCS; do
        side upvm && upvm forward -e "$enc" -d share $FW_SIZES
        for route in $ROUTES; do
            side real && run real "$BIN/forward" -r "$route" -e "$enc" \
                -b "$BLOCKS" -T "$BLOCK_MS" $FW_SIZES
        done
    done
}

rep_ring() {
    local n route trips
    for n in $RING_NS; do
        side upvm && upvm ring -n "$n" -e raw -d share
        trips=$(awk -v n="$n" -v s="$ISCALE" 'BEGIN{t=int(2400/n*s); print t<20?20:t}')
        for route in $ROUTES; do
            side real && run real "$BIN/ring" -n "$n" -r "$route" -e raw \
                -b "$BLOCKS" -t "$trips"
        done
    done
}

rep_mcast() {
    local n d route
    for n in $MC_NS; do
        for d in share copy; do side upvm && upvm mcast -n "$n" -e raw -d "$d" $MC_SIZES; done
        for route in $ROUTES; do
            side real && run real "$BIN/mcast" -n "$n" -r "$route" -e raw \
                -b "$BLOCKS" -T "$BLOCK_MS" $MC_SIZES
        done
    done
}

# --------------------------------------------------------------- tables

# medians, cell, ratio; extract BENCH VALUEFIELD KEYFIELD...: the medians
# over the runs, "f1/f2/... median runs" per RESULT key
# shellcheck source=bench/pvm/results.sh
. "$HERE/pvm/results.sh"
extract() { results_extract "$RES" "$@"; }

# target FILE KEY_UPVM KEY_REAL LIMIT_NS: the issue's goal and whether met
target() {
    awk -v u="$2" -v r="$3" -v lim="$4" '$1 == u { x = $2 } $1 == r { y = $2 } END {
        goal = (lim != "" ? "≤ " lim " ns, " : "") "≥ 80×"
        if (x == "" || y == "") { printf "%s", goal; exit }
        ok = (lim == "" || x * 1000 <= lim) && y / x >= 80
        printf "%s: %s", goal, ok ? "met" : "**missed**" }' "$1"
}

table_pingpong() {
    local f=$WORK/pp enc s lim tgt
    extract pingpong half_rtt_us route deliver enc size >"$f"
    echo
    echo "### Ping-pong: half round trip (median of $REPS runs, each the median of $BLOCKS blocks)"
    echo
    echo "| case | UPVM median | real PVM direct median | real PVM daemon median | ratio (real direct / UPVM) | target | UPVM, copy delivery |"
    echo "|---|---:|---:|---:|---:|---|---:|"
    for enc in $PP_ENCS; do
        for s in $PP_SIZES; do
            lim=""; tgt=""
            [ "$s" = 0 ] && lim=100
            [ "$s" = 100000 ] && [ "$enc" != default ] && lim=250
            [ -n "$lim" ] && tgt=$(target "$f" "upvm/share/$enc/$s" "direct/-/$enc/$s" "$lim")
            echo "| $enc, $s B | $(cell "$f" "upvm/share/$enc/$s") | $(cell "$f" "direct/-/$enc/$s") |" \
                "$(cell "$f" "daemon/-/$enc/$s") | $(ratio "$f" "direct/-/$enc/$s" "upvm/share/$enc/$s") |" \
                "$tgt | $(cell "$f" "upvm/copy/$enc/$s") |"
        done
    done
}

table_forward() {
    local f=$WORK/fw enc s lim tgt
    extract forward half_rtt_us route deliver enc size >"$f"
    echo
    echo "### Forward ping-pong: half round trip with no pack/unpack in the loop (median of $REPS runs)"
    echo
    echo "| case | UPVM median | real PVM direct median | real PVM daemon median | ratio (real direct / UPVM) | target |"
    echo "|---|---:|---:|---:|---:|---|"
    for enc in $FW_ENCS; do
        for s in $FW_SIZES; do
            lim=""; tgt=""
            [ "$s" = 0 ] && lim=100
            [ "$s" = 100000 ] && lim=250
            [ -n "$lim" ] && tgt=$(target "$f" "upvm/share/$enc/$s" "direct/-/$enc/$s" "$lim")
            echo "| $enc, $s B | $(cell "$f" "upvm/share/$enc/$s") | $(cell "$f" "direct/-/$enc/$s") |" \
                "$(cell "$f" "daemon/-/$enc/$s") | $(ratio "$f" "direct/-/$enc/$s" "upvm/share/$enc/$s") | $tgt |"
        done
    done
}

table_ring() {
    local f=$WORK/ring n tgt
    extract ring hop_us route deliver enc n >"$f"
    echo
    echo "### Ring: one int (PvmDataRaw) passed around N tasks, time per hop (median of $REPS runs)"
    echo
    echo "| case | UPVM median | real PVM direct median | real PVM daemon median | ratio (real direct / UPVM) | target |"
    echo "|---|---:|---:|---:|---:|---|"
    for n in $RING_NS; do
        tgt=""
        [ "$n" = 24 ] && tgt=$(target "$f" "upvm/share/raw/$n" "direct/-/raw/$n" 100)
        echo "| $n tasks | $(cell "$f" "upvm/share/raw/$n") | $(cell "$f" "direct/-/raw/$n") |" \
            "$(cell "$f" "daemon/-/raw/$n") | $(ratio "$f" "direct/-/raw/$n" "upvm/share/raw/$n") | $tgt |"
    done
}

table_mcast() {
    local f=$WORK/mc n s k
    extract mcast mcast_us route deliver enc n size >"$f"
    echo
    echo "### Multicast: pvm_mcast (PvmDataRaw) to N tasks + N 0-byte acks, time per multicast (median of $REPS runs)"
    echo
    echo "| case | UPVM share median | UPVM copy median | real PVM direct median | real PVM daemon median | ratio (real direct / UPVM share) | ratio (real direct / UPVM copy) |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    for s in $MC_SIZES; do
        for n in $MC_NS; do
            k="raw/$n/$s"
            echo "| $((s / 1024)) KiB to $n | $(cell "$f" "upvm/share/$k") | $(cell "$f" "upvm/copy/$k") |" \
                "$(cell "$f" "direct/-/$k") | $(cell "$f" "daemon/-/$k") |" \
                "$(ratio "$f" "direct/-/$k" "upvm/share/$k") | $(ratio "$f" "direct/-/$k" "upvm/copy/$k") |"
        done
    done
}

# ----------------------------------------------------------------- main

case "$SIDES" in both|upvm|real) ;; *) die "SIDES=$SIDES (both|upvm|real)" ;; esac
check_tools
T0=$(date +%s)
note "host: $(nproc) cpus, $(uname -sr),$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
note "REPS=$REPS BLOCKS=$BLOCKS BLOCK_MS=$BLOCK_MS QUICK=$QUICK, pinned: ${PIN[*]}"
side real && build_real
side upvm && build_upvm
[ "$SIDES" = upvm ] && [ -z "$UPVM_BIN" ] && die "SIDES=upvm, but bench_pvm did not build"
side real && pvmd_start
note "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
# repetitions outermost: drifts in the background load hit every case alike
for rep in $(seq 1 "$REPS"); do
    note "run $rep/$REPS: ping-pong, forward, ring, multicast"
    rep_pingpong
    rep_forward
    rep_ring
    rep_mcast
done
note "load average after: $(cut -d' ' -f1-3 /proc/loadavg); $(($(date +%s) - T0)) s"
pvmd_stop
table_pingpong
table_forward
table_ring
table_mcast
echo
echo "Times per operation (ns, µs, ms); ratio = real PVM direct / UPVM; target: the" \
    "issue's goal for the UPVM median and the ratio.  Genuine PVM:" \
    "$(dpkg-query -W -f='${Package} ${Version}' pvm 2>/dev/null); everything on cpu $CPU."
if [ -s "$WORK/stderr.log" ]; then
    echo "== WARNING: the programs wrote to stderr:"; head -20 "$WORK/stderr.log"
fi
