#!/usr/bin/env bash
# demo.sh - build UPVM and run the demo job.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh # run_quiet: a command's output only when it fails
export UPVM_VM=off # the demo jobs are jobs of their own, even while a VM of yours is up (docs/console.md)
bash scripts/install-deps.sh
run_quiet "configuring build/" cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
run_quiet "building build/" cmake --build build
./build/examples/demo "$@"
echo
echo "== a PVM job: the M-PVM paper's inner product, master + 3 slaves as ULPs"
./build/examples/pvm-inner-product
echo
echo "== an unmodified SPMD PVM program built with upvmcc: 8 process-mode ULPs"
run_quiet "upvmcc spmd-ring.c" ./build/tools/upvmcc/upvmcc -O2 -o build/examples/spmd-ring examples/spmd-ring.c
exec ./build/tools/upvm/upvm run -n 8 ./build/examples/spmd-ring
