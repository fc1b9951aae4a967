#!/bin/bash
# Device stage: the LibTorch op as users call it (issue: no host sync, grad_res
# not copied, capturable, compilable, timed in a training step).
# Usage, from the project root on the GPU machine, after . .deps/remote-setup.sh
# and a configure of BUILD against its CUDA LibTorch (CMAKE_PREFIX_PATH):
#   bench/device/op_as_called.sh BUILD
# PYTHON (default python3): a Python with torch and pytest. About 3-4 minutes
# on an H200 once BUILD is built (torch.compile compiles once per timed shape).
# Writes under $OUT (default /tmp/out):
#   op_tests.log        the C++ GPU tests of the op and of the kernels' new paths (ctest)
#   op_pytest.log       the Python tests: capture, compile, bad index, grad_res aliasing (pytest -v)
#   kernels_only.json   gatecheck-bench on the timed shapes (raw kernels, GPU time)
#   op_as_called.json, op_as_called.md, op_as_called.log   the timing (bench/op_as_called.py)
set -u
B=${1:?usage: bench/device/op_as_called.sh BUILD}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
LIB=$B/kernels/torch_op/libgatecheck_torch_op.so
PY=${PYTHON:-python3}  # a Python with torch and pytest
echo "=== build ($(date -u +%T))"
cmake --build "$B" -j"$(nproc)" --target gatecheck_torch_op test_torch_op test_cuda_vs_host gatecheck-bench \
  > "$OUT/op_build.log" 2>&1 || { tail -40 "$OUT/op_build.log"; exit 1; }
[ -f "$LIB" ] || { echo "no $LIB: is LibTorch found in $B?"; exit 1; }

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
