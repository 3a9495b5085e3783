#!/usr/bin/env bash
# fuzz.sh [SECONDS] [TARGET...] - build UPVM's libFuzzer targets (fuzz/,
# clang, ASan + UBSan) in build-fuzz/ and run each for SECONDS (default 20:
# the CI's short run; give 3600 for a long one), starting from the seeds
# in fuzz/corpus/<target> (copied: the run's new inputs stay in
# build-fuzz/corpus/, the repository's seeds are not touched).  Exits 1 if
# any target crashed, leaked or misbehaved; the input that did it is kept
# in build-fuzz/crashes/<target>/ and named on stderr, with the command
# that replays it.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-20}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then # every fuzz/fuzz_*.c
    for f in fuzz/fuzz_*.c; do targets+=("$(basename "$f" .c)"); done
fi
command -v clang >/dev/null || { echo "fuzz.sh: clang is missing (scripts/install-deps.sh)" >&2; exit 1; }

dir=build-fuzz
mkdir -p "$dir"
log=$dir/build.log
CC=clang cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DUPVM_FUZZ=ON \
    -DUPVM_BUILD_TESTS=OFF -DUPVM_BUILD_BENCH=OFF >"$log" 2>&1 ||
    { cat "$log"; echo "fuzz.sh: configuring $dir failed" >&2; exit 1; }
cmake --build "$dir" --target "${targets[@]}" >>"$log" 2>&1 ||
    { tail -50 "$log"; echo "fuzz.sh: building the fuzz targets failed" >&2; exit 1; }

failed=0
for t in "${targets[@]}"; do
    corpus=$dir/corpus/$t crashes=$dir/crashes/$t
    mkdir -p "$corpus" "$crashes"
    cp -n fuzz/corpus/"${t#fuzz_}"/* "$corpus"/ 2>/dev/null || true
    echo "== $t: ${secs} s from $(ls "$corpus" | wc -l) input(s)"
    if ! "$dir/fuzz/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$crashes/" -print_final_stats=1 "$corpus" >"$dir/$t.log" 2>&1; then
        tail -40 "$dir/$t.log"
        for a in "$crashes"/*; do
            [ -e "$a" ] && echo "fuzz.sh: $t failed on $a; replay: $dir/fuzz/$t $a" >&2
        done
        failed=1
    else
        grep -E "^stat::number_of_executed_runs|^Done" "$dir/$t.log" | tail -1
    fi
done
exit $failed
