#!/bin/bash
# Where the one-kernel backward's time goes at 4097x3072x9 (bf16, random
# index): phase timing (a measuring build, bench/pipe_phases_h200.sh), Nsight
# Compute with per-instruction stall samples, and the kernel's SASS.
# Usage: OUT=dir bench/fused_profile_h200.sh   (7 files in $OUT)
set -u
OUT=${OUT:-/tmp/out}
K=_ZN9gatecheck11cuda_detail16bwd_fused_kernelINS_6bf16_tELi512EEEvNS0_7BwdArgsIT_EENS0_9FusedPlanE
SHAPE="--dtypes bf16 --dims 3072 --rows 4097 --gates 9 --patterns random"
bench/run_h200.sh build &
bash bench/pipe_phases_h200.sh > "$OUT/phases.txt" 2>&1 &
wait
cat "$OUT/phases.txt"
cuobjdump -sass -fun "$K" build/kernels/cuda/CMakeFiles/gc_cuda.dir/gate_residual_cuda.cu.o > "$OUT/fused-sass.txt" 2>&1
wc -l "$OUT/fused-sass.txt"
timeout 240 ncu --clock-control none --kernel-name regex:bwd_fused --launch-skip 5 --launch-count 1 --set full -o /tmp/fused \
  build/bench/gatecheck-bench $SHAPE --bwd-variants fused --no-torch --reps 50 --warmup 2 > /tmp/ncu.log 2>&1
tail -3 /tmp/ncu.log
ncu --import /tmp/fused.ncu-rep --page source --csv --print-source sass > "$OUT/fused-source.csv" 2>&1
wc -l "$OUT/fused-source.csv"; head -2 "$OUT/fused-source.csv" | cut -c1-400
ncu --import /tmp/fused.ncu-rep --page details > "$OUT/fused-details.txt" 2>&1
grep -E "Duration|DRAM Throughput|Achieved Occupancy|Registers Per|L2 Hit|L1/TEX Hit" "$OUT/fused-details.txt"
