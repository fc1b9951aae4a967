# repro_tile_rows: gate_residual's reproducible backward with tiles of TILE_ROWS rows (default
# 128) against today's backward with its 256, in the same call. The binned tiles need no row
# order, so their length is free; shorter tiles give 32768 rows more blocks (a fuller last
# wave) for more tile states to write and fold. A second build, $BUILD-tiles, with
# -DGATECHECK_GRAD_GATE_TILE_ROWS=TILE_ROWS (the measuring switch: its fp32 backward and host
# twin change with it, its binned state must not), runs its SplitCuda state and partition tests
# first, then the cost test of each build in alternation, twice:
#   tests.log    the changed build's SplitCuda tests (its states against host-repro's words)
#   N-default.log, N-changed.log  SplitCuda.CostAgainstTodaysBackward of each build, pass N
#   summary.txt  per pass and row count: today's backward (default build), the reproducible
#                backward of each build, and the changed one over today's
# About 5 minutes on the H200 after the default build (which must hold split_cuda_test).
. "$(dirname "$0")/../stage_common.sh"
S="$BUILD/tests/split/split_cuda_test"
need "$S"
rows=${TILE_ROWS:-128}
b="$BUILD-tiles"
{ cmake -S . -B "$b" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CUDA_ARCHITECTURES=90-real;90-virtual" -DGATECHECK_WITH_TORCH=OFF \
    "-DCMAKE_CUDA_FLAGS=-DGATECHECK_GRAD_GATE_TILE_ROWS=$rows" "-DCMAKE_CXX_FLAGS=-DGATECHECK_GRAD_GATE_TILE_ROWS=$rows" \
    ${CMAKE_PREFIX_PATH:+"-DCMAKE_PREFIX_PATH=$CMAKE_PREFIX_PATH"} &&
  cmake --build "$b" -j "$JOBS" --target split_cuda_test; } > "$D/build.log" 2>&1 ||
  { tail -30 "$D/build.log"; echo "repro_tile_rows: the build with $rows-row tiles failed"; exit 1; }
C="$b/tests/split/split_cuda_test"
timeout 240 "$C" --gtest_filter='SplitCuda.*-*Cost*:*ScaleTier*:*KeepsItsClaims*' > "$D/tests.log" 2>&1 ||
  { grep -E "Failure|FAILED" "$D/tests.log" | head; echo "repro_tile_rows: the $rows-row build fails its tests"; exit 1; }
grep -E "^\[  PASSED" "$D/tests.log"
for pass in 1 2; do
  for side in default changed; do
    bin=$S
    [ $side = changed ] && bin=$C
    timeout 120 "$bin" --gtest_filter='SplitCuda.CostAgainstTodaysBackward' > "$D/$pass-$side.log" 2>&1 ||
      { tail -5 "$D/$pass-$side.log"; echo "repro_tile_rows: the $side cost test failed"; exit 1; }
  done
done
# "gate_residual bf16 R x 3072, 32 gates: cuda backward A ms; reproducible backward B ms = ..."
first_lines() { grep -E '^gate_residual .*: cuda backward' "$1" | sed -E 's/^gate_residual bf16 ([0-9]+) x.*cuda backward ([0-9.]+) ms; reproducible backward ([0-9.]+) ms.*/\1 \2 \3/'; }
{
  echo "reproducible backward with $rows-row tiles against today's backward (256-row tiles), bf16 x 3072, 32 gates"
  for pass in 1 2; do
    paste -d' ' <(first_lines "$D/$pass-default.log") <(first_lines "$D/$pass-changed.log") |
      awk -v p="$pass" -v r="$rows" '{ printf "pass %s, %s rows: today %.3f ms; reproducible, 256-row tiles %.3f ms = %.3fx; %s-row tiles %.3f ms = %.3fx\n", p, $1, $2, $3, $3 / $2, r, $6, $6 / $2 }'
  done
} > "$D/summary.txt"
cat "$D/summary.txt"
