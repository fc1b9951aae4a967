# ab: a change timed against the default build in the same call, the two
# benchmarks in alternation, twice. Nothing to do (a skip) unless one of:
#   AB_FLAGS="-DNAME[=V] ..."  a compile-time change: a second build,
#                              $BUILD-ab (without LibTorch), checked by its own
#                              CudaVsHost.* and CudaConversions.* tests first
#   AB_TUNING="seg=448"        a run-time change: the default build under
#                              GATECHECK_CUDA_TUNING (docs/kernels.md)
# AB_ARGS: gatecheck-bench shape options (default bf16,fp16 x 3072,5376 x
# 4097,32768 rows x 9 gates, random index). Files: ab.json (every pass),
# the logs. A few minutes, depending on AB_ARGS and whether it builds.
. "$(dirname "$0")/../stage_common.sh"
need "$BENCH"
if [ -z "${AB_FLAGS:-}" ] && [ -z "${AB_TUNING:-}" ]; then
  echo "ab: nothing to compare (set AB_FLAGS or AB_TUNING)"; exit 77
fi
args=${AB_ARGS:---dtypes bf16,fp16 --dims 3072,5376 --rows 4097,32768 --gates 9 --patterns random}
b="$BUILD" t="${AB_TUNING:-}"
if [ -n "${AB_FLAGS:-}" ]; then
  b="$BUILD-ab"
  { cmake -S . -B "$b" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CUDA_ARCHITECTURES=90-real;90-virtual" -DGATECHECK_WITH_TORCH=OFF \
      "-DCMAKE_CUDA_FLAGS=$AB_FLAGS" "-DCMAKE_CXX_FLAGS=$AB_FLAGS" ${CMAKE_PREFIX_PATH:+"-DCMAKE_PREFIX_PATH=$CMAKE_PREFIX_PATH"} &&
    cmake --build "$b" -j "$JOBS" --target gatecheck-bench test_cuda_vs_host; } > "$D/build-ab.log" 2>&1 ||
    { tail -30 "$D/build-ab.log"; echo "ab: the build with $AB_FLAGS failed"; exit 1; }
  echo "## $b/tests/cuda/test_cuda_vs_host --gtest_filter=CudaVsHost.*:CudaConversions.* ($AB_FLAGS)"
  GATECHECK_CUDA_TUNING="$t" timeout 200 "$b/tests/cuda/test_cuda_vs_host" --gtest_filter='CudaVsHost.*:CudaConversions.*' \
    > "$D/tests-ab.log" 2>&1 || { grep -E "Failure|FAILED" "$D/tests-ab.log" | head; echo "ab: the changed build fails its tests"; exit 1; }
  grep -E "^\[  PASSED" "$D/tests-ab.log"
fi
for pass in 1 2; do
  for side in default changed; do
    bb=$BUILD tt=""
    [ $side = changed ] && bb=$b tt=$t
    echo "## pass $pass, $side: GATECHECK_CUDA_TUNING='$tt' $bb/bench/gatecheck-bench $args --no-torch"
    GATECHECK_CUDA_TUNING="$tt" timeout 200 "$bb/bench/gatecheck-bench" $args --no-torch --json "$D/$pass-$side.json" \
      > "$D/$pass-$side.log" 2>&1 || { tail -5 "$D/$pass-$side.log"; echo "ab: a benchmark run failed"; exit 1; }
  done
done
python3 - "$D" <<'PY'
import json, os, sys
d = sys.argv[1]
names = ["1-default", "1-changed", "2-default", "2-changed"]
runs = {n: json.load(open(os.path.join(d, n + ".json"))) for n in names}
json.dump(runs, open(os.path.join(d, "ab.json"), "w"), indent=1)
key = lambda r: (r["dtype"], r["dim"], r["rows"], r["gates"], r["index"])
print("%-28s" % "shape (fwd / fwd+bwd us)", *("%17s" % n for n in names))
for r0 in runs[names[0]]["results"]:
    cells = []
    for n in names:
        r = next(r for r in runs[n]["results"] if key(r) == key(r0))
        cells.append("%7.1f /%8.1f" % (r["fwd_us"], r["fwd_bwd_us"]))
    print("%-28s" % " ".join(map(str, key(r0))), *("%17s" % c for c in cells))
PY
for n in 1-default 1-changed 2-default 2-changed; do rm -f "$D/$n.json"; done
echo "ab: ${AB_FLAGS:+build flags '$AB_FLAGS'}${AB_TUNING:+ tuning '$AB_TUNING'} against the default, two passes: $D/ab.json"
