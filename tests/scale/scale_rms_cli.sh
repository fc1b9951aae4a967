#!/usr/bin/env bash
# scale_rms_cli.sh GATECHECK TILE_INDEX_PLUGIN WORKDIR
# A scale file of rmsnorm_modulate as users meet it: a generator spec of
# 65,537 rows naming its op and eps, which `repro` replays at scale (passing
# on host, failing on the planted mutant:rms-tile-index), and which `shrink`
# takes down to a small case of the same op that still fails.
set -u
gatecheck=$1 plugin=$2 work=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work"
cat >"$work/rms_scale.json" <<'JSON'
{"format": "gatecheck-case", "version": 2, "op": "rmsnorm_modulate", "dtype": "f32",
 "rows": 65537, "dim": 3, "gates": 5, "scalars": {"eps": 0.5},
 "scale": {"rows": 65537, "dim": 3, "gates": 5, "index_pattern": "uniform", "segment": 0, "index_seed": 6,
           "values": "rounding", "value_bound": 0, "frac_bits": 0, "value_seed": 7, "plan_kind": "partition",
           "plan_seed": 8, "rung": "rows at the grid limit", "view": {}}}
JSON
"$gatecheck" repro "$work/rms_scale.json" --impl host --property accuracy >"$work/host.log" 2>&1
rc=$?
[ "$rc" -eq 0 ] || fail "repro on host exited $rc, expected 0: $(cat "$work/host.log")"
grep -q "rows=65537 dim=3 gates=5" "$work/host.log" || fail "the replay is not at scale: $(cat "$work/host.log")"
"$gatecheck" repro "$work/rms_scale.json" --impl "plugin:$plugin" --property accuracy >"$work/mutant.log" 2>&1
rc=$?
cat "$work/mutant.log"
[ "$rc" -eq 1 ] || fail "repro on the mutant exited $rc, expected 1"
grep -q "eps=0.5" "$work/mutant.log" || fail "the replay did not use the file's eps"
"$gatecheck" shrink "$work/rms_scale.json" --impl "plugin:$plugin" --property accuracy --out "$work/min.json" \
  --seconds 60 >"$work/shrink.log" 2>&1
rc=$?
cat "$work/shrink.log"
[ "$rc" -eq 0 ] || fail "shrink exited $rc"
grep -q '"op": "rmsnorm_modulate"' "$work/min.json" || fail "the shrunk case does not name its op"
"$gatecheck" repro "$work/min.json" --impl "plugin:$plugin" >/dev/null 2>&1
[ $? -eq 1 ] || fail "the shrunk case no longer fails"
echo OK
