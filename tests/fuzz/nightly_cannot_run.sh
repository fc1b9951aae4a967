#!/usr/bin/env bash
# nightly_cannot_run.sh NIGHTLY BUILD SCRATCH: a campaign whose fuzzer cannot
# run is not a clean one. An unknown --impl or an unknown name in
# GATECHECK_FUZZ_PROPERTIES is a usage error (exit 2), a plugin that does not
# load or --gpus without a GPU cannot run (exit 3), all before any worker
# starts; a fuzzer that fails at every start (here: its log cannot be
# written) makes its worker give up, and the campaign exits 3 with status
# "failed". All of these used to exit 0 with "no new failures" while the
# workers restarted the fuzzer; the bad property name was then only caught by
# a worker giving up mid-campaign.
set -uo pipefail
nightly=$1 build=$2 scratch=$3
. "$(dirname "$0")/nightly_expect.sh"
rm -rf "$scratch" && mkdir -p "$scratch"
run=(--hours 0.003 --jobs 1 --build-dir "$build")
expect_nightly 2 "unknown implementation 'bogus'" "${run[@]}" --impl bogus --out "$scratch/bogus"
check "no worker started for --impl bogus" test ! -e "$scratch/bogus/logs/w0-r0.log"
expect_nightly 3 "no-such-plugin.so" "${run[@]}" --impl "plugin:$scratch/no-such-plugin.so" --out "$scratch/noplugin"
if ! nvidia-smi -L >/dev/null 2>&1; then  # (where there is a GPU this part is skipped)
  expect_nightly 3 "--gpus 1: this machine has 0 CUDA device" --hours 0.003 --gpus 1 --build-dir "$build" --out "$scratch/gpus"
fi
GATECHECK_FUZZ_PROPERTIES=accuracy,no_such_property expect_nightly 2 \
  "GATECHECK_FUZZ_PROPERTIES: unknown property 'no_such_property' \(accuracy, .*, eager_exact\)" \
  "${run[@]}" --impl host --out "$scratch/props"
check "no worker started for a bad GATECHECK_FUZZ_PROPERTIES" test ! -e "$scratch/props/logs/w0-r0.log"
# Folders in place of the worker's log files: no fuzzer run can start.
mkdir -p "$scratch/nolog/logs/"w0-r{0,1,2,3,4,5}.log
expect_nightly 3 "worker 0 gave up" "${run[@]}" --impl host --out "$scratch/nolog"
check "campaign.json says \"failed\"" grep -q '"status": "failed"' "$scratch/nolog/campaign.json"
check "the report says why" grep -q 'status: failed (worker(s) gave up' "$scratch/nolog/report.md"
[ "$fails" -eq 0 ] || exit 1
