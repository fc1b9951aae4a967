#!/usr/bin/env bash
# rmsnorm_torch_findings.sh GATECHECK WORKDIR
# torch eager's weaknesses on rmsnorm_modulate are findings, not failures:
# the check exits 0, reports accuracy (its 16-bit gradients) and
# row_invariance (NaN bits by the row's place) as findings, each with a repro
# line, and the saved counterexample replays (repro exits 1: it still fails).
# Small cases show both; the scale tier (tested on its own) stays off.
set -u
gatecheck=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
"$gatecheck" check --op rmsnorm_modulate --impl torch-eager --seed 3 --seconds 0 --cases 150 --scale-share 0 \
  --corpus "$work/corpus" >"$work/check.log" 2>&1
rc=$?
cat "$work/check.log"
[ "$rc" -eq 0 ] || { echo "FAIL: check exited $rc, expected 0 (findings only)"; exit 1; }
for p in accuracy row_invariance; do
  grep -Eq "^torch-eager@cpu +$p +(yes|no) +[0-9]+ +finding" "$work/check.log" ||
    { echo "FAIL: no $p finding"; exit 1; }
  grep -q "^FINDING (unclaimed property, does not fail the run): torch-eager@cpu $p$" "$work/check.log" ||
    { echo "FAIL: no $p finding block"; exit 1; }
done
[ "$(grep -c '^  repro: ./gatecheck repro .* --impl torch-eager$' "$work/check.log")" -ge 2 ] ||
  { echo "FAIL: a finding without its repro line"; exit 1; }
saved=$(find "$work/corpus" -name 'torch-eager-accuracy-*.json' | head -n 1)
[ -n "$saved" ] || { echo "FAIL: the accuracy finding was not saved"; exit 1; }
"$gatecheck" repro "$saved" --impl torch-eager >"$work/repro.log" 2>&1
rc=$?
cat "$work/repro.log"
[ "$rc" -eq 1 ] || { echo "FAIL: repro exited $rc, expected 1"; exit 1; }
echo OK
