#!/usr/bin/env bash
# The binned fold with its loads in flight (HEAD) against the fold before it (BASE, default HEAD~1),
# on one machine: both built, the GPU tests of the reproducible modes and both ops' CUDA kernels at
# HEAD, then SplitCuda.CostAgainstTodaysBackward alternating HEAD, BASE, HEAD, BASE, and each kernel
# alone under Nsight Compute for both (../repro-breakdown/run.sh). From the repository root on the
# device, after `. .deps/remote-setup.sh`; results in $OUT.
set -u
BASE=${BASE:-HEAD~1}
O=${OUT:?}; W=/tmp/w; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/machine.txt
git rev-parse --short HEAD >> $O/machine.txt; git rev-parse --short "$BASE" >> $O/machine.txt
cfg() { cmake -S "$1" -B "$1/build-device" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CUDA_ARCHITECTURES=90-real;90-virtual" \
  ${CMAKE_PREFIX_PATH:+"-DCMAKE_PREFIX_PATH=$CMAKE_PREFIX_PATH"} > "$W/$2-build.log" 2>&1; }
git worktree add -f /tmp/base "$BASE" > /dev/null 2>&1
(cfg /tmp/base base && cmake --build /tmp/base/build-device -j 6 --target split_cuda_test >> $W/base-build.log 2>&1; echo "base build rc=$?") &
cfg . head && cmake --build build-device -j 10 --target split_cuda_test test_cuda_vs_host rmsnorm_repro_cuda_test \
  test_rmsnorm_cuda_vs_host >> $W/head-build.log 2>&1; echo "head build rc=$?"
wait
B=build-device/tests
{
  timeout 150 $B/split/split_cuda_test --gtest_filter=-*Cost* 2>&1 | tail -3
  timeout 150 $B/split/rmsnorm_repro_cuda_test --gtest_filter=-*Cost* 2>&1 | tail -3
  timeout 200 $B/cuda/test_cuda_vs_host 2>&1 | tail -3
  timeout 200 $B/cuda/test_rmsnorm_cuda_vs_host 2>&1 | tail -3
} > $O/tests.log 2>&1
grep -E "PASSED|FAILED" $O/tests.log
for i in 1 2; do
  for v in head base; do
    bin=$B/split/split_cuda_test; [ $v = base ] && bin=/tmp/base/$B/split/split_cuda_test
    echo "== $v (pass $i)" >> $O/cost.log
    timeout 60 $bin --gtest_filter=SplitCuda.CostAgainstTodaysBackward 2>&1 | grep -E "gate_residual bf16|3 stages|combine of 64 states \(" >> $O/cost.log
  done
done
cat $O/cost.log
bash bench/results/split/repro-breakdown/run.sh $O/kernels-head.txt > /dev/null
root=$(pwd); (cd /tmp/base && bash "$root/bench/results/split/repro-breakdown/run.sh" $O/kernels-base.txt > /dev/null)
grep -h fold $O/kernels-head.txt $O/kernels-base.txt
