# combined: one call's worth of the newest GPU work, most important first. Builds its own
# targets (not every one), then: rmsnorm_modulate's GPU tests and bench, the budget seed on
# cuda (the report names any case past its slice), split_invariance's GPU tests and checks,
# and rmsnorm_modulate's check on cuda for cuda and torch-eager. Files in $OUT (flat).
set -u
B=${BUILD:-build-device}
t() { echo "== $* ($(date -u +%T))"; }
cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CUDA_ARCHITECTURES=90-real;90-virtual" "-DCMAKE_PREFIX_PATH=$CMAKE_PREFIX_PATH" >/dev/null
timeout 280 cmake --build $B -j 16 --target gatecheck test_rmsnorm_cuda_vs_host gatecheck-rmsnorm-bench split_cuda_test test_impls_rms_torch_eager_cuda > $OUT/build.log 2>&1
t "build rc=$?"; grep -E "error" $OUT/build.log | head -5
(cd $B && timeout 150 ctest -L gpu -R "rmsnorm|SplitCuda|RmsnormModulateTorchEagerCuda" -E _check --output-on-failure -V > $OUT/ctest.log 2>&1); t "ctest rc=$?"
grep -E "tests passed|Failed|FAILED|\*\*\*" $OUT/ctest.log | head -12; grep -iE "^[0-9]+: .*(us|µs)" $OUT/ctest.log | head -12
timeout 60 $B/bench/gatecheck-rmsnorm-bench --rows 4097,32768,131072 --dims 3072,5376,5001 --gates 9,rows --dtypes bf16 > $OUT/bench.md 2>&1
timeout 30 $B/bench/gatecheck-rmsnorm-bench --rows 32768 --dims 5376 --gates 9,32 --dtypes f16,f32 2>&1 | grep '^| [fb]' >> $OUT/bench.md; t bench; cat $OUT/bench.md
S=1054733551882; timeout 120 $B/cli/gatecheck check --impl cuda --device cuda --seconds 20 --jobs 16 --seed $S --corpus /tmp/c1 --json $OUT/budget.json > $OUT/budget.txt 2>&1; t "budget rc=$?"
grep -E "^cuda|over its|^seed" $OUT/budget.txt
timeout 60 $B/cli/gatecheck check --device cuda --impl cuda-repro --impl cuda --impl torch-eager --properties split_invariance,accuracy --seconds 30 --seed 1 --corpus /tmp/c2 > $OUT/split.txt 2>&1; t "split rc=$?"
grep -E "@cuda|^seed" $OUT/split.txt
timeout 60 $B/cli/gatecheck check --op rmsnorm_modulate --device cuda --seconds 40 --jobs 16 --seed 33 --corpus /tmp/c3 --json $OUT/rms-check.json > $OUT/rms-check.txt 2>&1; t "rms check rc=$?"
grep -E "@cuda|^seed|over its" $OUT/rms-check.txt
