#!/bin/bash
# The grad_gate tile length (kGradGateTileRows, rows summed in one fp32 partial)
# measured: a second build with GATECHECK_GRAD_GATE_TILE_ROWS=$ROWS (host twin
# and kernels alike, so its own cuda-vs-host test still applies), timed beside
# the default build with the same backward variants. Needs build/ (run_h200.sh build).
# Usage: OUT=dir bench/tile_rows_h200.sh [ROWS]
set -u
OUT=${OUT:-/tmp/out}
R=${1:-64}
B=build$R
F="-DGATECHECK_GRAD_GATE_TILE_ROWS=$R"
{ cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_FLAGS="$F" -DCMAKE_CXX_FLAGS="$F" &&
  cmake --build $B -j"$(nproc)" --target gatecheck-bench test_cuda_vs_host; } > "$OUT/build$R.log" 2>&1 || { tail -30 "$OUT/build$R.log"; exit 1; }
echo "## $B/tests/cuda/test_cuda_vs_host --gtest_filter=CudaVsHost.* (tile rows $R)"
timeout 200 $B/tests/cuda/test_cuda_vs_host --gtest_filter='CudaVsHost.*' 2>&1 | grep -E "PASSED|FAILED|Failure" | head
ARGS="--dtypes bf16 --dims 3072 --rows 4097,32768 --gates 9,rows/1024 --patterns random --stages --no-torch"
V=${VARIANTS:-auto,fused+seg256,count+piped,count+piped+seg256,count+staged,count+thread}
for b in build $B; do
  echo "## $b/bench/gatecheck-bench $ARGS --bwd-variants $V"
  $b/bench/gatecheck-bench $ARGS --bwd-variants "$V" --json "$OUT/tune-$b.json" 2>&1 | grep -E "^bf16|variants|stages"
done
