#!/usr/bin/env bash
# nightly_shards.sh NIGHTLY BUILD PLUGIN CRASH_INPUT SEEDS SCRATCH: a campaign
# in three shares run as separate processes (as three hosts would), then
# merged (docs/nightly.md).
#   share 0/3: impl host, on seeds that include CRASH_INPUT (harmless there);
#   shares 1/3 and 2/3: impl plugin:PLUGIN (the planted fused-large-batch
#   mutant) on the same seeds, so each finds the planted bug at once.
# The bug lives only in the plugin, so only shares 1 and 2 can find it. Then:
#   - merging shares 0 and 1 finds it, as found by share 1/3 alone, and the
#     report counts both shares' cases (and says share 2/3 is missing);
#   - merging the whole campaign lists it once, found by shares 1/3 and 2/3
#     (de-duplicated by signature), and counts all three shares' cases;
#   - the merged case file fails on the plugin and passes on host;
#   - a second merge knows the bug (not new), and share 0 run again reads the
#     merged corpus and skips the known bug.
# (Shares 1 and 2 spend most of their 10 s minimising and replaying the crash,
# as any campaign does, so they run few cases; share 0 runs hundreds.)
set -uo pipefail
nightly=$1 build=$2 plugin=$3 crash=$4 seeds=$5 scratch=$6
. "$(dirname "$0")/nightly_expect.sh"
rm -rf "$scratch" && mkdir -p "$scratch/seeds"
cp "$seeds"/* "$crash" "$scratch/seeds/"
camp=$scratch/camp
tools=$build/fuzz/gatecheck-fuzz-tools
json() { python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
# records_are FILE EXPR: EXPR holds for r, the list of FILE's JSON lines
records_are() { python3 -c "import json, sys; r = [json.loads(l) for l in open(sys.argv[1])]; sys.exit(not eval(sys.argv[2]))" "$@"; }

# --- three shares, side by side ------------------------------------------------
run=(--hours 0.003 --jobs 1 --seed 11 --seeds "$scratch/seeds" --out "$camp" --build-dir "$build" --no-build)
pids=()
for i in 0 1 2; do
  impl=host; [ $i -gt 0 ] && impl=plugin:$plugin
  "$nightly" "${run[@]}" --shard $i/3 --impl "$impl" >"$scratch/share$i.log" 2>&1 &
  pids+=($!)
done
for i in 0 1 2; do
  wait "${pids[$i]}"; rc[$i]=$?
  echo "share $i/3 exit ${rc[$i]}: $(tail -n 1 "$scratch/share$i.log")"
done
check "share 0/3 (host) exits 0" test "${rc[0]}" -eq 0
check "share 1/3 (planted) exits 1" test "${rc[1]}" -eq 1
check "share 2/3 (planted) exits 1" test "${rc[2]}" -eq 1
check "share 0/3 found no failure" test ! -s "$camp/shards/0/failures.jsonl"
for i in 1 2; do
  check "share $i/3 recorded the planted bug" grep -q '"signature":"row_invariance|plugin:.*mutant_fused_large_batch' \
    "$camp/shards/$i/failures.jsonl"
done
cases=()
for i in 0 1 2; do
  cases[$i]=$(json "$camp/shards/$i/report.json" "d['cases']")
  check "share $i/3 ran cases (${cases[$i]})" test "${cases[$i]:-0}" -gt 0
done
grep -h 'INFO: Seed:' "$camp"/shards/*/logs/w0-r0.log | tr '\n' ' '; echo "(libFuzzer seeds of the shares' first runs)"
check "each share's fuzzer got its own seed (11, 1011, 2011)" \
  test "$(grep -h 'INFO: Seed:' "$camp"/shards/{0,1,2}/logs/w0-r0.log | awk '{print $3}' | paste -sd,)" = 11,1011,2011

# --- shares 0 and 1: the bug only share 1 hit ------------------------------------
expect_nightly 1 "1 new failure\(s\) over 2 share\(s\)" --merge "$camp/shards/0" "$camp/shards/1" --out "$scratch/m01" \
  --build-dir "$build" --no-build
m=$scratch/m01
check "merge of 0 and 1: one failure record, the planted bug, new, found by share 1/3 alone" records_are "$m/failures.jsonl" \
  "len(r) == 1 and 'mutant_fused_large_batch' in r[0]['signature'] and r[0]['signature'].startswith('row_invariance|') and r[0]['new'] and r[0]['shards'] == ['1/3']"
got=$(json "$m/report.json" "d['cases']")
check "merge of 0 and 1 counts both shares' cases: $got = ${cases[0]} + ${cases[1]}" test "$got" -eq $((cases[0] + cases[1]))
check "merge of 0 and 1: the report says share 2/3 is missing" grep -q 'share 2/3 missing' "$m/report.md"
case_file=$(sed -n 's/.*"case":"\([^"]*\)".*/\1/p' "$m/failures.jsonl")
check "the merged case file is a copy under the merge's failures/" test "${case_file#"$m/failures/"}" != "$case_file"
check "the merged case fails on the planted plugin" \
  bash -c '! "$0" check-case --impl "plugin:$1" "$2" >/dev/null' "$tools" "$plugin" "$case_file"
check "the merged case passes on host" "$tools" check-case --impl host "$case_file"
check "the repro command names the merged case file" grep -qF "\"repro\":\"./gatecheck repro $case_file" "$m/failures.jsonl"

# --- the whole campaign: the same bug from two shares, listed once -------------
expect_nightly 1 "1 new failure\(s\) over 3 share\(s\)" --merge "$camp" --build-dir "$build" --no-build
check "whole campaign: one failure record, found by shares 1/3 and 2/3 (2 records)" records_are "$camp/failures.jsonl" \
  "len(r) == 1 and 'mutant_fused_large_batch' in r[0]['signature'] and r[0]['new'] and r[0]['shards'] == ['1/3', '2/3'] and r[0]['records'] == 2"
check "whole campaign: the report lists it once, with both shares" \
  test "$(grep -c '^- \*\*NEW\*\* `row_invariance|plugin:' "$camp/report.md")" -eq 1
check "whole campaign: ... found by share(s) [\"1/3\",\"2/3\"]" grep -qF 'found by share(s) ["1/3","2/3"]' "$camp/report.md"
got=$(json "$camp/report.json" "d['cases']")
check "whole campaign counts every share's cases: $got = ${cases[0]} + ${cases[1]} + ${cases[2]}" \
  test "$got" -eq $((cases[0] + cases[1] + cases[2]))
check "whole campaign: the report's table has the three shares" \
  test "$(grep -cE '^\| [012]/3 \| .* \| finished \|' "$camp/report.md")" -eq 3
check "whole campaign: exec/s summed over the shares" \
  python3 -c "import json, sys; d = json.load(open(sys.argv[1])); s = sum(x['execs_per_s'] for x in d['campaign']['shards'])
sys.exit(not (s > 0 and abs(d['execs_per_s']['overall'] - s) < 1e-6))" "$camp/report.json"
found=$(cat "$camp"/shards/*/corpus/* 2>/dev/null | wc -c) kept=$(ls "$camp/corpus" | wc -l)
check "whole campaign: libFuzzer merged the shares' corpora ($kept inputs kept)" \
  grep -q 'MERGE-OUTER: successful' "$camp/logs/merge.log"
check "whole campaign: what the shares found is in the merged corpus" \
  test "$found" -eq 0 -o "$kept" -gt 0
check "whole campaign: the signature is known once" test "$(grep -c 'row_invariance|plugin:' "$camp/known_signatures.txt")" -eq 1

# --- the next night: what the merge learnt reaches the shares --------------------
# A second merge knows the bug (the campaign's known_signatures.txt): not new.
expect_nightly 0 "no new failures over 3 share\(s\)" --merge "$camp" --build-dir "$build" --no-build
check "second merge: the record is there, not new" records_are "$camp/failures.jsonl" "len(r) == 1 and not r[0]['new']"
# Share 0 again: it resumes in its folder, reads the merged corpus, and skips the known bug.
merged=$(ls "$camp/corpus" | wc -l) own=$(ls "$camp/shards/0/corpus" | wc -l) seeded=$(ls "$scratch/seeds" | wc -l)
expect_nightly 0 "share 0/3 of the campaign in $camp" "${run[@]}" --shard 0/3 --impl host
check "share 0/3 again: the bug is known to it" grep -q 'row_invariance|plugin:' "$camp/shards/0/known_signatures.txt"
loaded=$(sed -n 's/.*INFO: seed corpus: files: \([0-9]*\).*/\1/p' "$camp/shards/0/logs/w0-r0.log")
check "share 0/3 again: its fuzzer read its corpus, the merged corpus and the seeds ($loaded = $own + $merged + $seeded files)" \
  test "${loaded:-0}" -eq $((own + merged + seeded))
check "share 0/3 again: its previous report moved to history/" test -n "$(ls "$camp/shards/0/history")"
# A share of another campaign (another seed) is refused before the last merge's report moves.
cp -r "$camp/shards/1" "$scratch/other" && sed -i 's/"seed": "11"/"seed": "12"/' "$scratch/other/campaign.json"
history_before=$(ls "$camp/history" | wc -l)
expect_nightly 2 "is a share of another campaign than .*seed 11" --merge "$camp/shards/0" "$scratch/other" \
  --out "$camp" --build-dir "$build" --no-build
check "the refused merge left the last report in place" test -f "$camp/report.md" -a -f "$camp/campaign.json"
check "the refused merge moved nothing to history/" test "$(ls "$camp/history" | wc -l)" -eq "$history_before"
# Refused into an --out of its own, it leaves no folder behind (it left an empty one).
expect_nightly 2 "is a share of another campaign than .*seed 11" --merge "$camp/shards/0" "$scratch/other" \
  --out "$scratch/new-out" --build-dir "$build" --no-build
check "the refused merge left no --out folder" test ! -e "$scratch/new-out"
# A merge of shares whose corpora are empty says so (its summary line was empty).
cp -r "$camp/shards/0" "$scratch/empty-share" && rm -rf "$scratch/empty-share/corpus" && mkdir "$scratch/empty-share/corpus"
output=$("$nightly" --merge "$scratch/empty-share" --out "$scratch/empty-out" --build-dir "$build" --no-build 2>&1)
check "an empty merge says it had no input" grep -q "nightly: no input to merge: the corpora are empty (corpus: 0 inputs)" <<<"$output"
[ "$fails" -eq 0 ] || exit 1
