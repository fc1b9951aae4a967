#!/bin/bash
# One device call on the H200: build, GPU tests, property suite, sanitizers, benchmark.
# Usage (from the project root on the GPU machine, after . .deps/remote-setup.sh):
#   bench/run_h200.sh STAGE...   stages: build tests props sanitize tune bench
# Logs and JSON go to $OUT (at most 8 files come back).
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
J=$(nproc)
BENCH=build/bench/gatecheck-bench
T=build/tests/cuda/test_cuda_vs_host
P=build/tests/properties/property_suites_gpu_test
for stage in "$@"; do
  echo "=== stage $stage ($(date -u +%T))"
  case $stage in
    build)
      nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$OUT/build.log" 2>&1
      { cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j"$J" --target test_cuda_vs_host gatecheck-bench ${EXTRA_TARGETS:-}; } >> "$OUT/build.log" 2>&1 \
        || { tail -60 "$OUT/build.log"; exit 1; }
      head -2 "$OUT/build.log"; grep -E "gatecheck|Torch" "$OUT/build.log" | grep -v "^\[" | head -10 ;;
    tests)
      ctest --test-dir build -L gpu -R "${TEST_REGEX:-CudaVsHost|CudaErrors|CudaConversions|CudaStridedGate}" --output-on-failure > "$OUT/ctest.log" 2>&1
      tail -25 "$OUT/ctest.log" ;;
    diag)  # cuda vs host under each backward path and two seeds, full output kept
      for cfg in ${DIAG_CONFIGS:-default}; do [ "$cfg" = default ] && cfg="";
        for seed in 20261129 7; do
          echo "## GATECHECK_CUDA_TUNING='$cfg' GATECHECK_SEED=$seed $T --gtest_filter=CudaVsHost.*"
          GATECHECK_CUDA_TUNING="$cfg" GATECHECK_SEED=$seed timeout 120 "$T" --gtest_filter='CudaVsHost.*' 2>&1 \
            | grep -vE "^\[ +(RUN|OK) +\]" | head -40
        done
      done > "$OUT/diag.log" 2>&1
      grep -E "^##|PASSED|FAILED" "$OUT/diag.log" ;;
    props)
      { echo "## ctest -L gpu (every GPU suite, property suites included)";
        timeout 300 ctest --test-dir build -L gpu ${PROPS_EXCLUDE:+-E "$PROPS_EXCLUDE"} --output-on-failure 2>&1 | tail -60;
        if [ -x build/cli/gatecheck ]; then
          echo "## gatecheck check --impl cuda --device cuda --seconds 45 --seed 1";
          timeout 90 build/cli/gatecheck check --impl cuda --device cuda --seconds 45 --seed 1 --json "$OUT/check.json" 2>&1 | tail -30;
        fi; } > "$OUT/props.log" 2>&1
      cat "$OUT/props.log" | grep -vE "^ +Start|Test +#.*Passed" | tail -70 ;;
    sanitize)
      { echo "## compute-sanitizer --tool memcheck $T (GATECHECK_CUDA_CASES=40)";
        GATECHECK_CUDA_CASES=40 timeout 150 compute-sanitizer --tool memcheck "$T" \
          --gtest_filter='CudaVsHost.RandomCases*:CudaVsHost.LongSegments*:CudaVsHost.DeviceWide*:CudaVsHost.EveryPlan*:CudaVsHost.OneKernel*:CudaErrors.*' \
          > /tmp/memcheck.log 2>&1;
        grep -m 3 -B2 -A12 "^========= [A-Z]" /tmp/memcheck.log | head -45; tail -25 /tmp/memcheck.log;
        echo "## compute-sanitizer --tool racecheck $T (GATECHECK_CUDA_CASES=20)";
        GATECHECK_CUDA_CASES=20 timeout 100 compute-sanitizer --tool racecheck "$T" \
          --gtest_filter='CudaVsHost.RandomCases*:CudaVsHost.LongSegments*:CudaVsHost.OneKernel*' 2>&1 | tail -20;
        if [ -x "$P" ]; then
          echo "## RC_PARAMS=max_success=5 compute-sanitizer --tool memcheck $P (property suites on cuda)";
          RC_PARAMS="max_success=5" timeout 120 compute-sanitizer --tool memcheck "$P" 2>&1 | tail -30;
          echo "## RC_PARAMS=max_success=5 compute-sanitizer --tool racecheck $P --gtest_filter=Accuracy.*:SegmentInvariance.*";
          RC_PARAMS="max_success=5" timeout 100 compute-sanitizer --tool racecheck "$P" --gtest_filter='Accuracy.*:SegmentInvariance.*' 2>&1 | tail -15;
        fi; } > "$OUT/sanitize.log" 2>&1
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED|SKIPPED|##" "$OUT/sanitize.log" ;;
    tune)
      $BENCH --dtypes bf16 --dims 3072 --rows 4097,32768 --gates ${TUNE_GATES:-9,32,rows/3} --patterns ${TUNE_PATTERNS:-sorted,random} \
        --bwd-variants ${TUNE_VARIANTS:-auto,cub+thread,count+thread,cub+staged,count+staged} --stages --no-torch \
        --json "$OUT/h200-tune.json" 2>&1 | tee "$OUT/tune.log" | tail -60 ;;
    bench)
      $BENCH --json "$OUT/h200-bench.json" 2>&1 | tee "$OUT/bench.log" | tail -80 ;;
  esac
done
