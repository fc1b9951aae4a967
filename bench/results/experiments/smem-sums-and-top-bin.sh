# Two experiments' switches timed beside the code without them, in one call on the GPU, after
#   . .deps/remote-setup.sh && BUILD_TARGETS="..." bench/device/run.sh rms_iterate rms_sanitize
# (build-device; rms_iterate with RMS_EXP=GATECHECK_RMS_BWD_EXP gives the switch at 1):
#   - GATECHECK_RMS_BWD_EXP=2: rmsnorm_modulate's one-pass column sums in shared memory (all three);
#   - GATECHECK_CUDA_TUNING=binned_top and GATECHECK_REPRO_EXP=1: the reproducible modes' terms of
#     the top bin on BinnedFp64Sum::add_top, for gate_residual and rmsnorm_modulate.
# Files under $OUT/exp.
B=build-device; O=$OUT/exp; mkdir -p $O
S=$B/tests/split/split_cuda_test; R=$B/tests/split/rmsnorm_repro_cuda_test
{
  echo "== rmsnorm one pass, GATECHECK_RMS_BWD_EXP=2: bench (base, then 2)"
  timeout 60 $B/bench/gatecheck-rmsnorm-bench --rows 32768,131072 --dims 5376,3072 --gates 9 --dtypes bf16 --no-torch
  GATECHECK_RMS_BWD_EXP=2 timeout 60 $B/bench/gatecheck-rmsnorm-bench --rows 32768,131072 --dims 5376,3072 --gates 9 --dtypes bf16 --no-torch
} > $O/rms-onepass.log 2>&1
{
  for pass in 1 2; do
    echo "== gate_residual repro cost, pass $pass: base"; timeout 60 $S --gtest_filter='SplitCuda.CostAgainstTodaysBackward' 2>&1 | grep -E " ms|us |OK|FAILED"
    echo "== gate_residual repro cost, pass $pass: binned_top"; GATECHECK_CUDA_TUNING=binned_top timeout 60 $S --gtest_filter='SplitCuda.CostAgainstTodaysBackward' 2>&1 | grep -E " ms|us |OK|FAILED"
  done
  echo "== gate_residual repro cost: binned_top,seg=256"; GATECHECK_CUDA_TUNING=binned_top,seg=256 timeout 60 $S --gtest_filter='SplitCuda.CostAgainstTodaysBackward' 2>&1 | grep -E " ms|us |OK|FAILED"
} > $O/gr-top.log 2>&1
{
  for pass in 1 2; do
    echo "== rmsnorm repro cost, pass $pass: base"; timeout 80 $R --gtest_filter='RmsnormReproCuda.CostAgainstTheCudaBackward' 2>&1 | grep -E "ms|us |OK|FAILED"
    echo "== rmsnorm repro cost, pass $pass: top"; GATECHECK_REPRO_EXP=1 timeout 80 $R --gtest_filter='RmsnormReproCuda.CostAgainstTheCudaBackward' 2>&1 | grep -E "ms|us |OK|FAILED"
  done
} > $O/rms-top.log 2>&1
{
  echo "== GATECHECK_RMS_BWD_EXP=2: test_rmsnorm_cuda_vs_host"
  GATECHECK_RMS_BWD_EXP=2 timeout 100 $B/tests/cuda/test_rmsnorm_cuda_vs_host 2>&1 | grep -E "FAILED|PASSED|Failure" | head
  echo "== binned_top: split_cuda_test"
  GATECHECK_CUDA_TUNING=binned_top timeout 150 $S --gtest_filter='-*CostAgainst*' 2>&1 | grep -E "FAILED|PASSED|Failure|differ" | head
  echo "== GATECHECK_REPRO_EXP=1: rmsnorm_repro_cuda_test"
  GATECHECK_REPRO_EXP=1 timeout 150 $R --gtest_filter='-*CostAgainst*' 2>&1 | grep -E "FAILED|PASSED|Failure|differ" | head
} > $O/tests.log 2>&1
cat $O/*.log
