#!/bin/bash
# Nsight Compute on one benchmark shape (the H200 machine has ncu, not nsys):
# per-kernel time, DRAM throughput, occupancy and warp stall reasons of one
# forward+backward call per backward variant. ncu serialises kernels, so PDL
# overlap is not seen: each duration is the kernel's own.
# Usage: bench/ncu_h200.sh OUTFILE VARIANT...   (gatecheck-bench --bwd-variants names, e.g. fused count+staged)
#   SHAPE (default "--dtypes bf16 --dims 3072 --rows 4097 --gates 9 --patterns random")
set -u
out=$1; shift
SHAPE=${SHAPE:---dtypes bf16 --dims 3072 --rows 4097 --gates 9 --patterns random}
for v in "$@"; do
  echo "## ncu ... gatecheck-bench $SHAPE --bwd-variants $v"
  # skip the forward-only timing (52 calls of 2 kernels), then 6 kernels of forward+backward calls
  timeout 240 ncu --clock-control none --launch-skip 110 --launch-count 6 \
    --kernel-name regex:'fwd_kernel|check_index|bwd_|plan_|fold_kernel|Radix|Scan' \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats \
    --metrics dram__bytes.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,regex:'smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
    build/bench/gatecheck-bench $SHAPE --bwd-variants "$v" --no-torch --reps 50 --warmup 2 2>&1 \
    | grep -vE "^==PROF==|^ +-+ +-+|^    Section: |^    Metric Name|^ *$|OPT |^          "
done > "$out" 2>&1
grep -E "^##|^  [a-z].*\(|Duration|DRAM Throughput|Achieved Occupancy|stalled_.* +[0-9.]*[1-9]" "$out" | cut -c1-150 | head -150
