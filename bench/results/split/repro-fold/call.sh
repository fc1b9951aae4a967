#!/usr/bin/env bash
# The binned fold as it is (HEAD) against the fold before it (this tree with fold.diff taken back),
# on one machine: both built, the GPU tests of the reproducible modes and gate_residual's CUDA
# kernels at HEAD (CudaReports.FirstReportStays... ten times at HEAD and before), then
# SplitCuda.CostAgainstTodaysBackward alternating HEAD, BASE, HEAD, BASE, and each kernel alone
# under Nsight Compute for both (../repro-breakdown/run.sh). From the repository root on the
# device, after `. .deps/remote-setup.sh`; results in $OUT.
set -u
O=${OUT:?}; W=/tmp/w; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/machine.txt
cfg() { cmake -S "$1" -B "$1/build-device" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CUDA_ARCHITECTURES=90-real;90-virtual" \
  ${CMAKE_PREFIX_PATH:+"-DCMAKE_PREFIX_PATH=$CMAKE_PREFIX_PATH"} > "$W/$2-build.log" 2>&1; }
rm -rf /tmp/base && mkdir -p /tmp/base && tar --exclude=./build-device --exclude=./.deps --exclude=./.git -cf - . | tar -xf - -C /tmp/base \
  && (cd /tmp/base && patch -s -R -p1 < bench/results/split/repro-fold/fold.diff) || echo "base tree: FAILED"
(cfg /tmp/base base && cmake --build /tmp/base/build-device -j 6 --target split_cuda_test test_cuda_vs_host >> $W/base-build.log 2>&1; echo "base build rc=$?") &
cfg . head && cmake --build build-device -j 10 --target split_cuda_test test_cuda_vs_host rmsnorm_repro_cuda_test \
  >> $W/head-build.log 2>&1; echo "head build rc=$?"
wait
B=build-device/tests
{
  timeout 150 $B/split/split_cuda_test --gtest_filter=-*Cost* 2>&1 | tail -3
  timeout 150 $B/split/rmsnorm_repro_cuda_test --gtest_filter=-*Cost* 2>&1 | tail -3
  timeout 200 $B/cuda/test_cuda_vs_host 2>&1 | tail -3
} > $O/tests.log 2>&1
F=--gtest_filter=CudaReports.FirstReportStaysUntilTakenAndEachErrorIsReportedOnce
for v in . /tmp/base; do
  echo "== CudaReports.FirstReportStays... x10 in $v" >> $O/tests.log
  timeout 60 $v/$B/cuda/test_cuda_vs_host $F --gtest_repeat=10 2>&1 | grep -E "Failure|Expected|Which is|message|actual|PASSED|FAILED|\.cpp" | sort | uniq -c | head -20 >> $O/tests.log
done
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
