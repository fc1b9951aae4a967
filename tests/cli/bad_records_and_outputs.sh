#!/usr/bin/env bash
# bad_records_and_outputs.sh GATECHECK PLUGIN WORK: a file that records an unknown property is
# one unusable file of a repro, not the end of it; a shrink whose --out cannot take the bytes
# (/dev/full) says so and exits 2, and a device node given as --out stays a device node.
. "$(dirname "$0")/script_start.sh"
"$gc" check --impl "plugin:$plugin" --properties accuracy --seconds 0 --cases 25 --seed 42 --corpus "$work/c" \
  >"$work/check.out" 2>&1
good=$(ls "$work"/c/*accuracy*.json 2>/dev/null | head -n 1)
[ -n "$good" ] || { cat "$work/check.out"; fail "the broken plugin's accuracy failure was not saved"; exit 1; }
sed 's/"property": *"accuracy"/"property": "acuracy"/' "$good" >"$work/typo.json"
grep -q '"acuracy"' "$work/typo.json" || fail "could not make the file with the misspelt property"

"$gc" repro "$work/typo.json" "$good" >"$work/repro.out" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "repro: exit $rc (want 2: one unusable file)"
grep -q "^gatecheck repro: $work/typo.json records unknown property 'acuracy' (accuracy, " "$work/repro.out" ||
  fail "repro: the error does not name the file and its property"
grep -q "^repro: 2 files: 1 still failing, 0 passing, 1 unusable" "$work/repro.out" ||
  fail "repro: the second file was not replayed: $(tail -n 2 "$work/repro.out")"

if [ -c /dev/full ]; then
  "$gc" shrink "$good" --out /dev/full >"$work/full.out" 2>&1
  rc=$?
  [ $rc -eq 2 ] || fail "shrink --out /dev/full: exit $rc (want 2)"
  grep -q "^gatecheck shrink: /dev/full: write failed (No space left on device)" "$work/full.out" ||
    fail "shrink --out /dev/full: the write error is not reported: $(tail -n 2 "$work/full.out")"
  grep -q "^written to" "$work/full.out" && fail "shrink --out /dev/full: says it wrote the case"
  [ -c /dev/full ] || fail "shrink --out /dev/full replaced the device node with a file"
fi
if [ $fails -ne 0 ]; then
  for f in "$work"/*.out; do echo "--- $f"; tail -n 6 "$f"; done
  exit 1
fi
echo OK
