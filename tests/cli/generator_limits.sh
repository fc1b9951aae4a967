#!/usr/bin/env bash
# generator_limits.sh GATECHECK PLUGIN WORK: check's --max-rows, --max-dim and
# --max-gates reach the generator (the coverage shows rows past the default
# 1100), and a failure's RapidCheck reproduce string replays only under the
# same limits: with them it finds the failure again; without them it is
# refused (exit 2, naming the limits), never followed into some other case
# that passes.
. "$(dirname "$0")/script_start.sh"
"$gc" check --impl host --max-rows 3000 --max-dim 8 --properties accuracy,row_invariance --cases 150 --seed 1 \
  --corpus "$work/host" --json "$work/host.json" >"$work/host.out" 2>&1 || fail "the host run exited $? (want 0)"
grep -q '"max_rows": 3000' "$work/host.json" && grep -q '"max_dim": 8' "$work/host.json" ||
  fail "--json does not record the generator's limits: $(grep -A5 '"generator"' "$work/host.json")"
grep -q "replay this run with --seed 1 --max-rows 3000 --max-dim 8)" "$work/host.out" ||
  fail "the header's replay hint lacks the limits: $(head -1 "$work/host.out")"
grep -Eq "^  rows .* 1000\+ [1-9]" "$work/host.out" || fail "no case of 1000 rows or more with --max-rows 3000: $(grep '^  rows ' "$work/host.out")"
grep -Eq "^  dim .* (10-99|100-999|1000-4096|4097\+) " "$work/host.out" && fail "a dim above --max-dim 8: $(grep '^  dim ' "$work/host.out")"
"$gc" check --impl host --min-rows 1000 --max-rows 2000 --min-dim 10 --max-dim 64 --properties accuracy --cases 30 --seed 2 \
  --corpus "$work/min" --json "$work/min.json" >"$work/min.out" 2>&1 || fail "the --min-rows run exited $? (want 0)"
grep -Eq "^  rows +1000\+ 100%$" "$work/min.out" || fail "--min-rows 1000 drew smaller cases: $(grep '^  rows ' "$work/min.out")"
grep -Eq "^  dim +10-99 100%$" "$work/min.out" || fail "--min-dim 10 drew other dims: $(grep '^  dim ' "$work/min.out")"
grep -q '"min_rows": 1000' "$work/min.json" && grep -q '"min_dim": 10' "$work/min.json" ||
  fail "--json does not record the smallest shapes: $(grep -A8 '"generator"' "$work/min.json")"
grep -q "replay this run with --seed 2 --max-rows 2000 --max-dim 64 --min-rows 1000 --min-dim 10)" "$work/min.out" ||
  fail "the header's replay hint lacks --min-rows/--min-dim: $(head -1 "$work/min.out")"
"$gc" check --impl host --min-rows 1 --max-rows 50 --min-gates 1000 --max-gates 3000 --properties accuracy --cases 30 \
  --seed 3 --corpus "$work/gates" --json "$work/gates.json" >"$work/gates.out" 2>&1 || fail "the --min-gates run exited $? (want 0)"
grep -Eq "^  gates +1000\+ 100%$" "$work/gates.out" || fail "--min-gates 1000 drew fewer gates: $(grep '^  gates ' "$work/gates.out")"
grep -q '"min_gates": 1000' "$work/gates.json" || fail "--json does not record --min-gates"
limits=(--max-rows 2000 --max-dim 64)
run=(check --impl "plugin:$plugin" --properties accuracy --scale-share 0)  # a small case's failure: RapidCheck's string
"$gc" "${run[@]}" "${limits[@]}" --seed 42 --cases 30 --corpus "$work/found" >"$work/found.out" 2>&1
saved=$(ls "$work"/found/*.json 2>/dev/null | head -1)
[ -n "$saved" ] && grep -q '"note": "found by gatecheck check --seed 42 --max-rows 2000 --max-dim 64 after' "$saved" ||
  fail "the saved case's note does not say the run's limits: $(grep '"note"' "$saved" 2>/dev/null)"
line=$(grep -m1 'RapidCheck: RC_PARAMS=' "$work/found.out")
reproduce=$(printf '%s' "$line" | sed -n 's/^ *RapidCheck: RC_PARAMS="\(reproduce=[^"]*\)".*$/\1/p')
[ -n "$reproduce" ] || { cat "$work/found.out"; echo "FAIL: the failing run printed no RC_PARAMS line"; exit 1; }
case $line in
  *"(replay with --max-rows 2000 --max-dim 64)") ;;
  *) fail "the RC_PARAMS line does not name the limits to replay with: $line" ;;
esac
RC_PARAMS=$reproduce "$gc" "${run[@]}" "${limits[@]}" --corpus "$work/same" >"$work/same.out" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "the replay under the same limits exited $rc (want 1: the failure is still there)"
RC_PARAMS=$reproduce "$gc" "${run[@]}" --corpus "$work/other" >"$work/other.out" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "the replay under the default limits exited $rc (want 2: refused)"
grep -q "was made with generator limits rows<=2000,dim<=64,gates<=256,no-h3-dims, this run has the defaults" "$work/other.out" ||
  fail "the refusal does not name both limits: $(cat "$work/other.out")"
[ $fails -eq 0 ] || exit 1
echo "ok: the limits reach the generator, and a reproduce string replays only under its own"
