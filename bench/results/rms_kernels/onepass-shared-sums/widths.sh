# On the GPU machine, from the repository root, after
#   . .deps/remote-setup.sh && export OUT && BUILD_TARGETS="gatecheck-rmsnorm-bench" bench/device/run.sh rms_iterate
# (which builds build-device), in the same call: the one pass with its sums where the default puts
# them and in registers, at widths on both sides of the rule, 16-bit and f32. Files under $OUT/widths.
B=build-device; O=$OUT/widths; mkdir -p $O; RB=$B/bench/gatecheck-rmsnorm-bench
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv > $O/machine.txt
timeout 200 $RB --rows 32768,131072 --dims 264,1024,2048,3072,4096,4104,5376,5632 --gates 9 --dtypes bf16 --no-torch > $O/bf16.md 2>&1; echo "bf16 exit $?"
timeout 100 $RB --rows 32768,131072 --dims 132,1024,2048,2052,2816 --gates 9 --dtypes f32 --no-torch > $O/f32.md 2>&1; echo "f32 exit $?"
cat $O/bf16.md $O/f32.md | cut -d'|' -f1-13
