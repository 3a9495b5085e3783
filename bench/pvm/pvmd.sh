# bench/pvm/pvmd.sh - a private genuine-PVM daemon for the benchmark
# scripts (sourced by bench/pvm-compare.sh, bench/proc-compare.sh and
# bench/nodes-compare.sh; bash).
#
# The caller sets, before pvmd_start:
#   PVMD_DIR  a directory of its own (created): the pvmd's PVM_TMP, its
#             socket name file, its log pvml.<uid> and its stdout
#   PVMD_BIN  where the genuine-PVM programs are: PVM_PATH and
#             PVMBENCH_SPAWN_DIR point there, and at pvmd_stop every
#             process still running a program from there is killed
#   PIN       (array, may be empty) prefix that pins the pvmd, e.g.
#             (taskset -c 0 nice -n -15); its tasks inherit the affinity
# and may define note (progress line) and die (message, exit 1); the
# defaults print to stdout / stderr.
#
#   pvmd_start         start the pvmd and wait until it answers (else die)
#   pvmd_stop          halt it, kill what it left; idempotent, for EXIT traps
#   kill_exe_under DIR SIGKILL every process whose executable is under DIR
#
# PVMD_PID is the pvmd's pid while it runs, else empty.

PVMD_PID=""

declare -F note >/dev/null || note() { echo "== $*"; }
declare -F die >/dev/null || die() { echo "pvmd.sh: $*" >&2; exit 1; }

# Processes still running a program of ours (a pvmd that did not halt
# leaves its tasks; a run killed by its time limit may leave children):
# found by their executable, killed by pid.
kill_exe_under() {
    local dir=$1 p exe
    [ -n "$dir" ] || return 0
    for p in /proc/[0-9]*; do
        exe=$(readlink "$p/exe" 2>/dev/null) || continue
        case "$exe" in "$dir"/*) kill -KILL "${p#/proc/}" 2>/dev/null ;; esac
    done
}

pvmd_start() {
    local uid sock conf
    uid=$(id -u)
    [ -n "${PVMD_DIR:-}" ] && [ -n "${PVMD_BIN:-}" ] || die "pvmd_start: PVMD_DIR and PVMD_BIN must be set"
    export PVM_ROOT=/usr/lib/pvm3 PVM_ARCH=LINUX64 PVM_ALLOW_ROOT=1
    export PVM_TMP=$PVMD_DIR PVM_PATH="$PVMD_BIN:/usr/bin" PVMBENCH_SPAWN_DIR=$PVMD_BIN
    mkdir -p "$PVM_TMP" || die "cannot create $PVM_TMP"
    ( cd "$PVMD_DIR" && exec "${PIN[@]}" pvmd </dev/null >"$PVM_TMP/pvmd.stdout" 2>&1 ) &
    PVMD_PID=$!
    for _ in $(seq 1 50); do
        sock=$(cat "$PVM_TMP/pvmd.$uid" 2>/dev/null) && [ -S "$sock" ] && break
        sleep 0.1
    done
    conf=$(echo conf | timeout 15 pvm 2>&1)
    case "$conf" in *LINUX64*) ;; *) echo "$conf"; die "private pvmd not answering" ;; esac
    note "private pvmd $PVMD_PID, PVM_TMP=$PVM_TMP, affinity $(taskset -p "$PVMD_PID" | awk '{print $NF}')"
}

pvmd_stop() {
    [ -n "$PVMD_PID" ] || return 0
    # 'halt' kills every task and the pvmd (and the console: status 143);
    # only while it runs: the console starts a pvmd when it finds none
    kill -0 "$PVMD_PID" 2>/dev/null && ( echo halt | timeout 15 pvm ) >/dev/null 2>&1
    for _ in $(seq 1 50); do kill -0 "$PVMD_PID" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$PVMD_PID" 2>/dev/null; then
        kill -TERM "$PVMD_PID" 2>/dev/null; sleep 1
        kill -KILL "$PVMD_PID" 2>/dev/null
    fi
    wait "$PVMD_PID" 2>/dev/null
    kill_exe_under "$PVMD_BIN"
    note "pvmd $PVMD_PID halted"
    PVMD_PID=""
}
