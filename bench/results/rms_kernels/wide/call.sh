# (Runs at commit f6be8ae, where the kernel and --wide existed; both were removed after this run.)
# The one pass a chunk a thread (one_pass_wide) beside the default one pass: the GPU tests in full,
# the table at two widths and both 16-bit types, ncu's view of each one pass at bf16 32768 x 5376 x 9,
# and compute-sanitizer's memcheck and racecheck on the tests that run it. From the repository root
# on the GPU machine, after
#   . .deps/remote-setup.sh && export OUT && BUILD_TARGETS="gatecheck-rmsnorm-bench test_rmsnorm_cuda_vs_host" \
#     bench/device/run.sh rms_iterate
B=build-device; O=$OUT/wide; mkdir -p $O; RB=$B/bench/gatecheck-rmsnorm-bench; T=$B/tests/cuda/test_rmsnorm_cuda_vs_host
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv > $O/machine.txt
timeout 120 $T > $O/tests.log 2>&1; echo "tests exit $?"
timeout 150 $RB --rows 32768,131072 --dims 5376,3072 --gates 9 --dtypes bf16,f16 --no-torch --wide > $O/table.md 2>&1
echo "table exit $?"
for k in 'regex:bwd_onepass_kernelINS_6bf16_tELi2ELb1' 'regex:bwd_wide_kernelINS_6bf16_t'; do
  n=$(echo "$k" | cut -c7-20)
  timeout 100 ncu --clock-control none --kernel-name-base mangled -k "$k" --launch-count 1 --section SpeedOfLight \
    --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
    $RB --rows 32768 --dims 5376 --gates 9 --dtypes bf16 --reps 1 --no-torch --wide > $O/ncu-$n.log 2>&1
  echo "ncu $n exit $?"
done
F='*OnePassBackward*:*FoldOfDweightGroupsByChunks*:*SpecialValuesEveryPath*'
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $T --gtest_filter="$F" > $O/sanitizer-$tool.log 2>&1
  echo "$tool exit $?"; tail -3 $O/sanitizer-$tool.log
done
grep -E "PASSED|FAILED" $O/tests.log; cat $O/table.md
for f in $O/ncu-*.log; do echo "== $f"; grep -E "Duration|Registers|Achieved Occupancy|Theoretical Occupancy|Block Size|Issued Warp|No Eligible|Active Warps Per|Memory Throughput|L1/TEX Hit|Stall|cycles being" $f | head -24; done
