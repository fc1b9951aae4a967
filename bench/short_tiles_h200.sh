#!/bin/bash
# One device call on the H200 for the short-tiles backward kernel (tile=4,
# run 73): the every-path cuda/host differential and the tuning tests, the
# A/B of the automatic tile kernel against short tiles on short-tile shapes
# (one gate per row, rows/3, rows/16), and a planted mutant (the sum no longer
# restarts at a tile's first row) that the differential must catch.
# Usage (project root on the GPU machine, after . .deps/remote-setup.sh):
#   bench/short_tiles_h200.sh        logs and JSON go to $OUT
. "$(dirname "$0")/h200_test_build.sh"
{
  echo "## $T --gtest_filter=CudaVsHost.EveryPlanAndTileKernelBitIdentical:CudaTuning.*"
  timeout 200 "$T" --gtest_filter='CudaVsHost.EveryPlanAndTileKernelBitIdentical:CudaTuning.*' 2>&1 | grep -vE "^\[ +(RUN|OK) +\]" | tail -12
  echo "## GATECHECK_CUDA_TUNING=tile=4 $T --gtest_filter=CudaVsHost.*"
  GATECHECK_CUDA_TUNING=tile=4 timeout 200 "$T" --gtest_filter='CudaVsHost.*' 2>&1 | grep -vE "^\[ +(RUN|OK) +\]" | tail -8
  echo "## compute-sanitizer --tool memcheck, racecheck: GATECHECK_CUDA_TUNING=tile=4 GATECHECK_CUDA_CASES=40 $T --gtest_filter=CudaVsHost.RandomCasesBitIdentical"
  GATECHECK_CUDA_TUNING=tile=4 GATECHECK_CUDA_CASES=40 timeout 100 compute-sanitizer --tool memcheck "$T" --gtest_filter='CudaVsHost.RandomCasesBitIdentical' 2>&1 | tail -3
  GATECHECK_CUDA_TUNING=tile=4 GATECHECK_CUDA_CASES=40 timeout 100 compute-sanitizer --tool racecheck "$T" --gtest_filter='CudaVsHost.RandomCasesBitIdentical' 2>&1 | tail -3
} > "$OUT/short-tiles-tests.log" 2>&1
cat "$OUT/short-tiles-tests.log"
echo "## A/B"
timeout 240 $B --dtypes bf16 --dims 3072,5376 --rows 4097,32768,131072 --gates rows/1,rows/3,rows/16 --patterns shuffled,random \
  --bwd-variants auto,short --no-torch --json "$OUT/h200-ab-short-tiles.json" > "$OUT/ab.log" 2>&1
grep -E "^bf16|variants" "$OUT/ab.log"
echo "## mutant: the sum does not restart at a tile's first row"
cp kernels/cuda/gate_residual_cuda_kernels.cuh /tmp/kernels.cuh.kept
sed -i 's/while (cur < int(row_tile\[i + u\])) finish_tile();/if (false) finish_tile();  \/\/ MUTANT/' kernels/cuda/gate_residual_cuda_kernels.cuh
grep -c "MUTANT" kernels/cuda/gate_residual_cuda_kernels.cuh
cmake --build build -j"$(nproc)" --target test_cuda_vs_host > "$OUT/mutant-build.log" 2>&1 || tail -20 "$OUT/mutant-build.log"
GATECHECK_CUDA_TUNING=tile=4 timeout 120 "$T" --gtest_filter='CudaVsHost.RandomCasesBitIdentical' 2>&1 | grep -E "Failure|differ|FAILED|PASSED" | head -6
cp /tmp/kernels.cuh.kept kernels/cuda/gate_residual_cuda_kernels.cuh
