# verify: every GPU test (ctest -L gpu: the cuda/host differential, index
# errors, conversions, large offsets, graph capture, the property suites on
# cuda, the LibTorch op from C++ and Python, torch eager on CUDA), then
# `gatecheck check` on cuda with the default generator for 45 s.
# Files: ctest.log, check.txt, check.json. About 2-3 minutes on the H200.
. "$(dirname "$0")/../stage_common.sh"
need "$GC"
timeout 360 ctest --test-dir "$BUILD" -L gpu --output-on-failure > "$D/ctest.log" 2>&1
ctest_rc=$?
grep -vE "^ +Start|Test +#[0-9]+: .* Passed" "$D/ctest.log" | tail -15
timeout 120 "$GC" check --impl cuda --device cuda --seconds 45 --seed 1 --json "$D/check.json" > "$D/check.txt" 2>&1
check_rc=$?
sed -n '/^implementation  /,/^$/p' "$D/check.txt"
tests=$(grep -E "tests passed" "$D/ctest.log" | tail -1)
echo "verify: ctest -L gpu: ${tests:-no summary} (exit $ctest_rc); $(tail -1 "$D/check.txt") (exit $check_rc)"
[ $ctest_rc -eq 0 ] && [ $check_rc -eq 0 ]
