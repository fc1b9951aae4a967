# rms_iterate: one turn of kernel work on rmsnorm_modulate's CUDA kernels, in one file
# (iter.log) beside the benchmark (bench.md):
#   - the kernels against the host twin, every test of test_rmsnorm_cuda_vs_host;
#   - gatecheck-rmsnorm-bench at 32768 and 131072 rows x 5376 and 3072, bf16, 9 gates: the
#     forward, both backwards, the copy of the same bytes;
#   - ncu on the forward, the one-pass backward and the fold at 32768 x 5376 (time, DRAM and
#     issue throughput, occupancy, registers);
#   - RERUN (a ctest regex, optional): those GPU tests again, one at a time.
# About 3 minutes on the H200 after the build.
. "$(dirname "$0")/../stage_common.sh"
RT="$BUILD/tests/cuda/test_rmsnorm_cuda_vs_host"
RB="$BUILD/bench/gatecheck-rmsnorm-bench"
need "$RT" "$RB"
L="$D/iter.log"
{
  echo "== $RT"
  timeout 120 "$RT" 2>&1 | grep -E "OK \]|FAILED|PASSED|differs|Failure|Expected|actual|Which is"
  echo "rms tests exit ${PIPESTATUS[0]}"
} > "$L" 2>&1
timeout 90 "$RB" --rows 32768,131072 --dims 5376,3072 --gates 9 --dtypes bf16 > "$D/bench.md" 2>&1
echo "bench exit $?" >> "$L"
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__block_size,launch__grid_size
{
  echo "== ncu (bf16 32768 x 5376, 9 gates): $M"
  timeout 120 ncu --clock-control none --metrics "$M" --print-units base -k 'regex:fwd_kernel|bwd_fused|bwd_fold' \
    --launch-count 6 --csv "$RB" --rows 32768 --dims 5376 --gates 9 --dtypes bf16 --reps 1 2>/dev/null |
    grep '^"' | python3 -c "
import csv, sys, collections
rows = [r for r in csv.reader(sys.stdin) if len(r) > 10]
h = rows[0]; K = collections.OrderedDict()
for r in rows[1:]:
    K.setdefault((r[h.index('ID')], r[h.index('Kernel Name')][:70]), {})[r[h.index('Metric Name')].split('.')[0]] = r[h.index('Metric Value')].replace(',', '')
for (i, n), m in K.items(): print(n, ' '.join('%s=%s' % kv for kv in m.items()))
"
} >> "$L" 2>&1
if [ -n "${RERUN:-}" ]; then
  (cd "$BUILD" && timeout 240 ctest -R "$RERUN" --output-on-failure) >> "$L" 2>&1
  echo "rerun exit $?" >> "$L"
fi
cat "$D/bench.md"
grep -E "exit|FAILED|bwd_fused|fwd_kernel|bwd_fold|tests passed|Failed|\*\*\*" "$L" | cut -c1-260
