#!/usr/bin/env bash
# bench/run.sh - build UPVM optimised and run every benchmark, each side by
# side with its peer measured in the same run, pinned to one core.
#   REPS=N   timed repetitions per row (default 7; medians are printed)
#   QUICK=1  fewer iterations, creation only up to 100,000 ULPs
#   CPU=N    the core to pin to (default 0)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build >/dev/null
REPS=${REPS:-7}
CPU=${CPU:-0}
args=(-r "$REPS")
[ "${QUICK:-0}" = 1 ] && args+=(-q)
prio=()
if [ "$(id -u)" = 0 ]; then prio=(nice -n -15); fi
echo "== bench_core (ULP core vs the OS), pinned to cpu $CPU"
"${prio[@]}" taskset -c "$CPU" ./build/bench/bench_core "${args[@]}"
echo "== bench_heap (per-ULP heap vs glibc malloc), pinned to cpu $CPU"
"${prio[@]}" taskset -c "$CPU" ./build/bench/bench_heap "${args[@]}"
echo "== bench_net (node-to-node shm transport vs a pipe, across processes; pins cpu 0 and 1 itself)"
"${prio[@]}" ./build/bench/bench_net -r "$REPS"
