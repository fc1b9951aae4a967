#!/bin/bash
# Per-kernel GPU time and DRAM throughput of one benchmark shape under Nsight
# Compute (the H200 machine has ncu, not nsys). Kernels are serialised by ncu,
# so PDL overlap is not seen: the durations are each kernel's own.
# Usage: bench/ncu_h200.sh OUTFILE [TUNING...]   e.g. plan=2,tile=2
#   SHAPE (default "--dtypes bf16 --dims 3072 --rows 4097 --gates 9 --patterns random")
set -u
out=$1; shift
SHAPE=${SHAPE:---dtypes bf16 --dims 3072 --rows 4097 --gates 9 --patterns random}
for t in "${@:-default}"; do
  [ "$t" = default ] && t=""
  echo "## GATECHECK_CUDA_TUNING='$t' ncu ... gatecheck-bench $SHAPE"
  # skip the forward-only timing (52 calls), then a few forward+backward calls
  GATECHECK_CUDA_TUNING="$t" timeout 240 ncu --clock-control none --launch-skip 110 --launch-count 14 \
    --kernel-name regex:'fwd_kernel|check_index|bwd_|plan_|fold_kernel|Radix|Scan' \
    --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__registers_per_thread \
    build/bench/gatecheck-bench $SHAPE --no-torch --reps 50 --warmup 2 2>&1 \
    | grep -E "^  [a-zA-Z_].*\(|gpu__time_duration|dram__throughput|dram__bytes|warps_active|grid_size|registers_per" \
    | sed -E 's/\(([0-9]+, ){2}[0-9]+\)x\(([0-9]+, ){2}[0-9]+\)//'
done > "$out" 2>&1
tail -c 6000 "$out"
