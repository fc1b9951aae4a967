#!/usr/bin/env bash
# nightly_op.sh NIGHTLY BUILD PLAIN_BUILD SCRATCH: --op rmsnorm_modulate runs that op's
# fuzz target, fuzz_rmsnorm_modulate, from its own seeds: the campaign
# records the fuzzer, the worker fuzzes, and its statistics count the op's
# own value classes (binade_span, zero_rows, huge), which only its seeds and
# decoder make; a merge of it runs the same target. An op with no seeds (no
# such op) is a usage error naming them, and so is PLAIN_BUILD (a build whose
# fuzz targets are replay programs) given as the libFuzzer build.
set -uo pipefail
nightly=$1 build=$2 plain_build=$3 scratch=$4
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
# Its merge runs its own target (the shares' campaign.json names it), not gate_residual's.
expect_nightly 0 "no new failures over 1 share\(s\)" --merge "$camp" --out "$scratch/merged" --build-dir "$build" --no-build
check "the merge ran fuzz_rmsnorm_modulate" grep -q '^nightly: [^ ]*/fuzz_rmsnorm_modulate -merge=1' "$scratch/merged/logs/merge.log"
# A plain build's target (the replay program) is refused by name: it kept no input in a merge
# and emptied the corpus.
expect_nightly 2 "is not a libFuzzer build" --op rmsnorm_modulate --hours 0.003 --jobs 1 --impl host \
  --out "$scratch/plain" --build-dir "$plain_build" --no-build
expect_nightly 2 "--op 'no_such_op': no such op \\(no seeds in corpus/seeds/fuzz_no_such_op" --op no_such_op --hours 0.003 --jobs 1 --impl host \
  --out "$scratch/unknown" --build-dir "$build" --no-build
[ "$fails" -eq 0 ] || exit 1
