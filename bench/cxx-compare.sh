#!/usr/bin/env bash
# cxx-compare.sh - what a C++ program's per-ULP exception state costs a
# switch (docs/cxx.md): bench/cxx/switch.c built as C (the peer: nothing
# registered) and as C++ (libstdc++ in the process: the exception globals
# saved and restored on every switch), run alternately, by default and
# under `taskset -c 0`.  Prints each run's median and, per invocation, the
# median of the medians and the C++/C ratio.
#   BUILD=dir   UPVM build directory (default build)
#   ROUNDS=N    alternating rounds (default 5)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
ROUNDS=${ROUNDS:-5}
work=$(mktemp -d /tmp/upvm-cxx-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
link=(-I"$ROOT/include" -L"$BUILD/src" -lupvm -Wl,-rpath,"$BUILD/src")
gcc -O2 -x c "$ROOT/bench/cxx/switch.c" -x none "${link[@]}" -o "$work/switch-c"
g++ -O2 -x c++ "$ROOT/bench/cxx/switch.c" -x none "${link[@]}" -o "$work/switch-cxx"

median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
ns_of() { sed -n 's/.*: \([0-9.]*\) ns per switch.*/\1/p'; }

for how in default "taskset -c 0"; do
    run=()
    [ "$how" = default ] || run=(taskset -c 0)
    : >"$work/c" && : >"$work/cxx"
    for ((r = 1; r <= ROUNDS; r++)); do
        UPVM_VM=off "${run[@]}" "$work/switch-c" | ns_of >>"$work/c"
        UPVM_VM=off "${run[@]}" "$work/switch-cxx" | ns_of >>"$work/cxx"
    done
    c=$(median <"$work/c")
    x=$(median <"$work/cxx")
    printf '%-14s C %6.2f ns  C++ %6.2f ns  C++/C %.2f  (medians of %d runs; runs C: %s; C++: %s)\n' \
        "$how" "$c" "$x" "$(awk -v x="$x" -v c="$c" 'BEGIN {print x / c}')" "$ROUNDS" "$(tr '\n' ' ' <"$work/c")" \
        "$(tr '\n' ' ' <"$work/cxx")"
done
