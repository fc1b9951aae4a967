#!/usr/bin/env bash
# device_stages_test.sh: the device script and its stages (bench/device), checked here, since
# a mistake in them is found only on the GPU machine, in its few minutes. Every stage parses
# (bash -n) and `run.sh --list` names it; rms_kernels with every part switched off needs no
# binary at all, and with the benchmark left on it stops, naming the binary it lacks (so the
# switch is what left it out); rms_ab with nothing to compare skips.
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

[ "$fails" -eq 0 ] && echo "OK: $(ls "$root"/bench/device/stages/*.sh | wc -l) stages parse and are listed; rms_kernels' switches hold"
exit "$fails"
