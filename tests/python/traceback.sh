#!/usr/bin/env bash
# traceback.sh GATECHECK OPS_PY WORK
# An exception on valid input is a failure, reported with the exception and
# the last lines of its traceback (ops.py:raises raises two calls deep).
. "$(dirname "$0")/../cli/script_start.sh"
ops=$2
"$gc" check --impl "python:$ops:raises" --properties accuracy --seed 1 --cases 3 --corpus "$work/c" >"$work/check.log" 2>&1
rc=$?
cat "$work/check.log"
[ "$rc" -eq 1 ] || fail "expected exit 1, got $rc"
grep -Eq "returned an error on valid input .*RuntimeError: planted failure on valid input \([0-9]+ rows\)" "$work/check.log" ||
  fail "the exception and its message are not shown"
grep -q "traceback (most recent call last, last lines):" "$work/check.log" || fail "no traceback"
grep -Eq "File \".*ops.py\", line [0-9]+, in raises" "$work/check.log" || fail "the traceback does not show raises()"
grep -Eq "File \".*ops.py\", line [0-9]+, in _planted" "$work/check.log" || fail "the traceback does not show _planted()"
grep -Eq "_door.py" "$work/check.log" && fail "the traceback shows gatecheck's own glue"
[ "$fails" -eq 0 ] && echo OK
exit "$fails"
