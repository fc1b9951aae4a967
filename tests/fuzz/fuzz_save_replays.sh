#!/usr/bin/env bash
# fuzz_save_replays.sh FUZZER PLUGIN CRASH_INPUT GATECHECK SCRATCH: the fuzz
# target, run on a crash input of the planted plugin, saves the case through
# the findings service (IMPL-PROPERTY-DIGEST.json), and the repro line in the
# saved file replays the failure (exit 1); the same file passes on host.
set -uo pipefail
fz=$1 plugin=$2 crash=$3 gc=$4 scratch=$5
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$scratch" && mkdir -p "$scratch"
GATECHECK_FUZZ_IMPL="plugin:$plugin" GATECHECK_FUZZ_FAILURES="$scratch/ff" "$fz" "$crash" >"$scratch/fuzz.log" 2>&1 &&
  fail "the fuzz target did not stop on the planted bug"
grep -q 'claimed property failed' "$scratch/fuzz.log" || { tail "$scratch/fuzz.log"; fail "no failure reported"; }
n=0
for f in "$scratch"/ff/*.json; do
  [ -f "$f" ] || fail "the fuzz target saved no case"
  n=$((n + 1))
  # The name is the service's: IMPL-PROPERTY-DIGEST.json, PROPERTY the record's.
  read -r property repro < <(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["failure"]; print(r["property"], r["repro"])' "$f")
  [[ $(basename "$f") =~ ^[A-Za-z0-9_-]+-${property}-[0-9a-f]{16}\.json$ ]] ||
    fail "$(basename "$f") is not named IMPL-$property-DIGEST.json"
  grep -qF "  case saved: $f" "$scratch/fuzz.log" || fail "the log does not name $f"
  grep -qF "  repro: $repro" "$scratch/fuzz.log" || fail "the log's repro line is not the file's: $repro"
  [[ $repro == "./gatecheck repro $f --impl plugin:$plugin" ]] || fail "repro line: $repro"
  # The repro line replays: ./gatecheck is this build's CLI.
  eval "${repro/#.\/gatecheck/\"\$gc\"}" >"$scratch/repro.log" 2>&1
  rc=$?
  [ $rc -eq 1 ] || { cat "$scratch/repro.log"; fail "the repro line exited $rc, not 1 (the failure)"; }
  "$gc" repro "$f" --impl host >"$scratch/host.log" 2>&1 || { cat "$scratch/host.log"; fail "host fails the saved case"; }
done
echo "ok: $n case(s) saved under the findings service's name; each repro line replays its failure"
