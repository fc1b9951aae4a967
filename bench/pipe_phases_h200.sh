#!/bin/bash
# Where the one-kernel backward's time goes: a measuring build with
# -DGATECHECK_PIPE_PHASES (lane 0 of every warp adds clock64 cycles per
# phase), then gatecheck-bench --stages on the 4097-row shapes it serves.
# Usage: OUT=dir bench/pipe_phases_h200.sh
set -u
OUT=${OUT:-/tmp/out}
F="-DGATECHECK_PIPE_PHASES"
{ cmake -S . -B build-phases -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_FLAGS="$F" -DCMAKE_CXX_FLAGS="$F" &&
  cmake --build build-phases -j"$(nproc)" --target gatecheck-bench; } > "$OUT/build-phases.log" 2>&1 || { tail -30 "$OUT/build-phases.log"; exit 1; }
build-phases/bench/gatecheck-bench --dtypes bf16 --dims 3072,5376 --rows 4097 --gates 9,rows/1024 --patterns random \
  --bwd-variants fused --stages --no-torch --json "$OUT/h200-pipe-phases.json" 2>&1 | grep -E "^bf16|stages|one-kernel"
