#!/bin/bash
# Where the forward's time goes at 4097 rows (bench/NOTES.md v9), after
# bench/run_h200.sh build:
#  1. the forward and a copy of its bytes over a sweep of rows (the fixed
#     cost is the intercept of time against bytes), next to the empty-kernel
#     floor the benchmark prints first;
#  2. the forward's block shapes (fwd_rows=), each timed twice in
#     alternation with the default, at 4097 rows.
# Run 32 (commit f001e04) also timed two knobs removed after it, both slower:
# a capped forward grid (fwd_grid=) and an L2 prefetch in the one-kernel
# backward (prefetch=, its section 3).
# Usage: OUT=dir bench/fwd_shape_h200.sh [RUN]   (files: $OUT/h200-fwd-*-run$RUN.*)
set -u
OUT=${OUT:-/tmp/out}
RUN=${1:-x}
BENCH=build/bench/gatecheck-bench
L="$OUT/h200-fwd-shape-run$RUN.log"
J="$OUT/json-$RUN"
mkdir -p "$J"
table() { grep -E "^(bf16|fp16|an empty|device|      a copy|      an empty kernel plus|      backward)"; }
{
  echo "## 1. $BENCH --dtypes bf16 --dims 3072 --rows 1024,2048,4097,8192,16384,32768 --gates 9 --patterns random --no-torch"
  $BENCH --dtypes bf16 --dims 3072 --rows 1024,2048,4097,8192,16384,32768 --gates 9 --patterns random --no-torch \
    --json "$J/sweep.json" 2>&1 | table
  for pass in 1 2; do
    for cfg in default fwd_rows=1 fwd_rows=2 fwd_rows=4; do
      t=$cfg; [ "$cfg" = default ] && t=""
      echo "## 2. pass $pass: GATECHECK_CUDA_TUNING='$t' $BENCH --dtypes bf16 --dims 3072,5376 --rows 4097 --gates 9 --patterns random --no-torch"
      GATECHECK_CUDA_TUNING="$t" $BENCH --dtypes bf16 --dims 3072,5376 --rows 4097 --gates 9 --patterns random --no-torch \
        --json "$J/fwd-$pass-$cfg.json" 2>&1 | table | grep -vE "^(device|an empty)"
    done
  done
} > "$L" 2>&1
python3 - "$J" "$OUT/h200-fwd-shape-run$RUN.json" <<'PY'
import json, os, sys
d = sys.argv[1]
json.dump({f[:-5]: json.load(open(os.path.join(d, f))) for f in sorted(os.listdir(d))}, open(sys.argv[2], "w"), indent=1)
PY
rm -rf "$J"
cat "$L"
