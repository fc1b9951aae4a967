# large_offsets: rows x dim past 2^31 elements (CudaLargeOffsets.*): 699,100 x
# 3072 problems (4.3 GB a bf16 tensor) in bf16, f16 with about 3 rows a gate,
# and fp32, checked around element 2^31 and on sampled gates; and a flipped
# bit past element 2^31 must be reported. File: large_offsets.log.
# About 15 seconds on the H200 (it needs about 45 GB of GPU memory).
. "$(dirname "$0")/../stage_common.sh"
L="$BUILD/tests/cuda/test_cuda_large_offsets"
need "$L"
{
  nvidia-smi --query-gpu=memory.free,memory.total --format=csv
  echo "## $L"
  timeout 240 "$L" 2>&1 | grep -vE "^\[ +RUN +\]"
  echo "(exit ${PIPESTATUS[0]})"
} > "$D/large_offsets.log" 2>&1
tail -25 "$D/large_offsets.log"
passed=$(grep -E "^\[  PASSED  \]" "$D/large_offsets.log" | sed 's/^\[  PASSED  \] //')
echo "large_offsets: ${passed:-no test} passed, $(skipped_tests "$D/large_offsets.log") skipped (exit $(sed -n 's/^(exit \(.*\))$/\1/p' "$D/large_offsets.log"))"
grep -q "^(exit 0)" "$D/large_offsets.log" && [ "$(skipped_tests "$D/large_offsets.log")" -eq 0 ]
