# rmsnorm_op: torch.ops.gatecheck.rmsnorm_modulate as users call it. Its C++ GPU tests
# (autograd against the cuda implementation and the host twin bit for bit, argument errors,
# a bad index raised by either op), its Python tests (nothing written on a bad index, checked
# mode, capture, torch.compile(fullgraph=True), FakeTensor, opcheck), then its gatecheck_op
# peer through the Python door on every default property (CHECK_SECONDS, default 40, seed 34).
# PYTHON (default python3): a Python with torch and pytest. About 2 minutes on the H200.
# Files: op_tests.log, op_pytest.log, check.{txt,json,cmd,rc}.
. "$(dirname "$0")/../stage_common.sh"
LIB=$BUILD/kernels/torch_op/libgatecheck_torch_op.so
PY=${PYTHON:-python3}
need "$GC"
[ -f "$LIB" ] || { echo "rmsnorm_op: no $LIB (is a LibTorch with CUDA found in $BUILD?)"; exit 1; }

echo "=== C++ tests ($(date -u +%T))"
timeout 240 ctest --test-dir "$BUILD" -L gpu -R 'RmsnormTorchOp' --output-on-failure > "$D/op_tests.log" 2>&1
grep -E "tests passed|FAILED|Failed|\*\*\*" "$D/op_tests.log" | head -20

echo "=== Python tests ($(date -u +%T))"
GATECHECK_TORCH_OP=$LIB timeout 300 "$PY" -m pytest -v -rs -p no:cacheprovider \
  tests/cuda/rmsnorm_torch_op_as_called_test.py > "$D/op_pytest.log" 2>&1
grep -E "PASSED|FAILED|ERROR|SKIPPED|passed|failed" "$D/op_pytest.log" | tail -20

echo "=== gatecheck check through the door ($(date -u +%T))"
cmd="$GC check --op rmsnorm_modulate --impl python:gatecheck.peers:rmsnorm_modulate_gatecheck_op --device cuda --seconds ${CHECK_SECONDS:-40} --seed 34 --corpus $D/corpus --json $D/check.json"
echo "$cmd" > "$D/check.cmd"
env -u PYTHONPATH $cmd > "$D/check.txt" 2>&1
rc=$?; echo $rc > "$D/check.rc"
echo "check: exit $rc"; grep -E "rmsnorm_modulate_gatecheck_op@cuda|FAIL|inconclusive" "$D/check.txt" | head -20
echo "=== done ($(date -u +%T))"
