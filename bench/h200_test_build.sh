# Sourced by the one-call device scripts (many_gates_h200.sh, short_tiles_h200.sh):
# $OUT (logs and JSON, default /tmp/out), the differential test $T and the
# benchmark $B, built in Release into build/ (the log in $OUT/build.log; on a
# failure its tail, and the script stops).
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
T=build/tests/cuda/test_cuda_vs_host
B=build/bench/gatecheck-bench
{ cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j"$(nproc)" --target test_cuda_vs_host gatecheck-bench; } \
  > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
