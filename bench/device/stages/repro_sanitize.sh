# repro_sanitize: compute-sanitizer memcheck and racecheck on both ops' reproducible modes
# (cuda-repro): gate_residual's binned tile kernels on every plan path and forced tile kernel,
# rmsnorm_modulate's sort, terms kernel (1, 2 and 4 rows at once) and row kernel with dx, the
# wide sums, the combine in every layout, the finalize, and a bad index. The cost tests and the
# shapes of H3's width are left out (minutes under the tools). SANITIZE_TOOLS picks the tools
# (default "memcheck racecheck"); each binary has 200 s a tool. On the H200 memcheck took 25 s
# and racecheck 290 s, so both fit one call after an incremental build. File: sanitize.log.
. "$(dirname "$0")/../stage_common.sh"
S="$BUILD/tests/split/split_cuda_test"
R="$BUILD/tests/split/rmsnorm_repro_cuda_test"
need "$S" "$R"
run() {  # run TOOL SECONDS BINARY FILTER
  echo "## compute-sanitizer --tool $1 --error-exitcode 9 $3 --gtest_filter='$4'"
  timeout "$2" compute-sanitizer --tool "$1" --error-exitcode 9 "$3" --gtest_filter="$4" 2>&1 |
    grep -vE "^\[ +(RUN|OK) +\]" | tail -8
  echo "(exit ${PIPESTATUS[0]})"
}
{
  for tool in ${SANITIZE_TOOLS:-memcheck racecheck}; do
    run $tool 200 "$S" '*-*Cost*:*H3*:*SimulatedRanks*:*ScaleTier*:*KeepsItsClaims*'
    run $tool 200 "$R" '*-*Cost*:*KeepsItsClaims*:*DitWidth*'
  done
} > "$D/sanitize.log" 2>&1
grep -E "^##|^\(exit|ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$D/sanitize.log"
! grep -qE "^\(exit [^0]" "$D/sanitize.log"
