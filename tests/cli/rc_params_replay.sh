#!/usr/bin/env bash
# rc_params_replay.sh GATECHECK PLUGIN WORK: a run replaying a failure's
# RapidCheck reproduce string (RC_PARAMS="reproduce=...", as the report
# prints it) says it is a replay of that string. It used to print a fresh
# random seed ("replay this run with --seed N"), a budget and RapidCheck's own
# random seed, none of which the replay uses; --json still records no seed.
. "$(dirname "$0")/script_start.sh"
run=(check --impl "plugin:$plugin" --properties accuracy --scale-share 0)  # a small case's failure: RapidCheck's string
"$gc" "${run[@]}" --seed 42 --cases 20 --corpus "$work/found" >"$work/found.log" 2>&1
reproduce=$(sed -n 's/^ *RapidCheck: RC_PARAMS="\(reproduce=[^"]*\)"$/\1/p' "$work/found.log")
[ -n "$reproduce" ] || { cat "$work/found.log"; echo "FAIL: the failing run printed no RC_PARAMS line"; exit 1; }
RC_PARAMS=$reproduce "$gc" "${run[@]}" --corpus "$work/replay" --json "$work/replay.json" >"$work/replay.out" 2>"$work/replay.err"
rc=$?
[ $rc -eq 1 ] || fail "the replay exited $rc (want 1: the failure is still there)"
grep -Eq "^gatecheck check: replay of the RC_PARAMS reproduce string \(plugin:.*@cpu/accuracy\)" "$work/replay.err" ||
  fail "the header does not say the run is a replay of the RC_PARAMS reproduce string"
if grep -Ein 'seed|budget' "$work/replay.err" "$work/replay.out"; then
  fail "the replay shows a seed or a budget it does not use (above)"
fi
grep -Eq "^replay of the RC_PARAMS reproduce string, .*: 1 claimed property failed" "$work/replay.out" ||
  fail "the summary line does not say the run was a replay"
grep -q '"seed": null' "$work/replay.json" || fail "--json records a seed the replay did not use: $(grep '"seed"' "$work/replay.json")"
grep -q '"rc_params_reproduce"' "$work/replay.json" || fail "--json does not say the run was a replay"
saved=$(find "$work/replay" -name '*.json' | head -n 1)
grep -q '"note": "found by gatecheck check replaying the RC_PARAMS reproduce string' "$saved" ||
  fail "the saved case's note does not say it was found by a replay: $(grep '"note"' "$saved")"
if [ $fails -ne 0 ]; then
  echo "--- replay stderr ---"; cat "$work/replay.err"; echo "--- replay stdout ---"; cat "$work/replay.out"
  exit 1
fi
echo "ok: the replay says so, and shows no seed or budget"
