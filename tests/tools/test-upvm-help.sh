#!/bin/bash
# test-upvm-help.sh BUILD - the upvm command's conventions, for every
# subcommand `upvm help` lists (so a new one is checked without editing
# this script):
#   - upvm help CMD and upvm CMD --help print the same text, status 0;
#   - every option of CMD's synopsis in `upvm help` is explained there;
#   - an unknown option is named, one line, status 2:
#     "upvm CMD: unknown option '--no-such-option' (see upvm help CMD)";
#   - upvm with no command: the list on stderr, status 2; an unknown
#     command: status 2, named.
set -u
upvm=$1/tools/upvm/upvm
fail() { echo "FAIL: $*"; exit 1; }
export UPVM_VM=off

list=$("$upvm" help) || fail "upvm help: status $?"
[ "$("$upvm" --help)" = "$list" ] || fail "upvm --help differs from upvm help"
# the commands: "  upvm NAME ..." lines of the list
cmds=$(sed -n 's/^  upvm \([-a-z]*\).*/\1/p' <<<"$list")
[ "$(wc -w <<<"$cmds")" -ge 12 ] || fail "upvm help lists too few commands: $cmds"
for c in $cmds; do
    help=$("$upvm" help "$c") || fail "upvm help $c: status $?"
    [ -n "$help" ] || fail "upvm help $c: nothing"
    [ "$("$upvm" "$c" --help)" = "$help" ] || fail "upvm $c --help differs from upvm help $c"
    [ "$("$upvm" "$c" -h)" = "$help" ] || fail "upvm $c -h differs from upvm help $c"
    # the synopsis: its line and the indented lines after it
    synopsis=$(awk -v c="$c" '$1 == "upvm" && $2 == c {on = 1; print; next}
                              on && /^           / {print; next} {on = 0}' <<<"$list")
    for opt in $(grep -o -- '-[-a-z]*[a-z]' <<<"$synopsis" | sort -u); do
        [ "$opt" = "$c" ] && continue # upvm --version's own name
        grep -q -- "$opt\b" <<<"$help" || fail "upvm help $c does not explain $opt"
    done
    [ "$c" = --version ] && continue # a name, not a command taking options
    out=$("$upvm" "$c" --no-such-option 2>&1); rc=$?
    [ $rc -eq 2 ] || fail "upvm $c --no-such-option: status $rc: $out"
    [ "$out" = "upvm $c: unknown option '--no-such-option' (see upvm help $c)" ] ||
        fail "upvm $c --no-such-option said: $out"
done

out=$("$upvm" 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -q "^  upvm run " <<<"$out" || fail "upvm alone: status $rc: $out"
out=$("$upvm" frobnicate 2>&1); rc=$?
[ $rc -eq 2 ] && [ "$out" = "upvm: unknown command 'frobnicate' (upvm help lists them)" ] ||
    fail "upvm frobnicate: status $rc: $out"
out=$("$upvm" help frobnicate 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "no command 'frobnicate'" <<<"$out" || fail "upvm help frobnicate: $rc $out"
echo "ok: $(wc -w <<<"$cmds") commands"
