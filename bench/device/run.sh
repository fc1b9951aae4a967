#!/usr/bin/env bash
# The device script: build once, then run the named stages on the GPU machine.
#
#   . .deps/remote-setup.sh && bench/device/run.sh [STAGE...]     (from the repository root)
#
# STAGE is the name of a script bench/device/stages/STAGE.sh; with no STAGE,
# every stage runs, in name order. `bench/device/run.sh --list` lists them.
#
# Environment:
#   OUT    where results go (default /tmp/out): the build's log in $OUT/build/,
#          each stage's files in $OUT/STAGE/, the summary in $OUT/summary.txt
#   BUILD  the build folder (default build-device): configured on first use
#          (Release, sm_90 real + virtual, CMAKE_PREFIX_PATH from remote-setup),
#          then only rebuilt
#   STAGE_TIMEOUT  seconds one stage may take (default 540)
#   BUILD_TARGETS  build only these targets (space-separated; default: every target),
#          for a fresh machine whose stages need few (rms_sweep: gatecheck)
#
# A stage runs with BUILD and OUT exported (plus JOBS), writes its files under
# $OUT/STAGE/ and prints a short summary last. Exit 0 is a pass, 77 a skip
# (nothing to do here), anything else a failure. A failed stage (or build)
# never stops the stages after it; the exit code is 0 only if every stage
# passed or skipped.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
stage_dir=bench/device/stages
export OUT=${OUT:-/tmp/out}
export BUILD=${BUILD:-build-device}
export JOBS=${JOBS:-$(nproc)}
STAGE_TIMEOUT=${STAGE_TIMEOUT:-540}

available() { for f in "$stage_dir"/*.sh; do basename "$f" .sh; done; }
if [ "${1:-}" = "--list" ] || [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  echo "usage: bench/device/run.sh [STAGE...]   (default: every stage)"
  echo "stages: $(available | tr '\n' ' ')"
  exit 0
fi
stages=("$@")
[ ${#stages[@]} -gt 0 ] || mapfile -t stages < <(available)
for s in "${stages[@]}"; do
  [ -f "$stage_dir/$s.sh" ] || { echo "run.sh: no stage '$s' (stages: $(available | tr '\n' ' '))" >&2; exit 2; }
done
mkdir -p "$OUT/build" || { echo "run.sh: cannot create OUT=$OUT" >&2; exit 2; }

now() { date -u +%T; }
# Debian keeps a package's CMake config under lib/<multiarch>/cmake, which CMake searches only when
# the compiler reports that multiarch; a compiler built without it (the device's /opt/gcc) does
# not, so the unpacked packages' folder is named outright (every stage's configure inherits it).
multiarch=${DEPS_PREFIX:-}/lib/x86_64-linux-gnu
if [ -n "${DEPS_PREFIX:-}" ] && [ -d "$multiarch/cmake" ] && [[ ":${CMAKE_PREFIX_PATH:-}:" != *":$multiarch:"* ]]; then
  export CMAKE_PREFIX_PATH="${CMAKE_PREFIX_PATH:+$CMAKE_PREFIX_PATH:}$multiarch"
fi
# The device's copy of .git may lag behind its files: name the commit with COMMIT=.
# A named commit also goes to the tools that record one (GATECHECK_COMMIT).
[ -n "${COMMIT:-}" ] && export GATECHECK_COMMIT=${GATECHECK_COMMIT:-$COMMIT}
export COMMIT; COMMIT=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown) (git HEAD here; set COMMIT= to name it)}
{
  echo "commit: $COMMIT"
  echo "stages: ${stages[*]}"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
  nvcc --version 2>/dev/null | tail -1 | sed 's/^/nvcc: /'
} | tee "$OUT/build/machine.txt"

# The build: configure once, then build every target, or BUILD_TARGETS (-k:
# keep going, so that one broken target leaves the others to the stages).
echo "=== build ($BUILD${BUILD_TARGETS:+, targets: $BUILD_TARGETS}) $(now)"
t0=$(date +%s)
{
  if [ ! -f "$BUILD/CMakeCache.txt" ]; then
    cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CUDA_ARCHITECTURES=90-real;90-virtual" \
      ${CMAKE_PREFIX_PATH:+"-DCMAKE_PREFIX_PATH=$CMAKE_PREFIX_PATH"}
  else
    cmake "$BUILD"  # a copied tree may carry older timestamps: configure again
  fi && cmake --build "$BUILD" -j "$JOBS" ${BUILD_TARGETS:+--target $BUILD_TARGETS} -- -k
} > "$OUT/build/build.log" 2>&1
build_rc=$?
build_s=$(( $(date +%s) - t0 ))
grep -E "warning:" "$OUT/build/build.log" | grep -v "CMake Warning" | sort | uniq -c > "$OUT/build/warnings.txt"
if [ $build_rc -ne 0 ]; then
  grep -E "error|Error" "$OUT/build/build.log" | head -30
  tail -20 "$OUT/build/build.log"
  echo "build: FAILED (exit $build_rc) in ${build_s}s; the stages run on what was built"
else
  echo "build: ok in ${build_s}s, $(wc -l < "$OUT/build/warnings.txt") distinct compiler warning(s) ($OUT/build/warnings.txt)"
fi

# The GPU's clocks, once a second, while the stages run: an issue-bound kernel's time follows
# the SM clock, which differs from machine to machine where a copy's does not.
clocks="$OUT/build/gpu-clocks.csv"
nvidia-smi --query-gpu=timestamp,utilization.gpu,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu \
  --format=csv,noheader,nounits -l 1 > "$clocks" 2>/dev/null &
sampler=$!

names=() codes=() secs=() lasts=()
for s in "${stages[@]}"; do
  echo "=== stage $s $(now)"
  mkdir -p "$OUT/$s"
  t0=$(date +%s)
  timeout -k 10 "$STAGE_TIMEOUT" bash "$stage_dir/$s.sh" 2>&1 | tee "$OUT/$s/console.log"
  rc=${PIPESTATUS[0]}
  names+=("$s") codes+=("$rc") secs+=($(( $(date +%s) - t0 )))
  lasts+=("$(grep -v '^[[:space:]]*$' "$OUT/$s/console.log" | tail -1 | cut -c1-110)")
done

kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
# "timestamp, util %, sm MHz, max sm MHz, mem MHz, W, limit W, C": the SM clock while busy (util >= 50%)
busy_clock=$(awk -F', *' '$2 >= 50 { n++; s += $3; if ($3 < lo || lo == "") lo = $3; hi = $3 > hi ? $3 : hi; m = $4 }
  END { if (n) printf "GPU busy %d s: SM clock mean %.0f MHz (%d-%d, max %s)", n, s / n, lo, hi, m; else printf "GPU busy 0 s (no clock samples)" }' "$clocks" 2>/dev/null)
{
  echo "== summary (commit $COMMIT, $(now)); ${busy_clock:-no clock samples} ($clocks)"
  printf '%-18s %-8s %6s  %s\n' build "$([ $build_rc -eq 0 ] && echo ok || echo "FAIL($build_rc)")" "${build_s}s" ""
  for i in "${!names[@]}"; do
    case ${codes[$i]} in
      0) status=ok ;;
      77) status=skipped ;;
      124|137) status=TIMEOUT ;;
      *) status="FAIL(${codes[$i]})" ;;
    esac
    printf '%-18s %-8s %6s  %s\n' "${names[$i]}" "$status" "${secs[$i]}s" "${lasts[$i]}"
  done
} | tee "$OUT/summary.txt"
[ $build_rc -eq 0 ] && [ "$(grep -cE '^[a-z_0-9-]+ +(FAIL|TIMEOUT)' "$OUT/summary.txt")" -eq 0 ]
