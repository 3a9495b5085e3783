#!/bin/bash
# bench/svm-faults.sh BUILD_DIR [PAGES] - what one shared-memory fault
# costs (docs/benchmarks.md, "Shared virtual memory: one fault"), in one
# run: the floors (bench/svm/fault-floor.c: a page copied between two
# processes through shared memory with polling, and a fault resolved in
# its own handler), then bench/svm/faults.c -- a read fault served by
# another node and a write fault invalidating k = 0, 1, 2, 4 copies -- for
# every manager and fault mechanism, 7 nodes, default settings otherwise.
# The faults' medians are printed beside their ratio to the copy floor.
set -u
build=$(cd "${1:?usage: $0 BUILD_DIR [PAGES]}" && pwd) || exit 2
pages=${2:-1000}
floor=$("$build/bench/fault-floor" -r 5 2>&1) || { echo "$floor"; exit 1; }
echo "$floor"
copy=$(echo "$floor" | awk -F'|' '/copy \(the floor\)/ {gsub(/ /, "", $3); print $3}')
echo
if [ "$(nproc)" -lt 2 ]; then
    # two processes polling on one CPU: the copy waits out the spinner's
    # time slice (milliseconds): no floor, and no ratio to it
    echo "floor: none on one CPU (the polling copy takes a time slice: ${copy} µs)"
    copy=0
else
    echo "floor: a 4 KiB page between two processes, ${copy} µs (median)"
fi
echo
echo "| manager | mechanism | read | / floor | write k=0 | k=1 | k=2 | k=4 | local |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
for m in central fixed dynamic; do
    for f in uffd mprotect; do
        out=$(UPVM_SVM_MANAGER=$m UPVM_SVM_FAULT=$f UPVM_NODES=7 timeout 300 \
              "$build/bench/svm-faults" -p "$pages" 2>&1) || { echo "$out"; exit 1; }
        read=$(echo "$out" | awk '/^read / {print $3}')
        w0=$(echo "$out" | awk '/^write k=0/ {print $4}')
        w1=$(echo "$out" | awk '/^write k=1/ {print $4}')
        w2=$(echo "$out" | awk '/^write k=2/ {print $4}')
        w4=$(echo "$out" | awk '/^write k=4/ {print $4}')
        loc=$(echo "$out" | awk '/^local / {print $3}')
        ratio=$(awk -v a="$read" -v b="$copy" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "-" }')
        echo "| $m | $f | $read | $ratio | $w0 | $w1 | $w2 | $w4 | $loc |"
    done
done
echo
echo "(µs per fault, medians of $pages faults; $(nproc) CPUs, 7 nodes)"
