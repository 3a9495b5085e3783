#!/bin/bash
# test-proc-scale.sh BUILD_DIR - 10,000 process-mode ULPs of one program in
# one node (within the default vm.max_map_count: five mappings per ULP).
set -u
build=$(cd "$1" && pwd)
tmp=$(mktemp -d /tmp/upvm-scale.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
src=$(cd "$(dirname "$0")/../.." && pwd)
"$build/tools/upvmcc/upvmcc" -O2 -o "$tmp/spawn_bench" "$src/bench/proc/spawn_bench.c" ||
    { echo "FAIL: upvmcc"; exit 1; }
out=$(cd "$tmp" && timeout 120 ./spawn_bench -n 10000 -r 1 2>&1); rc=$?
echo "$out" | tail -5
[ $rc -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
grep -q "^RESULT spawn n=10000 " <<<"$out" || { echo "FAIL: no result line"; exit 1; }
echo ok
