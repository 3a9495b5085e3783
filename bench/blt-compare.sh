#!/usr/bin/env bash
# bench/blt-compare.sh - bi-level threads (src/blt, src/proc/blocking.c):
# what coupling a ULP to a kernel context costs, what it buys, and what the
# interposition costs when nothing blocks; peers in the same run.
#
#   couple     build/bench/blt_couple_bench (thread mode; ULP-PiP Table V):
#              getpid() alone, getpid() enclosed by upvm_couple() /
#              upvm_decouple() with UPVM_KC_WAIT=spin, =block and the
#              default (adaptive), and the default under taskset -c 0 (one
#              CPU: idle KCs block); the floor: two plain threads handing a
#              turn back and forth with FUTEX_WAIT/FUTEX_WAKE (one round
#              trip, the two wake-ups a blocking couple + decouple needs).
#              ns per operation.
#   overlap    bench/blt/overlap.c (ULP-PiP Figure 8, the Intel MPI
#              Benchmarks' overlap: (t_io + t_cpu - t_both) / min(t_io,
#              t_cpu)): open a file on /dev/shm, write one block, close,
#              against a compute loop calibrated to as long.  Peers: UPVM
#              (upvmcc; the write of >= 64 KiB is coupled while another
#              task of the node computes), Linux AIO (libaio io_submit on a
#              buffered tmpfs file: done inside io_submit), io_uring
#              (IORING_OP_WRITE; and with IOSQE_ASYNC).  Not pinned: the
#              overlap needs the second CPU.
#   pipes      bench/blt/pipes.c: 100 computing tasks and 10 tasks reading
#              FIFOs that a writer task feeds every ms; total loop
#              iterations per second against the same run without readers
#              (one node, UPVM_NODES=1; defaults, UPVM_KC_WAIT=block, and
#              taskset -c 0); the same program on genuine PVM 3.4.6 (one
#              process per task, a private pvmd), both CPUs and taskset -c 0.
#   fastpath   bench/blt/fastpath.c, built with upvmcc and with plain cc,
#              pinned to one CPU: pread / lseek+read of 4 KiB of a cached
#              file, a pipe written and read back (no coupling), and, for
#              context, a pipe ping-pong whose reads always wait (coupled).
#
# Usage:   bench/blt-compare.sh              # ~2.5 min on 2 cores
#          QUICK=1 bench/blt-compare.sh      # smoke run, < 1 min
# Knobs:   REPS=N    runs per case (default 5; medians of the runs, each run
#                    itself the median of its samples)
#          CPU=N     the core of the pinned cases (default 0)
#          SIZES="64 1024 4096 16384"  overlap block sizes in KiB
#          PIPE_SECS=S  the pipes window (default 1.5)
#          OUT=DIR   keep the raw RESULT lines and logs in DIR
#          BUILD=DIR UPVM's CMake build directory (default build/)
# Needs:   libaio-dev, liburing-dev (the AIO peers: skipped when missing),
#          pvm, pvm-dev (the PVM peer: skipped when missing);
#          scripts/install-deps.sh --bench installs them.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
HERE=$ROOT/bench
BUILD=${BUILD:-$ROOT/build}
REPS=${REPS:-5}
CPU=${CPU:-0}
QUICK=${QUICK:-0}
SIZES=${SIZES:-64 1024 4096 16384}
PIPE_SECS=${PIPE_SECS:-1.5}
C_ITERS=100000 C_SAMPLES=5 O_SAMPLES=15 F_ITERS=100000 F_SAMPLES=5
if [ "$QUICK" = 1 ]; then
    REPS=1 C_ITERS=20000 C_SAMPLES=3 O_SAMPLES=5 F_ITERS=20000 F_SAMPLES=3 PIPE_SECS=0.5
    SIZES="64 4096"
fi
RUN_TIMEOUT=120
FLAGS=(-std=gnu11 -O2 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes)

die() { echo "blt-compare: $*" >&2; exit 1; }
note() { echo "== $*"; }

WORK=$(mktemp -d /tmp/blt-compare.XXXXXX) || die "mktemp failed"
UBIN=$WORK/upvm # upvmcc
RBIN=$WORK/real # -lpvm3
OBIN=$WORK/os   # plain cc
RES=$WORK/results
mkdir -p "$UBIN" "$RBIN" "$OBIN" "$WORK/fifo" && : >"$RES" && : >"$WORK/stderr.log" ||
    die "cannot write $WORK"

PIN=(taskset -c "$CPU")
NICE=()
if [ "$(id -u)" = 0 ]; then NICE=(nice -n -15); fi

PVMD_DIR=$WORK/vm
PVMD_BIN=$RBIN
# shellcheck source=bench/pvm/pvmd.sh
. "$HERE/pvm/pvmd.sh"

cleanup() {
    pvmd_stop
    kill_exe_under "$UBIN"
    kill_exe_under "$OBIN"
    rm -f /dev/shm/blt-overlap.*
    if [ -n "${OUT:-}" ]; then
        mkdir -p "$OUT" && cp "$RES" "$WORK/stderr.log" "$OUT/" 2>/dev/null
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

# ---------------------------------------------------------------- build

HAVE_PVM=0 OS_FLAGS=() OS_LIBS=() OS_METHODS=()
build_all() {
    local upvmcc=$BUILD/tools/upvmcc/upvmcc
    { [ -f "$BUILD/build.ninja" ] || cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release; } \
        >"$WORK/cmake.log" 2>&1 && cmake --build "$BUILD" >>"$WORK/cmake.log" 2>&1 || {
        grep -m5 -E 'error|undefined' "$WORK/cmake.log" >&2
        die "UPVM did not build (cmake/ninja in $BUILD)"
    }
    [ -x "$BUILD/bench/blt_couple_bench" ] || die "no $BUILD/bench/blt_couple_bench (UPVM_BUILD_BENCH=OFF?)"
    if [ -f /usr/include/libaio.h ]; then
        OS_FLAGS+=(-DHAVE_LIBAIO) OS_LIBS+=(-laio) OS_METHODS+=(aio)
    else
        note "no libaio.h: the AIO peer is skipped (scripts/install-deps.sh --bench)"
    fi
    if [ -f /usr/include/liburing.h ]; then
        OS_FLAGS+=(-DHAVE_LIBURING) OS_LIBS+=(-luring) OS_METHODS+=(uring uring-async)
    else
        note "no liburing.h: the io_uring peers are skipped (scripts/install-deps.sh --bench)"
    fi
    "$upvmcc" "${FLAGS[@]}" -DUPVM -o "$UBIN/overlap" "$HERE/blt/overlap.c" &&
        "$upvmcc" "${FLAGS[@]}" -DUPVM -o "$UBIN/pipes" "$HERE/blt/pipes.c" &&
        "$upvmcc" "${FLAGS[@]}" -DUPVM -o "$UBIN/fastpath" "$HERE/blt/fastpath.c" &&
        gcc "${FLAGS[@]}" -o "$OBIN/fastpath" "$HERE/blt/fastpath.c" ||
        die "build of bench/blt failed"
    if [ ${#OS_METHODS[@]} -gt 0 ]; then
        gcc "${FLAGS[@]}" "${OS_FLAGS[@]}" -o "$OBIN/overlap" "$HERE/blt/overlap.c" "${OS_LIBS[@]}" ||
            die "build of overlap.c with ${OS_LIBS[*]} failed"
    fi
    if command -v pvmd >/dev/null && [ -f /usr/include/pvm3.h ] &&
        gcc "${FLAGS[@]}" -o "$RBIN/pipes" "$HERE/blt/pipes.c" -lpvm3 2>>"$WORK/stderr.log"; then
        HAVE_PVM=1
    else
        note "no genuine PVM (pvm, pvm-dev): its pipes peer is skipped"
    fi
    head -c 1048576 /dev/urandom >"$WORK/file" || die "cannot write $WORK/file"
    note "built: $UBIN (upvmcc), $OBIN (cc ${OS_LIBS[*]}), $RBIN (-lpvm3)"
}

# ---------------------------------------------------------------- runs

# run TAG CMD...: its RESULT lines go to $RES prefixed with TAG
run() {
    local tag=$1 out rc
    shift
    out=$(timeout "$RUN_TIMEOUT" "$@" 2>>"$WORK/stderr.log"); rc=$?
    if [ $rc -ne 0 ]; then
        echo "blt-compare: '$tag' failed (status $rc): $*" >&2
        tail -n 3 "$WORK/stderr.log" >&2
        return 1
    fi
    grep '^RESULT' <<<"$out" | sed "s|^RESULT|$tag|" >>"$RES"
}

couple_runs() {
    local b=$BUILD/bench/blt_couple_bench a=(-n "$C_ITERS" -r "$C_SAMPLES") r
    note "couple: $REPS runs of spin, block, adaptive, adaptive on one CPU"
    for r in $(seq 1 "$REPS"); do
        run couple/spin env UPVM_KC_WAIT=spin "${NICE[@]}" "$b" "${a[@]}"
        run couple/block env UPVM_KC_WAIT=block "${NICE[@]}" "$b" "${a[@]}"
        run couple/adaptive env UPVM_KC_WAIT=adaptive "${NICE[@]}" "$b" "${a[@]}"
        run couple/one-cpu "${PIN[@]}" "${NICE[@]}" "$b" "${a[@]}"
    done
}

overlap_runs() {
    local r m
    note "overlap: $REPS runs of upvm ${OS_METHODS[*]}, blocks of $SIZES KiB"
    for r in $(seq 1 "$REPS"); do
        # shellcheck disable=SC2086
        (cd "$UBIN" && run overlap env UPVM_NODES=1 "${NICE[@]}" ./overlap upvm -r "$O_SAMPLES" $SIZES)
        for m in "${OS_METHODS[@]}"; do
            # shellcheck disable=SC2086
            run overlap "${NICE[@]}" "$OBIN/overlap" "$m" -r "$O_SAMPLES" $SIZES
        done
    done
}

pipes_runs() {
    local r a=(-c 100 -t "$PIPE_SECS" -d "$WORK/fifo")
    note "pipes: $REPS runs of 100 computers with 0 and 10 readers (UPVM; PVM: $HAVE_PVM)"
    for r in $(seq 1 "$REPS"); do
        run pipes/upvm env UPVM_NODES=1 "${NICE[@]}" "$UBIN/pipes" -r 0 "${a[@]}"
        run pipes/upvm env UPVM_NODES=1 "${NICE[@]}" "$UBIN/pipes" -r 10 "${a[@]}"
        run pipes/upvm-block env UPVM_NODES=1 UPVM_KC_WAIT=block "${NICE[@]}" "$UBIN/pipes" -r 10 "${a[@]}"
        run pipes/upvm-one-cpu env UPVM_NODES=1 "${PIN[@]}" "${NICE[@]}" "$UBIN/pipes" -r 0 "${a[@]}"
        run pipes/upvm-one-cpu env UPVM_NODES=1 "${PIN[@]}" "${NICE[@]}" "$UBIN/pipes" -r 10 "${a[@]}"
    done
    [ "$HAVE_PVM" = 1 ] || return 0
    PIN_SAVE=("${PIN[@]}")
    for side in both one-cpu; do
        if [ $side = both ]; then PIN=(); else PIN=("${PIN_SAVE[@]}"); fi
        pvmd_start
        for r in $(seq 1 "$REPS"); do
            run "pipes/pvm-$side" "${PIN[@]}" "$RBIN/pipes" -r 0 "${a[@]}"
            run "pipes/pvm-$side" "${PIN[@]}" "$RBIN/pipes" -r 10 "${a[@]}"
        done
        pvmd_stop
    done
    PIN=("${PIN_SAVE[@]}")
}

fastpath_runs() {
    local r a=(-n "$F_ITERS" -r "$F_SAMPLES" "$WORK/file")
    note "fastpath: $REPS runs, plain cc and upvmcc, pinned to CPU $CPU"
    for r in $(seq 1 "$REPS"); do
        run fastpath/plain "${PIN[@]}" "${NICE[@]}" "$OBIN/fastpath" "${a[@]}"
        (cd "$UBIN" && run fastpath/upvm env UPVM_NODES=1 "${PIN[@]}" "${NICE[@]}" ./fastpath "${a[@]}")
    done
}

# ---------------------------------------------------------------- report

report() {
    python3 - "$RES" "$REPS" <<'PY'
import sys, statistics as st
from collections import defaultdict
res, reps = sys.argv[1], sys.argv[2]
d = defaultdict(list)
for line in open(res):
    f = line.split()
    if f[0].startswith('couple/'):
        d[(f[0], f[1])].append(float(f[2]))
    elif f[0] == 'overlap':
        d[('overlap', f[2], int(f[3]))].append([float(x) for x in f[4:8]])
    elif f[0].startswith('pipes/'):
        d[(f[0], int(f[3]))].append(float(f[4]))
    elif f[0].startswith('fastpath/'):
        d[(f[0], f[2])].append(float(f[3]))
med = lambda v: st.median(v) if v else float('nan')
print()
print("### couple + getpid + decouple (thread mode; ns per operation, median of %s runs)" % reps)
print("| case | getpid | couple+getpid+decouple | futex round trip (floor) | pair / futex |")
print("|---|---:|---:|---:|---:|")
for c, what in [('spin', 'UPVM_KC_WAIT=spin'), ('block', 'UPVM_KC_WAIT=block'),
                ('adaptive', 'default (adaptive), 2 CPUs'), ('one-cpu', 'default, taskset -c 0 (block)')]:
    g, p, f = (med(d[('couple/' + c, k)]) for k in ('getpid', 'couple+getpid+decouple', 'futex-round-trip'))
    print("| %s | %.0f | %.0f | %.0f | %.2f |" % (what, g, p, f, p / f))
print()
print("### Overlap, IMB method: (t_io + t_cpu - t_both) / min(t_io, t_cpu) (median of %s runs; times in us)" % reps)
print("| method | block KiB | t_io | t_cpu | t_both | overlap |")
print("|---|---:|---:|---:|---:|---:|")
for k in sorted(k for k in d if k[0] == 'overlap'):
    cols = list(zip(*d[k]))
    print("| %s | %d | %.0f | %.0f | %.0f | %.0f %% |" % (k[1], k[2], med(cols[0]), med(cols[1]),
                                                       med(cols[2]), 100 * med(cols[3])))
print()
print("### 100 computing tasks, 10 pipe readers fed every ms (iterations/s, median of %s runs)" % reps)
print("| runtime | no readers | 10 readers | with / without |")
print("|---|---:|---:|---:|")
base = med(d[('pipes/upvm', 0)])
for c, what in [('pipes/upvm', 'UPVM, one node, defaults'),
                ('pipes/upvm-block', 'UPVM, UPVM_KC_WAIT=block (vs the defaults\' no-reader run)'),
                ('pipes/upvm-one-cpu', 'UPVM, taskset -c 0'),
                ('pipes/pvm-both', 'PVM 3.4.6, processes, 2 CPUs'),
                ('pipes/pvm-one-cpu', 'PVM 3.4.6, processes, taskset -c 0')]:
    w0 = med(d[(c, 0)]) if d[(c, 0)] else (base if c == 'pipes/upvm-block' else float('nan'))
    w10 = med(d[(c, 10)])
    if w10 != w10:
        continue
    print("| %s | %.3g | %.3g | %.1f %% |" % (what, w0, w10, 100 * w10 / w0))
print()
print("### Fast path (pinned to one CPU; ns per call, median of %s runs)" % reps)
print("| call | plain cc | upvmcc | extra |")
print("|---|---:|---:|---:|")
for c, what in [('pread', 'pread 4 KiB, cached file'), ('read', 'lseek + read 4 KiB'),
                ('preadv2', 'preadv2 RWF_NOWAIT 4 KiB (by syscall, not interposed)'),
                ('pipe', 'pipe: write 64 B + read 64 B (data there)'),
                ('pingpong', 'pipe ping-pong round trip (reads wait: coupled)')]:
    a, b = med(d[('fastpath/plain', c)]), med(d[('fastpath/upvm', c)])
    print("| %s | %.0f | %.0f | %+.1f %% |" % (what, a, b, 100 * (b / a - 1)))
PY
}

command -v taskset >/dev/null || die "taskset (util-linux) missing"
command -v python3 >/dev/null || die "python3 missing"
build_all
t0=$SECONDS
couple_runs
overlap_runs
pipes_runs
fastpath_runs
note "runs took $((SECONDS - t0)) s; machine: $(nproc) CPUs, $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
report
