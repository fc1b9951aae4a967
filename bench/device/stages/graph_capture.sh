# graph_capture: after a stream's first call, the forward and backward are
# captured into a CUDA graph in global capture mode under every backward
# plan, and the graph, launched twice, is bit-identical to the host twin;
# capturing a first call fails, as it must (its synchronous allocation).
# Then every test of test_cuda_vs_host, as a check that nothing around the
# capture broke. Files: capture.log, test_cuda_vs_host.log.
# About 1 minute on the H200.
. "$(dirname "$0")/../stage_common.sh"
need "$T"
gtest() {  # gtest LOG SECONDS ARGS...: one run of $T, its exit code last
  local log=$1 secs=$2; shift 2
  { echo "## $T $*"; timeout "$secs" "$T" "$@" 2>&1 | grep -vE "^\[ +(RUN|OK) +\]"; echo "(exit ${PIPESTATUS[0]})"; } > "$log" 2>&1
  grep -E "^##|^\(exit|^\[  (PASSED|FAILED|SKIPPED)|Failure" "$log"
}
gtest "$D/capture.log" 120 --gtest_filter='CudaVsHost.Capture*'
gtest "$D/test_cuda_vs_host.log" 300
result() { grep -hE "^\[  (PASSED|FAILED)  \]" "$1" | head -1 | sed 's/^\[  //; s/  \]//'; }
echo "graph_capture: capture tests: $(result "$D/capture.log"), $(skipped_tests "$D/capture.log") skipped; every test of test_cuda_vs_host: $(result "$D/test_cuda_vs_host.log"), $(skipped_tests "$D/test_cuda_vs_host.log") skipped"
grep -q "^(exit 0)" "$D/capture.log" && grep -q "^(exit 0)" "$D/test_cuda_vs_host.log" && [ "$(skipped_tests "$D/capture.log")" -eq 0 ]
