#!/usr/bin/env bash
# bench/migrate-compare.sh - migration of a process-mode task between two
# nodes (issue "migration benchmark"): its time and obtrusiveness per heap
# size, against the raw bound measured in the same run, everything pinned
# to two cores.
#
#   raw    build/bench/raw-shm-copy (bench/migrate/raw-shm-copy.c, plain C):
#          S bytes from one process's memory into another's, two copies
#          pipelined through a shared-memory ring of the transport's chunk
#          size (1 MiB ring, 256 KiB chunks), and the single-copy bounds
#          (one memcpy; process_vm_readv); destination pages fresh (as a
#          migration gets them), warm, populated at once, huge
#   UPVM   bench/migrate/migrate-bench.c built with upvmcc,
#          `upvm run --nodes 2 ./migrate-bench`: one worker per heap size
#          (0 0.25 0.5 1 2 8 64 MB) moved node 0 -> node 1 -> node 0 with
#          upvm_migrate, timed by upvm_migrate_stats; every move checked
#          (the worker's heap, globals and stack, word for word; the node
#          process it runs in)
#
# Every program runs under `taskset -c $CPUS` (default 0,1) at
# `nice -n -15` (as root); the raw pair and UPVM's node processes are left
# to the kernel within the two cores.  Runs are outermost (raw, then UPVM,
# REPS times), so drifts in the background load hit both alike; every cell
# is the median over REPS runs of one run's median (INNER repetitions of
# the raw copies, INNER round trips = 2 x INNER moves per worker, after one
# warm-up round trip).
#
# Usage:   bench/migrate-compare.sh            # ~40 s on 2 cores
#          QUICK=1 bench/migrate-compare.sh    # smoke run, ~5 s
# Knobs:   REPS=N    runs (default 5)
#          INNER=N   repetitions inside a run (default 3)
#          CPUS=L    the two cores (taskset list, default 0,1)
#          WAITS="blocked ready"  how the workers wait while moved (default
#                    blocked: in pvm_recv; ready: polling, see migrate-bench.c)
#          PAGES=L   raw-shm-copy's destination kinds (default
#                    fresh,warm,populate,huge)
#          OUT=DIR   keep the raw RESULT lines and the programs' stderr
#          BUILD=DIR UPVM's CMake build directory (default build/)
# Installs nothing.  When this build has no upvm_migrate yet, the raw bound
# is measured and the UPVM columns say "pending".
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
HERE=$ROOT/bench
# shellcheck source=bench/lib.sh
. "$HERE/lib.sh"
BUILD=${BUILD:-$ROOT/build}
REPS=${REPS:-5}
INNER=${INNER:-3}
CPUS=${CPUS:-0,1}
QUICK=${QUICK:-0}
WAITS=${WAITS:-blocked}
PAGES=${PAGES:-fresh,warm,populate,huge}
if [ "$QUICK" = 1 ]; then REPS=1; INNER=1; PAGES=fresh,warm; fi
SIZES="0.25 0.5 1 2 8 64" # MB = 2^20 bytes; UPVM also moves a 0-byte heap
RUN_TIMEOUT=300
# the project's warnings for our own sources
PFLAGS=(-std=gnu11 -O2 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes)

die() { echo "migrate-compare: $*" >&2; exit 1; }
note() { echo "== $*"; }
warn() { echo "== WARNING: $*" >&2; }

WORK=$(mktemp -d /tmp/migrate-compare.XXXXXX) || die "mktemp failed"
RES=$WORK/results
mkdir -p "$WORK/bin" && : >"$RES" && : >"$WORK/stderr.log" || die "cannot write $WORK"

PIN=(taskset -c "$CPUS")
if [ "$(id -u)" = 0 ]; then PIN+=(nice -n -15); fi

RAW=$BUILD/bench/raw-shm-copy
UPVM_LAUNCHER=$BUILD/tools/upvm/upvm
UPVMCC=$BUILD/tools/upvmcc/upvmcc
HAVE_UPVM=0 SKIP_UPVM=""
FAILS=0

# ------------------------------------------------------------- clean-up

# Every process this script starts runs with its cwd in $WORK (UPVM's
# launcher and node processes run the upvm executable, not one of ours):
# after a failed run, whatever still has its cwd there is killed by pid.

cleanup() {
    kill_cwd_under "$WORK"
    if [ -n "${OUT:-}" ]; then
        mkdir -p "$OUT" && cp "$RES" "$WORK/stderr.log" "$OUT/" 2>/dev/null
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

# ---------------------------------------------------------------- build

build() {
    command -v taskset >/dev/null || die "taskset (util-linux) missing"
    [ "$(echo "$CPUS" | tr ',' '\n' | grep -c .)" = 2 ] ||
        warn "CPUS=$CPUS is not two cores: the runs are not the two-core setting"
    if ! { cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
            >"$WORK/cmake.log" 2>&1 && cmake --build "$BUILD" >>"$WORK/cmake.log" 2>&1; }; then
        grep -m5 -E 'error|undefined' "$WORK/cmake.log" >&2
        die "the build failed (cmake/ninja in $BUILD; raw-shm-copy is part of it)"
    fi
    [ -x "$RAW" ] || die "$RAW was not built"
    if ! nm -D --defined-only "$BUILD/src/libupvm.so" 2>/dev/null | grep -qw upvm_migrate; then
        SKIP_UPVM="pending: this build's libupvm has no upvm_migrate yet (UPVM $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null))"
        warn "UPVM columns skipped: $SKIP_UPVM"
        return 0
    fi
    if ! "$UPVMCC" "${PFLAGS[@]}" -o "$WORK/bin/migrate-bench" "$HERE/migrate/migrate-bench.c" \
            2>>"$WORK/stderr.log"; then
        SKIP_UPVM="upvmcc could not build bench/migrate/migrate-bench.c"
        warn "$SKIP_UPVM"
        return 0
    fi
    HAVE_UPVM=1
    note "raw: $RAW; UPVM: $UPVM_LAUNCHER, migrate-bench built with upvmcc in $WORK/bin"
}

# ---------------------------------------------------------------- runs

# run NAME CMD...: one run, pinned, under a time limit, in $WORK/bin; its
# RESULT lines go to $RES.  A run that fails leaves nothing behind, and its
# results are not counted (a migration benchmark that moved garbage says
# so on stderr and prints no RESULT).
run() {
    local name=$1 rc
    shift
    (cd "$WORK/bin" && exec timeout --foreground -k 5 "$RUN_TIMEOUT" "${PIN[@]}" "$@") </dev/null \
        >"$WORK/run.out" 2>>"$WORK/stderr.log"
    rc=$?
    if [ "$rc" = 0 ]; then
        grep '^RESULT ' "$WORK/run.out" >>"$RES"
    else
        FAILS=$((FAILS + 1))
        echo "   ($name failed, status $rc; its stderr is at the end)" >&2
        kill_cwd_under "$WORK"
    fi
    return "$rc"
}

rep_once() {
    local w
    run raw "$RAW" -r "$INNER" -p "$PAGES" $SIZES
    [ "$HAVE_UPVM" = 1 ] || return 0
    for w in $WAITS; do
        run "migrate-bench -w $w" env -u UPVM_NODES -u UPVM_PLACEMENT \
            "$UPVM_LAUNCHER" run --nodes 2 ./migrate-bench -r "$INNER" -W 1 -w "$w" 0 $SIZES
    done
}

# --------------------------------------------------------------- tables

# shellcheck source=bench/pvm/results.sh
. "$HERE/pvm/results.sh"
extract() { results_extract "$RES" "$@"; }

bytes_of() { awk -v mb="$1" 'BEGIN { printf "%d", mb * 1048576 }'; }

# gb FILE KEY: a GB/s value to two decimals, "-" if none
gb() { awk -v k="$2" '$1 == k { v = $2 } END { if (v == "") printf "-"; else printf "%.2f", v }' "$1"; }

# timegb TIMES GBPS KEY: "38.4 ms (1.75 GB/s)"
timegb() {
    local t g
    t=$(cell "$1" "$3")
    g=$(gb "$2" "$3")
    if [ "$t" = - ]; then printf -- "-"; else printf "%s (%s GB/s)" "$t" "$g"; fi
}

# bcell FILE KEY: a byte count as KiB or MiB
bcell() {
    awk -v k="$2" '$1 == k { v = $2 } END {
        if (v == "") printf "-"
        else if (v < 1048576) printf "%.1f KiB", v / 1024
        else printf "%.2f MiB", v / 1048576 }' "$1"
}

# upvm cells when the UPVM side did not run: why, in one word
pend() { if [ "$HAVE_UPVM" = 1 ]; then echo "-"; else echo "pending"; fi; }

ucell() { local c; c=$(cell "$1" "$2"); [ "$c" = - ] && c=$(pend); printf "%s" "$c"; }

tables() {
    local d=$WORK/t s b w
    mkdir -p "$d"
    extract raw_shm_copy total_us mode pages size >"$d/raw"
    extract raw_shm_copy gbps mode pages size >"$d/raw.gb"
    extract raw_shm_copy src_done_us mode pages size >"$d/raw.src"
    for f in total_us obtrusive_us call_us gbps bytes to1_total_us to0_total_us first_total_us \
             total_p10_us total_p90_us obtrusive_p10_us obtrusive_p90_us; do
        extract migrate "$f" wait size >"$d/u.$f"
    done
    # one file with raw 2-copy and UPVM blocked, for the ratios
    { sed -n 's|^shm2/fresh/|raw/|p' "$d/raw"; sed -n 's|^blocked/|total/|p' "$d/u.total_us"
      sed -n 's|^blocked/|obtr/|p' "$d/u.obtrusive_us"; } >"$d/ratio"

    echo
    echo "### Migration between two nodes, against the raw bound (median of $REPS runs, each the median of $INNER repetitions / $((2 * INNER)) moves)"
    echo
    echo "| heap | raw: 2 copies through shm, fresh pages | UPVM migration, total | UPVM obtrusiveness | bytes moved | effective GB/s (bytes / total) | ratio UPVM total / raw | ratio obtrusiveness / raw |"
    echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
    for s in 0 $SIZES; do
        b=$(bytes_of "$s")
        echo "| $s MB | $(timegb "$d/raw" "$d/raw.gb" "shm2/fresh/$b") | $(ucell "$d/u.total_us" "blocked/$b") |" \
            "$(ucell "$d/u.obtrusive_us" "blocked/$b") | $(bcell "$d/u.bytes" "blocked/$b" | sed "s/^-$/$(pend)/") |" \
            "$(gb "$d/u.gbps" "blocked/$b" | sed "s/^-$/$(pend)/") | $(ratio "$d/ratio" "total/$b" "raw/$b") |" \
            "$(ratio "$d/ratio" "obtr/$b" "raw/$b") |"
    done
    [ -n "$SKIP_UPVM" ] && echo && echo "- UPVM: $SKIP_UPVM."

    echo
    echo "### The raw bound: S bytes from one process's memory into another's, GB/s (10^9 bytes/s; median of $REPS runs)"
    echo
    echo "| MB | 2 copies through shm, fresh | populated | huge pages | warm | src done, fresh (µs) | 1 memcpy, fresh | 1 memcpy, warm | process_vm_readv, fresh | process_vm_readv, warm |"
    echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    for s in $SIZES; do
        b=$(bytes_of "$s")
        echo "| $s | $(gb "$d/raw.gb" "shm2/fresh/$b") | $(gb "$d/raw.gb" "shm2/populate/$b") |" \
            "$(gb "$d/raw.gb" "shm2/huge/$b") | $(gb "$d/raw.gb" "shm2/warm/$b") | $(cell "$d/raw.src" "shm2/fresh/$b") |" \
            "$(gb "$d/raw.gb" "memcpy/fresh/$b") | $(gb "$d/raw.gb" "memcpy/warm/$b") |" \
            "$(gb "$d/raw.gb" "cma/fresh/$b") | $(gb "$d/raw.gb" "cma/warm/$b") |"
    done

    [ "$HAVE_UPVM" = 1 ] || return 0
    for w in $WAITS; do
        echo
        echo "### UPVM in detail, workers $w while moved (median of $REPS runs)"
        echo
        echo "| heap | total | p10-p90 | obtrusiveness | p10-p90 | upvm_migrate as the caller sees it | to node 1 | back to node 0 | first move (warm-up) | GB/s |"
        echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        for s in 0 $SIZES; do
            b=$(bytes_of "$s")
            echo "| $s MB | $(cell "$d/u.total_us" "$w/$b") | $(cell "$d/u.total_p10_us" "$w/$b")-$(cell "$d/u.total_p90_us" "$w/$b") |" \
                "$(cell "$d/u.obtrusive_us" "$w/$b") | $(cell "$d/u.obtrusive_p10_us" "$w/$b")-$(cell "$d/u.obtrusive_p90_us" "$w/$b") |" \
                "$(cell "$d/u.call_us" "$w/$b") | $(cell "$d/u.to1_total_us" "$w/$b") | $(cell "$d/u.to0_total_us" "$w/$b") |" \
                "$(cell "$d/u.first_total_us" "$w/$b") | $(gb "$d/u.gbps" "$w/$b") |"
        done
    done
}

# verdict FILE KEY OP LIMIT UNIT: "value: met" / "**missed**" / pending
verdict() {
    awk -v k="$2" -v op="$3" -v lim="$4" -v unit="$5" -v pend="$(pend)" '$1 == k { v = $2 } END {
        if (v == "") { printf "%s", pend; exit }
        ok = (op == "le") ? v <= lim : v >= lim
        if (unit == "us") s = v < 1000 ? sprintf("%.0f µs", v) : sprintf("%.2f ms", v / 1000)
        else s = sprintf("%.2f GB/s", v)
        printf "%s: %s", s, ok ? "met" : "**missed**" }' "$1"
}

targets() {
    local d=$WORK/t b64 b1
    b64=$(bytes_of 64) b1=$(bytes_of 1)
    echo
    echo "### Targets (issue \"migration benchmark\"), workers blocked in pvm_recv"
    echo
    echo "| target | result |"
    echo "|---|---|"
    echo "| a 64 MB heap moves at >= 2 GB/s effective (bytes moved / total) | $(verdict "$d/u.gbps" "blocked/$b64" ge 2 gb) (raw bound, 2 copies through shm into fresh pages: $(gb "$d/raw.gb" "shm2/fresh/$b64") GB/s; one memcpy into fresh pages: $(gb "$d/raw.gb" "memcpy/fresh/$b64") GB/s) |"
    echo "| obtrusiveness for a 1 MB heap <= 1 ms | $(verdict "$d/u.obtrusive_us" "blocked/$b1" le 1000 us) |"
    echo "| a 0-byte-heap task moves in <= 100 µs (total) | $(verdict "$d/u.total_us" "blocked/0" le 100 us) |"
}

# ----------------------------------------------------------------- main

T0=$(date +%s)
note "host: $(nproc) cpus, $(uname -sr),$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2);" \
    "THP $(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo '?')"
note "REPS=$REPS INNER=$INNER WAITS=\"$WAITS\" PAGES=$PAGES QUICK=$QUICK, pinned: ${PIN[*]}"
build
note "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for rep in $(seq 1 "$REPS"); do
    note "run $rep/$REPS: raw bound, UPVM migration"
    rep_once
done
note "load average after: $(cut -d' ' -f1-3 /proc/loadavg); $(($(date +%s) - T0)) s"
tables
targets
echo
echo "MB = 2^20 bytes.  raw: build/bench/raw-shm-copy -r $INNER (ring 1 MiB, 256 KiB chunks; \"src done\": when" \
    "the source's last byte entered the ring).  UPVM: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)" \
    "($BUILD, RelWithDebInfo), \`upvm run --nodes 2 ./migrate-bench -r $INNER -W 1\`: total and obtrusiveness" \
    "from upvm_migrate_stats, bytes = what it moved (heap, globals, stack, PVM state); everything under ${PIN[*]}."
if [ "$FAILS" != 0 ]; then
    echo "== WARNING: $FAILS run(s) failed and are not counted."
fi
if [ -s "$WORK/stderr.log" ]; then
    echo "== WARNING: the programs wrote to stderr:"; head -c 2000 "$WORK/stderr.log" | head -20
fi
