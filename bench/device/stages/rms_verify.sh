# rms_verify: rmsnorm_modulate end to end on the GPU, in one call: its GPU tests (kernels,
# LibTorch op from C++ and Python, the scale tier on the device, the op's peer through the
# door), the benchmark beside the copy and each kernel's time (ncu), the engine's check on cuda
# (scale tier included), the sweep against RL-Kernel's report, and the Python peers' checks.
# Files (eight): ctest.log, bench.md, kernels.txt, check.txt, sweep.json, sweep.html, sweep.txt,
# peers.txt. About 7 minutes on the H200 after the build.
. "$(dirname "$0")/../stage_common.sh"
RB="$BUILD/bench/gatecheck-rmsnorm-bench"
need "$GC" "$RB"
(cd "$BUILD" && timeout 110 ctest -L gpu -R "rmsnorm|Rmsnorm|ScaleGpu|TorchOp.Rmsnorm|python_peer_rmsnorm_modulate_gatecheck_op_cuda" \
  -E "rmsnorm_modulate_cuda_check" --output-on-failure > "$D/ctest.log" 2>&1)
echo "ctest rc=$?: $(grep -E 'tests passed' "$D/ctest.log")"; grep -E "^\s*[0-9]+ - .*(Failed|Timeout)" "$D/ctest.log" | head
timeout 40 "$RB" --rows 32768,131072 --dims 5376,3072,5001 --gates 9,32 --dtypes bf16,f16 > "$D/bench.md" 2>&1
echo "bench rc=$?"; grep -E "\| (32768|131072) \| 5376 \| 9 \|" "$D/bench.md"
timeout 35 "$GC" check --op rmsnorm_modulate --impl cuda --device cuda --seconds 20 --jobs 16 --seed 35 --corpus /tmp/rv-c1 > "$D/check.txt" 2>&1
echo "check rc=$?"; grep -E "@cuda  |^seed|scale" "$D/check.txt" | head -14
timeout 80 "$GC" sweep --op rmsnorm_modulate --impl cuda --impl torch-eager --device cuda --quick --json "$D/sweep.json" \
  --html "$D/sweep.html" --compare bench/reference/h3_rmsnorm_b200.json --corpus /tmp/rv-c2 > "$D/sweep.txt" 2>&1
echo "sweep rc=$?"; tail -5 "$D/sweep.txt"
for peer in rmsnorm_modulate_diffusers rmsnorm_modulate_rms_norm rmsnorm_modulate_compiled rmsnorm_modulate_gatecheck_op; do
  cmd="$GC check --op rmsnorm_modulate --impl python:gatecheck.peers:$peer --device cuda --seconds 10 --seed 33 --corpus /tmp/rv-c3"
  echo "\$ $cmd" >> "$D/peers.txt"
  env -u PYTHONPATH timeout 40 $cmd >> "$D/peers.txt" 2>&1
  echo "exit $?" >> "$D/peers.txt"
done
grep -E "^\\$|^exit|^seed" "$D/peers.txt"
if command -v ncu > /dev/null; then
  timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum --print-units base --launch-count 24 --csv "$RB" \
    --rows 32768 --dims 5376 --gates 9 --dtypes bf16 --reps 1 2>/dev/null | python3 bench/device/ncu_kernel_times.py > "$D/kernels.txt" 2>&1
  grep -E "bwd|fwd_kernel|fold" "$D/kernels.txt" | head -5
fi
