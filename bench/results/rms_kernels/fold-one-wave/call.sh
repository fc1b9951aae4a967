# One call on the GPU machine, from the repository root, after
#   . .deps/remote-setup.sh && export OUT && BUILD_TARGETS="gatecheck-rmsnorm-bench test_rmsnorm_cuda_vs_host" \
#     RMS_BENCH=0 NCU=0 bench/device/run.sh rms_iterate
# (which builds build-device and runs the kernels' GPU tests): each kernel of a forward and backward
# alone under ncu (kernels.txt), the fold's launch and occupancy (ncu-fold.txt), and the README's
# rmsnorm_modulate table with torch eager (table.md). Files under $OUT/call.
B=build-device; O=$OUT/call; mkdir -p $O; RB=$B/bench/gatecheck-rmsnorm-bench
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv > $O/machine.txt
timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum --print-units base --launch-count 24 --csv $RB \
  --rows 32768 --dims 5376 --gates 9 --dtypes bf16 --reps 1 --no-torch 2>/dev/null |
  python3 bench/device/ncu_kernel_times.py > $O/kernels.txt 2>&1
echo "kernels exit $?"
timeout 120 ncu --clock-control none -k regex:bwd_fold --launch-count 1 --section SpeedOfLight --section Occupancy \
  --section LaunchStats $RB --rows 32768 --dims 5376 --gates 9 --dtypes bf16 --reps 1 --no-torch > $O/ncu-fold.txt 2>&1
echo "ncu fold exit $?"
timeout 240 $RB --rows 32768,131072 --dims 3072,5376,5001 --gates 9 --dtypes bf16 > $O/table.md 2>&1
echo "table exit $?"
grep -E "plan_scan|radix|onepass|fold|check_index" $O/kernels.txt
grep -E "Duration|DRAM Throughput|Block Limit|Waves|Registers Per|Achieved Occ" $O/ncu-fold.txt
cat $O/table.md
