#!/usr/bin/env bash
# fuzz_smoke.sh FUZZER DICT SCRATCH SECONDS SEEDS: a bounded libFuzzer run that
# must end cleanly (no crash, leak, timeout or sanitizer report).
set -euo pipefail
fz=$1 dict=$2 scratch=$3 secs=$4 seeds=$5
rm -rf "$scratch" && mkdir -p "$scratch/corpus"
"$fz" -dict="$dict" -max_total_time="$secs" -timeout=10 -print_final_stats=1 \
  -artifact_prefix="$scratch/" "$scratch/corpus" "$seeds" 2>&1 | tee "$scratch/log" | grep -E 'DONE|exec/s|stat::|ERROR' | tail -8
grep -q '^Done\|DONE' "$scratch/log" || { echo "smoke: fuzzer did not finish cleanly"; exit 1; }
