#!/usr/bin/env bash
# planted_bug.sh GATECHECK OPS_PY WORK
# A planted bug in a Python implementation (ops.py:tail_bug, the last column
# reads gate row 0) is caught, shrunk to one element, saved, and replayed by
# `gatecheck repro FILE --impl python:TARGET`: still failing there, passing
# on the correct twin and on host.
. "$(dirname "$0")/../cli/script_start.sh"
ops=$2
bug="python:$ops:tail_bug"
"$gc" check --impl "$bug" --properties accuracy --seed 1 --seconds 6 --corpus "$work/c" >"$work/check.log" 2>&1
rc=$?
cat "$work/check.log"
[ "$rc" -eq 1 ] || fail "check: expected exit 1, got $rc"
grep -Eq "^FAILURE: .*tail_bug@cpu accuracy" "$work/check.log" || fail "no accuracy failure reported"
grep -Eq "minimal case: [a-z0-9]+ rows=1 dim=1 gates=[0-9]+" "$work/check.log" || fail "not shrunk to one element"
grep -Eq "\[out\] 1 of 1 elements wrong" "$work/check.log" || fail "the evidence does not show out"
case_file=$(ls "$work"/c/*tail_bug*-accuracy-*.json 2>/dev/null | head -n 1)
[ -n "$case_file" ] || fail "no case saved"
grep -q "repro: ./gatecheck repro $case_file --impl $bug" "$work/check.log" || fail "no repro command for the saved case"
"$gc" repro "$case_file" --impl "$bug" >"$work/repro.log" 2>&1
rc=$?
cat "$work/repro.log"
[ "$rc" -eq 1 ] || fail "repro --impl $bug: expected exit 1 (still failing), got $rc"
grep -q "FAIL (still failing)" "$work/repro.log" || fail "repro does not say it still fails"
"$gc" repro "$case_file" >"$work/repro_recorded.log" 2>&1
[ $? -eq 1 ] || { cat "$work/repro_recorded.log"; fail "repro with the implementation the file records does not fail"; }
"$gc" repro "$case_file" --impl "python:$ops:correct" >"$work/repro_correct.log" 2>&1 ||
  { cat "$work/repro_correct.log"; fail "the saved case fails on the correct twin too"; }
"$gc" repro "$case_file" --impl host >"$work/repro_host.log" 2>&1 ||
  { cat "$work/repro_host.log"; fail "the saved case fails on host too"; }
[ "$fails" -eq 0 ] && echo OK
exit "$fails"
