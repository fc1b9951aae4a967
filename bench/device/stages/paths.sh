# paths: the cuda/host differential (every CudaVsHost test, bit for bit)
# under each backward configuration in PATHS_CONFIGS (GATECHECK_CUDA_TUNING
# values; "default" is the automatic choice; default list: default tile=4,
# the short-tiles kernel forced everywhere) and two seeds each.
# docs/kernels.md lists the knobs. File: paths.log. About 2 minutes on the H200.
. "$(dirname "$0")/../stage_common.sh"
need "$T"
configs=${PATHS_CONFIGS:-default tile=4}
for cfg in $configs; do
  [ "$cfg" = default ] && cfg=""
  for seed in 20261129 7; do
    echo "## GATECHECK_CUDA_TUNING='$cfg' GATECHECK_SEED=$seed $T --gtest_filter=CudaVsHost.*"
    GATECHECK_CUDA_TUNING="$cfg" GATECHECK_SEED=$seed timeout 120 "$T" --gtest_filter='CudaVsHost.*' 2>&1 \
      | grep -vE "^\[ +(RUN|OK) +\]" | head -60
    echo "(exit ${PIPESTATUS[0]})"
  done
done > "$D/paths.log" 2>&1
grep -E "^##|^\(exit|^\[  (PASSED|FAILED|SKIPPED)" "$D/paths.log"
runs=$(grep -c "^## " "$D/paths.log")
ok=$(grep -c "^(exit 0)" "$D/paths.log")
skipped=$(skipped_tests "$D/paths.log")
echo "paths: $ok of $runs runs of CudaVsHost.* exited 0 ($(echo $configs | wc -w) configurations x 2 seeds), $skipped skipped test(s)"
[ "$ok" -eq "$runs" ] && [ "$skipped" -eq 0 ]
