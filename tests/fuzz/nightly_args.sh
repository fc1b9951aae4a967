#!/usr/bin/env bash
# nightly_args.sh NIGHTLY SCRATCH: a bad option value is a usage error (exit
# 2) whose message names the option and the value, found before anything is
# built; --help prints the usage on stdout and exits 0. (They used to run a
# 10 s campaign and pass: --hours abc, --hours -1, --jobs -3; or die of
# "unbound variable": --hours with no value, --jobs abc.)
set -uo pipefail
nightly=$1 scratch=$2
. "$(dirname "$0")/nightly_expect.sh"
rm -rf "$scratch" && mkdir -p "$scratch" && touch "$scratch/file"
# Were a bad value let through, the build would fail at once (a build folder
# under a regular file) instead of building for minutes; the test still fails:
# a usage error must be found before the build starts.
b=(--build-dir "$scratch/file/build")
forbid=build-libfuzzer
o=(--out "$scratch/camp")
expect_nightly 2 "--hours 'abc'" --hours abc "${o[@]}" "${b[@]}"
expect_nightly 2 "--hours '-1'" --hours -1 "${o[@]}" "${b[@]}"
expect_nightly 2 "--hours '0'" --hours 0 "${o[@]}" "${b[@]}"
expect_nightly 2 "--hours needs a value" "${o[@]}" "${b[@]}" --hours
expect_nightly 2 "--jobs 'abc'" --hours 1 --jobs abc "${o[@]}" "${b[@]}"
expect_nightly 2 "--jobs '-3'" --hours 1 --jobs -3 "${o[@]}" "${b[@]}"
expect_nightly 2 "--gpus '2x'" --hours 1 --gpus 2x "${o[@]}" "${b[@]}"
expect_nightly 2 "--out needs a value" --hours 1 --out --jobs 2 "${b[@]}"
expect_nightly 2 "--impl needs a value" --hours 1 --impl "" "${o[@]}" "${b[@]}"
expect_nightly 2 "--gpus or --jobs, not both" --hours 1 --gpus 1 --jobs 1 "${o[@]}" "${b[@]}"
expect_nightly 2 "unknown argument '--hour'" --hour 1 "${o[@]}" "${b[@]}"
expect_nightly 0 "^usage: .*--hours H" --help
check "--help prints no stray '#' line" bash -c '! grep -q "^#" <<<"$0"' "$output"
[ "$fails" -eq 0 ] || exit 1
