#!/bin/bash
# bench/lazy-compare.sh BUILD_DIR - lazy against eager migration (issue 22;
# docs/benchmarks.md, "Lazy migration"), in one run: a process-mode task
# with a heap of SIZES MiB (bench/migrate/lazy-bench.c, built here with the
# build's upvmcc) moves itself between two nodes R times each way, eagerly
# (upvm_migrate: the peer) and lazily (upvm_migrate_lazy), the latter with
# the background push on (the default) and off (pages come only when
# touched).  Default invocation otherwise: `upvm run --nodes 2`, nothing
# pinned.  Prints per size the medians: time to resume on the other node,
# MiB carried before it ran, its first sweep over its heap there, and ready
# (resume + first sweep), with the ratio lazy / eager.
#   SIZES="16 64 256"  R=5  (env)
set -u
build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd) || exit 2
here=$(cd "$(dirname "$0")" && pwd)
sizes=${SIZES:-16 64 256}
reps=${R:-5}
work=$(mktemp -d /tmp/upvm-lazy-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
prog=${LAZY_BENCH:-}
if [ -z "$prog" ]; then
    prog=$work/lazy-bench
    "$build/tools/upvmcc/upvmcc" -O2 -o "$prog" "$here/migrate/lazy-bench.c" ||
        { echo "lazy-compare: upvmcc could not build lazy-bench.c"; exit 1; }
fi
field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p"; }
run() { # SIZE MODE [env...]: the result line
    local size=$1 mode=$2
    shift 2
    (cd "$work" && env "$@" timeout 600 "$build/tools/upvm/upvm" run --nodes 2 "$prog" \
        "$size" "$mode" "$reps") 2>&1 | grep '^lazy-bench' || echo "lazy-bench FAILED"
}
echo "| heap MiB | move | resume ms | moved MiB | first sweep ms | warm sweep ms | ready ms | resume / eager | ready / eager |"
echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|"
for s in $sizes; do
    eager=$(run "$s" eager)
    er=$(echo "$eager" | field resume_ms) ey=$(echo "$eager" | field ready_ms)
    for variant in eager lazy lazy-nopush; do
        case $variant in
        eager) line=$eager ;;
        lazy) line=$(run "$s" lazy) ;;
        lazy-nopush) line=$(run "$s" lazy UPVM_MIGRATE_PUSH=off) ;;
        esac
        r=$(echo "$line" | field resume_ms) y=$(echo "$line" | field ready_ms)
        printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$s" "$variant" "$r" \
            "$(echo "$line" | field moved_mib)" "$(echo "$line" | field sweep_ms)" \
            "$(echo "$line" | field warm_ms)" "$y" \
            "$(awk -v a="$r" -v b="$er" 'BEGIN { printf "%.3f", a / b }')" \
            "$(awk -v a="$y" -v b="$ey" 'BEGIN { printf "%.2f", a / b }')"
    done
done
echo
echo "(medians of $reps moves each way; $(nproc) CPUs; upvm run --nodes 2, default settings)"
