#!/bin/bash
# One device call on the H200 for the 16-warp one-block plan past 4096 gates
# (v17; run 78): the cuda/host differential (every CudaVsHost test),
# memcheck and racecheck on the one-block plan's test, the plan A/B (automatic
# = 16 warps where they fit, against 8 warps and the CUB path forced), and one
# gate per row at 4097 rows against torch eager.
# Usage (project root on the GPU machine, after . .deps/remote-setup.sh):
#   bench/wide_plan_h200.sh        logs and JSON go to $OUT
. "$(dirname "$0")/h200_test_build.sh"
{
  echo "## $T --gtest_filter=CudaVsHost.*:CudaTuning.*"
  timeout 300 "$T" --gtest_filter='CudaVsHost.*:CudaTuning.*' 2>&1 | grep -vE "^\[ +(RUN|OK) +\]" | tail -25
  for tool in memcheck racecheck; do
    echo "## compute-sanitizer --tool $tool $T --gtest_filter=CudaVsHost.OneBlockPlanTakesUpTo8192Gates"
    timeout 150 compute-sanitizer --tool $tool "$T" --gtest_filter='CudaVsHost.OneBlockPlanTakesUpTo8192Gates' 2>&1 | tail -6
  done
} > "$OUT/wide-plan-tests.log" 2>&1
cat "$OUT/wide-plan-tests.log"
echo "## plan A/B"
timeout 200 $B --dtypes bf16 --dims 3072 --rows 4097,8192 --gates rows/1,5000,5518,5973 --patterns shuffled,random \
  --bwd-variants auto,w8,cub --stages --no-torch --json "$OUT/h200-ab-wide-plan.json" > "$OUT/ab.log" 2>&1
grep -E "^(bf16|fp16)|stages" "$OUT/ab.log"
echo "## one gate per row, 4097 rows"
timeout 150 $B --rows 4097 --gates rows/1 --patterns sorted,shuffled,random --json "$OUT/h200-one-gate-per-row.json" \
  > "$OUT/table.log" 2>&1
grep -E "^(bf16|fp16)" "$OUT/table.log"
