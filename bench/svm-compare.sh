#!/usr/bin/env bash
# bench/svm-compare.sh - IVY's benchmark programs (Li 1988, "Experiments",
# Figures 4-6; design notes §15.14) on UPVM's shared virtual memory: time
# and speedup on 1, 2 and 3 nodes under each page manager, with the faults
# and protocol frames they cost, and the Jacobi solver with PVM messages
# beside the shared-memory one.
#
#   jacobi   bench/svm/ivy/jacobi.c   dense Jacobi, x double-buffered, barrier per iteration
#   pde      bench/svm/ivy/pde.c      3D Jacobi relaxation, slabs, halo planes
#   matmul   bench/svm/ivy/matmul.c   C = A B, A and B on node 0 at the start
#   dot      bench/svm/ivy/dot.c      dot product, pages scattered at random (no speedup in IVY)
#   sort     bench/svm/ivy/sort.c     sort a block each, then merge pairwise (log W rounds)
#   tsp      bench/svm/ivy/tsp.c      branch and bound, shared bound and queue under locks
#   jacobi-pvm  bench/svm/jacobi-pvm.c  the Jacobi solver with pvm_mcast, no shared memory
#   stall    bench/svm/ivy/stall.c    one read fault served by a node whose ULP computes
#            for 1 s (without and with -Y): what a request waits for there
#
# Each program runs as its default invocation would: `UPVM_NODES=N prog -w N`
# (one worker per node, thread mode), UPVM_SVM_MANAGER=central|fixed|dynamic
# for N = 2, 3 (one node needs no manager: it runs once, with the default,
# and is every manager's reference), then UPVM_SVM=memfd (the nodes of the
# host map the same memory: no protocol, the hardware's coherence: what the
# protocol costs, by difference), and with YIELD=US central with -Y US
# (below); nothing pinned (no taskset, no nice).
# Every run checks its result against a sequential computation and fails
# (exit 1) on a wrong answer; a failed run is not counted and is listed at
# the end with its command and stderr.  Runs are outermost (REPS times the
# whole list), so drifts hit every case alike; each cell is the median of
# REPS runs; speedup = the 1-node median / this median.  time: the parallel
# part only (from every worker set up to every worker done, upvm_now_ns);
# faults, pages in, frames: summed over the job's nodes, per run.
#
# Usage:   bench/svm-compare.sh BUILD_DIR        # ~5 min on 2 idle cores
#          QUICK=1 bench/svm-compare.sh BUILD_DIR   # smoke run, ~30 s
# BUILD_DIR: a CMake build of this tree with the svm layer (its
# bench/ivy-* and bench/jacobi-pvm); this script builds nothing.
# Knobs:   REPS=N            runs per case (default 3)
#          NODES="1 2 3"     node counts (1 is the speedup's reference)
#          MANAGERS="central fixed dynamic"
#          MEMFD=1           also UPVM_SVM=memfd on 2 and 3 nodes (one memfd
#                            per region, the hardware's coherence: the
#                            protocol's reference; MEMFD= skips)
#          PROGS="jacobi pde matmul dot sort tsp"   (jacobi-pvm runs with jacobi)
#          JACOBI="-n 1024 -i 300"  PDE="-n 96 -i 200"  MATMUL="-n 768"
#          DOT="-n 1048576 -r 10"   SORT="-n 1048576"   TSP="-n 16"
#                            each program's size (its options; the defaults
#                            run ~0.3-1.5 s on one node of this 2-core
#                            machine, dot ~0.05 s: its point is that more
#                            nodes make it slower; bigger on a bigger one)
#          YIELD=US          also run every program on 2 and 3 nodes with
#                            -Y US, central manager (default: not; try
#                            YIELD=100): the workers yield every US µs of
#                            computing, so that their node serves the
#                            others' page requests meanwhile (a node handles
#                            frames only when its scheduler runs: ivy.h)
#          OUT=DIR           keep the raw result lines and the stderr
# On a machine of 2 cores, 3 nodes oversubscribe (3 processes on 2 cores):
# the 3-node column then measures the protocol under that, not 3 CPUs.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
HERE=$ROOT/bench
# shellcheck source=bench/lib.sh
. "$HERE/lib.sh"
# shellcheck source=bench/pvm/results.sh
. "$HERE/pvm/results.sh"

die() { echo "svm-compare: $*" >&2; exit 1; }
note() { echo "== $*" >&2; }

[ $# -ge 1 ] || die "usage: bench/svm-compare.sh BUILD_DIR (a CMake build of this tree)"
BUILD=$(cd "$1" && pwd) || die "no build directory $1"
BIN=$BUILD/bench
REPS=${REPS:-3}
QUICK=${QUICK:-0}
NODES=${NODES:-1 2 3}
MANAGERS=${MANAGERS:-central fixed dynamic}
PROGS=${PROGS:-jacobi pde matmul dot sort tsp}
if [ "$QUICK" = 1 ]; then
    REPS=1
    JACOBI=${JACOBI:--n 512 -i 50} PDE=${PDE:--n 40 -i 20} MATMUL=${MATMUL:--n 256}
    DOT=${DOT:--n 262144 -r 3} SORT=${SORT:--n 131072} TSP=${TSP:--n 12}
fi
JACOBI=${JACOBI:--n 1024 -i 300}
PDE=${PDE:--n 96 -i 200}
MATMUL=${MATMUL:--n 768}
DOT=${DOT:--n 1048576 -r 10}
SORT=${SORT:--n 1048576}
TSP=${TSP:--n 16}
YIELD=${YIELD-}
MEMFD=${MEMFD-1}
ALLM="$MANAGERS${MEMFD:+ memfd}"
RUN_TIMEOUT=${RUN_TIMEOUT:-180}

for p in $PROGS; do
    [ -x "$BIN/ivy-$p" ] || die "$BIN/ivy-$p is missing: build the tree (with src/svm) first"
done
case " $PROGS " in *" jacobi "*) [ -x "$BIN/jacobi-pvm" ] || die "$BIN/jacobi-pvm is missing" ;; esac

WORK=$(mktemp -d /tmp/svm-compare.XXXXXX) || die "mktemp failed"
RES=$WORK/results
FAILED=$WORK/failed
: >"$RES" && : >"$FAILED" && : >"$WORK/stderr.log" || die "cannot write $WORK"
cleanup() {
    kill_cwd_under "$WORK"
    if [ -n "${OUT:-}" ]; then
        mkdir -p "$OUT" && cp "$RES" "$FAILED" "$WORK/stderr.log" "$OUT/" 2>/dev/null
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

args_of() {
    case $1 in
    jacobi | jacobi-pvm) echo "$JACOBI" ;;
    pde) echo "$PDE" ;; matmul) echo "$MATMUL" ;; dot) echo "$DOT" ;;
    sort) echo "$SORT" ;; tsp) echo "$TSP" ;;
    esac
}

# run PROG NODES MANAGER [ARGS...]: one job; its line to $RES as a RESULT
# line (with faults = read + write faults), or the failure to $FAILED.
run() {
    local prog=$1 n=$2 m=$3 exe rc args
    shift 3
    exe=$BIN/ivy-$prog
    [ "$prog" = jacobi-pvm ] && exe=$BIN/jacobi-pvm
    args="$(args_of "$prog")${*:+ $*}"
    # shellcheck disable=SC2086
    local envs=(UPVM_SVM_MANAGER="$m")
    [ "$m" = memfd ] && envs=(UPVM_SVM=memfd)
    (cd "$WORK" && exec env -u UPVM_SVM -u UPVM_SVM_MANAGER -u UPVM_SVM_PROTOCOL UPVM_NODES="$n" "${envs[@]}" \
        timeout -k 5 "$RUN_TIMEOUT" "$exe" $args -w "$n") </dev/null >"$WORK/run.out" 2>"$WORK/run.err"
    rc=$?
    if [ "$rc" = 0 ] && grep -q '^ivy .*check=ok' "$WORK/run.out"; then
        awk '/^ivy / { sub(/^ivy /, "RESULT ivy "); f = ""; r = 0; w = 0
             for (i = 3; i <= NF; i++) { split($i, a, "="); if (a[1] == "read_faults") r = a[2]; if (a[1] == "write_faults") w = a[2] }
             print $0, "faults=" r + w }' "$WORK/run.out" >>"$RES"
    else
        echo "UPVM_NODES=$n ${envs[*]} $exe $args -w $n: exit $rc; $(grep -m1 '^ivy' "$WORK/run.out" | grep -o 'check=[A-Z]*')" >>"$FAILED"
        { echo "--- $prog nodes=$n manager=$m (exit $rc):"; tail -5 "$WORK/run.err"; } >>"$WORK/stderr.log"
        echo "   ($prog on $n node(s), $m: failed, exit $rc)" >&2
        kill_cwd_under "$WORK"
    fi
    [ -s "$WORK/run.err" ] && [ "$rc" = 0 ] &&
        { echo "--- $prog nodes=$n manager=$m (stderr):"; head -5 "$WORK/run.err"; } >>"$WORK/stderr.log"
    return 0
}

rep_once() {
    local p n m
    for p in $PROGS; do
        for n in $NODES; do
            if [ "$n" = 1 ]; then
                run "$p" 1 central
            else
                for m in $ALLM; do run "$p" "$n" "$m"; done
                [ -n "$YIELD" ] && run "$p" "$n" central -Y "$YIELD"
            fi
            [ "$p" = jacobi ] && run jacobi-pvm "$n" central
        done
    done
}

# ---------------------------------------------------------------- tables

# the median of FIELD for prog/nodes/manager, or "-"
med() { awk -v k="$2" '$1 == k { v = $2 } END { printf "%s", v == "" ? "-" : v }' "$1"; }

secs() { awk -v v="$1" 'BEGIN { if (v == "-") printf "-"; else if (v < 1) printf "%.0f ms", v * 1000; else printf "%.2f s", v }'; }
num() { awk -v v="$1" 'BEGIN { if (v == "-") printf "-"; else printf "%.0f", v }'; }
speedup() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) printf "-"; else printf "%.2f", a / b }'; }

tables() {
    local d=$WORK/t p n m base key t
    mkdir -p "$d"
    for f in time_s faults read_faults write_faults pages_in frames invalidations forwards seq_s; do
        results_extract "$RES" ivy "$f" prog nodes manager yield_us >"$d/$f"
    done
    grep -o 'prog=[^ ]* size=[^ ]*' "$RES" | sort -u | sed 's/prog=//; s/ size=/: /' >"$d/sizes"

    echo
    echo "### IVY's programs on UPVM's shared virtual memory: speedup over 1 node (median of $REPS runs)"
    echo
    local hdr="| program | 1 node |" sep="|---|---:|"
    for n in $NODES; do
        [ "$n" = 1 ] && continue
        for m in $ALLM; do hdr="$hdr $n nodes, $m |"; sep="$sep---:|"; done
        [ -n "$YIELD" ] && hdr="$hdr $n nodes, central, -Y $YIELD |" && sep="$sep---:|"
    done
    echo "$hdr"
    echo "$sep"
    for p in $PROGS; do
        for q in "$p" $([ "$p" = jacobi ] && echo jacobi-pvm); do
            base=$(med "$d/time_s" "$q/1/$([ "$q" = jacobi-pvm ] && echo none || echo central)/0")
            local row="| $q | $(secs "$base") |"
            for n in $NODES; do
                [ "$n" = 1 ] && continue
                for m in $ALLM; do
                    if [ "$q" = jacobi-pvm ]; then
                        t=$(med "$d/time_s" "$q/$n/none/0")
                        [ "$m" = "${MANAGERS%% *}" ] && row="$row $(speedup "$base" "$t") ($(secs "$t"), messages) |" || row="$row |"
                    else
                        t=$(med "$d/time_s" "$q/$n/$m/0")
                        row="$row $(speedup "$base" "$t") ($(secs "$t")) |"
                    fi
                done
                if [ -n "$YIELD" ]; then
                    t=$(med "$d/time_s" "$q/$n/central/$YIELD")
                    [ "$q" = jacobi-pvm ] && row="$row |" || row="$row $(speedup "$base" "$t") ($(secs "$t")) |"
                fi
            done
            echo "$row"
        done
    done

    echo
    echo "### What each run cost: faults (read + write), pages received, protocol frames, summed over the nodes (median of $REPS runs)"
    echo
    echo "| program | nodes | manager | time | speedup | read faults | write faults | pages in | invalidations | frames | forwards |"
    echo "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    for p in $PROGS; do
        base=$(med "$d/time_s" "$p/1/central/0")
        for n in $NODES; do
            for m in $([ "$n" = 1 ] && echo central || echo "$ALLM ${YIELD:+central/$YIELD}"); do
                key=$p/$n/$m
                case $m in */*) ;; *) key=$key/0 ;; esac
                t=$(med "$d/time_s" "$key")
                echo "| $p | $n | $([ "$n" = 1 ] && echo "-" || echo "$m" | sed 's|/| -Y |') | $(secs "$t") | $(speedup "$base" "$t") |" \
                    "$(num "$(med "$d/read_faults" "$key")") | $(num "$(med "$d/write_faults" "$key")") |" \
                    "$(num "$(med "$d/pages_in" "$key")") | $(num "$(med "$d/invalidations" "$key")") |" \
                    "$(num "$(med "$d/frames" "$key")") | $(num "$(med "$d/forwards" "$key")") |"
            done
        done
    done

    echo
    echo "Sizes: $(paste -sd';' "$d/sizes" | sed 's/;/; /g')."
}

# ----------------------------------------------------------------- main

T0=$(date +%s)
note "host: $(nproc) cpus, $(uname -sr),$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2);" \
    "build $BUILD; UPVM $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)"
note "REPS=$REPS NODES=\"$NODES\" MANAGERS=\"$MANAGERS\" MEMFD=$MEMFD YIELD=$YIELD PROGS=\"$PROGS\"; not pinned"
[ "$(nproc)" -lt 3 ] && note "$(nproc) cores: 3 nodes oversubscribe them"
note "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for rep in $(seq 1 "$REPS"); do
    note "run $rep/$REPS"
    rep_once
done
note "load average after: $(cut -d' ' -f1-3 /proc/loadavg); $(($(date +%s) - T0)) s"
tables
if [ -x "$BIN/ivy-stall" ]; then
    echo
    echo "### A read fault served by a node that computes (bench/svm/ivy/stall.c, 2 nodes, 1 s of computing)"
    echo
    echo "| node 0's ULP | read fault on node 1 |"
    echo "|---|---:|"
    for y in "" "-Y ${YIELD:-100}"; do
        # shellcheck disable=SC2086
        line=$(cd "$WORK" && UPVM_NODES=2 timeout 60 "$BIN/ivy-stall" -s 1000 $y 2>>"$WORK/stderr.log")
        ms=$(echo "$line" | grep -o 'read_fault_ms=[0-9.]*' | cut -d= -f2)
        echo "| computes$([ -n "$y" ] && echo ", yields every ${YIELD:-100} µs") | ${ms:--} ms |"
    done
fi
echo
echo "Default invocations (\`UPVM_NODES=N prog -w N\`, UPVM_SVM_MANAGER=M; memfd: UPVM_SVM=memfd), not pinned, on $(nproc) cores" \
    "($BUILD); every run's result checked against a sequential computation.  time: the parallel part" \
    "(from every worker set up to every worker done); speedup: the 1-node median over this one."
if [ -s "$FAILED" ]; then
    echo
    echo "== WARNING: $(wc -l <"$FAILED") run(s) failed and are not counted:"
    sed 's/^/   /' "$FAILED"
fi
if [ -s "$WORK/stderr.log" ]; then
    echo "== the programs wrote to stderr:"
    head -40 "$WORK/stderr.log"
fi
[ -s "$FAILED" ] && exit 1
exit 0
