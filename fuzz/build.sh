#!/bin/bash -eu
# OSS-Fuzz / ClusterFuzzLite build script: builds every fuzz target with the
# engine and sanitizers the environment gives, and puts into $OUT each
# target, its .dict and .options, and <target>_seed_corpus.zip from
# corpus/seeds/<target>/. Honours $CC, $CXX, $CFLAGS, $CXXFLAGS,
# $LIB_FUZZING_ENGINE, $OUT (and $WORK for the build folder).
#
# Locally, an OSS-Fuzz-style check:
#   CXX=clang++-14 LIB_FUZZING_ENGINE=-fsanitize=fuzzer OUT=/tmp/ossfuzz-out fuzz/build.sh
# With no $CXXFLAGS, the code is instrumented for libFuzzer with ASan + UBSan.
#
# The project needs the CUDA toolkit (nvcc) to configure: an OSS-Fuzz
# Dockerfile must install it; device code is not instrumented and the targets
# run the CPU implementations unless GATECHECK_FUZZ_IMPL says otherwise.
src=$(cd "$(dirname "$0")/.." && pwd)
: "${CXX:=clang++}"
: "${CXXFLAGS:=-fsanitize=fuzzer-no-link,address,undefined}"
: "${LIB_FUZZING_ENGINE:?set LIB_FUZZING_ENGINE (e.g. -fsanitize=fuzzer)}"
: "${OUT:?set OUT (the output folder)}"
if [ -z "${CC:-}" ]; then CC=$(echo "$CXX" | sed 's/clang++/clang/; s/g++$/gcc/'); fi
# clang: leave the per-element bookkeeping loops uninstrumented (see the list).
case "$($CXX --version 2>/dev/null | head -1)" in
  *clang*) CXXFLAGS="$CXXFLAGS -fsanitize-coverage-ignorelist=$src/fuzz/coverage_ignorelist.txt" ;;
esac
build=${WORK:-/tmp}/gatecheck-fuzz-build
targets="fuzz_gate_residual fuzz_rmsnorm_modulate fuzz_corpus_file"

cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_C_FLAGS="${CFLAGS:-}" -DCMAKE_CXX_FLAGS="$CXXFLAGS" \
  -DGATECHECK_FUZZ_ENGINE="$LIB_FUZZING_ENGINE" \
  -DGATECHECK_TESTS=OFF -DGATECHECK_WITH_TORCH=OFF
cmake --build "$build" -j "$(nproc)" --target $targets

mkdir -p "$OUT"
for t in $targets; do
  cp "$build/fuzz/$t" "$src/fuzz/$t.dict" "$src/fuzz/$t.options" "$OUT/"
  rm -f "$OUT/${t}_seed_corpus.zip"
  (cd "$src/corpus/seeds/$t" && zip -q -j "$OUT/${t}_seed_corpus.zip" ./*)
  echo "build.sh: $OUT/$t ($(unzip -l "$OUT/${t}_seed_corpus.zip" | tail -1 | awk '{print $2}') seeds)"
done
