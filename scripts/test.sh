#!/usr/bin/env bash
# test.sh - build UPVM twice (optimised, and with ASan+UBSan) and run the
# whole test suite under ctest in both builds, then the tests with threads
# under ThreadSanitizer, then check that UPVM builds everywhere (a Release
# build with gcc, where the install tests run; a build with clang), then
# the fuzz targets for a short run (scripts/fuzz.sh).  Every build has
# warnings as errors.  Exits non-zero on any failure, after printing the
# failing command's output.
#   JOBS=N          parallel ctest jobs (default: number of cores)
#   FUZZ_SECONDS=N  each fuzz target's run (default 20)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh # run_quiet: a command's output only when it fails
export UPVM_VM=off # the tests start their own jobs (and the VM tests their own VMs), whatever VM of yours is up (docs/console.md)
bash scripts/install-deps.sh
JOBS=${JOBS:-$(nproc)}

run_build() { # $1 build dir, rest: cmake options
    local dir=$1; shift
    run_quiet "configuring $dir/" cmake -S . -B "$dir" -G Ninja -DUPVM_BUILD_BENCH=ON -DUPVM_WERROR=ON "$@"
    cmake --build "$dir"
    (cd "$dir" && ctest --output-on-failure --timeout 300 -j "$JOBS")
}

echo "== optimised build (build/)"
run_build build -DCMAKE_BUILD_TYPE=RelWithDebInfo
echo "== ASan + UBSan build (build-asan/)"
run_build build-asan -DCMAKE_BUILD_TYPE=Debug -DUPVM_SANITIZE=ON
# ThreadSanitizer, on the tests whose jobs have threads: node 0's control
# socket thread (every job of several nodes), net_wake from other threads.
# Thread mode only: TSan's shadow memory takes the addresses process mode's
# window needs (docs/process-mode.md).
TSAN_TESTS='^test-net-(wait|full|storm|sendv|kill)$|^test-node-(launch|delhost|blocked|death-(watched|lost|lost-two|normal|sigint|sigterm|sighup|orphans|idle-node|crash|deadlock))$|^test-pvm-tasks-[23]nodes$|^test-pvm-(messages|groups)|^test-couple$|^test-cxx-(threads|ulps)$'
echo "== ThreadSanitizer build (build-tsan/): the tests with threads"
run_quiet "configuring build-tsan/" cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DUPVM_TSAN=ON -DUPVM_WERROR=ON -DUPVM_BUILD_BENCH=OFF
cmake --build build-tsan
(cd build-tsan && ctest --output-on-failure --timeout 300 -j "$JOBS" -R "$TSAN_TESTS")

# Builds that work everywhere: -O3 -DNDEBUG's warnings, and clang's.  The
# Release build installs itself and builds programs against the installed
# tree (tests/install); the clang build only builds (the suite runs above).
echo "== Release build with gcc (build-release/): everything, then the install tests"
run_quiet "configuring build-release/" cmake -S . -B build-release -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DUPVM_WERROR=ON -DUPVM_BUILD_BENCH=ON
run_quiet "building build-release/" cmake --build build-release
(cd build-release && ctest --output-on-failure --timeout 300 -L '^install$')
echo "== build with clang (build-clang/): everything"
run_quiet "configuring build-clang/" env CC=clang cmake -S . -B build-clang -G Ninja \
    -DUPVM_WERROR=ON -DUPVM_BUILD_BENCH=ON
run_quiet "building build-clang/" cmake --build build-clang

echo "== fuzzing, a short run (scripts/fuzz.sh 20: fuzz/, libFuzzer, clang)"
bash scripts/fuzz.sh "${FUZZ_SECONDS:-20}"
echo "== all tests passed (optimised, ASan+UBSan, TSan, the Release build's install tests), UPVM built with clang, and no fuzz target failed"
