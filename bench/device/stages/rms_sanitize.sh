# rms_sanitize: compute-sanitizer memcheck and racecheck on rmsnorm_modulate's CUDA kernels,
# every kernel path of the differential test against the host twin (row kernels kept, vector
# and element paths, unaligned views, the tile kernel one gate a row and folded over many
# tiles with empty gates, rows past the grid limit, a bad index). RowsPastTheGridLimit runs
# under memcheck only (racecheck takes minutes on it). RMS_SANITIZE_FILTER (a gtest filter)
# runs those tests alone under both tools. File: sanitize.log. About a minute.
. "$(dirname "$0")/../stage_common.sh"
RT="$BUILD/tests/cuda/test_rmsnorm_cuda_vs_host"
need "$RT"
run() {  # run TOOL SECONDS FILTER
  echo "## compute-sanitizer --tool $1 --error-exitcode 9 $RT --gtest_filter='$3'"
  timeout "$2" compute-sanitizer --tool "$1" --error-exitcode 9 "$RT" --gtest_filter="$3" 2>&1 |
    grep -vE "^\[ +(RUN|OK) +\]" | tail -8
  echo "(exit ${PIPESTATUS[0]})"
}
{
  run memcheck 120 "${RMS_SANITIZE_FILTER:-*}"
  run racecheck 150 "${RMS_SANITIZE_FILTER:-*-*RowsPastTheGridLimit*}"
} > "$D/sanitize.log" 2>&1
grep -E "^##|^\(exit|ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$D/sanitize.log"
