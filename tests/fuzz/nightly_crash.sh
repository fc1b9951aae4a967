#!/usr/bin/env bash
# nightly_crash.sh NIGHTLY BUILD PLUGIN SCRATCH: a plugin that segfaults on
# every call (crashing_plugin.c) makes a failing campaign: exit 1, a new
# failure record naming the signal with a case file and a repro command, and
# the report listing it. The replay of the crash input used to die of the same
# SIGSEGV, and the campaign reported "0 new failure(s)" and exit 0.
set -uo pipefail
nightly=$1 build=$2 plugin=$3 scratch=$4
. "$(dirname "$0")/nightly_expect.sh"
rm -rf "$scratch" && mkdir -p "$scratch"
camp=$scratch/camp
expect_nightly 1 "NEW failure accuracy\|plugin:" --hours 0.003 --jobs 1 --impl "plugin:$plugin" --out "$camp" --build-dir "$build"
record=$(grep -m1 '"new":true' "$camp/failures.jsonl")
echo "record: $record"
check "the record names the signal" grep -q '"crash":"crashed: .*SIGSEGV' <<<"$record"
check "the record has a repro command" grep -q '"repro":"./gatecheck repro ' <<<"$record"
check "the repro isolates the crashing call" grep -q -- '--isolate"' <<<"$record"
case_file=$(sed -n 's/.*"case":"\([^"]*\)".*/\1/p' <<<"$record")
check "the case file exists" test -s "$case_file"
check "the report lists the new failure" grep -q '^- \*\*NEW\*\* `accuracy|plugin:' "$camp/report.md"
check "the report gives the repro command" grep -q 'repro: `./gatecheck repro ' "$camp/report.md"
[ "$fails" -eq 0 ] || exit 1
