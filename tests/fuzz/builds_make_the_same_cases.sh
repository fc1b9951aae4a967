#!/usr/bin/env bash
# builds_make_the_same_cases.sh MAIN_TOOLS FUZZ_TOOLS WORK INPUT_DIR...: the
# CLI's build (g++) and the libFuzzer build (clang-14) materialise every
# family of a grid of specs, and decode every input under INPUT_DIR (the
# seeds), to the same cases (gatecheck-fuzz-tools spec-prints), so that a
# fuzz input, a corpus spec or a seed gives the same values in both. Where
# two draws shared one expression (an order C++ leaves open), three value
# classes once made other values in each.
set -u
main=$1 fuzz=$2 work=$3
shift 3
rm -rf "$work" && mkdir -p "$work"
"$main" spec-prints "$@" >"$work/main.txt" || { echo "FAIL: $main spec-prints exited $?"; exit 1; }
"$fuzz" spec-prints "$@" >"$work/fuzz.txt" || { echo "FAIL: $fuzz spec-prints exited $?"; exit 1; }
n=$(wc -l <"$work/main.txt")
[ "$n" -ge 1000 ] || { echo "FAIL: only $n families printed"; exit 1; }
[ "$#" -eq 0 ] || grep -q '^decode ' "$work/main.txt" || { echo "FAIL: no decoded input printed"; exit 1; }
if ! cmp -s "$work/main.txt" "$work/fuzz.txt"; then
  echo "FAIL: families or inputs whose cases differ between the builds (main's print):"
  diff "$work/main.txt" "$work/fuzz.txt" | grep '^<' | head -20
  echo "($(diff "$work/main.txt" "$work/fuzz.txt" | grep -c '^<') of $n)"
  exit 1
fi
echo "the same cases in both builds: $n families and inputs"
