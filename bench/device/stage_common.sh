# Sourced by each stage (bench/device/stages/NAME.sh): its results folder D
# ($OUT/NAME, made by run.sh), the binaries it may use, and `need`, which
# ends the stage with a clear message when a binary was not built.
set -u
: "${OUT:?run stages through bench/device/run.sh (OUT unset)}" "${BUILD:?BUILD unset}"
JOBS=${JOBS:-$(nproc)}
D="$OUT/$(basename "$0" .sh)"
mkdir -p "$D"
T="$BUILD/tests/cuda/test_cuda_vs_host"
P="$BUILD/tests/properties/property_suites_gpu_test"
GC="$BUILD/cli/gatecheck"
BENCH="$BUILD/bench/gatecheck-bench"
need() {  # need FILE...: stop the stage (exit 1) if one is missing
  for f in "$@"; do
    [ -x "$f" ] || { echo "$(basename "$D"): $f was not built (see $OUT/build/build.log)"; exit 1; }
  done
}
# skipped_tests LOG...: the tests GoogleTest reported skipped, summed over its runs in LOG
skipped_tests() { awk '/^\[  SKIPPED \] [0-9]+ tests?,/ { n += $4 } END { print n + 0 }' "$@"; }
