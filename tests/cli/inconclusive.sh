#!/usr/bin/env bash
# inconclusive.sh GATECHECK SLOW_PLUGIN WORK: a claimed property that held on
# fewer cases than the floor (20) is "inconclusive (N cases)", never "pass",
# and the run exits 4; --json marks it. The same plugin given the cases it
# asked for with --cases 3 passes on them (the floor is what was asked for).
. "$(dirname "$0")/script_start.sh"
# 100 ms a call, two calls a case: a 1 s budget has room for about five cases.
"$gc" check --impl "plugin:$plugin" --properties repeatable --claims repeatable --seconds 1 --jobs 1 --seed 3 --scale-share 0 \
  --corpus "$work/c1" --json "$work/short.json" >"$work/short.out" 2>"$work/short.err"
rc=$?
[ $rc -eq 4 ] || fail "a 1 s budget on a 100 ms plugin exited $rc (want 4, inconclusive)"
grep -Eq "plugin:.*@cpu +repeatable +yes +[0-9]+ +inconclusive \([0-9]+ cases?\)" "$work/short.out" ||
  fail "the table does not say inconclusive (N cases)"
if grep -Eq "repeatable +yes +[0-9]+ +pass" "$work/short.out"; then fail "the table calls a few cases a pass"; fi
grep -q '"inconclusive": true' "$work/short.json" || fail "--json does not mark the property inconclusive"
grep -q "1 claimed property inconclusive: fewer than 20 cases ran" "$work/short.out" ||
  fail "the summary does not say why"
"$gc" check --impl "plugin:$plugin" --properties repeatable --claims repeatable --cases 3 --jobs 1 --seed 3 --scale-share 0 \
  --corpus "$work/c2" --json "$work/asked.json" >"$work/asked.out" 2>"$work/asked.err"
rc=$?
[ $rc -eq 0 ] || fail "--cases 3 exited $rc (want 0: it ran the 3 cases asked for)"
grep -Eq "repeatable +yes +3 +pass" "$work/asked.out" || fail "--cases 3 is not a pass on 3 cases"
grep -q '"inconclusive": false' "$work/asked.json" || fail "--json marks --cases 3 inconclusive"
if [ $fails -ne 0 ]; then
  for f in short.out short.err asked.out asked.err; do echo "--- $f ---"; cat "$work/$f"; done
  exit 1
fi
