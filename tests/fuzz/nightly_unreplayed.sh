#!/usr/bin/env bash
# nightly_unreplayed.sh NIGHTLY BUILD PLUGIN SCRATCH: a plugin that crashes at
# its 300th call in a process (late_crashing_plugin.c) crashes the fuzzer, but
# no replay of the crash input alone: the campaign records the input itself
# (signature fuzzer-crash|IMPL|not-reproduced), with libFuzzer's own account
# of the crash as the record's summary and in the report. That account stood
# in the record's shape, so the report read "... on ==1==ERROR: ...".
set -uo pipefail
nightly=$1 build=$2 plugin=$3 scratch=$4
. "$(dirname "$0")/nightly_expect.sh"
rm -rf "$scratch" && mkdir -p "$scratch"
camp=$scratch/camp
expect_nightly 1 "NEW failure fuzzer-crash\|plugin:.*\|not-reproduced" --hours 0.005 --jobs 1 \
  --impl "plugin:$plugin" --out "$camp" --build-dir "$build" --no-build
record=$(grep -m1 '"new":true' "$camp/failures.jsonl")
echo "record: $record"
check "the record's summary is the fuzzer's account of the crash" grep -Eq '"summary":"[^"]*(SEGV|deadly signal)' <<<"$record"
check "the record's shape says it is the input, not a case" grep -q '"shape":"the crash input (no case' <<<"$record"
check "the record has the fuzzer's repro command" grep -q '"repro":"GATECHECK_FUZZ_IMPL=plugin:' <<<"$record"
check "the report lists it on the input" grep -q '^- \*\*NEW\*\* `fuzzer-crash|plugin:.*` on the crash input (no case' "$camp/report.md"
check "the report gives the fuzzer's account" grep -Eq '^  - the fuzzer: .*(SEGV|deadly signal)' "$camp/report.md"
[ "$fails" -eq 0 ] || exit 1
