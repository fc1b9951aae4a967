#!/usr/bin/env bash
# Scale cases of split_invariance with every draw run (a case budget, so the
# cost model picks none of them), for replay.py: on the slow-parts plugin
# (host-repro whose exchange's partial sleeps 20 ms, a part's fixed cost as a
# GPU exchange has it) and on host-repro itself, both ops, three seeds each.
# From the repository root after the build; OUT: where the JSON goes.
set -euo pipefail
out=${OUT:-bench/results/split/scale-parts-heavy/runs}
mkdir -p "$out"
gc=build/cli/gatecheck
slow=build/tests/split/libgc_test_plugin_repro_slow_parts.so
for op in gate_residual rmsnorm_modulate; do
  for seed in 1 2 3; do
    for impl in "plugin:$slow" host-repro; do
      name=$op-$([ "$impl" = host-repro ] && echo host-repro || echo slow-parts)-$seed
      "$gc" check --op $op --impl "$impl" --properties split_invariance --seconds 0 --cases 24 --scale-share 1 \
        --jobs 1 --seed $seed --corpus /tmp/scale-parts-heavy-corpus --json "$out/$name.json" >/dev/null 2>&1 || true
      echo "$name: $(python3 -c "import json, sys; j = json.load(open(sys.argv[1])); print(sum(len(r['scale_runs']) for r in j['results']), 'cases,', round(j['coverage']['scale']['seconds'], 1), 's')" "$out/$name.json")"
    done
  done
done
# And under a time budget, where the cost model picks the draws: rmsnorm_modulate's split on the
# slow-parts plugin, 4 s at a scale share of 0.5 (tests/cli/scale_budget.sh's run).
"$gc" check --op rmsnorm_modulate --impl "plugin:$slow" --properties split_invariance --claims split_invariance \
  --seconds 4 --scale-share 0.5 --jobs 2 --seed 3 --corpus /tmp/scale-parts-heavy-corpus \
  --json "$out/time-budget-rmsnorm_modulate-3.json" >/dev/null 2>&1 || true
python3 - "$out/time-budget-rmsnorm_modulate-3.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    for s in r["scale_runs"]:
        print(f"ran      {s['case']}: {s['parts']} parts, {s['seconds']:.2f} s (estimated {s['estimate_seconds']:.2f})")
    for k in r["scale_skipped"]:
        print(f"skipped  {k['draw']}: {k.get('parts')} parts, estimated {k.get('estimate_seconds', 0):.2f} s, {k.get('left_seconds', 0):.2f} s left")
PY
# And 30 s of split_invariance at the GPU's share (0.25) on each op, as bench/results/split/scale-cost/adhoc.sh
# runs cuda-repro on the H200: how many scale cases the tier runs, and how large (slow30.txt).
for op in rmsnorm_modulate gate_residual; do
  "$gc" check --op $op --impl "plugin:$slow" --properties split_invariance --seconds 30 --scale-share 0.25 --jobs 2 \
    --seed 34 --corpus /tmp/scale-parts-heavy-corpus --json "$out/slow30-$op.json" >/dev/null 2>&1 || true
done
