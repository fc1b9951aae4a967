# One call on the GPU machine, from the repository root, after
#   . .deps/remote-setup.sh && export OUT && BUILD_TARGETS="gatecheck-rmsnorm-bench test_rmsnorm_cuda_vs_host" \
#     bench/device/run.sh rms_iterate
# (which builds build-device and runs the GPU tests): the README's rmsnorm_modulate table with
# torch eager, f16 beside it, and the tests once more with their full output. Files under $OUT/call.
B=build-device; O=$OUT/call; mkdir -p $O; RB=$B/bench/gatecheck-rmsnorm-bench
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv > $O/machine.txt
timeout 100 $B/tests/cuda/test_rmsnorm_cuda_vs_host > $O/tests.log 2>&1; echo "tests exit $?"
timeout 200 $RB --rows 32768,131072 --dims 3072,5376,5001 --gates 9 --dtypes bf16 > $O/table.md 2>&1; echo "table exit $?"
timeout 100 $RB --rows 32768,131072 --dims 3072,5376 --gates 9,32 --dtypes f16,bf16 --no-torch > $O/table-gates.md 2>&1; echo "gates exit $?"
grep -E "PASSED|FAILED" $O/tests.log; cat $O/table.md $O/table-gates.md
