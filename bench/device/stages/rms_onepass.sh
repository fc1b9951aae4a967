# rms_onepass: rmsnorm_modulate's one-pass backward against the two passes.
#   rms.log       the kernels against the host twin (every path, the one-pass backward among them)
#   rms-bench.md  the benchmark at 32768 and 131072 rows x 5376 and 3072, bf16, 9 gates, both backward paths
#   split.log     cuda-repro against host-repro on every path and partition, and its cost test
# About 4 minutes on the H200 after the build.
. "$(dirname "$0")/../stage_common.sh"
timeout 120 "$BUILD/tests/cuda/test_rmsnorm_cuda_vs_host" > "$D/rms.log" 2>&1
echo "rms tests rc=$?: $(grep -E 'PASSED|FAILED' "$D/rms.log" | head -5 | tr '\n' ' ')"
timeout 90 "$BUILD/bench/gatecheck-rmsnorm-bench" --rows 32768,131072 --dims 5376,3072 --gates 9 --dtypes bf16 > "$D/rms-bench.md" 2>&1
cat "$D/rms-bench.md"
{
  (cd "$BUILD" && timeout 150 ctest -L gpu -R "SplitCuda|^Cuda" --output-on-failure)
  echo "split ctest rc=$?"
  timeout 90 "$BUILD/tests/split/split_cuda_test" --gtest_filter='SplitCuda.CostAgainstTodaysBackward'
  echo "cost rc=$?"
} > "$D/split.log" 2>&1
grep -E "tests passed|rc=|ms|us|x " "$D/split.log" | grep -vE "^\s*[0-9]+/[0-9]+ Test" | head -30
