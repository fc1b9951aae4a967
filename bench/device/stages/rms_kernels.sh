# rms_kernels: rmsnorm_modulate's CUDA kernels on the GPU: their GPU tests (each path by name),
# the benchmark on the issue's shapes (`gatecheck-bench --op rmsnorm_modulate`) beside the copy
# of the same bytes and torch eager, each kernel's time at 32768 x 5376 bf16 (ncu, each kernel
# alone), the engine's check on cuda at seed 34, and the op as called from PyTorch beside eager
# and torch.compile. Files: ctest.log, bench.md, kernels.txt, check.txt/.json, as_called.md.
# About 5 minutes on the H200. CTEST=0, NCU=0, CHECK=0, BENCH=0 and AS_CALLED=0 leave out the
# tests, ncu, the check, the kernel benchmark and the op as called. AS_CALLED_ARGS replaces the
# as-called shapes (default: its four), e.g. the benchmark's whole grid, torch.compile beside
# every shape: "--rows 4097,32768,131072 --dims 3072,5376,5001 --gates 9,32,rows --dtype bf16,f16"
# (with AS_CALLED_SECONDS=500, its time limit, default 240).
run_bench=${BENCH:-1}  # read before stage_common.sh, which names the benchmark binary BENCH
. "$(dirname "$0")/../stage_common.sh"
RB="$BUILD/bench/gatecheck-rmsnorm-bench"
if [ "${CTEST:-1}" != 0 ]; then
  (cd "$BUILD" && timeout 200 ctest -L gpu -R "rmsnorm|Rmsnorm" -E "_check|python" --output-on-failure > "$D/ctest.log" 2>&1)
  echo "ctest rc=$?: $(grep -E 'tests passed' "$D/ctest.log")"
  grep -E "^\s*[0-9]+ - .*Failed|FAILED" "$D/ctest.log" | head -10
fi
if [ "$run_bench" != 0 ]; then
  need "$BENCH"
  timeout 400 "$BENCH" --op rmsnorm_modulate --rows 4097,32768,131072 --dims 3072,5376,5001 --gates 9,32,rows \
    --dtypes bf16,f16 > "$D/bench.md" 2>&1
  echo "bench rc=$?"
  grep -E "\| 32768 \| 5376 \| 9 \||\| 131072 \| 5376 \| 9 \|" "$D/bench.md"
fi
if [ "${NCU:-1}" != 0 ] && command -v ncu > /dev/null; then  # each kernel of the first forward and backward, alone
  need "$RB"
  timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum --print-units base --launch-count 24 --csv "$RB" --rows 32768 \
    --dims 5376 --gates 9 --dtypes bf16 --reps 1 --no-torch 2>/dev/null | python3 bench/device/ncu_kernel_times.py > "$D/kernels.txt" 2>&1
  cat "$D/kernels.txt"
fi
if [ "${CHECK:-1}" != 0 ]; then
  need "$GC"
  timeout 90 "$GC" check --op rmsnorm_modulate --impl cuda --device cuda --seconds 40 --jobs 16 --seed 34 --corpus "$D/corpus" --json "$D/check.json" > "$D/check.txt" 2>&1
  echo "check rc=$?"; grep -E "@cuda|^seed|over its" "$D/check.txt" | head -20
fi
# As called from PyTorch (the device's torch), beside eager, torch.compile and the copy; the
# LibTorch op where it was built.
if [ "${AS_CALLED:-1}" != 0 ]; then
  LIB=$(ls "$BUILD"/kernels/torch_op/libgatecheck_torch_op.so 2>/dev/null)
  # shellcheck disable=SC2086  # AS_CALLED_ARGS are words
  timeout "${AS_CALLED_SECONDS:-240}" python3 bench/rmsnorm_as_called.py ${LIB:+--lib "$LIB"} ${AS_CALLED_ARGS:-} \
    --out "$D" > "$D/as_called.md" 2>&1
  echo "as called rc=$?"; cat "$D/as_called.md" | tail -22
fi
