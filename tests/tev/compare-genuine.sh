#!/usr/bin/env bash
# compare-genuine.sh - run tev-tracer (tests/tev/tev-tracer.c) under UPVM
# and under genuine PVM 3.4.6 (a private pvmd, Debian's pvm and pvm-dev)
# in every mode, and compare the events' shapes they print: markers, event
# ids and names, data ids, types and the values that do not depend on the
# run (tids and times are printed as names).  Both runs must also pass the
# program's own checks.
#
#   compare-genuine.sh UPVM_TRACER SOURCE [MODE...]
#
# Runs only when BENCH=1 (it starts a pvmd: ctest's default suite must not
# depend on one); otherwise, and without pvmd/pvm3.h, it says why and exits
# 77 (ctest's "skipped").  Exits 0 when every mode matched, 1 otherwise.
set -uo pipefail
upvm_tracer=$1 source=$2
shift 2
modes=("$@")
[ ${#modes[@]} -gt 0 ] || modes=(full buffered count time user nested misc reg)

if [ "${BENCH:-0}" != 1 ]; then
    echo "compare-genuine: SKIPPED: set BENCH=1 to compare with genuine PVM 3.4.6 (starts a pvmd)"
    exit 77
fi
if ! command -v pvmd >/dev/null || [ ! -f /usr/include/pvm3.h ]; then
    echo "compare-genuine: SKIPPED: genuine PVM is not installed (apt-get install pvm pvm-dev)"
    exit 77
fi

work=$(mktemp -d /tmp/tev-genuine.XXXXXX)
export PVM_ROOT=/usr/lib/pvm3 PVM_ARCH=LINUX64 PVM_ALLOW_ROOT=1 PVM_TMP=$work
export PVM_PATH="$work:/usr/bin"
pvmd_pid=""
cleanup() {
    if [ -n "$pvmd_pid" ]; then
        (echo halt | timeout 15 pvm) >/dev/null 2>&1
        kill -TERM "$pvmd_pid" 2>/dev/null
        wait "$pvmd_pid" 2>/dev/null
    fi
    rm -rf "$work"
}
trap cleanup EXIT

gcc -std=gnu11 -O1 -o "$work/tev-tracer" "$source" -lpvm3 || { echo "build against libpvm3 failed"; exit 1; }
(cd /tmp && exec pvmd </dev/null >"$work/pvmd.stdout" 2>&1) &
pvmd_pid=$!
# the pvmd is up when its socket file names a socket (pvm's own test)
for _ in $(seq 1 100); do
    [ -S "$(cat "$work/pvmd.$(id -u)" 2>/dev/null)" ] && break
    kill -0 "$pvmd_pid" 2>/dev/null || break
    timeout 1 tail -f /dev/null 2>/dev/null # a pause, without sleep
done
case "$(echo conf | timeout 15 pvm 2>&1)" in
*LINUX64*) ;;
*) echo "compare-genuine: the pvmd did not start"; cat "$work/pvmd.stdout"; exit 1 ;;
esac

status=0
for mode in "${modes[@]}"; do
    if ! timeout 60 "$work/tev-tracer" "$mode" >"$work/genuine.$mode" 2>"$work/genuine.$mode.err"; then
        echo "== $mode: genuine PVM failed the checks:"; cat "$work/genuine.$mode.err"; status=1
    fi
    if ! timeout 60 "$upvm_tracer" "$mode" >"$work/upvm.$mode" 2>"$work/upvm.$mode.err"; then
        echo "== $mode: UPVM failed the checks:"; cat "$work/upvm.$mode.err"; status=1
    fi
    if diff -u "$work/genuine.$mode" "$work/upvm.$mode" >"$work/diff.$mode"; then
        echo "== $mode: UPVM's events are genuine PVM's ($(grep -c '^[DRU] ' "$work/upvm.$mode") events)"
    else
        echo "== $mode: the events differ (- genuine PVM 3.4.6, + UPVM):"; cat "$work/diff.$mode"; status=1
    fi
done
exit $status
