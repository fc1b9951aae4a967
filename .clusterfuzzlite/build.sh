#!/bin/bash -eu
# ClusterFuzzLite's build step: the project's own OSS-Fuzz build script
# (fuzz/build.sh: every target with the engine and sanitizers CFLite gives,
# their .dict, .options and seed corpora into $OUT). The targets link the CUDA
# runtime, which the image that runs them lacks: it goes into $OUT beside
# them, found through an $ORIGIN rpath.
cd "$SRC/gatecheck"
fuzz/build.sh
cudart=$(ls /usr/local/cuda/lib64/libcudart.so.[0-9]* | sort | head -1)
cp -L "$cudart" "$OUT/"
for t in fuzz_gate_residual fuzz_rmsnorm_modulate fuzz_corpus_file; do
  patchelf --set-rpath '$ORIGIN' "$OUT/$t"
done
