#!/bin/bash
# A change timed against the default build in the same call, both benchmarks
# in alternation, twice, on the shapes below. Run after bench/run_h200.sh build.
#  - a compile-time change (FLAGS): a second build (build-NAME, without
#    LibTorch) with FLAGS, and its own cuda-vs-host test first;
#  - a run-time knob (FLAGS empty, AB_TUNING set): the default build under
#    GATECHECK_CUDA_TUNING=$AB_TUNING.
# Usage:
#   OUT=dir bench/ab_build_h200.sh NAME "FLAGS" [benchmark options...]
#   OUT=dir AB_TUNING=seg=448 bench/ab_build_h200.sh NAME "" [benchmark options...]
# e.g. bench/ab_build_h200.sh portable -DGATECHECK_PORTABLE_ROUNDING
set -u
OUT=${OUT:-/tmp/out}
NAME=$1
F=$2
shift 2
ARGS=("$@")
[ ${#ARGS[@]} -eq 0 ] && ARGS=(--dtypes bf16,fp16 --dims 3072,5376 --rows 4097,32768 --gates 9 --patterns random)
J=$OUT/ab-$NAME
mkdir -p "$J"
if [ -n "$F" ]; then
  B=build-$NAME
  TB=""
  { cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DGATECHECK_WITH_TORCH=OFF -DCMAKE_CUDA_FLAGS="$F" -DCMAKE_CXX_FLAGS="$F" &&
    cmake --build "$B" -j"$(nproc)" --target gatecheck-bench test_cuda_vs_host; } > "$J/build.log" 2>&1 ||
    { tail -30 "$J/build.log"; exit 1; }
  echo "## $B/tests/cuda/test_cuda_vs_host --gtest_filter=CudaVsHost.*:CudaConversions.* ($F)"
  timeout 200 "$B/tests/cuda/test_cuda_vs_host" --gtest_filter='CudaVsHost.*:CudaConversions.*' 2>&1 | grep -E "PASSED|FAILED|Failure" | head
else
  B=build
  TB=${AB_TUNING:?either FLAGS or AB_TUNING}
fi
for pass in 1 2; do
  for side in default "$NAME"; do
    b=build; t=""
    [ "$side" = default ] || { b=$B; t=$TB; }
    echo "## pass $pass: GATECHECK_CUDA_TUNING='$t' $b/bench/gatecheck-bench ${ARGS[*]} --no-torch"
    GATECHECK_CUDA_TUNING="$t" "$b/bench/gatecheck-bench" "${ARGS[@]}" --no-torch --json "$J/$pass-$side.json" > "$J/$pass-$side.log" 2>&1 ||
      tail -5 "$J/$pass-$side.log"
  done
done
python3 - "$J" "$NAME" "$OUT/h200-ab-$NAME.json" <<'PY'
import json, os, sys
d, name, dest = sys.argv[1:]
runs = {f[:-5]: json.load(open(os.path.join(d, f))) for f in sorted(os.listdir(d)) if f.endswith(".json")}
json.dump(runs, open(dest, "w"), indent=1)
key = lambda r: (r["dtype"], r["dim"], r["rows"], r["gates"], r["index"])
shapes = [key(r) for r in next(iter(runs.values()))["results"]]
print("%-28s" % "shape (fwd us / fwd+bwd us)", *("%16s" % k for k in runs))
for s in shapes:
    cells = []
    for k, v in runs.items():
        r = next(r for r in v["results"] if key(r) == s)
        cells.append("%7.1f /%7.1f" % (r["fwd_us"], r["fwd_bwd_us"]))
    print("%-28s" % " ".join(map(str, s)), *("%16s" % c for c in cells))
PY
rm -rf "$J"
