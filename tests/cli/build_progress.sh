#!/usr/bin/env bash
# ./gatecheck's build output: a short progress in place of make's hundreds of
# lines, while every warning and error shows in full, and a failed configure
# or build shows its messages and exits 2. A fake cmake first on PATH stands
# in for the real one: its configure writes a cache and the lines CMake
# prints, its build prints 300 progress lines, a warning, and with
# FAKE_BUILD_FAIL an error.
# Usage: build_progress.sh GATECHECK_SCRIPT WORK_DIR
set -u
gatecheck=$1 work=$2
rm -rf "$work" && mkdir -p "$work/bin"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
cat > "$work/bin/cmake" <<'EOF'
#!/bin/sh
if [ "$1" = "--build" ]; then
  i=1
  while [ $i -le 300 ]; do
    printf '[%3d%%] Building CXX object dir/CMakeFiles/t.dir/f%d.cpp.o\n' $((i / 3)) $i
    [ $((i % 50)) -eq 0 ] && printf '[%3d%%] Built target t%d\n' $((i / 3)) $i
    i=$((i + 1))
  done
  echo "Consolidate compiler generated dependencies of target t"
  echo "/src/f7.cpp:3:5: warning: unused variable 'x' [-Wunused-variable]"
  if [ -n "${FAKE_BUILD_FAIL:-}" ]; then
    echo "/src/f9.cpp:1:1: error: 'foo' does not name a type"
    echo "make[2]: *** [dir/CMakeFiles/t.dir/f9.cpp.o] Error 1"
    exit 2
  fi
  exit 0
fi
while [ $# -gt 0 ]; do [ "$1" = "-B" ] && b=$2; shift; done
mkdir -p "$b"
echo "-- The CXX compiler identification is GNU 12.2.0"
echo "-- Detecting CXX compiler ABI info - done"
if [ -n "${FAKE_CONFIGURE_FAIL:-}" ]; then
  echo "CMake Error at CMakeLists.txt:35 (find_package): rapidcheck not found"
  exit 1
fi
echo "-- gatecheck: LibTorch 1.13.0 found: torch-eager enabled"
echo "-- Configuring done"
: > "$b/CMakeCache.txt"
EOF
chmod +x "$work/bin/cmake"
run() {  # run NAME [VAR=VALUE...]: ./gatecheck build with the fake cmake, into $work/NAME
  local name=$1; shift
  env "$@" PATH="$work/bin:$PATH" GATECHECK_BUILD_DIR="$work/$name" "$gatecheck" build > "$work/$name.out" 2>&1
}

run ok; rc=$?
out="$work/ok.out"
[ $rc -eq 0 ] || fail "a good build exited $rc"
[ "$(wc -l < "$out")" -le 12 ] || fail "a 300-step build printed $(wc -l < "$out") lines (want a short progress)"
grep -q "Building CXX object" "$out" && fail "make's progress lines were printed"
grep -q "Built target\|Consolidate compiler" "$out" && fail "make's bookkeeping lines were printed"
grep -q "gatecheck: building, 100% done" "$out" || fail "no progress line reaching 100%"
grep -q "warning: unused variable 'x'" "$out" || fail "the compiler warning was hidden"
grep -q "^-- gatecheck: LibTorch 1.13.0 found" "$out" || fail "the project's configure message was hidden"
grep -q "The CXX compiler identification" "$out" && fail "CMake's own configure chatter was printed"
grep -q "The CXX compiler identification" "$work/ok/configure.log" || fail "configure.log lacks CMake's output"

run bad FAKE_BUILD_FAIL=1; rc=$?
out="$work/bad.out"
[ $rc -eq 2 ] || fail "a failed build exited $rc (want 2)"
grep -q "error: 'foo' does not name a type" "$out" || fail "the compiler error was hidden"
grep -q "make\[2\]: \*\*\* " "$out" || fail "make's error line was hidden"
grep -q "the build failed" "$out" || fail "no 'the build failed' message"

run noconf FAKE_CONFIGURE_FAIL=1; rc=$?
out="$work/noconf.out"
[ $rc -eq 2 ] || fail "a failed configure exited $rc (want 2)"
grep -q "CMake Error at CMakeLists.txt:35" "$out" || fail "the configure error was hidden"
grep -q "The CXX compiler identification" "$out" || fail "a failed configure did not show its whole log"
grep -q "configuring failed" "$out" || fail "no 'configuring failed' message"

if [ $fails -ne 0 ]; then
  for f in ok bad noconf; do echo "--- $f"; cat "$work/$f.out"; done
  exit 1
fi
echo "build progress: ok ($(wc -l < "$work/ok.out") lines for a 300-step build)"
