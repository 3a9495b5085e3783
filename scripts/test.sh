#!/usr/bin/env bash
# test.sh - build UPVM twice (optimised, and with ASan+UBSan) and run the
# whole test suite under ctest in both builds, then the fuzz targets for a
# short run (scripts/fuzz.sh).  Exits non-zero on any failure.
#   JOBS=N          parallel ctest jobs (default: number of cores)
#   FUZZ_SECONDS=N  each fuzz target's run (default 20)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
JOBS=${JOBS:-$(nproc)}

run_build() { # $1 build dir, rest: cmake options
    local dir=$1; shift
    cmake -S . -B "$dir" -G Ninja -DUPVM_BUILD_BENCH=ON -DUPVM_WERROR=ON "$@" >/dev/null
    cmake --build "$dir"
    (cd "$dir" && ctest --output-on-failure --timeout 300 -j "$JOBS")
}

echo "== optimised build (build/)"
run_build build -DCMAKE_BUILD_TYPE=RelWithDebInfo
echo "== ASan + UBSan build (build-asan/)"
run_build build-asan -DCMAKE_BUILD_TYPE=Debug -DUPVM_SANITIZE=ON
echo "== fuzzing, a short run (scripts/fuzz.sh 20: fuzz/, libFuzzer, clang)"
bash scripts/fuzz.sh "${FUZZ_SECONDS:-20}"
echo "== all tests passed in both builds, and no fuzz target failed"
