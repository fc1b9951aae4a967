#!/bin/bash
# The copy pipeline's depth (kPipeDepth, stages of 16 rows in flight per
# block) measured: a second build with GATECHECK_PIPE_DEPTH=$D, checked by its
# own cuda-vs-host test and timed beside the default build (depth 4) on the
# 4097-row shapes the one-kernel backward serves. Run beside or after
# bench/run_h200.sh build. Usage: OUT=dir bench/pipe_depth_h200.sh [D]
set -u
OUT=${OUT:-/tmp/out}
D=${1:-6}
B=build-depth$D
F="-DGATECHECK_PIPE_DEPTH=$D"
{ cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_FLAGS="$F" -DCMAKE_CXX_FLAGS="$F" &&
  cmake --build $B -j"$(nproc)" --target gatecheck-bench test_cuda_vs_host; } > "$OUT/$B.log" 2>&1 || { tail -30 "$OUT/$B.log"; exit 1; }
echo "## $B/tests/cuda/test_cuda_vs_host --gtest_filter=CudaVsHost.* (pipeline depth $D)"
timeout 200 $B/tests/cuda/test_cuda_vs_host --gtest_filter='CudaVsHost.*' 2>&1 | grep -E "PASSED|FAILED|Failure" | head
