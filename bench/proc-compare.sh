#!/usr/bin/env bash
# bench/proc-compare.sh - process mode (unmodified PVM programs rebuilt with
# upvmcc, every task a process-mode ULP) against genuine PVM 3.4.6 and the
# operating system, side by side in one run, everything pinned to one core.
#
#   start-up   bench/proc/spawn_bench.c (plain PVM): the master pvm_spawns N
#              copies of itself, each sends it one message; time per task
#              until all N messages arrived (median of 3 rounds, and the
#              first round alone: UPVM reuses the slots of ended ULPs).  Built with upvmcc (N=1000) and
#              with -lpvm3 under a private pvmd (N=200: real spawns are
#              slow); the OS peer is bench/proc/fork_bench.c, fork + exec
#              of a trivial program (N=200), all alive at once like the
#              tasks, and one after the other (fork, exec, exit, waitpid)
#   memory     the same runs (-m): private resident memory per task, file
#              pages as RSS counts them (per mapping) against Pss (shared
#              among all mappings: the text is not duplicated), page tables,
#              memory mappings
#   heap       build/bench/bench_heap: the per-ULP heap against glibc malloc
#   messaging  the baseline's unmodified pingpong.c and ring.c (from
#              PVM_BASELINE_DIR, not copied) built with upvmcc and with
#              -lpvm3 (direct and daemon routes), the same arguments
#   scale      spawn_bench with 10000 ULPs in one node, when
#              vm.max_map_count allows it (SCALE=1: even so); never hangs
#
# Usage:   bench/proc-compare.sh              # ~3 min on 2 cores
#          QUICK=1 bench/proc-compare.sh      # smoke run, < 1 min
# Knobs:   REPS=N    runs per case (default 5; medians of the runs)
#          CPU=N     core everything is pinned to (default 0)
#          QUICK=1   REPS=1, smaller N, 3 blocks, 1/5 of the iterations
#          SCALE=auto|1|0  the 10000-ULP run: when the map limit allows it
#                    (default), always, never
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
SCALE=${SCALE:-auto}
N_UPVM=1000 N_REAL=200 N_FORK=200 N_SCALE=10000 INNER=3
BLOCKS=5 ISCALE=1 HEAP=(-r 9)
if [ "$QUICK" = 1 ]; then
    REPS=1 N_REAL=50 N_FORK=100 INNER=1 BLOCKS=3 ISCALE=0.2 HEAP=(-r 3 -q)
fi
PP_ENCS="raw inplace default"
PP_SIZES="0 1 512 1000 10000 100000"
RING_NS="2 8 24"
ROUTES="direct daemon"
RUN_TIMEOUT=120
# the project's warnings for bench/proc (the baseline sources are
# third-party: built with their own -O2 -Wall)
PFLAGS=(-std=gnu11 -O2 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes)
BFLAGS=(-std=gnu11 -O2 -Wall)

die() { echo "proc-compare: $*" >&2; exit 1; }
note() { echo "== $*"; }

WORK=$(mktemp -d /tmp/proc-compare.XXXXXX) || die "mktemp failed"
UBIN=$WORK/upvm # programs built with upvmcc
RBIN=$WORK/real # the same sources with -lpvm3
OBIN=$WORK/os   # fork_bench
RES=$WORK/results
mkdir -p "$UBIN" "$RBIN" "$OBIN" && : >"$RES" && : >"$WORK/stderr.log" ||
    die "cannot write $WORK"

PIN=(taskset -c "$CPU")
if [ "$(id -u)" = 0 ]; then PIN+=(nice -n -15); fi

# ------------------------------------------------------------- clean-up

# pvmd_start, pvmd_stop (halts the pvmd, kills what is left under $RBIN),
# kill_exe_under DIR
PVMD_DIR=$WORK/vm
PVMD_BIN=$RBIN
# shellcheck source=bench/pvm/pvmd.sh
. "$HERE/pvm/pvmd.sh"
# shellcheck source=bench/pvm/results.sh
. "$HERE/pvm/results.sh"

cleanup() {
    pvmd_stop
    kill_exe_under "$UBIN"
    kill_exe_under "$OBIN"
    if [ -n "${OUT:-}" ]; then
        mkdir -p "$OUT" && cp "$RES" "$WORK/stderr.log" "$OUT/" 2>/dev/null
        for f in heap.txt scale.out scale.err; do
            [ -f "$WORK/$f" ] && cp "$WORK/$f" "$OUT/"
        done
        [ -f "$PVMD_DIR/pvml.$(id -u)" ] && cp "$PVMD_DIR/pvml.$(id -u)" "$OUT/pvml.log"
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

# ---------------------------------------------------------------- build

check_tools() {
    command -v taskset >/dev/null || die "taskset (util-linux) missing"
    command -v size >/dev/null || die "size (binutils) missing"
    if ! command -v pvmd >/dev/null || [ ! -f /usr/include/pvm3.h ]; then
        [ "${INSTALL:-0}" = 1 ] || die "PVM missing: apt-get install pvm pvm-dev (or INSTALL=1)"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
            apt-get install -y -qq pvm pvm-dev >/dev/null || die "apt-get failed"
    fi
    [ -f "$BASELINE/pingpong.c" ] && [ -f "$BASELINE/ring.c" ] ||
        die "no pingpong.c/ring.c in $BASELINE (set PVM_BASELINE_DIR)"
}

build_all() {
    local upvmcc=$BUILD/tools/upvmcc/upvmcc p
    cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        >"$WORK/cmake.log" 2>&1 && cmake --build "$BUILD" >>"$WORK/cmake.log" 2>&1 || {
        grep -m5 -E 'error|undefined' "$WORK/cmake.log" >&2
        die "UPVM did not build (cmake/ninja in $BUILD)"
    }
    # one source, three builds: UPVM process mode, genuine PVM, the OS
    "$upvmcc" "${PFLAGS[@]}" -o "$UBIN/spawn_bench" "$HERE/proc/spawn_bench.c" &&
        gcc "${PFLAGS[@]}" -o "$RBIN/spawn_bench" "$HERE/proc/spawn_bench.c" -lpvm3 &&
        gcc "${PFLAGS[@]}" -o "$OBIN/fork_bench" "$HERE/proc/fork_bench.c" ||
        die "build of spawn_bench / fork_bench failed"
    for p in pingpong ring; do
        "$upvmcc" "${BFLAGS[@]}" -o "$UBIN/$p" "$BASELINE/$p.c" &&
            gcc "${BFLAGS[@]}" -o "$RBIN/$p" "$BASELINE/$p.c" -lpvm3 ||
            die "build of the baseline's $p.c failed"
    done
    note "built: $UBIN (upvmcc), $RBIN (-lpvm3), $OBIN; baseline sources from $BASELINE"
}

# ---------------------------------------------------------------- runs

# run SIDE LIMIT CMD...: one master, pinned, under a time limit; its RESULT
# lines go to $RES with side=SIDE added.  A run that fails or times out
# leaves nothing behind: what still runs a program of SIDE is killed.
run() {
    local side=$1 limit=$2 rc
    shift 2
    timeout --foreground -k 5 "$limit" "${PIN[@]}" "$@" </dev/null \
        >"$WORK/run.out" 2>>"$WORK/stderr.log"
    rc=$?
    sed -n "s/^RESULT \([^ ]*\)/RESULT \1 side=$side/p" "$WORK/run.out" >>"$RES"
    if [ "$rc" != 0 ]; then
        echo "   ($side failed, status $rc: ${*##*/})" >&2
        case "$side" in
            upvm) kill_exe_under "$UBIN" ;;
            real) kill_exe_under "$RBIN" ;;
            os) kill_exe_under "$OBIN" ;;
        esac
    fi
    return "$rc"
}

# UPVM: spawned programs are found in $UBIN, never on the pvmd's PVM_PATH
upvm() { run upvm "$RUN_TIMEOUT" env -u PVM_PATH -u PVM_TMP PVMBENCH_SPAWN_DIR="$UBIN" "$@"; }
real() { run real "$RUN_TIMEOUT" "$@"; }

rep_spawn() {
    upvm "$UBIN/spawn_bench" -n "$N_UPVM" -r "$INNER" -m
    real "$RBIN/spawn_bench" -n "$N_REAL" -r "$INNER" -m
    run os "$RUN_TIMEOUT" "$OBIN/fork_bench" -n "$N_FORK" -r "$INNER" -m
}

rep_pingpong() {
    local enc route
    for enc in $PP_ENCS; do
        # UPVM takes the route option and has no routes: run once
        upvm "$UBIN/pingpong" -r direct -e "$enc" -b "$BLOCKS" -i "$ISCALE"
        for route in $ROUTES; do
            real "$RBIN/pingpong" -r "$route" -e "$enc" -b "$BLOCKS" -i "$ISCALE"
        done
    done
}

rep_ring() {
    local n route trips
    for n in $RING_NS; do
        trips=$(awk -v n="$n" -v s="$ISCALE" 'BEGIN{t=int(2400/n*s); print t<20?20:t}')
        upvm "$UBIN/ring" -n "$n" -r direct -e raw -b "$BLOCKS" -t "$trips"
        for route in $ROUTES; do
            real "$RBIN/ring" -n "$n" -r "$route" -e raw -b "$BLOCKS" -t "$trips"
        done
    done
}

run_heap() {
    timeout --foreground -k 5 "$RUN_TIMEOUT" "${PIN[@]}" "$BUILD/bench/bench_heap" \
        "${HEAP[@]}" </dev/null >"$WORK/heap.txt" 2>>"$WORK/stderr.log" ||
        echo "   (bench_heap failed)" >&2
}

# The N_SCALE-ULP run; SCALE_RESULT: "ok", "skipped: ..." or "failed: ...".
MAPLIMIT=$(sysctl -n vm.max_map_count 2>/dev/null || cat /proc/sys/vm/max_map_count)
SCALE_RESULT="not run"
SCALE_NEED=""
run_scale() {
    local per rc err
    # mappings a ULP needs, as measured at N_UPVM (9 when unknown)
    per=$(results_extract "$RES" spawn_mem maps side n |
        awk -v k="upvm/$N_UPVM" '$1 == k { print $2 }')
    SCALE_NEED=$(awk -v p="${per:-9}" -v n="$N_SCALE" 'BEGIN { printf "%d", p * n + 1000 }')
    per=$(awk -v p="${per:-9}" 'BEGIN { printf "%g", p }')
    case "$SCALE" in
        0) SCALE_RESULT="skipped (SCALE=0)"; return ;;
        1) ;;
        *) if [ "$MAPLIMIT" -lt "$SCALE_NEED" ]; then
               SCALE_RESULT="skipped: needs ~$SCALE_NEED memory mappings (${per:-9} per ULP), vm.max_map_count = $MAPLIMIT; SCALE=1 runs it anyway"
               note "$N_SCALE ULPs: $SCALE_RESULT"
               return
           fi ;;
    esac
    note "$N_SCALE ULPs in one node (vm.max_map_count = $MAPLIMIT, ~$SCALE_NEED needed)"
    timeout --foreground -k 5 "$RUN_TIMEOUT" "${PIN[@]}" env -u PVM_PATH -u PVM_TMP \
        PVMBENCH_SPAWN_DIR="$UBIN" "$UBIN/spawn_bench" -n "$N_SCALE" -r 1 -m \
        </dev/null >"$WORK/scale.out" 2>"$WORK/scale.err"
    rc=$?
    kill_exe_under "$UBIN"
    sed -n 's/^RESULT \([^ ]*\)/RESULT \1 side=scale/p' "$WORK/scale.out" >>"$RES"
    if [ "$rc" = 0 ] && grep -q '^RESULT spawn ' "$WORK/scale.out"; then
        SCALE_RESULT="ok"
    elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        SCALE_RESULT="failed: no result within $RUN_TIMEOUT s (killed)"
    else
        # the line that says why: the map-limit advice, else what the
        # benchmark and UPVM said first
        err=$(grep -m1 'max_map_count' "$WORK/scale.err")
        if [ -z "$err" ]; then
            err=$(grep -m1 '^upvm: pvm_spawn' "$WORK/scale.err") ||
                err=$(grep -m1 '^upvm:' "$WORK/scale.err")
            err=$( (grep -m1 '^spawn_bench:' "$WORK/scale.err"; echo "$err") |
                sed "s|$UBIN/||g" | cut -c1-200 | paste -sd'|' | sed 's/|/; /g')
        fi
        SCALE_RESULT="failed (status $rc, $(wc -l <"$WORK/scale.err") lines on stderr): ${err:-no message}"
    fi
    note "$N_SCALE ULPs: $SCALE_RESULT"
}

# --------------------------------------------------------------- tables

extract() { results_extract "$RES" "$@"; }

# the issue's goal for the start-up of a ULP
goal() {
    awk -v k="$2" -v lim="$3" '$1 == k { v = $2 } END {
        if (v == "") printf "≤ %s µs", lim
        else printf "≤ %s µs: %s", lim, v <= lim ? "met" : "**missed**" }' "$1"
}

table_startup() {
    local f=$WORK/start
    { extract spawn start_us side n; extract forkexec start_us side mode
        extract spawn first_us side n | sed 's/^/first\//'; } >"$f"
    local u="upvm/$N_UPVM"
    echo
    echo "### Start-up: time per task until all N tasks have sent their first message (median of $REPS runs, each the median of $INNER rounds)"
    echo
    echo "| how a task starts | N | per task | ratio (this / UPVM) | target |"
    echo "|---|---:|---:|---:|---|"
    echo "| UPVM process mode: \`pvm_spawn\` of spawn_bench built with upvmcc (from the 2nd round on, slots of ended ULPs are reused) | $N_UPVM | $(cell "$f" "$u") | 1.0× | $(goal "$f" "$u" 50) |"
    echo "| UPVM process mode, first round only (no slot of an ended ULP to reuse) | $N_UPVM | $(cell "$f" "first/$u") | $(ratio "$f" "first/$u" "$u") | $(goal "$f" "first/$u" 50) |"
    echo "| genuine PVM: \`pvm_spawn\` of spawn_bench built with -lpvm3, through the pvmd | $N_REAL | $(cell "$f" "real/$N_REAL") | $(ratio "$f" "real/$N_REAL" "$u") | |"
    echo "| OS: fork + exec of a trivial program, all alive (like the tasks) | $N_FORK | $(cell "$f" os/alive) | $(ratio "$f" os/alive "$u") | |"
    echo "| OS: fork + exec + exit + waitpid, one after the other | $N_FORK | $(cell "$f" os/seq) | $(ratio "$f" os/seq "$u") | |"
}

# mem_row LABEL FIELD [sum FIELD2]: one row of the memory table (the
# ratio left out when NORATIO is set)
mem_row() {
    local label=$1 fld=$2 f=$WORK/mem
    { extract spawn_mem "$fld" side n; extract forkexec_mem "$fld" side; } |
        awk '{ print $1, $2 }' >"$f.row"
    if [ "${3:-}" = sum ]; then
        { extract spawn_mem "$4" side n; extract forkexec_mem "$4" side; } |
            awk '{ print $1, $2 }' | cat "$f.row" - |
            awk '{ s[$1] += $2 } END { for (k in s) print k, s[k] }' >"$f.sum"
        mv "$f.sum" "$f.row"
    fi
    local cellf=cell_kib
    [ "$fld" = maps ] && cellf=cell_num
    echo "| $label | $($cellf "$f.row" "upvm/$N_UPVM") | $($cellf "$f.row" "real/$N_REAL") |" \
        "$($cellf "$f.row" os) | $([ -n "${NORATIO:-}" ] && echo - || ratio "$f.row" "real/$N_REAL" "upvm/$N_UPVM") |"
}

table_memory() {
    local f=$WORK/rss
    { extract spawn rss_kib side n; extract forkexec rss_kib side mode; } >"$f"
    echo
    echo "### Memory per task while all N tasks run (median of $REPS runs)"
    echo
    echo "UPVM: the growth of the node (one process) divided by N; genuine PVM and OS: the sum over the N task processes divided by N."
    echo
    echo "| per task | UPVM process mode (N=$N_UPVM) | genuine PVM (N=$N_REAL) | OS fork + exec (N=$N_FORK) | ratio (genuine PVM / UPVM) |"
    echo "|---|---:|---:|---:|---:|"
    echo "| private resident memory (RssAnon; spawn_bench's rss_kib, median of the rounds) | $(cell_kib "$f" "upvm/$N_UPVM") |" \
        "$(cell_kib "$f" "real/$N_REAL") | $(cell_kib "$f" os/alive) | $(ratio "$f" "real/$N_REAL" "upvm/$N_UPVM") |"
    mem_row "proportional set size (Pss: every page divided among its mappings)" pss_kib
    NORATIO=1 mem_row "of which file-backed (Pss_File: text, read-only data, libraries)" pss_file_kib
    mem_row "file pages as RSS counts them (RssFile: once per mapping)" file_kib
    mem_row "page tables (VmPTE)" pte_kib
    mem_row "what one more task costs (Pss + page tables)" pss_kib sum pte_kib
    mem_row "memory mappings" maps
    echo
    echo "Text size (size(1), text column) of spawn_bench: $(size "$UBIN/spawn_bench" | awk 'NR == 2 { print $1 }') B" \
        "built with upvmcc, $(size "$RBIN/spawn_bench" | awk 'NR == 2 { print $1 }') B with -lpvm3."
    local t=$WORK/tot
    { extract spawn_mem total_pss_kib side n | sed 's/^/pss\//'
        extract spawn_mem total_file_kib side n | sed 's/^/file\//'; } >"$t"
    echo "The UPVM node with its $N_UPVM + 1 ULPs: Pss $(cell_kib "$t" "pss/upvm/$N_UPVM")," \
        "RssFile $(cell_kib "$t" "file/upvm/$N_UPVM") in all; the $N_REAL genuine-PVM task processes:" \
        "Pss $(cell_kib "$t" "pss/real/$N_REAL"), RssFile $(cell_kib "$t" "file/real/$N_REAL")."
}

table_heap() {
    echo
    echo "### The per-ULP heap against glibc malloc (\`bench_heap ${HEAP[*]}\`, ns per operation, in-process)"
    echo
    echo "| workload | UPVM heap median (p10-p90) | glibc median (p10-p90) | ratio (heap / glibc) |"
    echo "|---|---:|---:|---:|"
    awk '$2 == "heap" && $NF ~ /^[0-9.]+$/ {
            gsub(/[(),]/, " "); $0 = $0
            # name heap M ns p10 A p90 B glibc M ns p10 C p90 D heap/glibc R
            printf "| %s | %s ns (%s-%s) | %s ns (%s-%s) | %.2f |\n", $1, $3, $6, $8, $10, $13, $15, $17 }' \
        "$WORK/heap.txt"
    grep -m1 '^bench_heap:' "$WORK/heap.txt" | sed 's/^/\n/'
}

table_pingpong() {
    local f=$WORK/pp enc s
    extract pingpong half_rtt_us side route enc size >"$f"
    echo
    echo "### Ping-pong, the baseline's unmodified pingpong.c: half round trip (median of $REPS runs, each the median of $BLOCKS blocks)"
    echo
    echo "| case | UPVM process mode | genuine PVM direct | genuine PVM daemon | ratio (direct / UPVM) | ratio (daemon / UPVM) |"
    echo "|---|---:|---:|---:|---:|---:|"
    for enc in $PP_ENCS; do
        for s in $PP_SIZES; do
            echo "| $enc, $s B | $(cell_cs "$f" "upvm/direct/$enc/$s") | $(cell_cs "$f" "real/direct/$enc/$s") |" \
                "$(cell_cs "$f" "real/daemon/$enc/$s") | $(ratio "$f" "real/direct/$enc/$s" "upvm/direct/$enc/$s") |" \
                "$(ratio "$f" "real/daemon/$enc/$s" "upvm/direct/$enc/$s") |"
        done
    done
}

table_ring() {
    local f=$WORK/ring n
    extract ring hop_us side route n >"$f"
    echo
    echo "### Ring, the baseline's unmodified ring.c: one int (PvmDataRaw) around N tasks, time per hop (median of $REPS runs)"
    echo
    echo "| tasks | UPVM process mode | genuine PVM direct | genuine PVM daemon | ratio (direct / UPVM) | ratio (daemon / UPVM) |"
    echo "|---|---:|---:|---:|---:|---:|"
    for n in $RING_NS; do
        echo "| $n | $(cell_cs "$f" "upvm/direct/$n") | $(cell_cs "$f" "real/direct/$n") | $(cell_cs "$f" "real/daemon/$n") |" \
            "$(ratio "$f" "real/direct/$n" "upvm/direct/$n") | $(ratio "$f" "real/daemon/$n" "upvm/direct/$n") |"
    done
}

table_scale() {
    local s=$WORK/scale k="scale/$N_SCALE"
    { extract spawn start_us side n | sed 's/^/start\//'
        extract spawn_mem anon_kib side n | sed 's/^/anon\//'
        extract spawn_mem maps side n | sed 's/^/maps\//'; } >"$s"
    echo
    echo "### Scale: $N_SCALE process-mode ULPs of spawn_bench in one node"
    echo
    echo "| ULPs | result | start-up per ULP | RssAnon per ULP | mappings per ULP | vm.max_map_count |"
    echo "|---:|---|---:|---:|---:|---:|"
    echo "| $N_SCALE | $SCALE_RESULT | $(cell "$s" "start/$k") | $(cell_kib "$s" "anon/$k") |" \
        "$(cell_num "$s" "maps/$k") | $MAPLIMIT |"
}

# ----------------------------------------------------------------- main

case "$SCALE" in auto|0|1) ;; *) die "SCALE=$SCALE (auto|1|0)" ;; esac
check_tools
T0=$(date +%s)
note "host: $(nproc) cpus, $(uname -sr),$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2); vm.max_map_count $MAPLIMIT"
note "REPS=$REPS INNER=$INNER BLOCKS=$BLOCKS QUICK=$QUICK SCALE=$SCALE, pinned: ${PIN[*]}"
build_all
pvmd_start
cd "$WORK" || die "cd $WORK"
note "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
# repetitions outermost: drifts in the background load hit every case alike
for rep in $(seq 1 "$REPS"); do
    note "run $rep/$REPS: start-up and memory, ping-pong, ring"
    rep_spawn
    rep_pingpong
    rep_ring
done
pvmd_stop
note "heap"
run_heap
run_scale
note "load average after: $(cut -d' ' -f1-3 /proc/loadavg); $(($(date +%s) - T0)) s"
table_startup
table_memory
table_heap
table_pingpong
table_ring
table_scale
echo
echo "Genuine PVM: $(dpkg-query -W -f='${Package} ${Version}' pvm 2>/dev/null), private pvmd;" \
    "UPVM: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null) ($BUILD, RelWithDebInfo); everything on cpu $CPU."
if [ -s "$WORK/stderr.log" ]; then
    echo "== WARNING: the programs wrote to stderr:"; head -c 2000 "$WORK/stderr.log" | head -20
fi
