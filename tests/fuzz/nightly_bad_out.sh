#!/usr/bin/env bash
# nightly_bad_out.sh NIGHTLY SCRATCH: an --out that cannot be a folder (under
# a regular file, or a regular file itself) is a usage error (exit 2) naming
# it, before the build. An unchecked `out=$(cd "$out" && pwd)` once left out
# empty, and the campaign made corpus/, crashes/, ... at the filesystem root.
set -uo pipefail
nightly=$1 scratch=$2
. "$(dirname "$0")/nightly_expect.sh"
rm -rf "$scratch" && mkdir -p "$scratch" && touch "$scratch/file"
forbid=build-libfuzzer  # found before the (here failing) build
b=(--build-dir "$scratch/file/build")
expect_nightly 2 "--out '$scratch/file/camp'" --hours 0.003 --out "$scratch/file/camp" "${b[@]}"
expect_nightly 2 "--out '$scratch/file'" --hours 0.003 --out "$scratch/file" "${b[@]}"
[ "$fails" -eq 0 ] || exit 1
