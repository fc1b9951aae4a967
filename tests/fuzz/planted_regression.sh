#!/usr/bin/env bash
# planted_regression.sh TOOLS PLUGIN CRASH_INPUT SCRATCH: the fuzzer's crash input
# for the planted bug becomes a JSON regression case (with a repro command)
# that fails on the planted plugin and passes on host.
set -euo pipefail
tools=$1 plugin=$2 crash=$3 scratch=$4
rm -rf "$scratch" && mkdir -p "$scratch"
set +e
"$tools" regress "$crash" --out "$scratch" --impl "plugin:$plugin" | tee "$scratch/regress.jsonl"
rc=${PIPESTATUS[0]}
set -e
[ "$rc" -eq 0 ] || { echo "regress found no failure in the planted crash input (exit $rc)"; exit 1; }
grep -q '"repro":"./gatecheck repro ' "$scratch/regress.jsonl"
case_file=$(ls "$scratch"/*.json | head -1)
if "$tools" check-case --impl "plugin:$plugin" "$case_file"; then echo "the JSON case no longer fails on the plugin"; exit 1; fi
"$tools" check-case --impl host "$case_file"
echo "ok: $case_file"
