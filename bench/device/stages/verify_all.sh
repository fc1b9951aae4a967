# verify_all: this tree's GPU claims in one call, each part under its own time limit:
#   rms.log       rmsnorm_modulate's kernels against the host twin (every path, the one-pass backward)
#   rms-bench.md  the benchmark at 32768 and 131072 rows x 5376 and 3072, bf16, 9 gates, both backward paths
#   split.log     cuda-repro against host-repro on every path and partition, and the cost test
#                 (reproducible backward beside today's and the copy; the 64-state combine)
#   budget.txt    the budget seed at 20 s and two seeds at 10 s (--jobs 16), then the seed's report
#   plain.log     plain_bitwise_vs_nn_rmsnorm: its tests where LibTorch has rms_norm, and a quick sweep
#                 of cuda and torch-eager on cuda against RL-Kernel's report
# About 7 minutes on the H200 after the build.
. "$(dirname "$0")/../stage_common.sh"
need "$GC"
timeout 60 "$BUILD/tests/cuda/test_rmsnorm_cuda_vs_host" > "$D/rms.log" 2>&1
echo "rms tests rc=$?: $(grep -E 'PASSED|FAILED' "$D/rms.log" | head -3 | tr '\n' ' ')"
timeout 60 "$BUILD/bench/gatecheck-rmsnorm-bench" --rows 32768,131072 --dims 5376,3072 --gates 9 --dtypes bf16 > "$D/rms-bench.md" 2>&1
cat "$D/rms-bench.md"
{
  (cd "$BUILD" && timeout 150 ctest -L gpu -R "SplitCuda|^Cuda" --output-on-failure)
  echo "split ctest rc=$?"
  timeout 90 "$BUILD/tests/split/split_cuda_test" --gtest_filter='SplitCuda.CostAgainstTodaysBackward'
  echo "cost rc=$?"
} > "$D/split.log" 2>&1
grep -E "tests passed|rc=|ms|us|x " "$D/split.log" | grep -vE "^\s*[0-9]+/[0-9]+ Test" | head -30
least() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(min(p['cases'] for p in r['results'] if p.get('claimed')))" "$1" 2>/dev/null || echo '?'; }
{
  for sp in "1054733551882 20" "42 10" "7 10"; do
    set -- $sp
    t0=$(date +%s.%N)
    timeout 60 "$GC" check --impl cuda --device cuda --seconds "$2" --jobs 16 --seed "$1" --json "/tmp/b-$1.json" > "/tmp/b-$1.txt" 2>&1
    rc=$?
    echo "gatecheck check --impl cuda --device cuda --seconds $2 --jobs 16 --seed $1: exit $rc, wall $(python3 -c "print(round($(date +%s.%N) - $t0, 1))") s, least claimed cases $(least /tmp/b-$1.json); $(tail -1 /tmp/b-$1.txt)"
  done
  echo; echo "== the seed's report"; cat /tmp/b-1054733551882.txt
} > "$D/budget.txt" 2>&1
head -3 "$D/budget.txt"
{
  (cd "$BUILD" && timeout 100 ctest -R "SweepPlain" --output-on-failure)
  echo "plain ctest rc=$?"
  env -u PYTHONPATH timeout 150 "$GC" sweep --op rmsnorm_modulate --impl cuda --impl torch-eager --device cuda --quick \
    --reps 0 --json /tmp/plain.json --compare bench/reference/h3_rmsnorm_b200.json --corpus /tmp/plain-corpus
  echo "sweep rc=$?"
} > "$D/plain.log" 2>&1
grep -E "tests passed|rc=|plain_bitwise" "$D/plain.log" | head -12
