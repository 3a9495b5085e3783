#!/bin/bash
# use-install.sh PREFIX TMP [DEBROOT] - test-install.sh's second half, run
# with the source and build trees hidden: builds tests/install's programs
# (copied to TMP/sources) against the UPVM installed in PREFIX, each way
# in a folder of its own, and runs them from a third folder.  DEBROOT: the
# .deb unpacked there, its upvmcc used too.
set -u
prefix=$1
tmp=$2
debroot=${3:-}
srcs=$tmp/sources
fail() { echo "FAIL: $*"; exit 1; }
export PATH=$prefix/bin:$PATH UPVM_VM=off # a job of its own, whatever VM is up
unset LD_LIBRARY_PATH UPVM_MPI_PLUGIN PKG_CONFIG_PATH CMAKE_PREFIX_PATH

run_logged() { # $1: what, rest: the command; its output shown on failure
    local what=$1
    shift
    "$@" >"$tmp/log" 2>&1 || { cat "$tmp/log"; fail "$what: $*"; }
}

# The master's output: each slave's square, counted on its own globals.
check_master() { # $1: the folder holding master and slave, $2: how built
    local run=$tmp/run-$2 out i
    mkdir -p "$run" && cp "$1/master" "$1/slave" "$run/" || fail "$2: no master and slave in $1"
    out=$(cd "$run" && timeout 120 ./master 2>&1) || fail "$2: ./master exited $?: $out"
    for i in 1 2 3; do
        grep -qx "master: slave $i squared $i: $((i * i)) (its own globals: call 1)" <<<"$out" ||
            fail "$2: ./master: no answer of slave $i in: $out"
    done
    echo "ok ($2): ./master and 3 slaves"
}

mkdir -p "$tmp/use" && cd "$tmp/use" || exit 1

echo "== (a) upvmcc"
mkdir a && cd a || exit 1
[ "$(command -v upvmcc)" = "$prefix/bin/upvmcc" ] || fail "upvmcc is not the installed one: $(command -v upvmcc)"
run_logged "upvmcc master" upvmcc -O2 -o master "$srcs/master.c" -lpvm3
run_logged "upvmcc slave" upvmcc -O2 -o slave "$srcs/slave.c" -lgpvm3 -lpvm3
cd .. && check_master "$tmp/use/a" upvmcc

echo "== (b) upvmc++"
mkdir b && cd b || exit 1
run_logged "upvmc++" upvmc++ -O2 -o cxxprog "$srcs/cxxprog.cc"
mkdir "$tmp/run-cxx" && cp cxxprog "$tmp/run-cxx/" && cd "$tmp/run-cxx" || exit 1
out=$(timeout 120 upvm run -n 3 ./cxxprog 2>&1) || fail "upvm run -n 3 ./cxxprog exited $?: $out"
want="cxx: one of 3 siblings, global object constructed 1 time(s), vector sum $((10 * 11 / 2)), caught $((10 * 11 / 2))"
[ "$(grep -cx -F "$want" <<<"$out")" = 3 ] || fail "upvm run -n 3 ./cxxprog: expected 3 lines '$want', got: $out"
echo "ok (upvmc++): upvm run -n 3 ./cxxprog"
cd "$tmp/use" || exit 1

echo "== (b2) upvmfort"
mkdir b2 && cd b2 || exit 1
run_logged "upvmfort fmaster" upvmfort -O2 -o fmaster "$srcs/fmaster.f90" -lfpvm3 -lpvm3
run_logged "upvmfort fslave" upvmfort -O2 -o fslave "$srcs/fslave.f90" -lfpvm3
mkdir "$tmp/run-fortran" && cp fmaster fslave "$tmp/run-fortran/" && cd "$tmp/run-fortran" || exit 1
out=$(timeout 120 ./fmaster 2>&1) || fail "./fmaster exited $?: $out"
for i in 1 2 3; do
    grep -qx "fmaster: slave squared $i: $((i * i))" <<<"$out" || fail "./fmaster: no square of $i in: $out"
done
echo "ok (upvmfort): ./fmaster and 3 fslave"
cd "$tmp/use" || exit 1

echo "== (c) pkg-config"
command -v pkg-config >/dev/null || fail "no pkg-config: scripts/install-deps.sh installs it (pkgconf)"
mkdir c && cd c || exit 1
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(echo "$prefix"/lib*/pkgconfig)
cflags=$(pkg-config --cflags upvm) && libs=$(pkg-config --libs upvm) || fail "pkg-config upvm"
for p in master slave; do
    run_logged "cc -c $p.c \$(pkg-config --cflags upvm)" cc -O2 $cflags -c "$srcs/$p.c" -o $p.o
    run_logged "cc $p.o \$(pkg-config --libs upvm)" cc -o $p $p.o $libs
done
unset PKG_CONFIG_PATH
cd .. && check_master "$tmp/use/c" pkg-config

echo "== (d) CMake, find_package(UPVM)"
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
run_logged "cmake configure" cmake -S "$srcs/project" -B d "${gen[@]}" -DCMAKE_PREFIX_PATH="$prefix"
run_logged "cmake --build" cmake --build d
check_master "$tmp/use/d" cmake

if [ -n "$debroot" ]; then
    echo "== (e) the .deb, unpacked in $debroot"
    mkdir e && cd e || exit 1
    run_logged "the .deb's upvmcc master" "$debroot/usr/bin/upvmcc" -O2 -o master "$srcs/master.c"
    run_logged "the .deb's upvmcc slave" "$debroot/usr/bin/upvmcc" -O2 -o slave "$srcs/slave.c"
    "$debroot/usr/bin/upvmcc" -show -c x.c | grep -q -F -- "-I'$debroot/usr/include/upvm'" ||
        fail "the .deb's upvmcc does not name its own headers: $("$debroot/usr/bin/upvmcc" -show -c x.c)"
    cd .. && check_master "$tmp/use/e" deb
fi

# The man pages, through man's own lookup (its .so links too).
if command -v man >/dev/null; then
    for page in upvm upvmc++ upvm_join; do
        MANPATH=$prefix/share/man man -P cat "$page" 2>/dev/null | grep -q -i "${page}" ||
            fail "man $page: not found in $prefix/share/man"
    done
    echo "ok: man upvm, man upvmc++, man upvm_join"
fi
