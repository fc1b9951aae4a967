# verify: every GPU test (ctest -L gpu, CTEST_JOBS at once, default 4: the cuda/host
# differentials of both ops, index errors, conversions, large offsets, graph capture, the
# property suites on cuda, the LibTorch ops from C++ and Python, the reproducible modes, torch
# eager on CUDA), then `gatecheck check` on cuda for each op at 60 s, scale tier included.
# Files: ctest.log, check.txt/.json (gate_residual), rms-check.txt/.json (rmsnorm_modulate).
# About 4 minutes on the H200 after the build.
. "$(dirname "$0")/../stage_common.sh"
need "$GC"
timeout "${CTEST_LIMIT:-300}" ctest --test-dir "$BUILD" -L gpu -j "${CTEST_JOBS:-4}" --output-on-failure > "$D/ctest.log" 2>&1
ctest_rc=$?
grep -vE "^ +Start|Test +#[0-9]+: .* Passed" "$D/ctest.log" | tail -15
# The two checks at once, eight workers each.
timeout 120 "$GC" check --impl cuda --device cuda --seconds 60 --jobs 8 --seed 1 --corpus "$D/corpus" \
  --json "$D/check.json" > "$D/check.txt" 2>&1 &
timeout 120 "$GC" check --op rmsnorm_modulate --impl cuda --device cuda --seconds 60 --jobs 8 --seed 34 \
  --corpus "$D/corpus" --json "$D/rms-check.json" > "$D/rms-check.txt" 2>&1
rms_rc=$?
wait $!; check_rc=$?
sed -n '/^implementation  /,/^$/p' "$D/check.txt" "$D/rms-check.txt"
tests=$(grep -E "tests passed" "$D/ctest.log" | tail -1)
echo "verify: ctest -L gpu: ${tests:-no summary} (exit $ctest_rc); gate_residual check: $(tail -1 "$D/check.txt") (exit $check_rc);" \
  "rmsnorm_modulate check: $(tail -1 "$D/rms-check.txt") (exit $rms_rc)"
[ $ctest_rc -eq 0 ] && [ $check_rc -eq 0 ] && [ $rms_rc -eq 0 ]
