#!/bin/bash
# The one-kernel backward's tile stages against the forward, at the shape
# where forward+backward misses its target (4097 x 3072 x 9, bf16, random):
# Nsight Compute --set full on one call of each (DRAM and L2 traffic, stall
# reasons), and the backward's stall samples by region. Run after
# bench/run_h200.sh build. Usage: OUT=dir bench/stage_profile_h200.sh (4 files)
set -u
OUT=${OUT:-/tmp/out}
SHAPE="--dtypes bf16 --dims 3072 --rows 4097 --gates 9 --patterns random"
for k in fwd_kernel bwd_fused; do
  timeout 200 ncu --clock-control none --kernel-name "regex:$k" --launch-skip 5 --launch-count 1 --set full \
    --warp-sampling-interval 2 -o "/tmp/$k" build/bench/gatecheck-bench $SHAPE --bwd-variants fused --no-torch \
    --reps 50 --warmup 2 --warmup-ms 0 > "/tmp/$k.log" 2>&1
  tail -2 "/tmp/$k.log"
  ncu --import "/tmp/$k.ncu-rep" --page details > "$OUT/$k-details.txt" 2>&1
  grep -E "^  [a-z_].*\(|Duration|DRAM Throughput|Memory Throughput|L2 Hit|L1/TEX Hit|Achieved Occupancy|Registers Per" "$OUT/$k-details.txt"
done
ncu --import /tmp/bwd_fused.ncu-rep --page source --csv --print-source sass > /tmp/fused-source.csv 2>&1
python3 bench/ncu_stall_regions.py /tmp/fused-source.csv > "$OUT/bwd_fused-regions.txt" 2>&1
cat "$OUT/bwd_fused-regions.txt" | head -40
ncu --import /tmp/bwd_fused.ncu-rep --page raw --csv > "$OUT/bwd_fused-raw.csv" 2>&1
