#!/usr/bin/env bash
# scale_cli.sh GATECHECK GRID_LIMIT_PLUGIN WORKDIR
# The scale tier as users meet it: --scale-share is validated; a `check` at
# the default share of a CPU plugin whose row loops stop at 65,535 rows (a case
# budget, not a time one: the same draws on a busy machine) catches it in the
# scale tier, shrinks it to 65,536 x 1 and saves it as a scale spec file, which
# `repro` replays (failing on the plugin, passing on host) and `shrink` keeps;
# the coverage lines state the share and what the tier reached.
set -u
gatecheck=$1 plugin=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }

for bad in 1.5 -0.1 nan abc; do
  out=$("$gatecheck" check --impl host --scale-share "$bad" --cases 1 2>&1)
  rc=$?
  [ "$rc" -eq 2 ] || fail "--scale-share $bad exited $rc, expected 2: $out"
  printf '%s' "$out" | grep -q -- "--scale-share" || fail "--scale-share $bad: the message does not name the option: $out"
done

"$gatecheck" check --impl "plugin:$plugin" --seed 3 --cases 60 --seconds 0 --properties full_write \
  --corpus "$work/corpus" --json "$work/r.json" >"$work/check.log" 2>&1
rc=$?
cat "$work/check.log"
[ "$rc" -eq 1 ] || fail "check exited $rc, expected 1"
grep -q "scale tier: 15% of each cpu budget" "$work/check.log" || fail "the header does not state the share"
grep -Eq "minimal case: bf16 rows=65536 dim=1 gates=1|minimal case: f16 rows=65536 dim=1 gates=1|minimal case: f32 rows=65536 dim=1 gates=1" \
  "$work/check.log" || fail "not shrunk to 65,536 x 1"
grep -q "largest   rows" "$work/check.log" || fail "no scale coverage"
saved=$(find "$work/corpus" -name '*full_write*.json' | head -n 1)
[ -n "$saved" ] || fail "no case saved"
grep -q '"scale"' "$saved" || fail "$saved is not a scale spec file"
[ "$(wc -c <"$saved")" -lt 4000 ] || fail "$saved holds values, not a spec"
grep -q '"scale": {' "$work/r.json" || fail "the JSON has no scale coverage"

"$gatecheck" repro "$saved" --impl "plugin:$plugin" >"$work/repro.log" 2>&1
rc=$?
cat "$work/repro.log"
[ "$rc" -eq 1 ] || fail "repro on the plugin exited $rc, expected 1"
"$gatecheck" repro "$saved" --impl host >"$work/repro_host.log" 2>&1
rc=$?
[ "$rc" -eq 0 ] || fail "repro on host exited $rc, expected 0: $(cat "$work/repro_host.log")"
"$gatecheck" shrink "$saved" --impl "plugin:$plugin" --out "$work/min.json" --seconds 60 >"$work/shrink.log" 2>&1
rc=$?
cat "$work/shrink.log"
[ "$rc" -eq 0 ] || fail "shrink exited $rc"
grep -q '"scale"' "$work/min.json" || fail "the shrunk case is not a scale file"
"$gatecheck" repro "$work/min.json" --impl "plugin:$plugin" >/dev/null 2>&1
[ $? -eq 1 ] || fail "the shrunk case no longer fails"
echo OK
