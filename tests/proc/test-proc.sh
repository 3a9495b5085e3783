#!/bin/bash
# test-proc.sh BUILD_DIR - process-mode programs built with upvmcc.
set -u
build=$(cd "$1" && pwd)
tmp=$(mktemp -d /tmp/upvm-proc.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cc=$build/tools/upvmcc/upvmcc
src=$(dirname "$0")
fail() { echo "FAIL: $*"; exit 1; }

"$cc" -O2 -o "$tmp/family" "$src/family.c" || fail "upvmcc family.c"
"$cc" -O2 -o "$tmp/refused" "$src/refused.c" -lpthread || fail "upvmcc refused.c"
"$cc" -O2 -o "$tmp/coexist" "$src/coexist.c" || fail "upvmcc coexist.c"
"$cc" -O2 -o "$tmp/reuse" "$src/reuse.c" || fail "upvmcc reuse.c"
"$cc" -O2 -o "$tmp/autoerr" "$src/autoerr.c" || fail "upvmcc autoerr.c"
"$cc" -O2 -o "$tmp/aborts" "$src/aborts.c" || fail "upvmcc aborts.c"
"$cc" -show -o x x.c | grep -q -- "-fPIC" || fail "upvmcc -show"

# 1. the master started from the shell spawns copies of itself
out=$(cd "$tmp" && timeout 20 ./family 2>&1); rc=$?
echo "$out"
[ $rc -eq 0 ] || fail "family exited $rc"
grep -q '^OK$' <<<"$out" || fail "family did not report OK"
[ "$(grep -c 'atexit handler ran' <<<"$out")" = 3 ] || fail "atexit handlers: $out"

# 2. refused calls name the call and the ULP; exit() status is the job's
out=$(cd "$tmp" && timeout 20 ./refused 2>&1); rc=$?
echo "$out"
[ $rc -eq 5 ] || fail "refused exited $rc, expected 5"
for call in 'fork()' 'system()' 'execlp()' 'pthread_create()' 'signal()'; do
    grep -q "upvm: ULP [0-9]* (refused.*) called $call" <<<"$out" || fail "no report for $call"
done

# 3. upvm run -n starts SPMD copies
out=$(cd "$tmp" && timeout 20 "$build/tools/upvm/upvm" run -n 3 ./refused 2>&1); rc=$?
[ $rc -eq 5 ] || fail "upvm run exited $rc"
[ "$(grep -c 'refusals OK' <<<"$out")" = 3 ] || fail "upvm run -n 3: $out"

# 4. thread-mode tasks of a process-mode program share that copy's globals
out=$(cd "$tmp" && timeout 20 ./coexist 2>&1); rc=$?
echo "$out"
[ $rc -eq 0 ] || fail "coexist exited $rc"

# 4b. PvmAutoErr 2: the report, then exit(code) with the task's handlers
out=$(cd "$tmp" && timeout 20 ./autoerr 2>&1); rc=$?
[ $rc -eq 240 ] || fail "autoerr exited $rc, expected 240: $out"
grep -q "pvm_freebuf(): No such buffer" <<<"$out" || fail "autoerr: no report: $out"
grep -q "atexit handler ran" <<<"$out" || fail "autoerr: handler did not run: $out"
! grep -q "not reached" <<<"$out" || fail "autoerr: went on after the error"

# 4c. abort() ends only the task that calls it, with a line naming it
out=$(cd "$tmp" && timeout 20 ./aborts 2>&1); rc=$?
[ $rc -eq 0 ] || fail "aborts exited $rc: $out"
grep -q "upvm: ULP [0-9]* (aborts.*) called abort(): the ULP ends with status 134" <<<"$out" \
    || fail "no abort report: $out"
grep -q "master goes on" <<<"$out" || fail "the master did not go on: $out"

# 4d. upvm run's usage errors
upvm=$build/tools/upvm/upvm
out=$("$upvm" run 2>&1); [ $? -eq 2 ] && grep -q "no PROGRAM given" <<<"$out" || fail "upvm run without a program: $out"
out=$("$upvm" run -n 0 ./x 2>&1); [ $? -eq 2 ] && grep -q "from 1 to 1000000" <<<"$out" || fail "upvm run -n 0: $out"
out=$("$upvm" run --bogus ./x 2>&1); [ $? -eq 2 ] && grep -q "unknown option" <<<"$out" || fail "upvm run --bogus: $out"
out=$(cd "$tmp" && "$upvm" run ./nosuch 2>&1); [ $? -eq 1 ] && grep -q "no such program" <<<"$out" || fail "upvm run ./nosuch: $out"
out=$("$upvm" run --nodes 0 ./x 2>&1); [ $? -eq 2 ] && grep -q "from 1 to 32, or cores" <<<"$out" || fail "upvm run --nodes 0: $out"
out=$("$upvm" run --placement diagonal ./x 2>&1); [ $? -eq 2 ] && grep -q "block or cyclic" <<<"$out" || fail "upvm run --placement diagonal: $out"
# bad node settings in the environment: said once, and the job runs
ip=$build/examples/pvm-inner-product
out=$(UPVM_NODES=abc timeout 20 "$ip" 2>&1 >/dev/null); [ $? -eq 0 ] && grep -q 'UPVM_NODES=abc: not a number from 1 to 32 or cores' <<<"$out" || fail "UPVM_NODES=abc: $out"
out=$(UPVM_NODES=2 UPVM_PLACEMENT=diagonal timeout 20 "$ip" 2>&1 >/dev/null); [ $? -eq 0 ] || fail "UPVM_PLACEMENT=diagonal: $out"
[ "$(grep -c 'UPVM_PLACEMENT=diagonal: not cyclic or block; using cyclic' <<<"$out")" = 1 ] || fail "UPVM_PLACEMENT=diagonal said $(grep -c diagonal <<<"$out") times: $out"
out=$("$upvm" frobnicate 2>&1); [ $? -eq 2 ] && grep -q "unknown command" <<<"$out" || fail "upvm frobnicate: $out"
"$upvm" run --help | grep -q "usage: upvm run" || fail "upvm run --help"

# 4e. near the mapping limit a spawn is refused with the sysctl to run
out=$(cd "$tmp" && UPVM_MAP_LIMIT=1000 timeout 20 ./family 2>&1); rc=$?
[ $rc -ne 0 ] || fail "family ran under a tiny mapping limit"
grep -q "raise it, e.g. sudo sysctl -w vm.max_map_count=" <<<"$out" || fail "no map-limit advice: $out"

# 5. a reused slot starts from the program's initial state
out=$(cd "$tmp" && timeout 20 ./reuse 2>&1); rc=$?
echo "$out"
[ $rc -eq 0 ] || fail "reuse exited $rc"

# 5b. spawn finds programs on PVM_PATH
mkdir -p "$tmp/bin" && cp "$tmp/family" "$tmp/bin/fam"
out=$(cd / && PVM_PATH="$tmp/bin" timeout 20 "$build/tools/upvm/upvm" run fam 2>&1); rc=$?
[ $rc -eq 0 ] || fail "PVM_PATH search: $rc $out"

# 6. output tagged with the task's tid
out=$(cd "$tmp" && timeout 20 "$build/tools/upvm/upvm" run --tag-output ./family 2>&1); rc=$?
[ $rc -eq 0 ] || fail "tagged family exited $rc: $out"
grep -q '^\[t40001\] OK$' <<<"$out" || fail "master's line not tagged: $out"
grep -q '^\[t4000[234]\] child 4[234]: atexit handler ran$' <<<"$out" || fail "children's lines not tagged: $out"

# 7. the SPMD example of the README
"$cc" -O2 -o "$tmp/spmd-ring" "$src/../../examples/spmd-ring.c" || fail "upvmcc spmd-ring.c"
out=$(timeout 20 "$build/tools/upvm/upvm" run -n 8 "$tmp/spmd-ring" 2>&1); rc=$?
[ $rc -eq 0 ] && grep -q "token 36 (expected 36)" <<<"$out" || fail "spmd-ring: $rc $out"

# 8. a program not built with upvmcc is refused with the way out
cc -O2 -no-pie -o "$tmp/nopie" "$src/refused.c" -lpthread
out=$(cd "$tmp" && timeout 20 "$build/tools/upvm/upvm" run ./nopie 2>&1); rc=$?
[ $rc -ne 0 ] || fail "a non-PIE ran"
grep -q "upvmcc" <<<"$out" || fail "no advice to rebuild with upvmcc: $out"
echo ok
