# kernel_mutants: the GPU tests can fail. Each mutant plants one bug in a
# copy of the CUDA kernels (a sed expression on one file), rebuilds the test
# binary aimed at it (test_cuda_vs_host unless named) from that copy and runs the test, which
# must fail. The repository's own files are never changed.
#   large_offsets_31bit  the forward loads res and y at 31-bit offsets
#   wide_plan_offsets    past 4096 gates the 16-warp one-block plan drops the
#                        earlier warps' offsets
#   short_tiles_restart  the short-tiles kernel does not restart the sum at a
#                        tile's first row
# KERNEL_MUTANTS picks some (default: all). Files: NAME.log each, build.log.
# About 5 minutes on the H200 (one build of the copy, then one CUDA
# translation unit a mutant).
. "$(dirname "$0")/../stage_common.sh"
src=/tmp/gatecheck-mutant-src
mb="$BUILD-mutants"
# name | file | sed expression | GATECHECK_CUDA_TUNING | gtest filter | test binary (default test_cuda_vs_host)
mutants='large_offsets_31bit|kernels/cuda/gate_residual_cuda_kernels.cuh|s/const int64_t o = (r0 + u) \* a.dim + c;/const int64_t o = ((r0 + u) * a.dim + c) \& 0x7fffffff;/||CudaLargeOffsets.Bf16*:CudaLargeOffsets.F32*|test_cuda_large_offsets
wide_plan_offsets|kernels/cuda/gate_residual_cuda_plan.cuh|s/placed\[start\[k\] + mine\[k\] + rank\[i\]\]/placed[start[k] + (Warps == 16 \&\& gates > 4096 ? 0 : mine[k]) + rank[i]]/||CudaVsHost.OneBlockPlanTakesUpTo8192Gates
short_tiles_restart|kernels/cuda/gate_residual_cuda_kernels.cuh|s/while (cur < int(row_tile\[i + u\])) finish_tile();/if (false) finish_tile();  \/\/ MUTANT/|tile=4|CudaVsHost.RandomCasesBitIdentical'

rm -f "$D/build.log"
mkdir -p "$src"
tar --exclude='./build*' --exclude=./.deps --exclude=./.git -cf - . | tar -C "$src" -xf -
if [ ! -f "$mb/CMakeCache.txt" ]; then
  cmake -S "$src" -B "$mb" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CUDA_ARCHITECTURES=90-real;90-virtual" \
    -DGATECHECK_WITH_TORCH=OFF ${CMAKE_PREFIX_PATH:+"-DCMAKE_PREFIX_PATH=$CMAKE_PREFIX_PATH"} > "$D/configure.log" 2>&1 ||
    { tail -20 "$D/configure.log"; echo "kernel_mutants: the copy did not configure"; exit 1; }
fi
caught=0 tried=0 skipped=0
while IFS='|' read -r name file expr tuning filter binary; do
  binary=${binary:-test_cuda_vs_host}
  case " ${KERNEL_MUTANTS:-$name} " in *" $name "*) ;; *) continue ;; esac
  tried=$((tried + 1))
  log="$D/$name.log"
  for f in kernels/cuda/*.cuh kernels/cuda/*.cu; do cmp -s "$f" "$src/$f" || cp "$f" "$src/$f"; done
  sed -i "$expr" "$src/$file"
  if cmp -s "$file" "$src/$file"; then
    echo "$name: the sed expression no longer matches $file: mutant stale, update it" | tee "$log"
    continue
  fi
  { echo "## mutant $name: $file"; diff "$file" "$src/$file"
    echo "## GATECHECK_CUDA_TUNING='$tuning' $binary --gtest_filter='$filter'"; } > "$log"
  echo "## $name" >> "$D/build.log"
  if ! cmake --build "$mb" -j "$JOBS" --target "$binary" >> "$D/build.log" 2>&1; then
    tail -20 "$D/build.log"; echo "$name: the mutant did not build"; continue
  fi
  GATECHECK_CUDA_TUNING="$tuning" timeout 180 "$mb/tests/cuda/$binary" --gtest_filter="$filter" > "$log.run" 2>&1
  rc=$?
  # The verdict from the whole output: the log keeps its first 60 lines and
  # gtest's summary lines, which a long failure pushes past those 60.
  failed=0 skipped_all=0
  grep -q "^\[  FAILED  \]" "$log.run" && failed=1
  grep -q "^\[  SKIPPED \]" "$log.run" && [ $failed -eq 0 ] && skipped_all=1
  { grep -vE "^\[ +(RUN|OK) +\]" "$log.run" | head -60
    echo "(gtest's summary:)"; grep -E "^\[  (PASSED|FAILED|SKIPPED) +\]" "$log.run" | head -20
    echo "(exit $rc)"; } >> "$log"
  rm -f "$log.run"
  if [ $skipped_all -eq 1 ]; then
    skipped=$((skipped + 1)); echo "$name: skipped (no GPU?), not verified"
  elif [ $rc -ne 0 ] && [ $failed -eq 1 ]; then
    caught=$((caught + 1)); echo "$name: caught: $(grep -m1 -E 'differ|Failure' "$log" | cut -c1-120)"
  else
    echo "$name: NOT caught (exit $rc): the test passed with the bug planted"
  fi
done <<< "$mutants"
for f in kernels/cuda/*.cuh kernels/cuda/*.cu; do cmp -s "$f" "$src/$f" || cp "$f" "$src/$f"; done
echo "kernel_mutants: $caught of $tried mutants caught by their tests, $skipped skipped"
[ "$tried" -gt 0 ] && [ "$skipped" -eq "$tried" ] && exit 77
[ "$tried" -gt 0 ] && [ "$caught" -eq "$tried" ]
