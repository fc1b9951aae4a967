#!/usr/bin/env bash
# device_stages_test.sh: the device script and its stages (bench/device), checked here, since
# a mistake in them is found only on the GPU machine, in its few minutes. Every stage parses
# (bash -n) and `run.sh --list` names it; rms_kernels with every part switched off needs no
# binary at all, and with the benchmark left on it stops, naming the binary it lacks (so the
# switch is what left it out); rms_iterate passes its experiment's VAR or VAR=VALUE on; rms_ab
# with nothing to compare skips; run.sh runs end to end with stand-ins for the GPU's tools and
# reports the SM clock.
root=$(cd "$(dirname "$0")/../.." && pwd)
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for f in "$root"/bench/device/run.sh "$root"/bench/device/stage_common.sh "$root"/bench/device/stages/*.sh; do
  bash -n "$f" 2> "$work/parse.txt" || fail "$(basename "$f") does not parse: $(head -1 "$work/parse.txt")"
done
listed=$("$root"/bench/device/run.sh --list | sed -n 's/^stages: //p')
for f in "$root"/bench/device/stages/*.sh; do
  s=$(basename "$f" .sh)
  [[ " $listed " == *" $s "* ]] || fail "run.sh --list does not name stage $s"
done

mkdir -p "$work/build" "$work/out/rms_kernels"
off() { OUT="$work/out" BUILD="$work/build" CTEST=0 NCU=0 CHECK=0 AS_CALLED=0 "$@" \
  bash "$root/bench/device/stages/rms_kernels.sh" > "$work/rms.txt" 2>&1; }
off env BENCH=0
rc=$?
[ "$rc" -eq 0 ] || fail "rms_kernels with every part off: exit $rc ($(head -2 "$work/rms.txt"))"
off env -u BENCH
rc=$?
[ "$rc" -eq 1 ] && grep -q "gatecheck-bench was not built" "$work/rms.txt" ||
  fail "rms_kernels with the benchmark on and none built: exit $rc, not a stop naming it ($(head -2 "$work/rms.txt"))"

# rms_ab with nothing to compare is a skip (77), not a run of the default build alone.
mkdir -p "$work/build/bench" "$work/out/rms_ab"
printf '#!/bin/sh\nexit 0\n' > "$work/build/bench/gatecheck-rmsnorm-bench"
chmod +x "$work/build/bench/gatecheck-rmsnorm-bench"
OUT="$work/out" BUILD="$work/build" bash "$root/bench/device/stages/rms_ab.sh" > "$work/ab.txt" 2>&1
rc=$?
[ "$rc" -eq 77 ] && grep -q "nothing to compare" "$work/ab.txt" ||
  fail "rms_ab without AB_BASE or AB_FLAGS: exit $rc, not a skip ($(head -2 "$work/ab.txt"))"

# rms_iterate with an experiment's switch: RMS_EXP=VAR sets it to 1, RMS_EXP=VAR=VALUE to VALUE,
# for the tests' second run and the second benchmark (stand-ins that print what they were given).
mkdir -p "$work/it/tests/cuda" "$work/it/bench"
printf '#!/bin/sh\necho "[  PASSED  ] 1 test. (GC_EXP=$GC_EXP)"\n' > "$work/it/tests/cuda/test_rmsnorm_cuda_vs_host"
printf '#!/bin/sh\necho "| bench | GC_EXP=$GC_EXP |"\n' > "$work/it/bench/gatecheck-rmsnorm-bench"
chmod +x "$work/it/tests/cuda/test_rmsnorm_cuda_vs_host" "$work/it/bench/gatecheck-rmsnorm-bench"
for e in GC_EXP:1 GC_EXP=2:2; do
  mkdir -p "$work/itout/rms_iterate"
  OUT="$work/itout" BUILD="$work/it" NCU=0 RMS_EXP="${e%%:*}" bash "$root/bench/device/stages/rms_iterate.sh" \
    > "$work/it.txt" 2>&1
  rc=$?
  d="$work/itout/rms_iterate"
  [ "$rc" -eq 0 ] && grep -q "(GC_EXP=)" "$d/iter.log" && grep -q "(GC_EXP=${e#*:})" "$d/iter.log" &&
    grep -q "rms tests GC_EXP=${e#*:} exit 0" "$d/iter.log" && grep -q "GC_EXP= |" "$d/bench.md" &&
    grep -q "GC_EXP=${e#*:} |" "$d/bench-exp.md" ||
    fail "rms_iterate with RMS_EXP=${e%%:*}: exit $rc, iter.log: $(tr '\n' ' ' < "$d/iter.log" 2>/dev/null)"
  rm -rf "$work/itout"
done

# run.sh end to end with stand-ins for cmake, nvcc and nvidia-smi: the build step, a stage
# (rms_ab, skipping), and the clock sampler's mean SM clock while busy in the summary's head.
# The stand-in sampler ignores the kill, so that its lines are all written when run.sh reads them.
mkdir -p "$work/bin" "$work/rb/bench"
printf '#!/bin/sh\nexit 0\n' > "$work/bin/cmake"
printf '#!/bin/sh\necho "Build cuda_13.0"\n' > "$work/bin/nvcc"
cat > "$work/bin/nvidia-smi" <<'SMI'
#!/bin/sh
case "$*" in
  *timestamp*) trap '' TERM
    echo "2026/12/05 02:00:00.000, 100, 1500, 1980, 3201, 600.0, 700.00, 50"
    echo "2026/12/05 02:00:01.000, 3, 345, 1980, 3201, 80.0, 700.00, 40"
    echo "2026/12/05 02:00:02.000, 90, 1700, 1980, 3201, 650.0, 700.00, 55" ;;
  *) echo "NVIDIA H200, 580.00, 143771 MiB" ;;
esac
SMI
chmod +x "$work/bin/cmake" "$work/bin/nvcc" "$work/bin/nvidia-smi"
cp "$work/build/bench/gatecheck-rmsnorm-bench" "$work/rb/bench/"
(cd "$root" && PATH="$work/bin:$PATH" OUT="$work/runout" BUILD="$work/rb" COMMIT=test \
  bench/device/run.sh rms_ab > "$work/run.txt" 2>&1)
rc=$?
head=$(head -1 "$work/runout/summary.txt" 2>/dev/null)
[ "$rc" -eq 0 ] && grep -q "^rms_ab .*skipped" "$work/runout/summary.txt" &&
  [[ "$head" == *"GPU busy 2 s: SM clock mean 1600 MHz (1500-1700, max 1980)"* ]] ||
  fail "run.sh with stand-ins: exit $rc, summary head '$head' ($(tail -3 "$work/run.txt" | tr '\n' ' '))"

# rms_ab against a base source tree (AB_BASE=DIR), every build a stand-in: cmake --build makes
# a benchmark that prints its build's figures. The summary must give both sides, pass by pass.
mkdir -p "$work/abbin" "$work/ab-base" "$work/abb/bench" "$work/out/rms_ab"
touch "$work/ab-base/CMakeLists.txt"
bench_script() {  # bench_script FWD: a benchmark printing one shape with that forward time
  printf '#!/bin/sh\necho "| dtype | rows | dim | gates | fwd us | copy us | fwd/copy | fwd+bwd us | copy us | (fwd+bwd)/copy |"\n'
  printf 'echo "|---|---|---|---|---|---|---|---|---|---|"\n'
  printf 'echo "| bf16 | 32768 | 5001 | 9 | %s | 160.4 | 20%% | 2000.0 | 390.5 | 19%% |"\n' "$1"
}
bench_script 700.0 > "$work/abb/bench/gatecheck-rmsnorm-bench"
cat > "$work/abbin/cmake" <<CMK
#!/bin/bash
# --build DIR: make DIR's benchmark, printing 733.5 us as the base's forward
if [ "\$1" = --build ]; then mkdir -p "\$2/bench"; cp "$work/base-bench" "\$2/bench/gatecheck-rmsnorm-bench"; fi
exit 0
CMK
bench_script 733.5 > "$work/base-bench"
chmod +x "$work/abbin/cmake" "$work/abb/bench/gatecheck-rmsnorm-bench" "$work/base-bench"
(cd "$root" && PATH="$work/abbin:$PATH" OUT="$work/out" BUILD="$work/abb" AB_BASE="$work/ab-base" \
  bash bench/device/stages/rms_ab.sh > "$work/ab2.txt" 2>&1)
rc=$?
grep -qE "^bf16 32768 5001 9 +160.4 / +390.5 +700.0 / +2000.0 +733.5 / +2000.0 +700.0 / +2000.0 +733.5 / +2000.0" \
  "$work/out/rms_ab/summary.txt" 2>/dev/null && [ "$rc" -eq 0 ] ||
  fail "rms_ab against a base tree: exit $rc, summary: $(tr '\n' ' ' < "$work/out/rms_ab/summary.txt" 2>/dev/null) $(tail -3 "$work/ab2.txt" | tr '\n' ' ')"

# pack_out.sh: ten small files, some three folders down, go into one results.tgz and leave;
# a 13 MiB file stays; with no folder it stops, naming what it lacks.
pk="$work/pack"
mkdir -p "$pk/build" "$pk/wide/a/b"
for i in 1 2 3 4; do echo "log $i" > "$pk/build/log$i.txt"; echo "row $i" > "$pk/wide/t$i.md"; done
echo deep > "$pk/wide/a/b/deep.txt"; echo top > "$pk/run.log"
head -c $((13 << 20)) /dev/zero > "$pk/big.ncu-rep"
bash "$root/bench/device/pack_out.sh" "$pk" > "$work/pack.txt" 2>&1
rc=$?
left=$(cd "$pk" && find . -type f | sort | tr '\n' ' ')
packed=$(tar tzf "$pk/results.tgz" 2>/dev/null | grep -c '[^/]$')
[ "$rc" -eq 0 ] && [ "$left" = "./big.ncu-rep ./results.tgz " ] && [ "$packed" -eq 10 ] &&
  tar xzOf "$pk/results.tgz" ./wide/a/b/deep.txt 2>/dev/null | grep -qx deep ||
  fail "pack_out.sh: exit $rc, left '$left', $packed files packed ($(tr '\n' ' ' < "$work/pack.txt"))"
OUT= bash "$root/bench/device/pack_out.sh" > "$work/pack0.txt" 2>&1
rc=$?
[ "$rc" -eq 2 ] && grep -q "no folder to pack" "$work/pack0.txt" || fail "pack_out.sh with no folder: exit $rc"

[ "$fails" -eq 0 ] && echo "OK: $(ls "$root"/bench/device/stages/*.sh | wc -l) stages parse and are listed; rms_kernels' and rms_iterate's switches hold; run.sh runs end to end and reports the SM clock; pack_out.sh leaves one file"
exit "$fails"
