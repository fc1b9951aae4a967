# repro_tiles: gate_residual's reproducible backward, each tile kernel, on the H200:
#   tests.log   every SplitCuda GPU test (each tile kernel forced, every partition),
#               today's backward against the host twin (the copy pipeline's code is shared), and
#               rmsnorm_modulate's cuda-repro tests (the binned fp64 sums are shared)
#   rms-cost.log  rmsnorm_modulate's reproducible backward beside its cuda backward
#   cost.log    the reproducible backward beside today's and a copy at 32768 and 131072 x 3072
#               (bf16, 32 gates): the automatic choice, then each tile kernel; the 64-state combine
#   check.txt   gatecheck check of cuda-repro: split_invariance and accuracy, 60 s, scale tier included
#   ncu-pipe.txt  Nsight Compute on the automatic choice's tile kernel at 32768 x 3072 (NCU=0: none)
#   ncu-rms-terms.txt  the same on rmsnorm_modulate's terms kernel (its reproducible mode's state)
#   pipe-bf16.sass  that kernel's SASS
# About 4 minutes on the H200 after the build; TESTS=0 leaves out the tests (about 1.5 minutes),
# CHECK=0 the check (about 1.5 minutes). NCU_TUNING: a GATECHECK_CUDA_TUNING text for the Nsight
# Compute run (e.g. depth=4: the pipeline at 4 stages), written to ncu-pipe-tuned.txt beside the
# automatic choice's.
. "$(dirname "$0")/../stage_common.sh"
S="$BUILD/tests/split/split_cuda_test"
R="$BUILD/tests/split/rmsnorm_repro_cuda_test"
need "$S" "$T" "$R" "$GC"
if [ "${TESTS:-1}" != 0 ]; then  # TESTS=0: left to the stage verify, run in the same call
  (cd "$BUILD" && timeout 240 ctest -L gpu -R "SplitCuda|^CudaVsHost|RmsnormReproCuda" -E CostAgainst --output-on-failure) \
    > "$D/tests.log" 2>&1
  echo "tests rc=$?: $(grep -E 'tests passed|tests failed' "$D/tests.log" | tail -1)"
fi
timeout 120 "$S" --gtest_filter='SplitCuda.CostAgainstTodaysBackward' > "$D/cost.log" 2>&1
echo "cost rc=$?"
grep -E " ms|us " "$D/cost.log" | head -20
timeout 120 "$R" --gtest_filter='RmsnormReproCuda.CostAgainstTheCudaBackward' > "$D/rms-cost.log" 2>&1
echo "rms cost rc=$?"
grep -E " ms|us " "$D/rms-cost.log" | head -6
if [ "${CHECK:-1}" != 0 ]; then
  timeout 100 "$GC" check --device cuda --impl cuda-repro --properties split_invariance,accuracy --seconds 60 \
    --jobs 8 --seed 35 --corpus "$D/corpus" > "$D/check.txt" 2>&1
  echo "check rc=$?: $(grep -E '^cuda-repro@' "$D/check.txt" | tr -s ' ' | tr '\n' ';')"
fi
ncu_pipe() {  # $1: the file; the environment's GATECHECK_CUDA_TUNING applies
  timeout 120 ncu --kernel-name-base demangled --kernel-name "regex:bwd_pipe_binned_kernel" --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section ComputeWorkloadAnalysis \
    --section InstructionStats "$S" --gtest_filter='SplitCuda.CostAgainstTodaysBackward' > "$1" 2>&1
  echo "ncu rc=$? ($(basename "$1")): $(grep -E 'Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Executed Ipc A|Issue Slots Busy' "$1" | tr -s ' ' | tr '\n' ';')"
}
if [ "${NCU:-1}" != 0 ] && command -v ncu > /dev/null; then
  ncu_pipe "$D/ncu-pipe.txt"
  [ -n "${NCU_TUNING:-}" ] && GATECHECK_CUDA_TUNING="$NCU_TUNING" ncu_pipe "$D/ncu-pipe-tuned.txt"
  # rmsnorm_modulate's terms kernel at 32768 x 3072 (its reproducible mode's cost)
  timeout 150 ncu --kernel-name-base demangled --kernel-name "regex:terms_kernel" --launch-skip 1 --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section ComputeWorkloadAnalysis \
    --section InstructionStats --section MemoryWorkloadAnalysis "$R" --gtest_filter='RmsnormReproCuda.CostAgainstTheCudaBackward' \
    > "$D/ncu-rms-terms.txt" 2>&1
  echo "ncu rc=$? (ncu-rms-terms.txt): $(grep -E 'Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Executed Ipc A|Issue Slots Busy' "$D/ncu-rms-terms.txt" | tr -s ' ' | tr '\n' ';')"
fi
# the automatic choice's SASS (bf16, 512-byte segments, one column a thread, 3 stages)
command -v cuobjdump > /dev/null && cuobjdump -sass -fun '_ZN9gatecheck11cuda_detail22bwd_pipe_binned_kernelINS_6bf16_tELi512ELi1ELi3ELi1EEEvNS0_7BwdArgsIT_EE' \
  "$S" > "$D/pipe-bf16.sass" 2>&1
echo "sass: $(grep -c -E '^\s+/\*[0-9a-f]{4}\*/' "$D/pipe-bf16.sass" 2>/dev/null) instructions; DADD $(grep -c DADD "$D/pipe-bf16.sass"), DFMA $(grep -c DFMA "$D/pipe-bf16.sass")"
