# rms_iterate: one turn of kernel work on rmsnorm_modulate's CUDA kernels, in one file
# (iter.log) beside the benchmark (bench.md):
#   - the kernels against the host twin, every test of test_rmsnorm_cuda_vs_host;
#   - gatecheck-rmsnorm-bench at 4097, 32768 and 131072 rows x RMS_DIMS (default 5376,3072),
#     bf16, 9 gates: the forward, both backwards, the copy of the same bytes;
#   - ncu's report on one kernel's first launch at bf16 32768 x NCU_DIMS (throughput,
#     occupancy, scheduler and warp stall statistics, memory): NCU_KERNEL, a regex of kernel
#     names (default the one-pass backward, bwd_onepass, at 5376 columns);
#   - RMS_EXP (optional): an experiment's switch, an environment variable the kernels read, as
#     VAR (set to 1) or VAR=VALUE: the tests again and the benchmark at 32768 and 131072 rows
#     with it set;
#   - RERUN (a ctest regex, optional): those GPU tests again, one at a time.
#   - CHECK=1: gatecheck check --op rmsnorm_modulate --impl cuda --device cuda --seed 34 (its
#     default budget), its report in check-rms.json.
# RMS_TESTS=0, RMS_BENCH=0 and NCU=0 leave out the tests, the benchmark and ncu.
# About 3 minutes on the H200 after the build.
. "$(dirname "$0")/../stage_common.sh"
RT="$BUILD/tests/cuda/test_rmsnorm_cuda_vs_host"
RB="$BUILD/bench/gatecheck-rmsnorm-bench"
need "$RB"
[ "${RMS_TESTS:-1}" = 0 ] || need "$RT"
L="$D/iter.log"
: > "$L"
exp=""  # the experiment's VAR=VALUE
[ -z "${RMS_EXP:-}" ] || { [[ "$RMS_EXP" == *=* ]] && exp=$RMS_EXP || exp="$RMS_EXP=1"; }
tests() {  # tests [VAR=VALUE]: the tests, with that environment, their verdicts and failures kept
  echo "== $RT${1:+, $1}"
  env "$@" timeout 120 "$RT" 2>&1 | grep -E "OK \]|FAILED|PASSED|differs|Failure|Expected|actual|Which is"
  echo "rms tests ${1:+$1 }exit ${PIPESTATUS[0]}"
}
[ "${RMS_TESTS:-1}" = 0 ] || {
  tests
  [ -z "$exp" ] || tests "$exp"  # the same tests with the experiment's switch on
} >> "$L" 2>&1
if [ "${RMS_BENCH:-1}" != 0 ]; then
  timeout 90 "$RB" --rows 4097,32768,131072 --dims "${RMS_DIMS:-5376,3072}" --gates 9 --dtypes bf16 --no-torch > "$D/bench.md" 2>&1
  echo "bench exit $?" >> "$L"
  if [ -n "$exp" ]; then  # an experiment's switch (an environment variable the kernels read), benchmarked beside
    env "$exp" timeout 90 "$RB" --rows 32768,131072 --dims "${RMS_DIMS:-5376,3072}" --gates 9 --dtypes bf16 \
      --no-torch > "$D/bench-exp.md" 2>&1
    echo "bench $exp exit $?" >> "$L"
  fi
fi
[ "${NCU:-1}" = 0 ] || {
  # The kernel's first launch under ncu: where its warps wait.
  echo "== ncu, ${NCU_KERNEL:-bwd_onepass} at bf16 32768 x ${NCU_DIMS:-5376}, 9 gates"
  timeout 150 ncu --clock-control none -k "regex:${NCU_KERNEL:-bwd_onepass}" --launch-count 1 --section SpeedOfLight \
    --section Occupancy --section LaunchStats --section SchedulerStats --section WarpStateStats \
    --section MemoryWorkloadAnalysis --section InstructionStats \
    --metrics smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio,smsp__average_warps_issue_stalled_branch_resolving_per_issue_active.ratio,smsp__inst_executed.sum \
    "$RB" --rows 32768 --dims "${NCU_DIMS:-5376}" --gates 9 --dtypes bf16 --reps 1 2>&1 |
    grep -vE "^==PROF==|^\|" | grep -E "[0-9]" | cut -c1-150
} >> "$L" 2>&1
if [ "${CHECK:-0}" = 1 ]; then
  t0=$(date +%s)
  env -u PYTHONPATH timeout 200 "$BUILD/cli/gatecheck" check --op rmsnorm_modulate --impl cuda --device cuda --seed 34 \
    --json "$D/check-rms.json" --corpus /tmp/corpus-rms > "$D/check-rms.log" 2>&1
  echo "check exit $? ($(( $(date +%s) - t0 )) s)" >> "$L"
fi
if [ -n "${RERUN:-}" ]; then
  (cd "$BUILD" && timeout 240 ctest -R "$RERUN" --output-on-failure) >> "$L" 2>&1
  echo "rerun exit $?" >> "$L"
fi
[ -f "$D/bench.md" ] && cat "$D/bench.md"
[ -f "$D/bench-exp.md" ] && cat "$D/bench-exp.md"
grep -E "exit|FAILED|Duration|Throughput|Stall|tests passed|Failed|\*\*\*" "$L" | cut -c1-200
