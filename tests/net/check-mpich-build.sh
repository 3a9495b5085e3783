#!/usr/bin/env bash
# check-mpich-build.sh - the MPI transport is not Open MPI's alone: build
# libupvm and test-net-mpi against MPICH in a temporary directory (with
# -DMPI_C_COMPILER=mpicc.mpich, as cmake/mpi.cmake says), check that
# src/net/mpi.c went in (its object; libmpich among test-net-mpi's libraries),
# and run test-net-mpi with 2 ranks under MPICH's mpiexec: as the hybrid
# (the default: the two ranks of this host share memory), and with
# UPVM_NET_LOCAL=mpi (every frame by MPI); then a UPVM job of two MPICH
# ranks (mpiexec.mpich -n 2 ./family, built with upvmcc: its plugin
# libupvm-mpi.so is MPICH's, PMI_SIZE says how many ranks).
#
#   tests/net/check-mpich-build.sh SOURCE_DIR
#
# Exit 77 (skipped) when MPICH is not installed (mpicc.mpich; Debian:
# apt-get install mpich libmpich-dev).  The directory goes, however this
# ends.
set -euo pipefail

src=${1:?usage: check-mpich-build.sh SOURCE_DIR}
if ! command -v mpicc.mpich >/dev/null 2>&1 || ! command -v mpiexec.mpich >/dev/null 2>&1; then
    echo "skipped: MPICH is not installed (mpicc.mpich, mpiexec.mpich: apt-get install mpich libmpich-dev)"
    exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/upvm-mpich.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

fail() { # $1: what failed, $2: the log to show
    echo "check-mpich-build: $1" >&2
    [ -n "${2:-}" ] && tail -40 "$2" >&2
    exit 1
}

cmake -S "$src" -B "$tmp/build" -G Ninja -DUPVM_BUILD_BENCH=OFF \
      -DMPI_C_COMPILER=mpicc.mpich >"$tmp/configure.log" 2>&1 ||
    fail "configuring with MPICH failed" "$tmp/configure.log"
grep -q "UPVM: MPI transport: yes (MPICH" "$tmp/configure.log" ||
    fail "configure did not take MPICH for the MPI transport" "$tmp/configure.log"
nice -n 10 cmake --build "$tmp/build" --target upvm upvm-mpi upvm_cmd upvm_start test-net-mpi \
    >"$tmp/build.log" 2>&1 ||
    fail "building against MPICH failed" "$tmp/build.log"
[ -f "$tmp/build/src/net/CMakeFiles/upvm_net_mpi.dir/mpi.c.o" ] ||
    fail "src/net/mpi.c was not compiled"
readelf -d "$tmp/build/tests/net/test-net-mpi" | grep -q 'NEEDED.*libmpich' ||
    fail "test-net-mpi does not link libmpich"
timeout 240 mpiexec.mpich -n 2 "$tmp/build/tests/net/test-net-mpi" >"$tmp/run.log" 2>&1 ||
    fail "test-net-mpi under MPICH (mpiexec.mpich -n 2) failed" "$tmp/run.log"
UPVM_NET_LOCAL=mpi timeout 240 mpiexec.mpich -n 2 "$tmp/build/tests/net/test-net-mpi" \
    >"$tmp/run-mpi.log" 2>&1 ||
    fail "test-net-mpi under MPICH with UPVM_NET_LOCAL=mpi failed" "$tmp/run-mpi.log"
readelf -d "$tmp/build/src/libupvm-mpi.so" | grep -q 'NEEDED.*libmpich' ||
    fail "the plugin libupvm-mpi.so does not link libmpich"
"$tmp/build/tools/upvmcc/upvmcc" -O1 -o "$tmp/family" "$src/tests/proc/family.c" \
    >"$tmp/upvmcc.log" 2>&1 || fail "upvmcc family.c failed" "$tmp/upvmcc.log"
(cd "$tmp" && timeout 120 mpiexec.mpich -n 2 ./family) >"$tmp/job.log" 2>&1 ||
    fail "a UPVM job of two MPICH ranks (mpiexec.mpich -n 2 ./family) failed" "$tmp/job.log"
grep -q '^OK$' "$tmp/job.log" || fail "the job of two MPICH ranks did not say OK" "$tmp/job.log"
[ "$(grep -c '^OK$' "$tmp/job.log")" = 1 ] || fail "the program ran more than once" "$tmp/job.log"
echo "ok: $(grep -o 'MPI transport: yes (MPICH[^)]*)' "$tmp/configure.log"); mpi.c built in; test-net-mpi passes with 2 ranks, hybrid and MPI alone; a UPVM job of 2 MPICH ranks runs"
