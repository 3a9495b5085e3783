#!/bin/bash
# test-install.sh BUILD_DIR SOURCE_DIR - `cmake --install` of this build into
# a fresh prefix, then PVM programs built and run against the installed
# tree only, as a user would (docs/install.md):
#   (a) a C master/slave program built with the installed upvmcc, ./master
#   (b) a C++ program (iostream, string, vector, a global object) built
#       with upvmc++, upvm run -n 3 ./cxxprog
#   (b2) a Fortran master/slave (fpvm3.h, pvmf* routines) built with
#       upvmfort, ./fmaster
#   (c) the master/slave built with pkg-config's flags (PKG_CONFIG_PATH)
#   (d) the master/slave built by a CMake project with find_package(UPVM)
#   (e) the master/slave built with upvmcc from the .deb (cpack -G DEB),
#       unpacked in another folder: an installed tree may be moved
# each built in a folder of its own and run from a third one.  Nothing of
# the source or build tree may be used: as root, the build-and-run part
# (use-install.sh) runs under `unshare -m` with an empty tmpfs over both;
# and no installed script, pkg-config or CMake file, nor any installed
# ELF file's RUNPATH, may name either.  The temporary folder goes however
# the test ends.
set -u
[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2; exit 2; }
build=$(cd "$1" && pwd -P) || exit 2
src=$(cd "$2" && pwd -P) || exit 2
here=$src/tests/install
cmake=${CMAKE_COMMAND:-cmake}
fail() { echo "FAIL: $*"; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/upvm-install.XXXXXX") || exit 1
tmp=$(cd "$tmp" && pwd -P)
trap 'rm -rf "$tmp"' EXIT
case $tmp/ in "$src"/* | "$build"/*) fail "the temporary folder $tmp is inside the source or build tree: set TMPDIR elsewhere" ;; esac
prefix=$tmp/prefix

# A command's output, shown only when it fails.
run_logged() { # $1: what, rest: the command
    local what=$1
    shift
    "$@" >"$tmp/log" 2>&1 || { cat "$tmp/log"; fail "$what: $*"; }
}

echo "== cmake --install $build --prefix $prefix"
run_logged "cmake --install" "$cmake" --install "$build" --prefix "$prefix"

# What must be there: the commands, every header of include/, the library
# with its soname, the start-up object, pkg-config, CMake and man pages.
for f in bin/upvm bin/upvmcc bin/upvmc++ bin/upvmfort lib*/libupvm.so lib*/libupvm.so.0 \
         lib*/upvm/upvm_start.o lib*/pkgconfig/upvm.pc lib*/cmake/UPVM/UPVMConfig.cmake \
         lib*/cmake/UPVM/UPVMConfigVersion.cmake share/man/man1/upvm.1 share/man/man1/upvmcc.1 \
         share/man/man1/upvmc++.1 share/man/man1/upvmfort.1 share/man/man3/upvm_create.3 \
         share/doc/upvm/LICENSE; do
    compgen -G "$prefix/$f" >/dev/null || fail "not installed: $f"
done
for h in "$src"/include/*.h; do
    [ -f "$prefix/include/upvm/${h##*/}" ] || fail "header not installed: include/upvm/${h##*/}"
done
readelf -d "$prefix"/lib*/libupvm.so.0 | grep -q 'SONAME.*\[libupvm\.so\.0\]' ||
    fail "libupvm.so.0 has no soname libupvm.so.0"

# No installed file may name the source or build tree: ELF files by their
# RUNPATH (their debug information names the sources, which is fine), the
# others (scripts, upvm.pc, the CMake files) anywhere.
is_elf() { [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }
while IFS= read -r -d '' f; do
    if is_elf "$f"; then
        rp=$(readelf -d "$f" | grep -E 'RUNPATH|RPATH')
        case $rp in *"$src"* | *"$build"*) fail "${f#$prefix/} has a RUNPATH into the source or build tree: $rp" ;; esac
    elif grep -q -F -e "$src" -e "$build" "$f"; then
        fail "${f#$prefix/} names the source or build tree: $(grep -n -F -e "$src" -e "$build" "$f" | head -3)"
    fi
done < <(find "$prefix" -type f -print0)
echo "ok: installed files, no RUNPATH or script into $src or $build"

# The sources the user builds, copied out before the trees are hidden.
mkdir -p "$tmp/sources/project"
cp "$here"/master.c "$here"/slave.c "$here"/cxxprog.cc "$here"/fmaster.f90 "$here"/fslave.f90 \
   "$here"/use-install.sh "$tmp/sources/" &&
    cp "$here"/project/CMakeLists.txt "$tmp/sources/project/" || fail "copying the test's sources"

# (e)'s .deb, made from this build and unpacked elsewhere.
debroot=""
if command -v dpkg-deb >/dev/null && command -v cpack >/dev/null &&
    [ -f "$build/CPackConfig.cmake" ]; then
    run_logged "cpack -G DEB" cpack -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/deb"
    debroot=$tmp/debroot
    run_logged "dpkg-deb -x" dpkg-deb -x "$(ls "$tmp"/deb/*.deb)" "$debroot"
else
    echo "note: no dpkg-deb or cpack: the .deb part (e) is left out"
fi

# Build and run, with the source and build trees hidden when we may.
phase=(bash "$tmp/sources/use-install.sh" "$prefix" "$tmp" "$debroot")
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
    echo "== under unshare -m, with an empty tmpfs over $build and $src"
    unshare -m bash -c 'mount -t tmpfs upvm-hidden "$1" && mount -t tmpfs upvm-hidden "$2" &&
                        cd / && shift 2 && exec "$@"' _ "$build" "$src" "${phase[@]}" ||
        fail "building or running against the installed tree (above)"
else
    echo "note: not root (or unshare -m not permitted): the trees stay visible;" \
         "the RUNPATH and script checks above still hold"
    (cd / && "${phase[@]}") || fail "building or running against the installed tree (above)"
fi
echo "PASS"
