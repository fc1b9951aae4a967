# rmsnorm_modulate's one pass with its column sums in shared memory (GATECHECK_RMS_BWD_EXP=2,
# two blocks an SM) timed beside the default kernel, in one call on the GPU, after
#   . .deps/remote-setup.sh && BUILD_TARGETS="gatecheck-rmsnorm-bench test_rmsnorm_cuda_vs_host" \
#     bench/device/run.sh rms_iterate
# (build-device). The benchmark alternates the two, twice; then the GPU tests with the switch on,
# and ncu on the one pass with each. Files under $OUT/exp. Its results on an H100: h100/.
B=build-device; O=$OUT/exp; mkdir -p $O
RB=$B/bench/gatecheck-rmsnorm-bench
for e in 0 2 0 2; do
  echo "== GATECHECK_RMS_BWD_EXP=$e"
  GATECHECK_RMS_BWD_EXP=$e timeout 60 $RB --rows 32768,131072 --dims 5376,3072 --gates 9 --dtypes bf16,f16 --no-torch
done > $O/bench.log 2>&1
{
  echo "== GATECHECK_RMS_BWD_EXP=2: test_rmsnorm_cuda_vs_host"
  GATECHECK_RMS_BWD_EXP=2 timeout 100 $B/tests/cuda/test_rmsnorm_cuda_vs_host 2>&1 | grep -E "FAILED|PASSED|Failure" | head
} > $O/tests.log 2>&1
for e in 0 2; do
  GATECHECK_RMS_BWD_EXP=$e timeout 60 ncu --clock-control none -k regex:bwd_onepass --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats --section SchedulerStats \
    $RB --rows 32768 --dims 5376 --gates 9 --dtypes bf16 --reps 1 --no-torch > $O/ncu-exp$e.log 2>&1
done
grep -E "^==|^\| (bf16|f16) " $O/bench.log | cut -d'|' -f1-11
cat $O/tests.log
grep -E "Duration|Registers Per|Issued Warp|Active Warps Per" $O/ncu-exp*.log
