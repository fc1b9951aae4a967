#!/usr/bin/env bash
# nightly_op.sh NIGHTLY BUILD SCRATCH: --op rmsnorm_modulate runs that op's
# fuzz target, fuzz_rmsnorm_modulate, from its own seeds: the campaign
# records the fuzzer, the worker fuzzes, and its statistics count the op's
# own value classes (binade_span, zero_rows, huge), which only its seeds and
# decoder make. An op with no seeds (no such op) is a usage error naming them.
set -uo pipefail
nightly=$1 build=$2 scratch=$3
. "$(dirname "$0")/nightly_expect.sh"
rm -rf "$scratch" && mkdir -p "$scratch"
camp=$scratch/camp
expect_nightly 0 "1 worker\(s\) cpu, impl host" --op rmsnorm_modulate --hours 0.003 --jobs 1 --seed 5 --impl host \
  --out "$camp" --build-dir "$build" --no-build
check "campaign.json names fuzz_rmsnorm_modulate" grep -q '"fuzzer": "[^"]*/fuzz_rmsnorm_modulate"' "$camp/campaign.json"
check "the worker fuzzed" grep -q 'INITED' "$camp/logs/w0-r0.log"
check "its statistics count the op's own value classes" python3 -c "
import json, sys
v = json.load(open(sys.argv[1] + '/stats/w0-r0.json'))['values']
print('  values', v)
sys.exit(not all(v.get(k, 0) > 0 for k in ('binade_span', 'zero_rows', 'huge')))" "$camp"
expect_nightly 2 "seeds.*fuzz_no_such_op.*not a folder" --op no_such_op --hours 0.003 --jobs 1 --impl host \
  --out "$scratch/unknown" --build-dir "$build" --no-build
[ "$fails" -eq 0 ] || exit 1
