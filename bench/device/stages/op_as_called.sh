# op_as_called: the LibTorch op as users call it. Its C++ GPU tests and those
# of the kernels' paths it uses (no host sync, reports, the backward without
# grad_res, capture); its Python tests (grad_res aliasing, a bad index raising
# at the next call or at check_errors(), checked mode, a captured step
# replayed bit-identical to eager, torch.compile(fullgraph=True) bit-identical
# to the op, torch.library.opcheck); then the timing table
# (bench/op_as_called.py) beside kernels-only figures from gatecheck-bench.
# PYTHON (default python3): a Python with torch and pytest. About 3-4 minutes
# on the H200 (torch.compile compiles once per timed shape).
# Files: op_tests.log, op_pytest.log, kernels_only.json, op_as_called.{json,md,log}.
. "$(dirname "$0")/../stage_common.sh"
LIB=$BUILD/kernels/torch_op/libgatecheck_torch_op.so
PY=${PYTHON:-python3}
need "$BENCH"
[ -f "$LIB" ] || { echo "op_as_called: no $LIB (is a LibTorch with CUDA found in $BUILD?)"; exit 1; }
B=$BUILD
OUT=$D

echo "=== C++ tests ($(date -u +%T))"
timeout 240 ctest --test-dir "$B" -L gpu -R 'TorchOp|CudaReports|CudaNoGradRes|CudaVsHost.Capture|CudaErrors' \
  -E 'TorchOp.AsCalled' --output-on-failure > "$OUT/op_tests.log" 2>&1
grep -E "tests passed|FAILED|Failed|\*\*\*" "$OUT/op_tests.log" | head -30

echo "=== Python tests ($(date -u +%T))"
GATECHECK_TORCH_OP=$LIB timeout 300 "$PY" -m pytest -v -rs -p no:cacheprovider tests/cuda/torch_op_as_called_test.py \
  > "$OUT/op_pytest.log" 2>&1
grep -E "PASSED|FAILED|ERROR|SKIPPED|passed|failed" "$OUT/op_pytest.log" | tail -20

echo "=== kernels only: gatecheck-bench ($(date -u +%T))"
K=$B/bench/gatecheck-bench
T=$(mktemp -d)  # this run's files only
timeout 90 "$K" --dtypes bf16 --patterns random --no-torch --rows 4097 --dims 3072 --gates 9,32,rows/3 --json $T/k1.json > $T/k1.log 2>&1
timeout 90 "$K" --dtypes bf16 --patterns random --no-torch --rows 32768 --dims 3072 --gates 32,rows/3 --json $T/k2.json > $T/k2.log 2>&1
timeout 90 "$K" --dtypes bf16 --patterns random --no-torch --rows 32768 --dims 5376 --gates 9 --json $T/k3.json > $T/k3.log 2>&1
"$PY" - $T/k1.json $T/k2.json $T/k3.json > "$OUT/kernels_only.json" <<'PY'
import json, sys
docs = []
for p in sys.argv[1:]:
    try:
        docs.append(json.load(open(p)))
    except (OSError, ValueError) as e:
        docs.append({"file": p, "error": str(e)})
merged = dict(docs[0]) if "results" in docs[0] else {}
merged["results"] = [r for d in docs for r in d.get("results", [])]
merged["runs"] = [{k: v for k, v in d.items() if k != "results"} for d in docs]
print(json.dumps(merged, indent=1))
PY
tail -n +1 $T/k1.log $T/k2.log $T/k3.log | grep -E "^bf16|copy ceiling|==>" | head -20

echo "=== as called: bench/op_as_called.py ($(date -u +%T))"
GATECHECK_COMMIT=${GATECHECK_COMMIT:-} timeout 300 "$PY" bench/op_as_called.py --lib "$LIB" \
  --kernels-json "$OUT/kernels_only.json" --out "$OUT" > "$OUT/op_as_called.log" 2>&1
tail -30 "$OUT/op_as_called.log"
echo "=== done ($(date -u +%T))"
