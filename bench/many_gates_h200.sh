#!/bin/bash
# One device call on the H200 for the many-gates regime at up to 8192 rows
# (run 71): the cuda/host differential (every CudaVsHost test), memcheck and
# racecheck on the one-block plan's test, the backward's plan A/B (automatic =
# one-block plan against the CUB path, forced), the one-gate-per-row table at
# 4097 rows, and a planted mutant of the 8-warp plan that the test must catch.
# Usage (project root on the GPU machine, after . .deps/remote-setup.sh):
#   bench/many_gates_h200.sh        logs and JSON go to $OUT
. "$(dirname "$0")/h200_test_build.sh"
{
  echo "## $T --gtest_filter=CudaVsHost.*"
  timeout 300 "$T" --gtest_filter='CudaVsHost.*' 2>&1 | grep -vE "^\[ +(RUN|OK) +\]" | tail -25
  for tool in memcheck racecheck; do
    echo "## compute-sanitizer --tool $tool $T --gtest_filter=CudaVsHost.OneBlockPlanTakesUpTo8192Gates"
    timeout 120 compute-sanitizer --tool $tool "$T" --gtest_filter='CudaVsHost.OneBlockPlanTakesUpTo8192Gates' 2>&1 | tail -6
  done
} > "$OUT/many-gates-tests.log" 2>&1
cat "$OUT/many-gates-tests.log"
echo "## plan A/B"
timeout 200 $B --dtypes bf16 --dims 3072 --rows 4097,8192 --gates rows/1,rows/2,3000 --patterns shuffled,random \
  --bwd-variants auto,cub --stages --no-torch --json "$OUT/h200-ab-one-block-plan.json" > "$OUT/ab.log" 2>&1
grep -E "^(bf16|fp16)|stages" "$OUT/ab.log"
echo "## one gate per row, 4097 rows"
timeout 150 $B --rows 4097 --gates rows/1 --patterns sorted,shuffled,random --json "$OUT/h200-one-gate-per-row.json" \
  > "$OUT/table.log" 2>&1
grep -E "^(bf16|fp16)" "$OUT/table.log"
echo "## mutant: the 8-warp plan drops the earlier warps' offsets"
cp kernels/cuda/gate_residual_cuda_plan.cuh /tmp/plan.cuh.kept
sed -i 's/placed\[start\[k\] + mine\[k\] + rank\[i\]\]/placed[start[k] + (Warps == 8 ? 0 : mine[k]) + rank[i]]/' \
  kernels/cuda/gate_residual_cuda_plan.cuh
grep -c "Warps == 8 ? 0" kernels/cuda/gate_residual_cuda_plan.cuh
cmake --build build -j"$(nproc)" --target test_cuda_vs_host > "$OUT/mutant-build.log" 2>&1 || tail -20 "$OUT/mutant-build.log"
timeout 120 "$T" --gtest_filter='CudaVsHost.OneBlockPlanTakesUpTo8192Gates' 2>&1 | grep -E "Failure|differ|FAILED|PASSED|gates" | head -12
cp /tmp/plan.cuh.kept kernels/cuda/gate_residual_cuda_plan.cuh
