# rms_repro: rmsnorm_modulate's cuda-repro against host-repro, and its cost.
#   tests.log   the gpu tests of the mode: rmsnorm_repro_cuda_test (state words, bits,
#               partitions, claims, errors) and the LibTorch state ops on CUDA
#   cost.log    the reproducible backward beside the cuda backward at 32768 and 131072 x 3072
#               (bf16, 32 gates), the partial alone, and the combine of 64 states
#   check.txt   gatecheck check of cuda-repro and cuda: split_invariance and accuracy, 60 s
#   ncu-terms.txt  Nsight Compute on the terms kernel (the state's sums) at 32768 x 3072 (NCU=0: none)
# About 5 minutes on the H200 after the build; TESTS=0 leaves out the tests.
. "$(dirname "$0")/../stage_common.sh"
need "$BUILD/tests/split/rmsnorm_repro_cuda_test" "$GC"
if [ "${TESTS:-1}" != 0 ]; then  # TESTS=0: left to the stage verify, run in the same call
  (cd "$BUILD" && timeout 300 ctest -L gpu -R "RmsnormReproCuda|TorchOp.RmsnormSplitState.cuda" -E CostAgainst \
    --output-on-failure) > "$D/tests.log" 2>&1
  echo "tests rc=$?: $(grep -E 'tests passed|tests failed' "$D/tests.log" | tail -1)"
fi
timeout 200 "$BUILD/tests/split/rmsnorm_repro_cuda_test" --gtest_filter='RmsnormReproCuda.CostAgainstTheCudaBackward' \
  > "$D/cost.log" 2>&1
echo "cost rc=$?"
grep -E "ms|us" "$D/cost.log" | head -8
timeout 100 "$GC" check --op rmsnorm_modulate --device cuda --impl cuda-repro --impl cuda \
  --properties split_invariance,accuracy --seconds 60 --seed 35 --corpus "$D/corpus" > "$D/check.txt" 2>&1
echo "check rc=$?: $(grep -E '^(cuda-repro|cuda)@' "$D/check.txt" | tr -s ' ' | tr '\n' ';')"
if [ "${NCU:-1}" != 0 ] && command -v ncu > /dev/null; then
  timeout 150 ncu --kernel-name-base demangled --kernel-name "regex:terms_kernel" --launch-skip 1 --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section ComputeWorkloadAnalysis \
    --section InstructionStats --section MemoryWorkloadAnalysis "$BUILD/tests/split/rmsnorm_repro_cuda_test" \
    --gtest_filter='RmsnormReproCuda.CostAgainstTheCudaBackward' > "$D/ncu-terms.txt" 2>&1
  echo "ncu rc=$? (ncu-terms.txt): $(grep -E 'Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Executed Ipc A|Issue Slots Busy|Issued Instructions  ' "$D/ncu-terms.txt" | tr -s ' ' | tr '\n' ';')"
fi
