#!/usr/bin/env bash
# Each kernel of gate_residual's backward, `cuda` and `cuda-repro`, alone, at bf16 32768 x 3072 x
# 32: SKIP=84 (default) passes the 21 `cuda` calls that SplitCuda.CostAgainstTodaysBackward times first
# (four kernels each), so the COUNT=16 launches after them are `cuda-repro`'s first calls; under
# Nsight Compute (kernels serialised, so launch overlap is not counted). From the repository root
# after bench/device/run.sh built split_cuda_test in build-device; writes $1 (default kernels.txt).
set -u
out=${1:-kernels.txt}
timeout 240 ncu --clock-control none --metrics gpu__time_duration.sum --print-units base --launch-skip "${SKIP:-84}" --launch-count "${COUNT:-16}" --csv \
  build-device/tests/split/split_cuda_test --gtest_filter=SplitCuda.CostAgainstTodaysBackward 2>/dev/null | python3 bench/device/ncu_kernel_times.py --launch > "$out"
cat "$out"
