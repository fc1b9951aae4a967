# sanitize: compute-sanitizer memcheck and racecheck on the cuda/host
# differential tests (every plan path, the one-kernel backward, the one-block
# plan, long segments, index errors) and on the property suites run on cuda.
# File: sanitize.log (per run: its exit code, the start of any report, the
# tool's summary). About 3 minutes on the H200.
. "$(dirname "$0")/../stage_common.sh"
need "$T" "$P"
raw=$(mktemp)
sanitize() {  # sanitize TOOL ENV SECONDS BINARY ARGS...
  local tool=$1 envs=$2 secs=$3; shift 3
  echo "## $envs compute-sanitizer --tool $tool $*"
  env $envs timeout "$secs" compute-sanitizer --tool "$tool" "$@" > "$raw" 2>&1
  echo "(exit $?)"
  grep -vE "^\[ +(RUN|OK) +\]" "$raw" | grep -m 3 -B2 -A12 "^========= [A-Z][a-z]" | head -45
  grep -vE "^\[ +(RUN|OK) +\]" "$raw" | tail -12
}
{
  sanitize memcheck GATECHECK_CUDA_CASES=40 150 "$T" \
    --gtest_filter='CudaVsHost.RandomCases*:CudaVsHost.LongSegments*:CudaVsHost.DeviceWide*:CudaVsHost.EveryPlan*:CudaVsHost.OneKernel*:CudaVsHost.OneBlockPlan*:CudaErrors.*'
  sanitize racecheck GATECHECK_CUDA_CASES=20 100 "$T" \
    --gtest_filter='CudaVsHost.RandomCases*:CudaVsHost.LongSegments*:CudaVsHost.OneKernel*:CudaVsHost.OneBlockPlan*'
  sanitize memcheck RC_PARAMS=max_success=5 120 "$P"
  sanitize racecheck RC_PARAMS=max_success=5 100 "$P" --gtest_filter='Accuracy.*:SegmentInvariance.*'
} > "$D/sanitize.log" 2>&1
rm -f "$raw"
grep -E "^##|^\(exit|ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED|SKIPPED)" "$D/sanitize.log"
runs=$(grep -c "^## " "$D/sanitize.log")
clean=$(grep -cE "(ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards)" "$D/sanitize.log")
exits=$(grep -c "^(exit 0)" "$D/sanitize.log")
echo "sanitize: $clean of $runs sanitizer runs clean (0 errors or 0 hazards), $exits of $runs exited 0"
[ "$clean" -eq "$runs" ] && [ "$exits" -eq "$runs" ]
