# vm.sh - source me: start_vm / stop_vm for a private headless pvmd
# (same recipe as /work/shared/baseline/pvm/run-baseline.sh)
export PVM_ROOT=/usr/lib/pvm3 PVM_ARCH=LINUX64 PVM_ALLOW_ROOT=1
PVMD_PID=""
start_vm() {
    PVM_TMP=$(mktemp -d /tmp/pvmprobe.XXXXXX) || return 1
    export PVM_TMP
    export PVM_PATH="${PROBE_BIN:-/tmp}:/usr/bin"
    ( cd /tmp && exec pvmd </dev/null >"$PVM_TMP/pvmd.stdout" 2>&1 ) &
    PVMD_PID=$!
    for _ in $(seq 1 50); do
        [ -S "$(cat "$PVM_TMP/pvmd.$(id -u)" 2>/dev/null)" ] && break
        sleep 0.1
    done
    kill -0 "$PVMD_PID" 2>/dev/null || { cat "$PVM_TMP/pvmd.stdout"; return 1; }
    echo "== pvmd started: pid $PVMD_PID PVM_TMP=$PVM_TMP" >&2
}
stop_vm() {
    [ -n "$PVMD_PID" ] || return 0
    if kill -0 "$PVMD_PID" 2>/dev/null; then
        ( echo halt | timeout 15 pvm ) >/dev/null 2>&1
        for _ in $(seq 1 50); do kill -0 "$PVMD_PID" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$PVMD_PID" 2>/dev/null; then
            kill -TERM "$PVMD_PID" 2>/dev/null; sleep 1
            kill -0 "$PVMD_PID" 2>/dev/null && kill -KILL "$PVMD_PID" 2>/dev/null
        fi
    fi
    wait "$PVMD_PID" 2>/dev/null
    echo "== pvmd $PVMD_PID stopped" >&2
    [ -n "${KEEP_LOG:-}" ] && cp "$PVM_TMP/pvml.$(id -u)" "$KEEP_LOG" 2>/dev/null
    rm -rf "$PVM_TMP"
    PVMD_PID=""
}
