#!/usr/bin/env bash
# Builds libFuzzer versions of the fuzz targets into BUILD_DIR (configuring it
# on first use): clang-14 with -fsanitize=fuzzer,address,undefined here, or,
# where there is no clang (the GPU machine), g++ with the libFuzzer archive
# $LIBFUZZER_A and -fsanitize-coverage=trace-cmp (features then come from
# trace-cmp and the extra counters). nvcc objects are never instrumented.
#   fuzz/build-libfuzzer.sh BUILD_DIR [TARGET...]
# (default targets: fuzz_gate_residual fuzz_rmsnorm_modulate fuzz_corpus_file gatecheck-fuzz-tools;
# GATECHECK_JOBS build jobs, default all cores)
# GATECHECK_CUDA_OBJECTS_FROM=DIR, on the first configure: link the kernels'
# nvcc objects of DIR, a build of this tree (kernels/cuda/CMakeLists.txt),
# rather than compiling them again; each build here brings them up to date
# there first, unless GATECHECK_CUDA_OBJECTS_FRESH is set (./gatecheck has).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: fuzz/build-libfuzzer.sh BUILD_DIR [TARGET...]}
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_gate_residual fuzz_rmsnorm_modulate fuzz_corpus_file gatecheck-fuzz-tools)
# One build of BUILD_DIR at a time: tests and campaigns that share it may ask
# at once (the second then finds it up to date).
mkdir -p "$build"
exec 9>"$build/.build-libfuzzer.lock"
flock 9
if [ ! -f "$build/CMakeCache.txt" ]; then
  common=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DGATECHECK_TESTS=OFF -DGATECHECK_WITH_TORCH=OFF)
  if [ -n "${GATECHECK_CUDA_OBJECTS_FROM:-}" ]; then
    from=$(cd "$GATECHECK_CUDA_OBJECTS_FROM" && pwd) ||
      { echo "build-libfuzzer: GATECHECK_CUDA_OBJECTS_FROM: no folder $GATECHECK_CUDA_OBJECTS_FROM" >&2; exit 2; }
    common+=("-DGATECHECK_CUDA_OBJECTS_FROM=$from")
  fi
  if command -v clang++-14 >/dev/null; then
    echo "build-libfuzzer: configuring $build (clang-14, libFuzzer + ASan + UBSan)" >&2
    cmake -S "$root" -B "$build" "${common[@]}" -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_C_COMPILER=clang-14 \
      "-DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fsanitize-coverage-ignorelist=$root/fuzz/coverage_ignorelist.txt" \
      -DGATECHECK_FUZZ_ENGINE=-fsanitize=fuzzer >&2
  elif [ -n "${LIBFUZZER_A:-}" ]; then
    echo "build-libfuzzer: configuring $build (g++, $LIBFUZZER_A, trace-cmp + extra counters)" >&2
    cmake -S "$root" -B "$build" "${common[@]}" "-DCMAKE_CXX_FLAGS=-fsanitize-coverage=trace-cmp" \
      "-DGATECHECK_FUZZ_ENGINE=$LIBFUZZER_A" >&2
  else
    echo "build-libfuzzer: need clang++-14 (libclang-rt-14-dev) or LIBFUZZER_A" >&2
    exit 2
  fi
fi
cmake "$build" >/dev/null  # re-run the configure step: a copied tree may carry older timestamps
cmake --build "$build" -j "${GATECHECK_JOBS:-$(nproc)}" --target "${targets[@]}" >&2
