#!/bin/bash
# test-svm-killed.sh BUILD_DIR CASE - a node dies holding memory other
# nodes need (docs/svm.md, "When a node dies"; docs/migration.md, "Lazy
# moves"):
#   shared  killed.c: node1 SIGKILLed holding the only copy of a shared
#           page; the task that touches it ends with the report, a copy
#           of node 0's page survives, the job ends normally;
#   coupled, stack  killed.c: a ULP that cannot wait for a page (on a
#           kernel context; with too little stack left) is reported with
#           what to do, and its node ends as for a crash; the job goes on;
#   lazy-refused  lazykill.c under UPVM_SVM_FAULT=mprotect: a lazy move is
#           refused with the reason (it needs userfaultfd);
#   lazy    lazykill.c (process mode): the node a task moved from lazily
#           is SIGKILLed before the task's heap followed; the task's first
#           touch ends its node with the report, the job goes on (its
#           watcher was told) and ends normally.
# Each: exit status 0, OK, the report, and no process of the job left.
set -u
build=$(cd "${1:?usage: $0 BUILD_DIR CASE}" && pwd) || exit 2
case=${2:?usage: $0 BUILD_DIR CASE}
tmp=$(mktemp -d /tmp/upvm-svmkill.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL ($case): $*"; sed 's/^/    /' "$tmp/out" 2>/dev/null; exit 1; }

case $case in
shared)
    prog=$build/tests/svm/svm-killed
    (cd "$tmp" && UPVM_NODES=3 timeout -k 5 60 "$prog") >"$tmp/out" 2>&1
    st=$?
    report='shared page 0x[0-9a-f]* lost (ULP [0-9]*, toucher.*node 2).*the ULP ends'
    ;;
coupled | stack)
    prog=$build/tests/svm/svm-killed
    (cd "$tmp" && UPVM_NODES=2 UPVM_STACK_SIZE=16K timeout -k 5 60 "$prog" "$case") >"$tmp/out" 2>&1
    st=$?
    if [ "$case" = coupled ]; then
        report='shared page 0x[0-9a-f]* touched on a kernel context .*bring it in first with upvm_svm_touch'
    else
        report='faulted on shared page 0x[0-9a-f]* with too little stack left to wait for it: give it a bigger stack (UPVM_STACK_SIZE)'
    fi
    ;;
lazy-refused)
    cp "$build/tests/svm/lazykill" "$tmp/lazykill" || fail "no lazykill: build first"
    (cd "$tmp" && UPVM_SVM_FAULT=mprotect UPVM_NODES=3 timeout -k 5 60 \
        "$build/tools/upvm/upvm" run ./lazykill refused) >"$tmp/out" 2>&1
    st=$?
    report='cannot move lazily: it needs userfaultfd, which this node does not use (UPVM_SVM_FAULT=mprotect'
    ;;
lazy)
    cp "$build/tests/svm/lazykill" "$tmp/lazykill" || fail "no lazykill: build first"
    (cd "$tmp" && UPVM_MIGRATE_PUSH=off UPVM_NODES=3 timeout -k 5 60 \
        "$build/tools/upvm/upvm" run ./lazykill) >"$tmp/out" 2>&1
    st=$?
    report='page 0x[0-9a-f]* of ULP [0-9]* (lazykill.*node 2) lost: the node it moved from lazily died'
    ;;
*)
    echo "test-svm-killed: no case '$case'" >&2
    exit 2
    ;;
esac
cat "$tmp/out"
[ $st = 0 ] || fail "exit status $st (124: it hung)"
grep -qx OK "$tmp/out" || fail "no OK"
grep -q "$report" "$tmp/out" || fail "no report matching: $report"
# nothing of the job may be left: no process runs in its directory
left() {
    local p
    for p in /proc/[0-9]*; do
        [ "$(readlink "$p/cwd" 2>/dev/null)" = "$tmp" ] && echo "${p#/proc/}"
    done
}
for i in $(seq 100); do
    [ -z "$(left)" ] && break
    [ "$i" = 100 ] && fail "processes of the job are left: $(left)"
    read -rt 0.1 <> <(:) || true
done
echo PASS
