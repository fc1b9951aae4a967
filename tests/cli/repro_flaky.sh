#!/usr/bin/env bash
# repro_flaky.sh GATECHECK FLAKY_PLUGIN WORK: a repeatable failure that shows
# on some calls only (the plugin flips a bit on every 7th call) is saved with
# the bits seen; repro retries it and says on which attempt it came back
# (exit 1); where it never comes back (GC_TEST_FLAKY_OFF) repro says "not
# reproduced in N attempts", prints the saved bits and exits 5, never "pass".
. "$(dirname "$0")/script_start.sh"
"$gc" check --impl "plugin:$plugin" --properties repeatable --claims repeatable --cases 30 --jobs 1 --seed 5 \
  --scale-share 0 --corpus "$work/found" >"$work/check.out" 2>"$work/check.err"
rc=$?
[ $rc -eq 1 ] || fail "check exited $rc (want 1: the flaky plugin fails repeatable)"
saved=$(find "$work/found" -name '*repeatable*.json' | head -n 1)
[ -n "$saved" ] || { cat "$work/check.out"; fail "no saved failure"; exit 1; }
grep -q '"evidence": ".*call [0-9]* vs call 1' "$saved" || fail "the saved file does not keep the differing bits: $(grep evidence "$saved")"
"$gc" repro "$saved" >"$work/again.out" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "repro of a failure that comes back exited $rc (want 1)"
grep -Eq "repeatable: FAIL \(still failing\); reproduced on attempt [0-9]+" "$work/again.out" ||
  fail "repro does not say on which attempt the failure came back"
GC_TEST_FLAKY_OFF=1 "$gc" repro "$saved" --attempts 12 >"$work/gone.out" 2>&1
rc=$?
[ $rc -eq 5 ] || fail "repro of a failure that never comes back exited $rc (want 5)"
grep -q "repeatable: not reproduced in 12 attempts (.*this failure may depend on scheduling" "$work/gone.out" ||
  fail "repro does not say the failure was not reproduced"
grep -Eq "^    .*call [0-9]+ vs call 1" "$work/gone.out" || fail "repro does not print the bits the file keeps"
if grep -Eq "repeatable: pass" "$work/gone.out"; then fail "repro calls an unreproduced failure a pass"; fi
if [ $fails -ne 0 ]; then
  for f in check.out again.out gone.out; do echo "--- $f ---"; cat "$work/$f"; done
  exit 1
fi
