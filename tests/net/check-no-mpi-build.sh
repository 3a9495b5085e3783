#!/usr/bin/env bash
# check-no-mpi-build.sh - MPI is optional: a build with -DUPVM_WITH_MPI=OFF
# says so at configure time, has no plugin, runs a job of one host as
# before, and refuses clearly (never K separate jobs) when a launcher
# starts it as one rank of several, or when asked for several hosts.
#
#   tests/net/check-no-mpi-build.sh SOURCE_DIR
#
# The launcher is faked with its variables (OMPI_COMM_WORLD_SIZE/RANK):
# the build has no MPI to find out otherwise.  The directory goes, however
# this ends.
set -euo pipefail

src=${1:?usage: check-no-mpi-build.sh SOURCE_DIR}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/upvm-nompi.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

fail() { # $1: what failed, $2: the log to show
    echo "check-no-mpi-build: $1" >&2
    [ -n "${2:-}" ] && tail -40 "$2" >&2
    exit 1
}

cmake -S "$src" -B "$tmp/build" -G Ninja -DUPVM_BUILD_BENCH=OFF -DUPVM_WITH_MPI=OFF \
      >"$tmp/configure.log" 2>&1 || fail "configuring without MPI failed" "$tmp/configure.log"
grep -q "UPVM: MPI transport: no (UPVM_WITH_MPI=OFF)" "$tmp/configure.log" ||
    fail "configure did not say the MPI transport is out" "$tmp/configure.log"
nice -n 10 cmake --build "$tmp/build" --target upvm upvm_cmd upvm_start >"$tmp/build.log" 2>&1 ||
    fail "building without MPI failed" "$tmp/build.log"
[ ! -e "$tmp/build/src/libupvm-mpi.so" ] || fail "a plugin was built without MPI"
"$tmp/build/tools/upvmcc/upvmcc" -O1 -o "$tmp/family" "$src/tests/proc/family.c" \
    >"$tmp/upvmcc.log" 2>&1 || fail "upvmcc family.c failed" "$tmp/upvmcc.log"
(cd "$tmp" && timeout 60 ./family) >"$tmp/job.log" 2>&1 || fail "a job of one host failed" "$tmp/job.log"
grep -q '^OK$' "$tmp/job.log" || fail "a job of one host did not say OK" "$tmp/job.log"
set +e
(cd "$tmp" && OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0 timeout 60 ./family) >"$tmp/rank.log" 2>&1
rc=$?
set -e
[ $rc -eq 2 ] || fail "rank 0 of 2 exited $rc, expected 2" "$tmp/rank.log"
grep -q "built without its MPI transport" "$tmp/rank.log" || fail "rank 0 did not say why" "$tmp/rank.log"
! grep -q '^OK$' "$tmp/rank.log" || fail "rank 0 of 2 ran the program" "$tmp/rank.log"
set +e
"$tmp/build/tools/upvm/upvm" run --hosts a,b "$tmp/family" >"$tmp/hosts.log" 2>&1
rc=$?
set -e
[ $rc -eq 1 ] && grep -q "built without its MPI transport" "$tmp/hosts.log" ||
    fail "upvm run --hosts without MPI: exit $rc" "$tmp/hosts.log"
echo "ok: configure says the MPI transport is out; no plugin; a job of one host runs; ranks and --hosts are refused with the reason"
