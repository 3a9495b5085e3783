#!/usr/bin/env bash
# bench/nodes-compare.sh - UPVM across several nodes (issue "many nodes")
# against Open MPI's shared-memory transport and genuine PVM 3.4.6, side by
# side in one run, everything pinned to two cores.
#
#   ping-pong  half round trip between two processes on two cores, 0 8
#              1000 10000 100000 bytes:
#                Open MPI   bench/mpi/mpi_pingpong.c (MPI_Send/MPI_Recv of
#                           MPI_BYTE), mpirun -np 2 --bind-to core, PML ob1
#                           with BTLs self,vader only (shared memory; never
#                           TCP: without vader the run fails, it does not
#                           fall back)
#                real PVM   the baseline's pingpong.c with -lpvm3, direct
#                           task-to-task routes, under a private pvmd
#                UPVM       the same unmodified pingpong.c built with upvmcc,
#                           `upvm run --nodes 2 --placement cyclic`: the
#                           spawned partner runs in the other node process;
#                           and `--nodes 1` (same node) for reference
#   ring       the baseline's ring.c, one int around N = 2 4 8 16 24 tasks,
#              time per hop (UPVM paper, Figure 6): UPVM on 2 nodes with
#              blocked placement (members 0..N/2-1 on node 0, the rest on
#              node 1: 2 of the N hops cross) and interleaved (cyclic: every
#              hop crosses), UPVM on 1 node, real PVM direct routes
#   placement  bench/nodes/where.c, spawned exactly as ring.c spawns: which
#              node process (pid) and core every member ran on, against
#              what the placement should give
#
# Every program is started under `taskset -c $CPUS` (default 0,1) at
# `nice -n -15` (as root); Open MPI binds its two ranks to one core each,
# the other peers' processes are left to the kernel within the two cores.
# Repetitions are outermost, so drifts in the background load hit every
# peer alike; every cell is the median over REPS runs of one run's median
# over BLOCKS timed blocks.
#
# Usage:   bench/nodes-compare.sh             # ~70 s on 2 cores
#          QUICK=1 bench/nodes-compare.sh     # smoke run, ~5 s
# Knobs:   REPS=N    runs per case (default 5)
#          CPUS=L    the two cores (taskset list, default 0,1)
#          QUICK=1   REPS=1, 3 blocks, the baseline's iteration counts
#          PEERS="mpi pvm upvm"  which peers to measure (default all three)
#          OUT=DIR   keep the raw RESULT lines, the placement check's lines
#                    (placement.raw: every member's tid, pid, cpu), logs
#          PVM_BASELINE_DIR  where pingpong.c and ring.c are
#                    (default ../shared/baseline/pvm next to the checkout)
#          BUILD=DIR UPVM's CMake build directory (default build/)
# Installs nothing: the peers come from `scripts/install-deps.sh --bench`
# (pvm, openmpi-bin, libopenmpi-dev); a peer that is missing is skipped
# with the command that installs it, and its column stays empty.
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
PEERS=${PEERS:-mpi pvm upvm}
BLOCKS=5
ISCALE=10 # ping-pong: 10x the baseline's round trips per block (>= 4 ms for UPVM and MPI)
TSCALE=4  # ring: 4x the baseline's 2400 hops per block
if [ "$QUICK" = 1 ]; then REPS=1; BLOCKS=3; ISCALE=1; TSCALE=1; fi
PP_SIZES="0 8 1000 10000 100000"
RING_NS="2 4 8 16 24"
K=2 # nodes
RUN_TIMEOUT=120
INSTALL_HINT="scripts/install-deps.sh --bench"
# MPI over shared memory between two ranks bound to a core each.  As root
# Open MPI refuses to start without --allow-run-as-root; ob1 is named so
# that a UCX PML (which ignores the BTL list) cannot take over; with only
# self and vader a pair of ranks that cannot use shared memory fails
# instead of falling back to TCP.
MPIRUN_ARGS=(--allow-run-as-root --oversubscribe -np 2 --bind-to core --map-by core
    --mca pml ob1 --mca btl self,vader)
# the project's warnings for our own sources; the baseline's sources are
# third-party: built with their own -O2 -Wall
PFLAGS=(-std=gnu11 -O2 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes)
BFLAGS=(-std=gnu11 -O2 -Wall)

die() { echo "nodes-compare: $*" >&2; exit 1; }
note() { echo "== $*"; }
warn() { echo "== WARNING: $*" >&2; }

WORK=$(mktemp -d /tmp/nodes-compare.XXXXXX) || die "mktemp failed"
UBIN=$WORK/upvm # upvmcc builds
RBIN=$WORK/real # -lpvm3 builds
MBIN=$WORK/mpi  # mpicc build
RES=$WORK/results
PLACE=$WORK/placement
mkdir -p "$UBIN" "$RBIN" "$MBIN" && : >"$RES" && : >"$PLACE" && : >"$WORK/stderr.log" ||
    die "cannot write $WORK"

PIN=(taskset -c "$CPUS")
if [ "$(id -u)" = 0 ]; then PIN+=(nice -n -15); fi

HAVE_MPI=0 HAVE_PVM=0 HAVE_UPVM=0 HAVE_NODES=0
SKIP_MPI="" SKIP_PVM="" SKIP_UPVM="" SKIP_NODES=""
UPVM_LAUNCHER=$BUILD/tools/upvm/upvm
UPVMCC=$BUILD/tools/upvmcc/upvmcc

# ------------------------------------------------------------- clean-up

# pvmd_start, pvmd_stop (halts the pvmd, kills what is left under $RBIN),
# kill_exe_under DIR
PVMD_DIR=$WORK/vm
PVMD_BIN=$RBIN
# shellcheck source=bench/pvm/pvmd.sh
. "$HERE/pvm/pvmd.sh"
# shellcheck source=bench/pvm/results.sh
. "$HERE/pvm/results.sh"

# Every process this script starts runs in a directory under $WORK (UPVM's
# launcher and node processes run the upvm executable, not one of ours):
# after a failed run, whatever still has its cwd there is killed by pid.

cleanup() {
    pvmd_stop
    kill_exe_under "$UBIN"
    kill_exe_under "$MBIN"
    kill_cwd_under "$UBIN"
    kill_cwd_under "$MBIN"
    if [ -n "${OUT:-}" ]; then
        mkdir -p "$OUT" && cp "$RES" "$PLACE" "$PLACE.raw" "$WORK/stderr.log" "$OUT/" 2>/dev/null
        [ -f "$PVMD_DIR/pvml.$(id -u)" ] && cp "$PVMD_DIR/pvml.$(id -u)" "$OUT/pvml.log"
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

# ---------------------------------------------------------------- build

peer() { case " $PEERS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

check_tools() {
    command -v taskset >/dev/null || die "taskset (util-linux) missing"
    [ "$(echo "$CPUS" | tr ',' '\n' | grep -c .)" = 2 ] ||
        warn "CPUS=$CPUS is not two cores: the runs are not the two-core setting"
    [ -f "$BASELINE/pingpong.c" ] && [ -f "$BASELINE/ring.c" ] ||
        die "no pingpong.c/ring.c in $BASELINE (set PVM_BASELINE_DIR)"
    if peer mpi; then
        if command -v mpicc >/dev/null && command -v mpirun >/dev/null; then
            HAVE_MPI=1
        else
            SKIP_MPI="Open MPI not installed (no mpicc/mpirun): $INSTALL_HINT installs openmpi-bin and libopenmpi-dev"
        fi
    else SKIP_MPI="not in PEERS"; fi
    if peer pvm; then
        if command -v pvmd >/dev/null && command -v pvm >/dev/null && [ -f /usr/include/pvm3.h ]; then
            HAVE_PVM=1
        else
            SKIP_PVM="genuine PVM not installed (pvmd, pvm3.h): $INSTALL_HINT installs pvm and pvm-dev"
        fi
    else SKIP_PVM="not in PEERS"; fi
    peer upvm || SKIP_UPVM="not in PEERS"
    peer mpi && [ -n "$SKIP_MPI" ] && warn "Open MPI columns skipped: $SKIP_MPI"
    peer pvm && [ -n "$SKIP_PVM" ] && warn "genuine-PVM column skipped: $SKIP_PVM"
    return 0
}

build_mpi() {
    [ "$HAVE_MPI" = 1 ] || return 0
    if mpicc "${PFLAGS[@]}" -o "$MBIN/mpi_pingpong" "$HERE/mpi/mpi_pingpong.c" 2>>"$WORK/stderr.log"; then
        note "Open MPI: $(mpirun --version 2>/dev/null | head -1), $MBIN/mpi_pingpong"
    else
        HAVE_MPI=0 SKIP_MPI="mpicc could not build bench/mpi/mpi_pingpong.c"
        warn "$SKIP_MPI"
    fi
}

build_pvm() {
    [ "$HAVE_PVM" = 1 ] || return 0
    gcc "${BFLAGS[@]}" -o "$RBIN/pingpong" "$BASELINE/pingpong.c" -lpvm3 &&
        gcc "${BFLAGS[@]}" -o "$RBIN/ring" "$BASELINE/ring.c" -lpvm3 ||
        die "build of the baseline's pingpong.c/ring.c with -lpvm3 failed"
    note "genuine PVM: $(dpkg-query -W -f='${Package} ${Version}' pvm 2>/dev/null), programs in $RBIN"
}

# The UPVM side is optional: if it does not build, its columns stay empty;
# if `upvm run` has no --nodes yet, only the one-node column is measured.
build_upvm() {
    peer upvm || return 0
    if ! { cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
            >"$WORK/cmake.log" 2>&1 && cmake --build "$BUILD" >>"$WORK/cmake.log" 2>&1; }; then
        grep -m5 -E 'error|undefined' "$WORK/cmake.log" >&2
        SKIP_UPVM="UPVM did not build (cmake/ninja in $BUILD)"
        warn "$SKIP_UPVM"
        return 0
    fi
    local p
    for p in pingpong ring; do
        "$UPVMCC" "${BFLAGS[@]}" -o "$UBIN/$p" "$BASELINE/$p.c" 2>>"$WORK/stderr.log" || {
            SKIP_UPVM="upvmcc could not build the baseline's $p.c"; warn "$SKIP_UPVM"; return 0; }
    done
    "$UPVMCC" "${PFLAGS[@]}" -o "$UBIN/where" "$HERE/nodes/where.c" 2>>"$WORK/stderr.log" || {
        SKIP_UPVM="upvmcc could not build bench/nodes/where.c"; warn "$SKIP_UPVM"; return 0; }
    HAVE_UPVM=1
    if "$UPVM_LAUNCHER" run --help 2>/dev/null | grep -q -- '--nodes'; then
        HAVE_NODES=1
    else
        SKIP_NODES="to come: this build's \`upvm run\` has no --nodes yet (UPVM $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null))"
        warn "UPVM multi-node columns skipped: $SKIP_NODES; the one-node column runs as \`upvm run PROGRAM\`"
    fi
    note "UPVM: $UPVM_LAUNCHER, programs built with upvmcc in $UBIN"
}

# ---------------------------------------------------------------- runs

# run SIDE CMD...: one job, pinned, under a time limit, in $UBIN (or $MBIN,
# $RBIN); its RESULT lines go to $RES with side=SIDE added.  A run that
# fails or times out leaves nothing behind.
run() {
    local side=$1 rc dir
    shift
    case "$side" in mpi*) dir=$MBIN ;; pvm) dir=$RBIN ;; *) dir=$UBIN ;; esac
    (cd "$dir" && exec timeout --foreground -k 5 "$RUN_TIMEOUT" "${PIN[@]}" "$@") </dev/null \
        >"$WORK/run.out" 2>>"$WORK/stderr.log"
    rc=$?
    sed -n "s/^RESULT \([^ ]*\)/RESULT \1 side=$side/p" "$WORK/run.out" >>"$RES"
    if [ "$rc" != 0 ]; then
        echo "   ($side failed, status $rc: ${*##*/})" >&2
        case "$side" in
            mpi*) kill_exe_under "$MBIN"; kill_cwd_under "$MBIN" ;;
            pvm) kill_exe_under "$RBIN" ;;
            *) kill_exe_under "$UBIN"; kill_cwd_under "$UBIN" ;;
        esac
    fi
    return "$rc"
}

# upvm_job SIDE NODES PLACEMENT PROGRAM ARGS...: a UPVM job; NODES=1
# without --nodes support runs `upvm run PROGRAM` (one node all the same).
# Spawned programs are found in $UBIN, never on the pvmd's PVM_PATH; the
# command line alone says how many nodes (UPVM_NODES/UPVM_PLACEMENT unset).
# Multi-node jobs that run out of time twice end the 2-node measurements
# (a hang would otherwise cost RUN_TIMEOUT for every remaining case).
NODE_TIMEOUTS=0
upvm_job() {
    local side=$1 nodes=$2 placement=$3 rc
    shift 3
    local launch=("$UPVM_LAUNCHER" run)
    [ "$HAVE_NODES" = 1 ] && launch+=(--nodes "$nodes" --placement "$placement")
    run "$side" env -u PVM_PATH -u PVM_TMP -u UPVM_NODES -u UPVM_PLACEMENT \
        PVMBENCH_SPAWN_DIR="$UBIN" "${launch[@]}" "$@"
    rc=$?
    if [ "$nodes" -gt 1 ] && { [ "$rc" = 124 ] || [ "$rc" = 137 ]; }; then
        NODE_TIMEOUTS=$((NODE_TIMEOUTS + 1))
        if [ "$NODE_TIMEOUTS" -ge 2 ] && [ -z "$SKIP_NODES" ]; then
            SKIP_NODES="2-node jobs stopped after two of them ran past $RUN_TIMEOUT s (UPVM $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null))"
            warn "$SKIP_NODES"
        fi
    fi
    return "$rc"
}
upvm_nodes() { [ "$HAVE_UPVM" = 1 ] && [ "$HAVE_NODES" = 1 ] && [ -z "$SKIP_NODES" ]; }

rep_pingpong() {
    local pp=(-r direct -e raw -b "$BLOCKS" -i "$ISCALE" $PP_SIZES)
    if [ "$HAVE_MPI" = 1 ]; then
        run mpi mpirun "${MPIRUN_ARGS[@]}" ./mpi_pingpong -b "$BLOCKS" -i "$ISCALE" $PP_SIZES
        run mpicopy mpirun "${MPIRUN_ARGS[@]}" --mca btl_vader_single_copy_mechanism none \
            ./mpi_pingpong -b "$BLOCKS" -i "$ISCALE" $PP_SIZES
    fi
    [ "$HAVE_PVM" = 1 ] && run pvm ./pingpong "${pp[@]}"
    upvm_nodes && upvm_job upvm2 "$K" cyclic ./pingpong "${pp[@]}"
    [ "$HAVE_UPVM" = 1 ] && upvm_job upvm1 1 cyclic ./pingpong "${pp[@]}"
}

rep_ring() {
    local n trips rg
    for n in $RING_NS; do
        trips=$(awk -v n="$n" -v s="$TSCALE" 'BEGIN { t = int(2400 / n * s); print t < 20 ? 20 : t }')
        rg=(-n "$n" -r direct -e raw -b "$BLOCKS" -t "$trips")
        [ "$HAVE_PVM" = 1 ] && run pvm ./ring "${rg[@]}"
        upvm_nodes && upvm_job upvm2b "$K" block ./ring "${rg[@]}"
        upvm_nodes && upvm_job upvm2c "$K" cyclic ./ring "${rg[@]}"
        [ "$HAVE_UPVM" = 1 ] && upvm_job upvm1 1 cyclic ./ring "${rg[@]}"
    done
}

# The node of ring member j (member 0 = the master, j >= 1 = the (j-1)th
# spawned task) that the placement should give, for N members on K nodes:
# cyclic puts spawned task i on node (i+1) mod K, block splits the N tasks
# into K contiguous equal chunks, the spawner's first.
expected_nodes() {
    awk -v n="$1" -v k="$2" -v pl="$3" 'BEGIN {
        for (j = 0; j < n; j++)
            printf "%s%d", j ? "," : "", pl == "cyclic" ? j % k : int(j * k / n) }'
}

# placement NAME NODES PLACEMENT N: where -n N as the pingpong/ring runs
# spawn; one line "NAME|nodes=...|processes=P|cross_hops=C|expected|verdict"
# to $PLACE
placement() {
    local name=$1 nodes=$2 pl=$3 n=$4 got exp verdict rc
    if [ "$nodes" -gt 1 ] && ! upvm_nodes; then
        echo "$name|-|-|-|$(expected_nodes "$n" "$nodes" "$pl")|not run: ${SKIP_NODES:-no --nodes}" >>"$PLACE"
        return
    fi
    upvm_job where "$nodes" "$pl" ./where -n "$n"
    rc=$?
    got=$(sed -n 's/^PLACEMENT .*nodes=\([^ ]*\) processes=\([0-9]*\) cross_hops=\([0-9]*\).*/\1|\2|\3/p' \
        "$WORK/run.out")
    exp=$(expected_nodes "$n" "$nodes" "$pl")
    if [ -z "$got" ]; then
        got="-|-|-"
        case "$rc" in
            124 | 137) verdict="**failed** (ran past $RUN_TIMEOUT s)" ;;
            *) verdict="**failed** (status $rc; stderr below)" ;;
        esac
    elif [ "${got%%|*}" = "$exp" ] && [ "$(echo "$got" | cut -d'|' -f2)" = "$nodes" ]; then verdict=ok
    else verdict="**differs**"; fi
    echo "$name|$got|$exp|$verdict" >>"$PLACE"
    cat "$WORK/run.out" >>"$PLACE.raw"
}

check_placement() {
    [ "$HAVE_UPVM" = 1 ] || return 0
    local n
    placement "pingpong, --nodes $K --placement cyclic" "$K" cyclic 2
    placement "pingpong, --nodes 1" 1 cyclic 2
    for n in $RING_NS; do
        placement "ring $n, --nodes $K --placement block" "$K" block "$n"
        placement "ring $n, --nodes $K --placement cyclic" "$K" cyclic "$n"
    done
}

# --------------------------------------------------------------- tables

extract() { results_extract "$RES" "$@"; }

# verdict FILE A B OP LIMIT: "A/B = r×: met" when A/B OP LIMIT (le|ge)
verdict() {
    awk -v a="$2" -v b="$3" -v op="$4" -v lim="$5" '$1 == a { x = $2 } $1 == b { y = $2 } END {
        if (x == "" || y == "" || y == 0) { printf "to come"; exit }
        r = x / y; ok = (op == "le") ? r <= lim : r >= lim
        printf "%s: %s", (r >= 10 ? sprintf("%.0f×", r) : sprintf("%.2f×", r)), ok ? "met" : "**missed**" }' "$1"
}

# empty cells of a peer that did not run say why, once, under the table
# (why ring: the ring table has no Open MPI column)
why() {
    [ "${1:-}" != ring ] && [ -n "$SKIP_MPI" ] && echo "- Open MPI: $SKIP_MPI."
    [ -n "$SKIP_PVM" ] && echo "- genuine PVM: $SKIP_PVM."
    [ -n "$SKIP_UPVM" ] && echo "- UPVM: $SKIP_UPVM."
    [ -z "$SKIP_UPVM" ] && [ -n "$SKIP_NODES" ] && echo "- UPVM on $K nodes: $SKIP_NODES."
    return 0
}

table_pingpong() {
    local f=$WORK/pp s
    { extract pingpong half_rtt_us side size; extract mpi_pingpong half_rtt_us side size; } >"$f"
    # the faster of the two Open MPI configurations, per size
    awk '$1 ~ /^mpi(copy)?\// { k = "mpibest/" substr($1, index($1, "/") + 1)
                                 if (!(k in b) || $2 < b[k]) b[k] = $2 }
         END { for (k in b) print k, b[k], 0 }' "$f" >"$f.best"
    cat "$f.best" >>"$f"
    echo
    echo "### Cross-node ping-pong: half round trip between two processes on two cores (median of $REPS runs, each the median of $BLOCKS blocks)"
    echo
    echo "| bytes | Open MPI, vader (default: CMA single copy above 4 KiB) | Open MPI, vader, copy in/out (single copy none) | genuine PVM, direct routes | UPVM, 2 nodes (cyclic) | UPVM, 1 node | ratio UPVM 2 nodes / faster Open MPI | speed-up PVM direct / UPVM 2 nodes |"
    echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
    for s in $PP_SIZES; do
        echo "| $s | $(cell "$f" "mpi/$s") | $(cell "$f" "mpicopy/$s") | $(cell_cs "$f" "pvm/$s") | $(cell_cs "$f" "upvm2/$s") |" \
            "$(cell_cs "$f" "upvm1/$s") | $(ratio "$f" "upvm2/$s" "mpibest/$s") | $(ratio "$f" "pvm/$s" "upvm2/$s") |"
    done
    why
}

table_ring() {
    local f=$WORK/ring n
    extract ring hop_us side n >"$f"
    echo
    echo "### Ring on 2 nodes: one int (PvmDataRaw) around N tasks, time per hop (median of $REPS runs, each the median of $BLOCKS blocks)"
    echo
    echo "| N | genuine PVM, direct routes | UPVM, 2 nodes, blocked | UPVM, 2 nodes, interleaved (cyclic) | UPVM, 1 node | speed-up PVM / UPVM blocked | speed-up PVM / UPVM interleaved |"
    echo "|---:|---:|---:|---:|---:|---:|---:|"
    for n in $RING_NS; do
        echo "| $n | $(cell_cs "$f" "pvm/$n") | $(cell_cs "$f" "upvm2b/$n") | $(cell_cs "$f" "upvm2c/$n") |" \
            "$(cell_cs "$f" "upvm1/$n") | $(ratio "$f" "pvm/$n" "upvm2b/$n") | $(ratio "$f" "pvm/$n" "upvm2c/$n") |"
    done
    why ring
}

table_placement() {
    echo
    echo "### Placement check: bench/nodes/where.c spawned as pingpong.c / ring.c spawn; a member's node = its node process (pid), the master's is node 0"
    echo
    echo "| job | members per node | hops crossing nodes | expected (block: contiguous halves, cyclic: alternating) | verdict |"
    echo "|---|---|---:|---|---|"
    if [ ! -s "$PLACE" ]; then
        echo "| (not run: ${SKIP_UPVM:-no UPVM}) | | | | |"
        return
    fi
    # "0,0,1,1" -> "2 + 2" and its crossing hops (ring order, wrapping)
    awk -F'|' '
        function per(l,   a, n, i, c, out, k, m) {
            if (l == "-") return "-"
            n = split(l, a, ","); m = 0
            for (i = 1; i <= n; i++) { c[a[i]]++; if (a[i] + 0 > m) m = a[i] + 0 }
            for (k = 0; k <= m; k++) out = out (k ? " + " : "") (c[k] + 0)
            return out }
        function cross(l,   a, n, i, x) {
            if (l == "-") return "-"
            n = split(l, a, ","); x = 0
            for (i = 1; i <= n && n > 1; i++) x += a[i] != a[i % n + 1]
            return x }
        { printf "| %s | %s | %s | %s, %s crossing | %s |\n", $1, per($2), cross($2), per($5), cross($5), $6 }' "$PLACE"
}

# placed JOB: the placement check's verdict for JOB ("ok", ...), empty if
# it did not run
placed() { awk -F'|' -v j="$1" '$1 == j { print $6 }' "$PLACE"; }

# counted VERDICT JOB: the verdict, unless the job's tasks were not where
# the placement puts them (then the measurement is not cross-node)
counted() {
    local p
    p=$(placed "$2")
    case "$1" in "to come") echo "$1"; return ;; esac
    if [ "$p" = ok ]; then echo "$1"
    else echo "${1%%:*}: not counted, placement check of \"$2\": ${p:-not run}"; fi
}

table_targets() {
    local pp=$WORK/pp rg=$WORK/ring jp="pingpong, --nodes $K --placement cyclic" jr="ring 24, --nodes $K --placement block"
    echo
    echo "### Targets (issue \"many nodes\")"
    echo
    echo "| target | result |"
    echo "|---|---|"
    echo "| cross-node 0 B half round trip within 1.2× of Open MPI (UPVM 2 nodes / faster Open MPI ≤ 1.2) | $(counted "$(verdict "$pp" upvm2/0 mpibest/0 le 1.2)" "$jp") |"
    echo "| cross-node 0 B half round trip ≥ 15× faster than genuine PVM direct (PVM / UPVM 2 nodes ≥ 15) | $(counted "$(verdict "$pp" pvm/0 upvm2/0 ge 15)" "$jp") |"
    echo "| blocked ring of 24 on 2 nodes ≥ 5× faster than genuine PVM direct (PVM / UPVM blocked ≥ 5) | $(counted "$(verdict "$rg" pvm/24 upvm2b/24 ge 5)" "$jr") |"
    if grep -q -E '\|\*\*(differs|failed)' "$PLACE" 2>/dev/null; then
        echo
        echo "**The placement check did not confirm every job's placement** (table above):" \
            "the UPVM \"2 nodes\" cells of those jobs are not (all) cross-node measurements."
    fi
}

# ----------------------------------------------------------------- main

check_tools
T0=$(date +%s)
note "host: $(nproc) cpus, $(uname -sr),$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
note "REPS=$REPS BLOCKS=$BLOCKS ISCALE=$ISCALE TSCALE=$TSCALE QUICK=$QUICK PEERS=\"$PEERS\", pinned: ${PIN[*]}"
build_mpi
build_pvm
build_upvm
[ "$HAVE_MPI$HAVE_PVM$HAVE_UPVM" = 000 ] && die "no peer to measure (see the warnings above)"
[ "$HAVE_PVM" = 1 ] && pvmd_start
note "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
check_placement
for rep in $(seq 1 "$REPS"); do
    note "run $rep/$REPS: ping-pong, ring"
    rep_pingpong
    rep_ring
done
note "load average after: $(cut -d' ' -f1-3 /proc/loadavg); $(($(date +%s) - T0)) s"
pvmd_stop
table_pingpong
table_ring
table_placement
table_targets
echo
mpicpus=$(grep '^RESULT mpi_pingpong' "$RES" | sed -n 's/.*ranks_cpus=\([^ ]*\).*/\1/p' | sort | uniq -c |
    awk '{ printf "%s%s (%d results)", (NR > 1 ? ", " : ""), $2, $1 }')
echo "Times per half round trip or hop (ns, µs); the baseline programs print µs with two decimals" \
    "(10 ns resolution), mpi_pingpong with three.  Open MPI: \`mpirun ${MPIRUN_ARGS[*]}\`, ranks on cpus" \
    "${mpicpus:-?}; genuine PVM: $(dpkg-query -W -f='${Package} ${Version}' pvm 2>/dev/null)," \
    "private pvmd; UPVM: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null) ($BUILD, RelWithDebInfo);" \
    "everything under ${PIN[*]}."
if [ -s "$WORK/stderr.log" ]; then
    echo "== WARNING: the programs wrote to stderr:"; head -c 2000 "$WORK/stderr.log" | head -20
fi
