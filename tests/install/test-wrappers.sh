#!/bin/bash
# test-wrappers.sh BUILD_DIR SOURCE_DIR - the compiler wrappers' conventions
# (the build tree's upvmcc, upvmc++ and upvmfort, made from the template
# the installed ones are made from: tools/upvmcc/upvmcc.in):
#   --help names every option the wrapper handles and the variables
#   UPVM_CC, UPVM_CXX, UPVM_FC; --version names the compiler;
#   -show/-showme print the command (with what the wrapper adds, and no
#   PVM library); -showme:compile and -showme:link print the flags;
#   -lpvm3 -lgpvm3 -lfpvm3 are accepted; -lpvmtrc, "-l pvmtrc" and a path
#   to genuine PVM's libpvm3.a are refused with a message naming them;
#   a missing compiler is said; each wrapper builds a program that runs,
#   also with -pie given.
set -u
[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2; exit 2; }
build=$(cd "$1" && pwd) || exit 2
src=$(cd "$2" && pwd) || exit 2
wrappers=$build/tools/upvmcc
template=$src/tools/upvmcc/upvmcc.in
export UPVM_VM=off
unset UPVM_CC UPVM_CXX UPVM_FC
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/upvm-wrappers.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

# The options the template's argument loop handles, from its case labels
# (e.g. "-show|-showme)"): each must be in every wrapper's --help.
mapfile -t options < <(sed -n '/^for a in "\$@"; do/,/^done/p' "$template" |
    grep -oE '^ +(-[-a-zA-Z:]+\|?)+\)' | tr -d ' )' | tr '|' '\n' | grep -v -- '-l\*\?$')
[ ${#options[@]} -ge 10 ] || fail "found only ${#options[@]} options in $template: ${options[*]}"

for w in upvmcc upvmc++ upvmfort; do
    help=$("$wrappers/$w" --help) || fail "$w --help exited $?"
    for o in "${options[@]}" -lpvm3 -lgpvm3 -lfpvm3 -lpvmtrc UPVM_CC UPVM_CXX UPVM_FC; do
        grep -q -F -- "$o" <<<"$help" || fail "$w --help does not mention $o"
    done
    "$wrappers/$w" --version | grep -q "^$w (UPVM [0-9.]*), using " || fail "$w --version: $("$wrappers/$w" --version)"
done
UPVM_CXX=my-c++ "$wrappers/upvmc++" --version | grep -q "using my-c++$" || fail "upvmc++ ignores UPVM_CXX"
UPVM_FC=my-fc "$wrappers/upvmfort" --version | grep -q "using my-fc$" || fail "upvmfort ignores UPVM_FC"
echo "ok: --help lists ${options[*]} and the variables; --version"

# -show: the whole command; the PVM libraries dropped, -shared last.
for s in -show -showme; do
    cmd=$("$wrappers/upvmcc" $s -O2 -o prog prog.c -lpvm3 -lgpvm3 -l fpvm3 -lm) || fail "upvmcc $s"
    for want in "-I'$src/include'" "-fPIC" "Scrt1.o'" "-Wl,-e,_start" "-Wl,-Bsymbolic-functions" \
                "-rdynamic" "upvm_start.o'" "-lupvm" "'-lm'"; do
        grep -q -F -- "$want" <<<"$cmd" || fail "upvmcc $s: no $want in: $cmd"
    done
    [[ $cmd == *" -shared" ]] || fail "upvmcc $s: -shared is not last: $cmd"
    ! grep -q -E -- "-l'?[gf]?pvm3" <<<"$cmd" || fail "upvmcc $s: a PVM library is passed on: $cmd"
done
cmd=$("$wrappers/upvmcc" -show -c prog.c)
! grep -q -e "-shared" -e "upvm_start" <<<"$cmd" || fail "upvmcc -show -c links: $cmd"
[ "$("$wrappers/upvmcc" -showme:compile)" = "-I'$src/include' -fPIC" ] ||
    fail "upvmcc -showme:compile: $("$wrappers/upvmcc" -showme:compile)"
"$wrappers/upvmcc" -showme:link | grep -q "upvm_start.o' .*-lupvm.* -shared$" ||
    fail "upvmcc -showme:link: $("$wrappers/upvmcc" -showme:link)"
echo "ok: -show, -showme, -showme:compile, -showme:link"

# Refused: PVM libraries libupvm does not provide, genuine PVM's files.
refused() { # $1: the argument that must be named; rest: the arguments
    local what=$1 out rc
    shift
    out=$("$wrappers/upvmcc" -o prog prog.c "$@" 2>&1)
    rc=$?
    [ $rc = 1 ] || fail "upvmcc $*: exited $rc, expected 1: $out"
    grep -q -F -- "upvmcc: $what" <<<"$out" || fail "upvmcc $*: the message does not name $what: $out"
}
refused -lpvmtrc -lpvmtrc
refused "-l pvmtrc" -l pvmtrc
refused /usr/lib/pvm3/lib/LINUX64/libpvm3.a /usr/lib/pvm3/lib/LINUX64/libpvm3.a
refused /opt/pvm3/lib/libgpvm3.so /opt/pvm3/lib/libgpvm3.so
out=$(UPVM_CC=/no/such/cc "$wrappers/upvmcc" -c prog.c 2>&1)
[ $? = 1 ] && grep -q "compiler '/no/such/cc' is not found.*UPVM_CC" <<<"$out" || fail "a missing compiler: $out"
echo "ok: -lpvmtrc, -l pvmtrc, libpvm3.a, libgpvm3.so refused by name; a missing compiler said"

# Each wrapper builds a program that runs (-pie given: overridden).
cat >hello.c <<'C'
#include <stdio.h>
#include <pvm3.h>
int main(void) { printf("C tid %s\n", pvm_mytid() > 0 ? "ok" : "bad"); pvm_exit(); return 0; }
C
cat >hello.cc <<'CXX'
#include <iostream>
#include <pvm3.h>
int main() { std::cout << "C++ tid " << (pvm_mytid() > 0 ? "ok" : "bad") << std::endl; pvm_exit(); }
CXX
printf '%s\n' 'program hello' '  integer :: i, s' '  s = 0' '  do i = 1, 10' '    s = s + i' \
    '  end do' "  print '(a,i0)', 'Fortran sum ', s" 'end program hello' >hello.f90
build_run() { # $1: wrapper, $2: source, $3: the line the program must print; rest: flags
    local w=$1 source=$2 want=$3 out
    shift 3
    out=$("$wrappers/$w" "$@" -o prog "$source" -lpvm3 2>&1) || fail "$w $* $source: $out"
    out=$(timeout 60 ./prog 2>&1) || fail "./prog ($w) exited $?: $out"
    [ "$out" = "$want" ] || fail "./prog ($w): expected '$want', got: $out"
    rm -f prog
}
build_run upvmcc hello.c "C tid ok" -O2
build_run upvmcc hello.c "C tid ok" -O2 -pie
build_run upvmc++ hello.cc "C++ tid ok" -O2
build_run upvmfort hello.f90 "Fortran sum $((10 * 11 / 2))" -O2
echo "ok: upvmcc (also with -pie), upvmc++ and upvmfort build programs that run"
echo PASS
