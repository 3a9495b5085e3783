#!/bin/bash
# test-node-cpus.sh BUILD_DIR CASE - a job starts one node per CPU it may
# use: the affinity mask (taskset) and a cgroup CPU quota, not the online
# cores (src/util/cpus.c).
#   affinity  under taskset -c <one cpu>: one node; unrestricted: one per
#             CPU of the mask (at most 32)
#   quota     in a cgroup of its own with a quota of one CPU (v2 cpu.max,
#             else v1 cpu.cfs_quota_us): one node.  Needs root and a
#             writable cpu controller, else skipped (77); the cgroup is
#             removed however the test ends.
set -u
build=$(cd "$1" && pwd)
case=$2
prog=$build/tests/node/nodecount
fail() { echo "FAIL ($case): $*"; exit 1; }
[ -x "$prog" ] || fail "no $prog: build first (cmake --build $build)"
unset UPVM_NODES
nodes() { timeout 30 "$@" | sed -n 's/^nodes //p'; }

case $case in
affinity)
    first=$(taskset -pc $$ | sed 's/.*: //; s/[,-].*//')
    got=$(nodes taskset -c "$first" "$prog")
    [ "$got" = 1 ] || fail "taskset -c $first: $got nodes, expected 1"
    want=$(nproc); [ "$want" -gt 32 ] && want=32
    got=$(nodes "$prog")
    [ "$got" = "$want" ] || fail "unrestricted: $got nodes, expected $want (nproc)"
    ;;
quota)
    [ "$(id -u)" = 0 ] || { echo "SKIPPED: not root: cannot make a cgroup"; exit 77; }
    name=upvm-test-cpus-$$
    if grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
        dir=/sys/fs/cgroup/$name; limit() { echo "100000 100000" > "$dir/cpu.max"; }
    elif [ -d /sys/fs/cgroup/cpu ]; then
        dir=/sys/fs/cgroup/cpu/$name; limit() { echo 100000 > "$dir/cpu.cfs_quota_us"; }
    else
        echo "SKIPPED: no writable cgroup cpu controller"; exit 77
    fi
    mkdir "$dir" 2>/dev/null || { echo "SKIPPED: cannot create $dir"; exit 77; }
    trap 'rmdir "$dir" 2>/dev/null' EXIT
    limit || fail "cannot set a quota in $dir"
    got=$(nodes sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2"' sh "$dir" "$prog")
    [ "$got" = 1 ] || fail "quota of one CPU: $got nodes, expected 1"
    ;;
*) echo "usage: $0 BUILD_DIR {affinity|quota}" >&2; exit 2 ;;
esac
echo PASS
