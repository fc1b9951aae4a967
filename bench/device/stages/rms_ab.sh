# rms_ab: rmsnorm_modulate's kernels timed against other builds in the same call, the
# benchmarks in alternation, twice. Each other build is its own folder (without LibTorch),
# built at once:
#   AB_BASE=REV|DIR             the previous version: the tree at commit REV (git archive; the
#                               device's copy of .git may lack recent commits), or a source tree DIR
#                               sent along, e.g. made here by `git archive REV | tar -x -C build-ab-base`
#                               and named in the device call's carry (build*/ is ignored by git)
#   AB_FLAGS="-DNAME[=V] ..."   this tree with a compile-time change; its element-path and
#                               row-kernel tests (test_rmsnorm_cuda_vs_host) run first
# Nothing to do (a skip) without either. AB_ARGS: gatecheck-rmsnorm-bench shape options
# (default bf16,f16 x 5376,5001 x 32768,131072 rows x 9 gates). The default build must hold
# gatecheck-rmsnorm-bench. Files: N-SIDE.md (each pass's table), build-SIDE.log, tests-flags.log,
# summary.txt (fwd and fwd+bwd us of every side, pass by pass, and the copy of the same bytes).
. "$(dirname "$0")/../stage_common.sh"
RB="$BUILD/bench/gatecheck-rmsnorm-bench"
need "$RB"
if [ -z "${AB_BASE:-}" ] && [ -z "${AB_FLAGS:-}" ]; then
  echo "rms_ab: nothing to compare (set AB_BASE or AB_FLAGS)"; exit 77
fi
args=${AB_ARGS:---rows 32768,131072 --dims 5376,5001 --gates 9 --dtypes bf16,f16}
configure() {  # configure SRC DIR FLAGS: a Release build without LibTorch
  cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CUDA_ARCHITECTURES=90-real;90-virtual" \
    -DGATECHECK_WITH_TORCH=OFF "-DCMAKE_CUDA_FLAGS=$3" "-DCMAKE_CXX_FLAGS=$3" \
    ${CMAKE_PREFIX_PATH:+"-DCMAKE_PREFIX_PATH=$CMAKE_PREFIX_PATH"}
}
sides=(default)
declare -A bin=([default]="$RB")
if [ -n "${AB_BASE:-}" ]; then
  src=$AB_BASE
  if [ ! -d "$src" ]; then
    src="$BUILD-base-src"
    rm -rf "$src" && mkdir -p "$src"
    git archive "$AB_BASE" 2> "$D/archive.log" | tar -x -C "$src" 2>> "$D/archive.log" || src=
  fi
  if [ -n "$src" ] && [ -f "$src/CMakeLists.txt" ]; then
    (configure "$src" "$BUILD-base" "" && cmake --build "$BUILD-base" -j "$JOBS" --target gatecheck-rmsnorm-bench) \
      > "$D/build-base.log" 2>&1 &
    sides+=(base)
    bin[base]="$BUILD-base/bench/gatecheck-rmsnorm-bench"
  else
    echo "rms_ab: AB_BASE=$AB_BASE is neither a source tree here nor a commit in this copy's .git: the base is left out"
  fi
fi
if [ -n "${AB_FLAGS:-}" ]; then
  (configure . "$BUILD-flags" "$AB_FLAGS" &&
    cmake --build "$BUILD-flags" -j "$JOBS" --target gatecheck-rmsnorm-bench test_rmsnorm_cuda_vs_host) \
    > "$D/build-flags.log" 2>&1 &
  sides+=(flags)
  bin[flags]="$BUILD-flags/bench/gatecheck-rmsnorm-bench"
fi
wait
for s in "${sides[@]}"; do
  [ -x "${bin[$s]}" ] || { tail -20 "$D/build-$s.log"; echo "rms_ab: the $s build failed"; exit 1; }
done
if [ -n "${AB_FLAGS:-}" ]; then
  echo "## $BUILD-flags/tests/cuda/test_rmsnorm_cuda_vs_host ($AB_FLAGS)"
  timeout 200 "$BUILD-flags/tests/cuda/test_rmsnorm_cuda_vs_host" \
    --gtest_filter='*ElementPath*:*UnalignedViews*:*RowKernels*:*SpecialValues*' > "$D/tests-flags.log" 2>&1 ||
    { grep -E "Failure|FAILED" "$D/tests-flags.log" | head; echo "rms_ab: the flags build fails its tests"; exit 1; }
  grep -E "^\[  PASSED" "$D/tests-flags.log"
fi
for pass in 1 2; do
  for s in "${sides[@]}"; do
    timeout 200 "${bin[$s]}" $args --no-torch > "$D/$pass-$s.md" 2>&1 ||
      { tail -5 "$D/$pass-$s.md"; echo "rms_ab: the $s benchmark failed"; exit 1; }
  done
done
python3 - "$D" "${sides[@]}" <<'PY' | tee "$D/summary.txt"
import os, sys
d, sides = sys.argv[1], sys.argv[2:]
def table(path):  # shape -> (fwd, fwd copy, fwd+bwd, fwd+bwd copy), from the markdown rows
    rows = [l.strip().strip("|").split("|") for l in open(path) if l.startswith("| ") and "---" not in l]
    h = [c.strip() for c in rows[0]]
    out = {}
    for r in rows[1:]:
        c = [x.strip() for x in r]
        out[tuple(c[:4])] = (c[h.index("fwd us")], c[5], c[h.index("fwd+bwd us")], c[8])
    return out
runs = {(p, s): table(os.path.join(d, f"{p}-{s}.md")) for p in (1, 2) for s in sides}
cols = [f"{p}-{s}" for p in (1, 2) for s in sides]
print("rmsnorm_modulate, us: fwd / fwd+bwd of each build, pass by pass; copy: a copy of the same bytes (pass 1, default)")
print("%-24s %18s" % ("dtype rows dim gates", "copy"), *("%18s" % c for c in cols))
for k, v in runs[(1, "default")].items():
    cells = ["%8s /%8s" % (runs[(p, s)][k][0], runs[(p, s)][k][2]) for p in (1, 2) for s in sides]
    print("%-24s %18s" % (" ".join(k), "%8s /%8s" % (v[1], v[3])), *("%18s" % c for c in cells))
PY
