#!/usr/bin/env bash
# wrong_counts.sh GATECHECK WORK SEED_REPORT: the schema check passes the seed
# report and fails copies with any one count changed, naming the field; a
# wrong type, a missing field and a batch_invariant that is not the AND of the
# checks fail it too. One gatecheck run checks every copy.
set -u
gc=$1 work=$2 seed=$3
rm -rf "$work" && mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# FROM|TO|the problem the check must name (the first FROM in the file becomes TO)
edits='"sub_batches": 2124|"sub_batches": 2123|results.plain.diffusers.batch_invariance.full_vs_sub_batches.sub_batches: is 2123, the grid gives 2124
"comparisons": 2256|"comparisons": 2257|results.plain.diffusers.batch_invariance.batch_size_sweep.comparisons: is 2257, the grid gives 2256
"rows": 771|"rows": 770|results.plain.diffusers.batch_invariance.all_rows.257.rows: is 770, the grid gives 771
"full_batch": 131072|"full_batch": 131071|full_vs_sub_batches.full_batch: is 131071, the grid gives 131072
"fwd_differ": 0|"fwd_differ": 200|all_rows.64.fwd_differ: is 200, more than the 192 rows
"params_repeatable": true|"params_repeatable": "yes"|results.plain.rl_kernel.batch_invariance.params_repeatable: is string, not boolean
"batch_invariant": true|"batch_invariant": false|results.plain.rl_kernel.batch_invariance.batch_invariant: is false, but the AND of the checks above is true
"fwd_rel_err"|"forward_rel_err"|results.plain.diffusers.accuracy_latency.4097.fwd_rel_err: missing'
files=() k=0
while IFS='|' read -r from to want; do
  k=$((k + 1))
  sed "0,/$from/s//$to/" "$seed" >"$work/bad-$k.json"
  cmp -s "$seed" "$work/bad-$k.json" && fail "edit $k ($from) changed nothing"
  files+=("$work/bad-$k.json")
done <<<"$edits"
"$gc" sweep --validate "$seed" "${files[@]}" >"$work/out.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "exit $rc (want 1: some files do not conform)"
grep -q "^$seed: follows the seed report's schema" "$work/out.txt" || fail "the seed report itself does not pass"
k=0
while IFS='|' read -r from to want; do
  k=$((k + 1))
  grep -q "^$work/bad-$k.json: 1 problem" "$work/out.txt" || grep -q "^$work/bad-$k.json: [0-9]* problems" "$work/out.txt" ||
    fail "$from -> $to: the copy is not reported"
  if grep -Fq -- "$want" "$work/out.txt"; then echo "ok: $from -> $to: $want"; else fail "$from -> $to: no '$want'"; fi
done <<<"$edits"
[ $fails -eq 0 ] || { cat "$work/out.txt"; exit 1; }
