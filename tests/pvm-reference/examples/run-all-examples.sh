#!/usr/bin/env bash
# run-all-examples.sh - build every C example of Debian's pvm-examples
# (examples.tar.gz + gexamples.tar.gz) and run each one headless against a
# fresh private pvmd, recording its output in out/<name>.txt (program or
# console output) and out/<name>.pvml (pvmd log: output of spawned tasks that
# nobody catches).  Complements /work/shared/baseline/pvm/run-examples.sh.
#
#   bash run-all-examples.sh            # all
#   bash run-all-examples.sh hello mbox # only some scenarios
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$HERE/out}
WORK=${WORK:-/tmp/pvm-allex.$$}
DOC=/usr/share/doc/pvm-examples
[ -f $DOC/examples.tar.gz ] || { echo "apt-get install pvm-examples first"; exit 1; }
mkdir -p "$OUT" "$WORK/bin" && cd "$WORK" || exit 1
tar xzf $DOC/examples.tar.gz && tar xzf $DOC/gexamples.tar.gz
BIN=$WORK/bin
export PROBE_BIN=$BIN
. "$HERE/../probe/vm.sh"
trap 'stop_vm; rm -rf "$WORK"' EXIT

CF="-O2 -w -DHASSTDLIB -DSYSVSTR"
cc1() { nice gcc $CF -o "$BIN/$1" "${@:2}" || echo "BUILD FAILED: $1" >&2; }
E=examples; G=gexamples
nice gcc $CF -c -o taskf.o $E/taskf.c
for p in hello hello_other master1 slave1 spmd timing timing_slave mhf_server mhf_tickle \
         inherita inheritb inherit1 inherit2 inherit3 mbox; do cc1 $p $E/$p.c -lpvm3; done
for p in task0 task1 task_end rme lmbi gmbi; do cc1 $p $E/$p.c taskf.o -lpvm3; done
cc1 gexample $E/gexample.c -lgpvm3 -lpvm3
cc1 ptest    $E/ptest.c -lgpvm3 -lpvm3
sed 's/\([^_]\)exit();/\1exit(1);/' $E/starter.c >starter_fixed.c   # calls exit() without argument: does not compile as is
cc1 starter starter_fixed.c -lpvm3
CF="$CF -DPACK -DENCODE=PvmDataDefault" cc1 dbwtest $E/bwtest.c -lgpvm3 -lpvm3
CF="$CF -DPACK -DENCODE=PvmDataInPlace" cc1 ibwtest $E/bwtest.c -lgpvm3 -lpvm3
CF="$CF -DPACK -DENCODE=PvmDataRaw"     cc1 rbwtest $E/bwtest.c -lgpvm3 -lpvm3
cc1 pbwtest $E/bwtest.c -lgpvm3 -lpvm3
for p in ge gexamp gs joinleave thb tnb tjf tjl trsg tst; do cc1 $p $G/$p.c -lgpvm3 -lpvm3; done
ls "$BIN" >"$OUT/built.txt"

con() { # run console commands (one per arg), sleeping $CSLEEP after them
    { for c in "$@"; do echo "$c"; sleep 0.3; done; sleep "${CSLEEP:-3}"; echo quit; } | timeout 120 pvm 2>&1
}
shell() { ( cd "$BIN" && timeout "${TMO:-60}" "$@" ) 2>&1; echo "(exit status $?)"; }

run() { # run <name> <function>
    local n=$1; shift
    case " ${SEL:-} " in "  ") ;; *" $n "*) ;; *) return ;; esac
    echo "== $n"
    start_vm >/dev/null 2>&1 || { echo "pvmd failed"; return; }
    "$@" >"$OUT/$n.txt" 2>&1
    sleep 1
    sed 's/^\[t80040000\] [0-9/]* [0-9:]* //' "$PVM_TMP/pvml.$(id -u)" >"$OUT/$n.pvml" 2>/dev/null
    stop_vm >/dev/null 2>&1
}
SEL="$*"

ex_hello()    { shell ./hello; }
ex_hello_con(){ con "spawn -> hello"; }
ex_master1()  { shell ./master1; }
ex_spmd()     { con "spawn -4 -> spmd"; }
ex_spmd_shell(){ TMO=10 shell ./spmd; }
ex_timing()   { TMO=120 shell ./timing; }
ex_bwtest()   { CSLEEP=15 con "spawn -2 -> dbwtest" "spawn -2 -> pbwtest"; }
ex_gexample() { printf '100\n3\n' | shell ./gexample; }
ex_gexample_con() { CSLEEP=5 con "spawn -3 -> gexample"; }
ex_gexamp()   { CSLEEP=5 con "spawn -> gexamp 4"; }
ex_ge()       { TMO=20 shell "$BIN/ge" 3; }     # spawns argv[0]: needs an absolute path
ex_gs()       { TMO=20 shell "$BIN/gs" 3 | uniq -c; }   # busy-waits printing "waiting on kids to join"
ex_joinleave(){ TMO=60 shell ./joinleave 300; }
ex_thb()      { TMO=30 shell ./thb 3; }
ex_tjf()      { TMO=20 shell ./tjf; }
ex_tjl()      { TMO=20 shell ./tjl; }
ex_tst()      { TMO=10 shell ./tst; }
ex_trsg()     { printf '4\n20\n' | TMO=30 shell ./trsg; }
ex_inherita1(){ shell ./inherita inherit1; }
ex_inherita3(){ shell ./inherita inherit3; }
ex_inheritb() { shell ./inheritb; }
ex_ptest()    { CSLEEP=8 con "spawn -3 -> ptest 3 0 5"; }   # SPMD: all 3 must be spawned together
ex_starter()  { shell ./starter -n 2 hello_other; }
ex_mbox() {
    echo '$ mbox';                 shell ./mbox
    echo '$ mbox query';           shell ./mbox query
    echo '$ mbox pers';            shell ./mbox pers
    echo '$ mbox query 0';         shell ./mbox query 0
    echo '$ mbox pers favail';     shell ./mbox pers favail
    echo '$ mbox query';           shell ./mbox query
    echo '$ mbox delete 0';        shell ./mbox delete 0
    echo '$ mbox delete';          shell ./mbox delete
    echo '$ mbox query';           shell ./mbox query
    echo '$ mbox sleep=3 & ; mbox query 0 ; mbox query'
    ( cd "$BIN" && timeout 20 ./mbox sleep=3 >"$WORK/mbox-bg.txt" 2>&1 ) & local bg=$!
    sleep 1; shell ./mbox query 0; shell ./mbox query
    wait $bg; echo "--- background 'mbox sleep=3' printed:"; cat "$WORK/mbox-bg.txt"
    echo '$ mbox info';            shell ./mbox info
}
ex_mailbox_tasks() {
    echo '$ task0 myservice d &    (waits for task1/task_end)'
    ( cd "$BIN" && timeout 30 ./task0 myservice d >"$WORK/task0.txt" 2>&1 ) & local bg=$!
    sleep 1
    echo '$ gmbi "*"';             shell ./gmbi '*'
    echo '$ task1 myservice 0 d';  shell ./task1 myservice 0 d
    echo '$ task_end myservice 0'; shell ./task_end myservice 0
    wait $bg; echo "--- task0 printed:"; cat "$WORK/task0.txt"
    echo '$ lmbi 3 pm e            (3 persistent multi-instance entries, then exit)'; shell ./lmbi 3 pm e
    echo '$ gmbi "*"';             shell ./gmbi '*'
    local cls; cls=$(cd "$BIN" && ./gmbi '*' | sed -n 's/.*class name: <\(.*lmbi1\)>.*/\1/p' | head -1)
    echo "\$ rme $cls 0"; shell ./rme "$cls" 0
    echo '$ gmbi "*"';             shell ./gmbi '*'
    echo '$ lmbi 2 pmo e           (persistent + overwritable: deletable by anyone)'; shell ./lmbi 2 pmo e
    cls=$(cd "$BIN" && ./gmbi '*' | sed -n 's/.*class name: <\(t[0-9a-f]*lmbi0\)>.*/\1/p' | tail -1)
    echo "\$ rme $cls 0"; shell ./rme "$cls" 0
    echo '$ gmbi "*"';             shell ./gmbi '*'
}
ex_mhf() {
    ( cd "$BIN" && timeout 30 ./mhf_server >"$WORK/mhf_server.txt" 2>&1 ) & local bg=$!
    sleep 1
    # menu: 1=LMH (tag 50, ctx 0, handler 1) ; 0=PMH ; 4=HIT (tag 50, ctx 0, handler 1, text) ; 9=SEAT ; 8=CEAT
    printf '1\n50\n0\n1\n0\n4\n50\n0\n1\nhello-handler\n9\n8\n' | TMO=20 shell ./mhf_tickle
    wait $bg; echo "--- mhf_server printed:"; cat "$WORK/mhf_server.txt"
}

run hello        ex_hello
run hello_con    ex_hello_con
run master1      ex_master1
run spmd         ex_spmd
run spmd_shell   ex_spmd_shell
run timing       ex_timing
run bwtest       ex_bwtest
run gexample     ex_gexample
run gexample_con ex_gexample_con
run gexamp       ex_gexamp
run ge           ex_ge
run gs           ex_gs
run joinleave    ex_joinleave
run thb          ex_thb
run tjf          ex_tjf
run tjl          ex_tjl
run tst          ex_tst
run trsg         ex_trsg
run inherita1    ex_inherita1
run inherita3    ex_inherita3
run inheritb     ex_inheritb
run ptest        ex_ptest
run starter      ex_starter
run mbox         ex_mbox
run mailbox_tasks ex_mailbox_tasks
run mhf          ex_mhf
echo "== done; outputs in $OUT"
