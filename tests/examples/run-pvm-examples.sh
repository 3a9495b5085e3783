#!/usr/bin/env bash
# run-pvm-examples.sh - build the C examples of Debian's pvm-examples package
# with upvmcc, unmodified, run each the way docs/reference/pvm-examples.md
# ran it against real PVM 3.4.6, and check that the outcome is the same.
# Also builds and runs the baseline benchmarks (pingpong, ring, yield: the
# copies in tests/examples/baseline).
#
#   tests/examples/run-pvm-examples.sh BUILD_DIR [SCENARIO...]
#   tests/examples/run-pvm-examples.sh --real-pvm [SCENARIO...]
#
# Options:
#   --upvmcc PATH   the compiler wrapper (default BUILD_DIR/tools/upvmcc/upvmcc)
#   --upvm PATH     the job launcher    (default BUILD_DIR/tools/upvm/upvm)
#   --real-pvm      build with gcc -lpvm3 and run against a private real pvmd
#                   instead (checks the script and its expectations)
#   --build-only DIR  build every program into DIR (its bin/ and log/) and
#                   run nothing
#   --prebuilt DIR  run with the programs --build-only put in DIR instead of
#                   building them (ctest: one build for both tests)
#   --keep DIR      keep the build and every output in DIR
#   --launch CMD    start every program through CMD (word-split), e.g.
#                   "mpirun -np 2 --mca btl tcp,self": one job over MPI ranks
#   --list          list the scenarios and exit
# Environment: PVM_EXAMPLES_DOC (where the installed package's tarballs are,
#   default /usr/share/doc/pvm-examples), PVMBENCH_SRC (the benchmark
#   sources, default tests/examples/baseline), JOBS (parallel compiles,
#   default nproc).
#
# Nothing is downloaded: the examples come from the installed package
# pvm-examples (scripts/install-deps.sh installs it).
#
# Exit status: 0 if every example expected to work did, 1 if not, 2 for a
# usage error, 77 (ctest: skipped) if the examples or the tools cannot be had.
# See tests/examples/README.md.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
MODE=upvm
UPVMCC=""
UPVM=""
BUILD_DIR=""
KEEP=""
BUILD_ONLY=""
PREBUILT=""
LIST=0
SEL=()
LAUNCH=()

while [ $# -gt 0 ]; do
    case $1 in
        --upvmcc) UPVMCC=${2:?}; shift 2 ;;
        --upvm) UPVM=${2:?}; shift 2 ;;
        --real-pvm) MODE=real; shift ;;
        --keep) KEEP=${2:?}; shift 2 ;;
        --build-only) BUILD_ONLY=${2:?}; shift 2 ;;
        --prebuilt) PREBUILT=${2:?}; shift 2 ;;
        --launch) read -ra LAUNCH <<<"${2:?}"; shift 2 ;;
        --list) LIST=1; shift ;;
        -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        -*) echo "run-pvm-examples: unknown option $1" >&2; exit 2 ;;
        *) if [ "$MODE" = upvm ] && [ -z "$BUILD_DIR" ] && [ -d "$1" ]; then BUILD_DIR=$1
           else SEL+=("$1"); fi
           shift ;;
    esac
done

# (--build-only: the reason is also left in DIR/skipped, for --prebuilt)
skip() {
    echo "run-pvm-examples: SKIPPED: $*"
    [ -z "$BUILD_ONLY" ] || { mkdir -p "$BUILD_ONLY" && echo "$*" >"$BUILD_ONLY/skipped"; }
    exit 77
}

# ------------------------------------------------------------- scenarios
# scenario NAME "LABEL" "PROGRAMS NEEDED"   (run_NAME produces the output,
# check_NAME checks it).  NOTRUN[NAME]="reason" marks what cannot work.
NAMES=()
declare -A LABEL NEED NOTRUN
scenario() { NAMES+=("$1"); LABEL[$1]=$2; NEED[$1]=$3; }

scenario hello        "hello + hello_other"           "hello hello_other"
scenario master1      "master1 + slave1"              "master1 slave1"
scenario spmd         "spmd (4 copies)"               "spmd"
scenario spmd_shell   "spmd (from the shell)"         "spmd"
scenario timing       "timing + timing_slave"         "timing timing_slave"
scenario dbwtest      "dbwtest (bwtest.c, 2 copies)"  "dbwtest"
scenario ibwtest      "ibwtest (bwtest.c, 2 copies)"  "ibwtest"
scenario rbwtest      "rbwtest (bwtest.c, 2 copies)"  "rbwtest"
scenario pbwtest      "pbwtest (bwtest.c, 2 copies)"  "pbwtest"
scenario gexample     "gexample (stdin: 100 3)"       "gexample"
scenario gexample_spmd "gexample (3 copies)"          "gexample"
scenario ptest        "ptest (3 copies)"              "ptest"
scenario starter      "starter"                       "starter hello_other"
scenario inherita1    "inherita + inherit1/inherit2"  "inherita inherit1 inherit2"
scenario inherita3    "inherita + inherit3/inherit2"  "inherita inherit3 inherit2"
scenario inheritb     "inheritb + inherit2"           "inheritb inherit2"
scenario mbox         "mbox (10 invocations)"         "mbox pvmsh"
scenario mbox_tasks   "task0/task1/task_end"          "task0 task1 task_end gmbi pvmsh"
scenario lmbi         "lmbi/gmbi/rme"                 "lmbi gmbi rme pvmsh"
scenario mhf          "mhf_server + mhf_tickle"       "mhf_server mhf_tickle pvmsh"
scenario gexamp       "gexamp 4"                      "gexamp"
scenario ge           "ge 3"                          "ge"
scenario gs           "gs 3"                          "gs"
scenario joinleave    "joinleave 300"                 "joinleave"
scenario thb          "thb 3 + tnb"                   "thb tnb"
scenario tjf          "tjf"                           "tjf"
scenario tjl          "tjl"                           "tjl"
scenario tst          "tst"                           "tst"
scenario trsg         "trsg (stdin: 4 20)"            "trsg"
scenario b_pingpong   "bench: pingpong"               "pingpong"
scenario b_ring       "bench: ring"                   "ring"
scenario b_yield      "bench: yield"                  "yield"

NOTRUN[starter]="does not compile: calls exit() without an argument (real PVM's build of it fails too; it is not in the examples' Makefile)"

if [ $LIST = 1 ]; then
    for n in "${NAMES[@]}"; do printf '%-14s %s\n' "$n" "${LABEL[$n]}"; done
    exit 0
fi
for s in "${SEL[@]+"${SEL[@]}"}"; do
    [ -n "${LABEL[$s]+x}" ] && continue
    case $s in */*) echo "run-pvm-examples: $s: no such build directory" >&2 ;;
               *) echo "run-pvm-examples: no scenario '$s' (--list)" >&2 ;; esac
    exit 2
done

# ---------------------------------------------------------------- tools
if [ "$MODE" = upvm ]; then
    if [ -z "$UPVMCC" ] || [ -z "$UPVM" ]; then
        [ -n "$BUILD_DIR" ] || { echo "usage: $0 BUILD_DIR [SCENARIO...] (or --real-pvm)" >&2; exit 2; }
        BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
        : "${UPVMCC:=$BUILD_DIR/tools/upvmcc/upvmcc}"
        : "${UPVM:=$BUILD_DIR/tools/upvm/upvm}"
    fi
    [ -x "$UPVMCC" ] || skip "no upvmcc at $UPVMCC (process mode not built)"
    [ -x "$UPVM" ] || skip "no upvm command at $UPVM (process mode not built)"
    UPVMCC=$(cd "$(dirname "$UPVMCC")" && pwd)/$(basename "$UPVMCC")
    UPVM=$(cd "$(dirname "$UPVM")" && pwd)/$(basename "$UPVM")
    CC=("$UPVMCC")
else
    command -v pvmd >/dev/null && command -v pvm >/dev/null && [ -f /usr/include/pvm3.h ] ||
        skip "--real-pvm needs PVM installed (apt-get install pvm pvm-dev)"
    CC=(gcc)
fi
command -v timeout >/dev/null || skip "no timeout command"

start_vm() { # real PVM: a fresh private pvmd per scenario (tids from t40001)
    PVM_TMP=$WORK/vm
    rm -rf "$PVM_TMP"; mkdir -p "$PVM_TMP"; export PVM_TMP
    ( cd "$WORK" && exec pvmd </dev/null >"$PVM_TMP/pvmd.stdout" 2>&1 ) &
    PVMD_PID=$!
    local i
    for i in $(seq 1 50); do
        [ -S "$(cat "$PVM_TMP/pvmd.$(id -u)" 2>/dev/null)" ] && return 0
        sleep 0.1
    done
    echo "pvmd did not start: $(cat "$PVM_TMP/pvmd.stdout")"
    return 1
}
stop_vm() {
    [ -n "$PVMD_PID" ] || return 0
    if kill -0 "$PVMD_PID" 2>/dev/null; then
        ( echo halt | timeout 15 pvm ) >/dev/null 2>&1
        local i
        for i in $(seq 1 30); do kill -0 "$PVMD_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$PVMD_PID" 2>/dev/null
    fi
    wait "$PVMD_PID" 2>/dev/null
    PVMD_PID=""
}
WORK=$(mktemp -d /tmp/upvm-pvmex.XXXXXX) || exit 1
BIN=$WORK/bin
OUT=$WORK/out
mkdir -p "$BIN" "$OUT" "$WORK/src" "$WORK/log"
PVMD_PID=""
BGPIDS=()
cleanup() {
    local p
    for p in "${BGPIDS[@]+"${BGPIDS[@]}"}"; do kill "$p" 2>/dev/null; done
    stop_vm
    if [ -n "$KEEP" ]; then
        mkdir -p "$KEEP" && cp -r "$WORK"/. "$KEEP"/ && echo "outputs kept in $KEEP"
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ----------------------------------------------------- 1. the examples
BENCH=${PVMBENCH_SRC:-$HERE/baseline}
HAVE_BENCH=0
[ -f "$BENCH/pingpong.c" ] && [ -f "$BENCH/ring.c" ] && [ -f "$BENCH/yield.c" ] && HAVE_BENCH=1
built() { [ -f "$WORK/log/built-$1" ]; }

# The tarballs of the installed package, unpacked: sets E, G and FROM.
unpack_examples() {
    local doc=${PVM_EXAMPLES_DOC:-/usr/share/doc/pvm-examples}
    [ -f "$doc/examples.tar.gz" ] && [ -f "$doc/gexamples.tar.gz" ] ||
        skip "no examples.tar.gz and gexamples.tar.gz in $doc: the package pvm-examples is not installed (scripts/install-deps.sh installs it)"
    ( cd "$WORK/src" && tar xzf "$doc/examples.tar.gz" && tar xzf "$doc/gexamples.tar.gz" ) ||
        skip "cannot unpack the tarballs in $doc"
    E=$WORK/src/examples
    G=$WORK/src/gexamples
    FROM="$doc (package pvm-examples)"
}

# --prebuilt: a copy of what --build-only left (the examples run in the
# directory of their binaries, and two runs may share the build).
use_prebuilt() {
    [ ! -f "$PREBUILT/skipped" ] || skip "$(cat "$PREBUILT/skipped")"
    if [ ! -f "$PREBUILT/from" ]; then
        echo "run-pvm-examples: nothing built in $PREBUILT (--build-only $PREBUILT first)" >&2
        exit 2
    fi
    cp -a "$PREBUILT/bin/." "$BIN/" && cp -a "$PREBUILT/log/." "$WORK/log/" || exit 1
    echo "== the examples from $(cat "$PREBUILT/from"), built in $PREBUILT"
}

# --build-only: the programs and the build logs, kept in BUILD_ONLY.
save_build() {
    mkdir -p "$BUILD_ONLY/bin" "$BUILD_ONLY/log" &&
        cp -a "$BIN/." "$BUILD_ONLY/bin/" && cp -a "$WORK/log/." "$BUILD_ONLY/log/" &&
        echo "$FROM" >"$BUILD_ONLY/from" || exit 1
    echo "built in $BUILD_ONLY: $(ls "$BUILD_ONLY/bin" | wc -l) programs"
}

# ------------------------------------------------------------- 2. build
# As PVM's own build does (LINUX64.def): -DHASSTDLIB -DSYSVSTR; -w because
# these are third-party K&R sources.  upvmcc drops -lpvm3/-lgpvm3.
CF=(-O2 -w -DHASSTDLIB -DSYSVSTR)
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
build() { # build NAME [flags and sources...]   (a background job)
    local name=$1; shift
    if "${CC[@]}" -o "$BIN/$name" "$@" >"$WORK/log/build-$name.txt" 2>&1; then
        echo ok >"$WORK/log/built-$name"
    fi
}
queue() {
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n 2>/dev/null || sleep 0.05; done
    build "$@" &
}
LP=(-lpvm3)
LG=(-lgpvm3 -lpvm3)
build_examples() {
    local p
    echo "== building the examples from $FROM with ${CC[*]} ${CF[*]}"
    for p in hello hello_other master1 slave1 spmd timing timing_slave mhf_server mhf_tickle \
             inherita inheritb inherit1 inherit2 inherit3 mbox; do
        queue $p "${CF[@]}" "$E/$p.c" "${LP[@]}"
    done
    for p in task0 task1 task_end rme lmbi gmbi; do
        queue $p "${CF[@]}" "$E/$p.c" "$E/taskf.c" "${LP[@]}"
    done
    queue gexample "${CF[@]}" "$E/gexample.c" "${LG[@]}"
    queue ptest "${CF[@]}" "$E/ptest.c" "${LG[@]}"
    queue starter "${CF[@]}" "$E/starter.c" "${LP[@]}"
    queue dbwtest "${CF[@]}" -DPACK -DENCODE=PvmDataDefault "$E/bwtest.c" "${LG[@]}"
    queue ibwtest "${CF[@]}" -DPACK -DENCODE=PvmDataInPlace "$E/bwtest.c" "${LG[@]}"
    queue rbwtest "${CF[@]}" -DPACK -DENCODE=PvmDataRaw "$E/bwtest.c" "${LG[@]}"
    queue pbwtest "${CF[@]}" "$E/bwtest.c" "${LG[@]}"
    for p in ge gexamp gs joinleave thb tnb tjf tjl trsg tst; do
        queue $p "${CF[@]}" "$G/$p.c" "${LG[@]}"
    done
    # our own helper: project code, so warnings are errors
    queue pvmsh -std=gnu11 -O2 -Wall -Wextra -Werror "$HERE/pvmsh.c" "${LP[@]}"
    if [ $HAVE_BENCH = 1 ]; then
        for p in pingpong ring yield; do
            queue $p -O2 -Wall "$BENCH/$p.c" "${LP[@]}"     # as the benchmarks' README builds them
        done
    fi
    wait
}

if [ -n "$PREBUILT" ]; then
    use_prebuilt
else
    [ -z "$BUILD_ONLY" ] || rm -rf "$BUILD_ONLY"
    unpack_examples
    build_examples
    if [ -n "$BUILD_ONLY" ]; then
        save_build
        exit 0
    fi
fi

# -------------------------------------------------------- 3. run forms
export PVM_PATH=$BIN
export PVMBENCH_SPAWN_DIR=$BIN
[ "$MODE" = real ] && export PVM_PATH=$BIN:/usr/bin PVM_ROOT=/usr/lib/pvm3 PVM_ARCH=LINUX64 PVM_ALLOW_ROOT=1

pvmd_log() { # real PVM: what the tasks nobody caught printed (the pvmd log)
    sed -n '3,$s/^\[t80040000\] [0-9/]* [0-9:]* //p' "$PVM_TMP/pvml.$(id -u)" 2>/dev/null
}

# Each run_* writes the scenario's output on stdout and sets ST (the exit
# status, or "-" where the form gives none).
ST=-
# shell T [-i INPUT] PROG ARGS : started from the shell, in $BIN, stdin = INPUT
shell() {
    local t=$1 input=""; shift
    if [ "$1" = -i ]; then input=$2; shift 2; fi
    ( cd "$BIN" && printf '%b' "$input" | timeout -k 3 "$t" "${LAUNCH[@]}" "$@" ) 2>&1
    ST=$?
    [ $ST = 124 ] && echo "(timed out after ${t}s)"
    return $ST
}
# copies N T PROG ARGS : N copies started together as one SPMD job
# (upvm run -n N; real PVM: console "spawn -N -> PROG ARGS")
copies() {
    local n=$1 t=$2; shift 2
    if [ "$MODE" = upvm ]; then
        ( cd "$BIN" && timeout -k 3 "$t" "${LAUNCH[@]}" "$UPVM" run -n "$n" "$@" </dev/null ) 2>&1
        ST=$?
        [ $ST = 124 ] && echo "(timed out after ${t}s)"
    else
        local f=$WORK/console.txt i
        : >"$f"
        { echo "spawn -$n -> $*"
          for ((i = 0; i < t * 10; i++)); do
              grep -q '^\[[0-9]*\] finished' "$f" && break; sleep 0.1
          done
          echo quit; } | timeout -k 3 $((t + 5)) stdbuf -oL pvm >"$f" 2>&1
        cat "$f"
        ST=-
    fi
}
# script T FILE : a pvmsh script (several programs in one virtual machine);
# real PVM: the same commands from the shell against the running pvmd
script() {
    local t=$1 file=$2
    if [ "$MODE" = upvm ]; then
        ( cd "$BIN" && timeout -k 3 "$t" "${LAUNCH[@]}" ./pvmsh "$file" ) 2>&1
        ST=$?
        [ $ST = 124 ] && echo "(timed out after ${t}s)"
        return
    fi
    local line w n=0 bgs=() names=() tid
    declare -A tids=()
    while IFS= read -r line; do
        read -ra w <<<"$line"
        [ ${#w[@]} -gt 0 ] && [ "${w[0]:0:1}" != "#" ] || continue
        case ${w[0]} in
            echo) echo "${line#echo }" ;;
            sleep) sleep "${w[1]}" ;;
            wait) [ ${#bgs[@]} -gt 0 ] && wait "${bgs[@]}"; for f in "${names[@]+"${names[@]}"}"; do cat "$f"; done
                  bgs=(); names=() ;;
            run|bg)
                local as="" k
                w=("${w[@]:1}")
                if [ "${w[0]}" = -as ]; then as=${w[1]}; w=("${w[@]:2}"); fi
                for k in "${!tids[@]}"; do w=("${w[@]//\$\{$k\}/${tids[$k]}}"); done
                if [ "${line%% *}" = run ]; then
                    echo "\$ ${w[*]}"
                    ( cd "$BIN" && timeout -k 3 "$t" "./${w[0]}" "${w[@]:1}" ) >"$WORK/step.txt" 2>&1 </dev/null
                    cat "$WORK/step.txt"
                    tid=$(grep -o -m1 '\bt4[0-9a-f]\{4,\}' "$WORK/step.txt" | head -1)
                else
                    echo "\$ ${w[*]} &"
                    n=$((n + 1))
                    ( cd "$BIN" && timeout -k 3 "$t" "./${w[0]}" "${w[@]:1}" ) >"$WORK/bg$n.txt" 2>&1 </dev/null &
                    bgs+=($!); names+=("$WORK/bg$n.txt")
                    BGPIDS+=($!)
                    sleep 0.5
                    tid=$(grep -o -m1 '\bt4[0-9a-f]\{4,\}' "$WORK/bg$n.txt" | head -1)
                fi
                [ -n "$as" ] && tids[$as]=${tid#t} ;;
        esac
    done <"$file"
    [ ${#bgs[@]} -gt 0 ] && wait "${bgs[@]}"; for f in "${names[@]+"${names[@]}"}"; do cat "$f"; done
    ST=-
}
# ------------------------------------------------------ 4. the scenarios
# run_NAME: produce the output.  check_NAME: judge it with the helpers
# below (regular expressions are grep -E on the normalised output).
run_hello()       { shell 20 ./hello; }
check_hello()     { has_n 1 "^i'm t[0-9a-f]+$"; has_n 1 "^from t[0-9a-f]+: hello, world from [^ ]+$"; status 0; }

run_master1()     { shell 20 ./master1; }
check_master1()   { has_n 1 "^Spawning 3 worker tasks \.\.\. SUCCESSFUL$"
                    has_n 3 "^I got ([123]00\.000000) from [012]; \(expecting \1\)$"
                    has "^I got 100\.0+ from"; has "^I got 200\.0+ from"; has "^I got 300\.0+ from"
                    status 0; }

run_spmd()        { copies 4 20 spmd; }
check_spmd()      { has_n 1 "^Pass a token through the +4 tid ring:$"
                    has_n 1 "^ *([0-9]+) -> +[0-9]+ -> +[0-9]+ -> +[0-9]+ -> +\1 *$"
                    has_n 1 "^token ring done$"; status 1; }   # main calls exit(1)

run_spmd_shell()  { shell 20 ./spmd; }
check_spmd_shell() { has_n 1 "^Pass a token through the +1 tid ring:$"
                    has_n 1 "^ *([0-9]+) -> +\1 *$"; has_n 1 "^token ring done$"; status 1; }

run_timing()      { shell 60 ./timing; }
check_timing()    { has_n 1 "^i'm t[0-9a-f]+$"; has_n 1 "^slave is task t[0-9a-f]+$"
                    has_n 1 "^RTT Avg uSec [0-9]+$"
                    for s in 100 1000 10000 100000 1000000; do has_n 1 "^Message size $s$"; done
                    has_n 5 "^Avg Byte/uSec$"; has_n 1 "^done$"; status 1; }

bw_check() {        # $1: the pack option line
    has_n 1 "^ *Using pack option: $1 *$"; has_n 1 "-- I am the master"; has_n 1 "-- I am the slave"
    has_n 2 "^t[0-9a-f]+: 100000 doubles received correctly$"
    for s in 0 8 80 800 8000 80000 800000; do
        has_n 1 "^Roundtrip T = [0-9]+ \(us\)  \([^)]* MB/s\)  Data size: $s$"   # (UPVM: 0 us gives inf or nan MB/s)
    done
    status 0
}
run_dbwtest()     { copies 2 60 dbwtest; }
check_dbwtest()   { bw_check PvmDataDefault; }
run_ibwtest()     { copies 2 60 ibwtest; }
check_ibwtest()   { bw_check PvmDataInPlace; }
run_rbwtest()     { copies 2 60 rbwtest; }
check_rbwtest()   { bw_check PvmDataRaw; }
run_pbwtest()     { copies 2 60 pbwtest; }
check_pbwtest()   { bw_check Psend/Precv; }

gexample_check()  { has_n 1 "^ *--> Using 3 processors <-- *$"; has_n 1 "^ The 1-Norm is 5050 *$"
                    has_n 1 "^ The product of column 1 is 9\.33262e\+157 *$"; status 0; }
run_gexample()    { shell 30 -i '100\n3\n' ./gexample; }
check_gexample()  { has_n 1 "Input dimension \( >0 \) of matrix:.*Input number of tasks"; gexample_check; }
run_gexample_spmd() { copies 3 30 gexample; }
check_gexample_spmd() { hasnt "Input dimension"; gexample_check; }

run_ptest()       { copies 3 30 ptest 3 0 5; }
check_ptest()     { has_n 3 "^[0-9a-f]+ understands 3 processes$"
                    for i in 0 1 2; do has_n 1 "^Receiving data iter $i \.\.\. \(pvm_precv\) $"; done
                    for i in 3 4; do has_n 1 "^Receiving data iter $i \.\.\. \(pvm_recv\) $"; done
                    has_n 5 "^Data validated from all tasks! $"; status 0; }

run_starter()     { shell 20 ./starter -n 2 hello_other; }
check_starter()   { has_n 1 "^hello_other program to be spawned 2 times\.$"; status 0; }

inherit_lines() {   # $1 = inherit1|inherit3, $2 = context of inherit2
    has_n 2 "^inherita: t[0-9a-f]+ on machine <[^>]+> with changed context 262145\.$"
    has_n 2 "^inherita: t[0-9a-f]+ on machine <[^>]+> with original context 0\.$"
    has_n 1 "^inherita: t[0-9a-f]+ $1: I just spawned inherit2 as tid t[0-9a-f]+ with context $2\.$"
    has_n 1 "^inherita: t[0-9a-f]+ $1: t[0-9a-f]+[[:space:]]+inherit2 t[0-9a-f]+ on machine <[^>]+> with context $2\.$"
    has_n 1 "^inherita: t[0-9a-f]+ END - sent from $1 t[0-9a-f]+ on machine <[^>]+> with context 262145\.$"
    status 0
}
run_inherita1()   { shell 20 ./inherita inherit1; }
check_inherita1() { inherit_lines inherit1 262145; }
run_inherita3()   { shell 20 ./inherita inherit3; }
check_inherita3() { inherit_lines inherit3 262146
                    has_n 1 "^inherita: t[0-9a-f]+ inherit3 t[0-9a-f]+ on machine <[^>]+> with context 262146\.$"; }

run_inheritb()    { shell 20 ./inheritb; }
check_inheritb()  { has_n 1 "^0:inheritb: t[0-9a-f]+ on machine <[^>]+> with context 0\.$"
                    has_n 1 "^1:inheritb: .* with new #1 context 262145 --> spawn 1st inherit2\.$"
                    has_n 1 "^2:inheritb: .* with new #2 context 262146 --> spawn 2nd inherit2\.$"
                    has_n 1 "^3:inheritb: t[0-9a-f]+[[:space:]]+inherit2 t[0-9a-f]+ on machine <[^>]+> with context 262146\. <-- received from 2nd inherit2\.$"
                    has_n 1 "^4:inheritb: .* with new #1 context 262145\.$"
                    has_n 1 "^5:inheritb: t[0-9a-f]+[[:space:]]+inherit2 t[0-9a-f]+ on machine <[^>]+> with context 262145\. <-- received from 1st inherit2\.$"
                    status 0; }

# The mailbox examples: several programs in one virtual machine (pvmsh).
mkscript() { printf '%s\n' "$@" >"$WORK/$SC.pvmsh"; echo "$WORK/$SC.pvmsh"; }
run_mbox() {
    script 60 "$(mkscript 'run mbox' 'run mbox query' 'run mbox pers' 'run mbox query 0' \
        'run mbox pers favail' 'run mbox query' 'run mbox delete 0' 'run mbox delete' \
        'bg mbox sleep=2' 'sleep 1' 'run mbox query 0' 'wait' 'run mbox info')"
}
check_mbox() {
    ERRIGNORE="libpvm \[t[0-9a-f]+\]: (Retrieving Message: Not Found|Inserting Message: Permission denied|pvm_delinfo\(\): (Permission denied|Not Found))$"
    has_n 11 "^mbox started as tid=0x[0-9a-f]+$"
    has_n 2 "^Retrieved Message is a Match\.$"                       # mbox, mbox pers
    has_n 1 "^Inserted Message Into \"mbox_test\" at index=0: PERSISTENT$"
    has_n 1 "^No Message at Index=0$"                # only the first query finds none
    has_n 3 "^Message at Index=0:  \"This Message Left Here By Mbox\"  0x[0-9a-f]+$"
    has_n 2 "^libpvm \[t[0-9a-f]+\]: Inserting Message: Permission denied$"  # pers favail, sleep=2
    has_n 2 "^libpvm \[t[0-9a-f]+\]: pvm_delinfo\(\): Permission denied$"  # delete 0, delete
    has_n 2 "^No Message to Delete at Index=0$" 
    has_n 1 "^Class \"mbox_test\" has 1 entries:$"
    has_n 1 "^	index=0 owner=0x0/0 flags=0x1$"
}

run_mbox_tasks() {
    script 30 "$(mkscript 'bg task0 myservice d' 'sleep 1' 'run gmbi *' 'run task1 myservice 0 d' \
        'run task_end myservice 0' 'wait')"
}
check_mbox_tasks() {
    has_n 1 "^gmbi: class name: <myservice>$"
    has_n 1 "^task1: service name <myservice> and index 0 with flags <PvmMboxDefault > tid: [0-9a-f]+ and with context: [0-9]+$"
    has_n 1 "^task1: t[0-9a-f]+  from task t[0-9a-f]+ welcome to my server - you are service request number 1\.$"
    has_n 1 "^service name <myservice> of index 0 on <[^>]+> id: [0-9a-f]+   with their context: [0-9]+$"
    has_n 1 "^task0: just inserted service name <myservice> at index 0\.$"
    has_n 1 "^task0: t[0-9a-f]+[[:space:]]+task1 t[0-9a-f]+ on machine <[^>]+> with context [0-9]+\.  Request number 1\.$"
    has_n 1 "^task0: t[0-9a-f]+ END  Request number 2\.$"
    has_n 1 "^task0: handled 2 service requests\.$"
}

run_lmbi() {
    script 30 "$(mkscript 'run -as L1 lmbi 3 pm e' 'run gmbi *' 'run rme t${L1}lmbi1 0' \
        'run -as L2 lmbi 2 pmo e' 'run rme t${L2}lmbi0 0' 'run gmbi *')"
}
check_lmbi() {
    has_n 5 "^lmbi: just inserted entry <t[0-9a-f]+lmbi[012]> at index 0\.$"
    has_n 1 "^gmbi: 3 mbox entries returned\.$"
    has_n 6 "^	: indices <0>	owner_tid <t0>	flags <3> = <PvmMboxMultiInstance PvmMboxPersistent >$"
    has_n 1 "^rme: Key locked by another task, can't delete\.$"
    has_n 1 "^gmbi: 4 mbox entries returned\.$"
    has_n 1 "^	: indices <0>	owner_tid <t0>	flags <7> = <PvmMboxOverWritable PvmMboxMultiInstance PvmMboxPersistent >$"
    has_n 7 "^gmbi: class name: <t[0-9a-f]+lmbi[012]>$"
    has_n 2 "^gmbi: class name: <t[0-9a-f]+lmbi0>$"    # the overwritable one was deleted
}

MHF_MENU='1\n50\n0\n1\n0\n4\n50\n0\n1\nhello-handler\n9\n8\n'
run_mhf() {
    if [ "$MODE" = upvm ]; then
        script 30 "$(mkscript 'bg mhf_server' 'sleep 1' 'run mhf_tickle' 'wait')" < <(printf '%b' "$MHF_MENU")
    else    # real PVM: spawned tasks read /dev/null, so both from the shell
        ( cd "$BIN" && timeout -k 3 30 ./mhf_server >"$WORK/mhf_server.txt" 2>&1 </dev/null ) &
        local bg=$!; BGPIDS+=($bg)
        sleep 1
        shell 30 -i "$MHF_MENU" ./mhf_tickle
        wait $bg; cat "$WORK/mhf_server.txt"; ST=-
    fi
}
check_mhf() {
    has_n 1 "^mhf_tickle: will attempt loading message handler SC1 with src = t[0-9a-f]+ = [0-9]+,  tag = 50, ctx = 0$"
    has_n 1 "^mhf_tickle: will ping SC1:string_catcher1 with message <hello-handler>\.$"
    has_n 1 "^register_server: mailbox\.\.\. just inserted server <mhf_server> at mailbox 0 with context [0-9]+\.$"
    has_n 1 "^mhf_server t[0-9a-f]+: mhf_server: LMH: AFTER load with pvm_addmhf\( src = t[0-9a-f]+, tag = 50, ctx = 0 \)  -> loaded SC1$"
    has_n 1 "^mhf_server t[0-9a-f]+: mhf_server: PMH: Are you talking to me!!!$"
    has_n 1 "^string_catcher1: string_catcher1 received message -->> <hello-handler>$"
    has_n 1 "^mhf_server: HIT:  ping target 1 - SC1   strings match <hello-handler>\.$"
}

run_gexamp()      { shell 30 ./gexamp 4; }
check_gexamp()    { for i in 0 1 2 3; do has_n 1 "gexamp $i: sync$"; done; status 0; }

run_ge()          { shell 30 "$BIN/ge" 3; }    # spawns argv[0]: an absolute path
check_ge()        { for i in 0 1 2; do has_n 1 "^group ge size 3 gid $i: sync$"; done
                    has_n 3 "^done$"; status 0
                    # ge leaves the group without a barrier: a member still checking
                    # gids can find one already gone (seen with real PVM too)
                    ERRIGNORE="^gid [0-9]+ doesn't match up!$"; }

run_gs()          { shell 20 "$BIN/gs" 3 | uniq -c | sed 's/^ *\([0-9]*\) \(.*\)/\2 (x\1)/'  # it busy-waits printing a line
                    ST=${PIPESTATUS[0]}; }
check_gs()        { has_n 3 "gs 0x[0-9a-f]+ enrolled( \(x1\))?$"; status 0; }

run_joinleave()   { shell 60 ./joinleave 300; }
check_joinleave() { for i in 100 200 300; do has_n 1 "^Joined $i times$"; done; status 0; }

run_thb()         { shell 30 ./thb 3; }
check_thb()       { has_n 32 "^joined group([0-9]|[12][0-9]|3[01])$"
                    has_n 1 "^spawning \.\.\. barrier on group0 *$"; has_n 1 "^ leaving all the groups *$"
                    has_n 1 "^done\.$"; status 0; }

run_tjf()         { shell 30 ./tjf; }
check_tjf()       { has_n 33 "^joined group([0-9]|[12][0-9]|3[012])$"; status 0; }
run_tjl()         { shell 30 ./tjl; }
check_tjl()       { has_n 32 "^joined group([0-9]|[12][0-9]|3[01])$"; status 0; }
run_tst()         { shell 20 ./tst; }
check_tst()       { has_n 1 "^joined prognosis 0, negative 0$"; has_n 1 "^left prognosis 0, negative 0$"; status 0; }

run_trsg()        { shell 30 -i '4\n20\n' ./trsg; }
check_trsg()      { has_n 1 "INPUT values: nprocs = 4, count = 20 $"
                    has_n 1 "^ Test OK: Sum of Squares of first 80 integers is 173880 $"
                    has_n 1 "^ Test Ok: Received \(20\.000000, 2\.000000\): $"; status 1; }

# The baseline benchmarks, QUICK-sized (they spawn $PVMBENCH_SPAWN_DIR/prog).
run_b_pingpong()  { shell 60 ./pingpong -b 3 -i 0.05; }
check_b_pingpong() { for s in 0 1 512 1000 10000 100000; do
                        has_n 1 "^RESULT pingpong .* size=$s .*half_rtt_us=[0-9.]+ "; done; status 0; }
run_b_ring()      { shell 60 ./ring -n 8 -t 50 -b 3; }
check_b_ring()    { has_n 1 "^RESULT ring .* n=8 .*hop_us=[0-9.]+"; status 0; }
run_b_yield()     { shell 60 ./yield -b 3 -k 2000; }
check_b_yield()   { has "^RESULT yield"; status 0; }

# ----------------------------------------------------- check helpers
# Lines of the normalised output ($NORM) matching a grep -E pattern.
NOTES=""
fail() { NOTES="${NOTES:+$NOTES; }$*"; }
count() { grep -cE -- "$1" "$NORM"; }
has()   { [ "$(count "$1")" -ge 1 ] || fail "missing /$1/"; }
# has_n N RE: exactly N matching lines
has_n() {
    local c; c=$(count "$2")
    [ "$c" = "$1" ] || fail "/$2/: $c line(s), expected $1"
}
hasnt() { [ "$(count "$1")" = 0 ] || fail "unexpected /$1/"; }
status() { [ "$ST" = - ] || [ "$ST" = "$1" ] || fail "exit status $ST, expected $1"; }
# Lines that mean something went wrong, in any example.
ERRRE="^upvm|libpvm \[|[Ss]egmentation|[Cc]ore dumped|crashed|[Dd]eadlock|doesn't match|Barrier failed|had an error|^error|[^a-z]error:|Trouble|^pvmsh:|timed out after|[Aa]borted|Could not"

# Real PVM only: when several tasks join groups at the same moment, libgpvm3
# starts several pvmgs and the losers say so (docs/reference/pvm-examples.md,
# ptest); the pvmd log may split that line after "libpvm [tX]: ".
ERRALWAYS='a^'      # (matches nothing)
[ "$MODE" = real ] &&
    ERRALWAYS="Group Server already running\?: Permission denied|^libpvm \[t[0-9a-f]+\]: $"

normalise() { # console "[1:t40002] " and catchout/log "[t40002] " prefixes, BEGIN/EOF framing
    sed -E 's/^(pvm> )+//; s/^\[[0-9]+:t[0-9a-f]+\] //; s/^\[t[0-9a-f]+\] //' "$1" |
        grep -vE '^(EOF|BEGIN)$'
}

# ---------------------------------------------------------------- 5. run
START=$SECONDS
declare -A R_BUILT R_RAN R_OK R_NOTES
FAILED=()
for SC in "${NAMES[@]}"; do
    if [ ${#SEL[@]} -gt 0 ] && [[ " ${SEL[*]} " != *" $SC "* ]]; then continue; fi
    miss=""
    for p in ${NEED[$SC]}; do built "$p" || miss="$miss $p"; done
    case $SC in b_*) [ $HAVE_BENCH = 1 ] || { R_BUILT[$SC]=-; R_RAN[$SC]=-; R_OK[$SC]=-
                     R_NOTES[$SC]="not run: no benchmark sources at $BENCH"; continue; } ;; esac
    if [ -n "${NOTRUN[$SC]+x}" ]; then
        R_BUILT[$SC]=$([ -z "$miss" ] && echo yes || echo no); R_RAN[$SC]=-; R_OK[$SC]=-
        R_NOTES[$SC]="not run: ${NOTRUN[$SC]}"
        continue
    fi
    if [ -n "$miss" ]; then
        R_BUILT[$SC]=no; R_RAN[$SC]=no; R_OK[$SC]=NO
        why=""
        for p in $miss; do     # the undefined symbols, else the first error
            u=$(grep -o "undefined reference to \`[^']*'" "$WORK/log/build-$p.txt" |
                sed "s/.*\`//; s/'//" | sort -u | tr '\n' ' ')
            [ -n "$u" ] && u="undefined: ${u% }" ||
                u=$(grep -m1 -E 'error' "$WORK/log/build-$p.txt" | sed 's/^[^ ]*: //')
            why="${why:+$why; }$p: $u"
        done
        R_NOTES[$SC]="not built: $why"
        FAILED+=("$SC")
        continue
    fi
    R_BUILT[$SC]=yes
    echo "== $SC"
    if [ "$MODE" = real ]; then start_vm >"$OUT/$SC.txt" 2>&1 || { R_RAN[$SC]=no; R_OK[$SC]=NO
        R_NOTES[$SC]="pvmd did not start"; FAILED+=("$SC"); continue; }; fi
    t0=$SECONDS
    # (the output is cut at 2 MB: a program that loops printing is killed
    # by SIGPIPE instead of filling the disk)
    rm -f "$WORK/st"
    { ST=-; "run_$SC"; echo "$ST" >"$WORK/st"; } 2>&1 </dev/null | head -c 2000000 >"$OUT/$SC.txt"
    ST=$(cat "$WORK/st" 2>/dev/null) || ST="killed (output over 2 MB)"
    if [ "$MODE" = real ]; then sleep 0.3; { echo "--- pvmd log:"; pvmd_log; } >>"$OUT/$SC.txt"; stop_vm; fi
    NORM=$OUT/$SC.norm
    normalise "$OUT/$SC.txt" >"$NORM"
    NOTES=""
    ERRIGNORE='^$'
    "check_$SC"
    [ "$(stat -c %s "$OUT/$SC.txt")" -ge 2000000 ] && fail "output cut at 2 MB (a loop printing?)"
    bad=$(grep -E -- "$ERRRE" "$NORM" | grep -vE -- "$ERRIGNORE" | grep -vE -- "$ERRALWAYS" | head -3 | cut -c1-100 | tr '\n' '|')
    [ -n "$bad" ] && fail "error lines: ${bad%|}"
    case $ST in 124|137) R_RAN[$SC]="timeout" ;; *) R_RAN[$SC]="yes ($((SECONDS - t0))s, exit $ST)" ;; esac
    if [ -z "$NOTES" ]; then R_OK[$SC]=yes; else R_OK[$SC]=NO; FAILED+=("$SC"); fi
    R_NOTES[$SC]=$NOTES
done

# -------------------------------------------------------------- 6. report
echo
echo "## PVM examples under $([ "$MODE" = upvm ] && echo "UPVM ($UPVMCC)" || echo "real PVM (gcc -lpvm3, private pvmd)")"
echo
echo "| example | built | ran | result as expected | notes |"
echo "|---|---|---|---|---|"
for SC in "${NAMES[@]}"; do
    [ -n "${R_OK[$SC]+x}" ] || continue
    printf '| %s | %s | %s | %s | %s |\n' "${LABEL[$SC]}" "${R_BUILT[$SC]}" "${R_RAN[$SC]}" \
        "${R_OK[$SC]}" "$(printf '%s' "${R_NOTES[$SC]}" | sed 's/|/\\|/g' | cut -c1-400)"
done
echo
echo "(Fortran examples not built: no Fortran binding in UPVM, and the task is C.)"
echo "time: $((SECONDS - START))s for the runs"
if [ ${#FAILED[@]} -gt 0 ]; then
    for SC in "${FAILED[@]}"; do
        [ -f "$OUT/$SC.txt" ] || continue
        echo
        echo "---- $SC: last lines of its output"
        tail -15 "$OUT/$SC.txt"
    done
    echo
    echo "FAILED: ${FAILED[*]}"
    exit 1
fi
echo "all examples expected to work did"
exit 0
