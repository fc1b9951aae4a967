#!/bin/bash
# Where a backward index-plan kernel's time goes: Nsight Compute on one call
# with fine warp-stall sampling (every 32 cycles: a 26 us one-block kernel gave
# only 24 samples at the default interval in run 20), then its per-SASS-
# instruction page as CSV. Run after bench/run_h200.sh build.
# Usage: OUT=dir bench/plan_profile_h200.sh KERNEL_REGEX NAME   (2 files in $OUT)
#   SHAPE (default "--dtypes bf16 --dims 3072 --rows 4097 --gates rows/3 --patterns random")
set -u
OUT=${OUT:-/tmp/out}
regex=$1 name=$2
SHAPE=${SHAPE:---dtypes bf16 --dims 3072 --rows 4097 --gates rows/3 --patterns random}
timeout 240 ncu --clock-control none --kernel-name "regex:$regex" --launch-skip 5 --launch-count 1 --set full \
  --warp-sampling-interval 0 -o "/tmp/$name" \
  build/bench/gatecheck-bench $SHAPE --no-torch --reps 50 --warmup 2 > "/tmp/$name.log" 2>&1
tail -3 "/tmp/$name.log"
ncu --import "/tmp/$name.ncu-rep" --page source --csv --print-source sass > "$OUT/$name-source.csv" 2>&1
ncu --import "/tmp/$name.ncu-rep" --page details > "$OUT/$name-details.txt" 2>&1
grep -E "^  [a-z_].*\(|Duration|Registers Per|Local Memory Spilling Requests  |Achieved Occupancy" "$OUT/$name-details.txt"
