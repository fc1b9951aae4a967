#!/usr/bin/env bash
# one_forward_per_case.sh GATECHECK OPS_PY WORK
# accuracy runs a case's forward and backward as one door call, so an
# autograd implementation's forward runs once per case, not again for the
# gradients (ops.py:forward_logged logs each forward).
. "$(dirname "$0")/../cli/script_start.sh"
ops=$2
export GATECHECK_TEST_CALL_LOG=$work/calls.log
"$gc" check --impl "python:$ops:forward_logged" --properties accuracy --seed 1 --cases 6 --seconds 0 \
  --corpus "$work/c" >"$work/check.log" 2>&1
rc=$?
cat "$work/check.log"
[ "$rc" -eq 0 ] || fail "expected exit 0, got $rc"
cases=$(grep -Eo "forward_logged@cpu +accuracy +yes +[0-9]+" "$work/check.log" | awk '{print $NF}')
calls=$(wc -l < "$GATECHECK_TEST_CALL_LOG" 2>/dev/null || echo 0)
echo "cases: ${cases:-?}, forward calls: $calls"
[ -n "$cases" ] && [ "$cases" -gt 0 ] || fail "no accuracy cases in the table"
[ "$calls" = "$cases" ] || fail "$calls forward calls for $cases cases (one per case expected)"
[ "$fails" -eq 0 ] && echo OK
exit "$fails"
