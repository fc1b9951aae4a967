#!/usr/bin/env bash
# fuzz_smoke.sh FUZZER DICT SCRATCH RUNS SEEDS [INPUTS...]: a bounded
# libFuzzer run from the seeds (and any further input folders, such as past
# findings) that must end cleanly (no crash, leak, timeout or sanitizer report).
# The libFuzzer seed (GATECHECK_FUZZ_SMOKE_SEED, default 1) and the number of
# runs are fixed, so that every machine tries the same inputs: bounded by time
# instead, a faster machine went further and found what a slower one had not
# reached (the corpus-file bugs of corpus/parser-regressions). A time cap
# (GATECHECK_FUZZ_SMOKE_CAP, default 200 s) still bounds a slow machine; it
# then says how far it got. The nightly campaign is where new ground is
# broken. On a failure the fuzzer's evidence and repro command are printed.
set -uo pipefail
fz=$1 dict=$2 scratch=$3 runs=$4 seeds=$5
shift 5
rm -rf "$scratch" && mkdir -p "$scratch/corpus"
"$fz" -seed="${GATECHECK_FUZZ_SMOKE_SEED:-1}" -dict="$dict" -runs="$runs" \
  -max_total_time="${GATECHECK_FUZZ_SMOKE_CAP:-200}" -timeout=10 \
  -print_final_stats=1 -artifact_prefix="$scratch/" "$scratch/corpus" "$seeds" "$@" >"$scratch/log" 2>&1
rc=$?
grep -E 'DONE|exec/s|stat::' "$scratch/log" | tail -n 8
if [ "$rc" -ne 0 ] || ! grep -q '^Done\|DONE' "$scratch/log"; then
  echo "smoke: the fuzzer did not finish cleanly (exit $rc); the end of its log:"
  tail -n 40 "$scratch/log"
  exit 1
fi
done_runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$scratch/log" | tail -n 1)
if [ -n "$done_runs" ] && [ "$done_runs" -lt "$runs" ]; then
  echo "smoke: note: stopped at the ${GATECHECK_FUZZ_SMOKE_CAP:-200} s cap after $done_runs of $runs runs (a slow machine)"
fi
