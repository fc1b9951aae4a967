#!/usr/bin/env bash
# fuzz_smoke.sh FUZZER DICT SCRATCH SECONDS SEEDS [INPUTS...]: a bounded
# libFuzzer run from the seeds (and any further input folders, such as past
# findings) that must end cleanly (no crash, leak, timeout or sanitizer report).
# The libFuzzer seed is fixed (GATECHECK_FUZZ_SMOKE_SEED, default 1) so that a
# CI smoke run explores the same inputs each time; the nightly campaign is
# where new ground is broken. On a failure the fuzzer's evidence and repro
# command are printed.
set -uo pipefail
fz=$1 dict=$2 scratch=$3 secs=$4 seeds=$5
shift 5
rm -rf "$scratch" && mkdir -p "$scratch/corpus"
"$fz" -seed="${GATECHECK_FUZZ_SMOKE_SEED:-1}" -dict="$dict" -max_total_time="$secs" -timeout=10 \
  -print_final_stats=1 -artifact_prefix="$scratch/" "$scratch/corpus" "$seeds" "$@" >"$scratch/log" 2>&1
rc=$?
grep -E 'DONE|exec/s|stat::' "$scratch/log" | tail -n 8
if [ "$rc" -ne 0 ] || ! grep -q '^Done\|DONE' "$scratch/log"; then
  echo "smoke: the fuzzer did not finish cleanly (exit $rc); the end of its log:"
  tail -n 40 "$scratch/log"
  exit 1
fi
