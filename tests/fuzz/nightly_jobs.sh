#!/usr/bin/env bash
# nightly_jobs.sh NIGHTLY BUILD SCRATCH: --jobs 2 runs two libFuzzer workers on
# one corpus, each with its own seed under --seed, and the report's exec/s is
# summed over them: the overall figure is every worker's cases over the
# fuzzing time, and each point of the timeline is the sum of the workers'
# status lines at that time. (Worker w's GPU under --gpus N is w mod N; that
# needs GPUs: bench/device/stages/nightly.sh.)
set -uo pipefail
nightly=$1 build=$2 scratch=$3
. "$(dirname "$0")/nightly_expect.sh"
rm -rf "$scratch" && mkdir -p "$scratch"
camp=$scratch/camp
expect_nightly 0 "2 worker\(s\) cpu, impl host" --hours 0.003 --jobs 2 --seed 5 --impl host --out "$camp" --build-dir "$build" --no-build
for w in 0 1; do
  check "worker $w fuzzed" grep -q 'INITED' "$camp/logs/w$w-r0.log"
  check "worker $w has its own seed ($((5 + 1000 * w)))" grep -q "INFO: Seed: $((5 + 1000 * w))\$" "$camp/logs/w$w-r0.log"
done
check "the report says 2 workers" grep -q '^- workers: 2 (cpu)' "$camp/report.md"
check "exec/s overall = the workers' cases / fuzzing time, each worker's cases counted" python3 -c "
import glob, json, sys
r = json.load(open(sys.argv[1] + '/report.json'))
per_worker = [json.load(open(f))['cases'] for f in sorted(glob.glob(sys.argv[1] + '/stats/w*-r0.json'))]
print('  workers', per_worker, 'cases', r['cases'], 'in', r['fuzz_seconds'], 's:', round(r['execs_per_s']['overall']), 'exec/s')
ok = len(per_worker) == 2 and min(per_worker) > 0 and r['cases'] == sum(per_worker)
sys.exit(not (ok and r['fuzz_seconds'] > 0 and abs(r['execs_per_s']['overall'] - r['cases'] / r['fuzz_seconds']) < 1e-6))" "$camp"
check "each timeline point sums the workers' exec/s" python3 -c "
import collections, json, sys
rows = [l.split() for l in open(sys.argv[1] + '/timeline.tsv')]
by_t = collections.defaultdict(dict)
for t, w, execs, ft, cov, eps, corp in rows: by_t[float(t)][w] = float(eps)
r = json.load(open(sys.argv[1] + '/report.json'))
both = [t for t in by_t if len(by_t[t]) == 2]
sys.exit(not (both and all(abs(p['execs_per_s'] - sum(by_t[p['t']].values())) < 1e-6 for p in r['timeline'])))" "$camp"
[ "$fails" -eq 0 ] || exit 1
