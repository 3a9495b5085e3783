#!/bin/sh
# tls-compare.sh BUILD_DIR - a thread-local variable's cost in a process-mode
# ULP (general-dynamic, UPVM's __tls_get_addr) against a plain process
# (local-exec), and what writing the FS base costs (design notes §11).
# Medians of 21 samples (bench/tls/tls_bench.c).
set -eu
build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
src=$(cd "$(dirname "$0")" && pwd)/tls/tls_bench.c
tmp=$(mktemp -d /tmp/upvm-tls-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
"$build/tools/upvmcc/upvmcc" -O2 -o "$tmp/tls-ulp" "$src"
${CC:-cc} -O2 -DPLAIN -o "$tmp/tls-plain" "$src"
"$tmp/tls-plain"
(cd "$tmp" && UPVM_NODES=1 ./tls-ulp)
