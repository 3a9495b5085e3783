#!/bin/bash
# main returning ends the node only after its tasks are done or stuck.
set -u
bin=$1
out=$("$bin" finish 2>&1); rc=$?
[ $rc -eq 5 ] || { echo "finish: exit status $rc, expected main's 5"; exit 1; }
grep -q "worker t40002 finished after main returned" <<<"$out" || { echo "finish: worker did not finish: $out"; exit 1; }

out=$(timeout 10 "$bin" blocked 2>&1); rc=$?
[ $rc -eq 5 ] || { echo "blocked: exit status $rc, expected 5: $out"; exit 1; }
grep -q "task(s) still waiting for messages were ended with it: t40002/worker" <<<"$out" \
  || { echo "blocked: no report naming the stuck task: $out"; exit 1; }
! grep -q "not reached" <<<"$out" || { echo "blocked: worker ran on"; exit 1; }
out=$(timeout 10 "$bin" crash 2>&1); rc=$?
[ $rc -eq 139 ] || { echo "crash: exit status $rc, expected 139: $out"; exit 1; }
grep -q "(worker, PVM task t40002) crashed: invalid memory access" <<<"$out" \
  || { echo "crash: report does not name the task: $out"; exit 1; }
out=$(UPVM_DELIVERY=bogus timeout 10 "$bin" finish 2>&1); rc=$?
[ $rc -eq 2 ] || { echo "bad UPVM_DELIVERY: exit status $rc, expected 2: $out"; exit 1; }
grep -q "UPVM_DELIVERY=bogus: not share or copy; refusing to start (unset it for the default, share)" <<<"$out" \
  || { echo "bad UPVM_DELIVERY: no message: $out"; exit 1; }
echo ok
