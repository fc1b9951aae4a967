#!/usr/bin/env bash
# cuda_objects_from.sh SOURCE_DIR WORK: a configure given GATECHECK_CUDA_OBJECTS_FROM
# (kernels/cuda/CMakeLists.txt; the libFuzzer build links another build's nvcc objects)
# stops with a message naming what is wrong with the folder: no configured build there, or a
# build of another tree, whose objects are not this tree's kernels.
set -u
src=$1 work=$2
rm -rf "$work" && mkdir -p "$work/other"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# configure NAME FROM: a small configure (no tests, torch or Python) with the option set
configure() {
  cmake -S "$src" -B "$work/build-$1" -DGATECHECK_TESTS=OFF -DGATECHECK_WITH_TORCH=OFF \
    -DGATECHECK_WITH_PYTHON=OFF "-DGATECHECK_CUDA_OBJECTS_FROM=$2" >"$work/$1.log" 2>&1
}
# says NAME TEXT: the configure's log holds TEXT (CMake wraps long messages, so lines are joined)
says() { tr -s ' \n' '  ' <"$work/$1.log" | grep -qF -- "$2" || { cat "$work/$1.log"; fail "$1: no '$2'"; }; }

configure missing "$work/nothing-here" && fail "missing: the configure passed"
says missing "GATECHECK_CUDA_OBJECTS_FROM: $work/nothing-here/gc_cuda_device_objects.cmake does not exist (the folder must be a configured build of this tree)"

printf 'set(GATECHECK_CUDA_DEVICE_SOURCE_DIR "/elsewhere/gatecheck")\nset(GATECHECK_CUDA_DEVICE_OBJECTS "")\n' \
  >"$work/other/gc_cuda_device_objects.cmake"
configure other "$work/other" && fail "other: the configure passed"
says other "GATECHECK_CUDA_OBJECTS_FROM: $work/other builds /elsewhere/gatecheck, not this tree ($src)"

[ "$fails" -eq 0 ] && echo OK
exit "$fails"
