#!/usr/bin/env bash
# fuzz_finds_planted.sh FUZZER PLUGIN DICT SCRATCH SECONDS SEEDS: fuzz_gate_residual
# on the planted plugin, from the seeds, must report a claimed failure in time.
set -uo pipefail
fz=$1 plugin=$2 dict=$3 scratch=$4 secs=$5 seeds=$6
rm -rf "$scratch" && mkdir -p "$scratch/corpus"
start=$(date +%s)
GATECHECK_FUZZ_IMPL=plugin:$plugin GATECHECK_FUZZ_FAILURES=$scratch/failures \
  "$fz" -dict="$dict" -max_total_time="$secs" -use_value_profile=1 -artifact_prefix="$scratch/" \
  "$scratch/corpus" "$seeds" >"$scratch/log" 2>&1
took=$(( $(date +%s) - start ))
if grep -q 'claimed property failed' "$scratch/log" && ls "$scratch"/failures/*.json >/dev/null 2>&1; then
  grep -A3 '^---- ' "$scratch/log" | head -8
  echo "planted bug found after ${took}s; case: $(ls "$scratch"/failures/*.json | head -1)"
  exit 0
fi
echo "planted bug NOT found within ${secs}s"; tail -5 "$scratch/log"; exit 1
