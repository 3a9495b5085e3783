#!/usr/bin/env bash
# test-gdb.sh TARGET GDB_SCRIPT - the gdb extension lists a node's ULPs with
# their states and backtraces a suspended one through the context switch.
set -euo pipefail
target=$1 script=$2
if ! command -v gdb >/dev/null; then echo "gdb not installed: skipped"; exit 77; fi
out=$(gdb -nx -batch -ex "source $script" -ex "break all_parked" -ex run \
          -ex "upvm ulps" -ex "upvm bt 2" -ex "upvm bt 1" -ex continue "$target" 2>&1)
echo "$out"
expect() { grep -qE "$1" <<<"$out" || { echo "FAILED: expected /$1/ in gdb's output"; exit 1; }; }
expect '^ +1  - +running +main'
expect '^ +2  - +blocked +blocked_in_here .* gate$'
expect '^ +3  - +blocked +blocked_in_here .* gate$'
expect '^ +4  - +sleeping +sleepy .* timer$'
expect '#[0-9]+ .*(core_block|upvm_wait)'  # ULP 2 suspended in its wait ...
expect '#[0-9]+ .* blocked_in_here'         # ... called from its entry function
expect 'exited normally'
echo "test-gdb: ok"
