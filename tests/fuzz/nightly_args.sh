#!/usr/bin/env bash
# nightly_args.sh NIGHTLY SCRATCH: a bad option value is a usage error (exit
# 2) whose message names the option and the value, found before anything is
# built; --help prints the usage on stdout and exits 0. (They used to run a
# 10 s campaign and pass: --hours abc, --hours -1, --jobs -3; or die of
# "unbound variable": --hours with no value, --jobs abc.) The same for
# --gpus with --jobs, --shard, --seed and --merge.
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
# several workers per GPU: --jobs M over --gpus N needs M >= N
expect_nightly 2 "--jobs '1': fewer workers than --gpus 2" --hours 1 --gpus 2 --jobs 1 "${o[@]}" "${b[@]}"
# --mps: auto, on or off; on needs GPUs to share
expect_nightly 2 "--mps 'yes': give auto, on or off" --hours 1 --gpus 1 --jobs 2 --mps yes "${o[@]}" "${b[@]}"
expect_nightly 2 "--mps on needs --gpus" --hours 1 --jobs 2 --mps on "${o[@]}" "${b[@]}"
# an op with no seeds is named as the op (it was blamed on --seeds, an option not given)
expect_nightly 2 "--op 'nosuchop': no such op \\(no seeds in corpus/seeds/fuzz_nosuchop" --hours 1 --op nosuchop "${o[@]}" "${b[@]}"
# --shard I/N is 0-based: 0 <= I < N
expect_nightly 2 "--shard '3/3': I must be below N .*0/3 \.\. 2/3" --hours 1 --shard 3/3 "${o[@]}" "${b[@]}"
expect_nightly 2 "--shard '0/0': N must be at least 1" --hours 1 --shard 0/0 "${o[@]}" "${b[@]}"
expect_nightly 2 "--shard '1': not I/N" --hours 1 --shard 1 "${o[@]}" "${b[@]}"
# (numbers past bash's 2^63 wrapped around and ran: 18446744073709551618 workers were 2)
expect_nightly 2 "--jobs '18446744073709551618': not a positive whole number" --hours 1 --jobs 18446744073709551618 "${o[@]}" "${b[@]}"
expect_nightly 2 "--shard '18446744073709551616/18446744073709551617': not I/N" --hours 1 \
  --shard 18446744073709551616/18446744073709551617 "${o[@]}" "${b[@]}"
expect_nightly 2 "--shard '-1/2': not I/N" --hours 1 --shard -1/2 "${o[@]}" "${b[@]}"
expect_nightly 2 "--shard needs a value" --hours 1 "${o[@]}" "${b[@]}" --shard
expect_nightly 2 "--seed 'x1': not a whole number" --hours 1 --seed x1 "${o[@]}" "${b[@]}"
expect_nightly 2 "--seed '4294967296': not a whole number in 0..2147483647" --hours 1 --seed 4294967296 "${o[@]}" "${b[@]}"
# --merge: folders that are not a campaign's, options it does not take, no --out
mkdir -p "$scratch/plain" "$scratch/share/shards/0" "$scratch/noshares/shards/0" "$scratch/own"
echo '{"mode": "cpu", "status": "finished", "shard": "0/2", "shard_index": 0, "shard_count": 2}' >"$scratch/share/shards/0/campaign.json"
echo '{"mode": "cpu", "status": "finished"}' >"$scratch/own/campaign.json"
echo '{"mode": "merged", "status": "finished"}' >"$scratch/share/campaign.json"
expect_nightly 2 "--merge needs at least one" --merge --out "$scratch/m" "${b[@]}"
expect_nightly 2 "--merge runs no campaign: it takes no --hours" --merge "$scratch/share" --hours 1 "${b[@]}"
expect_nightly 2 "--merge runs no campaign: it takes no --shard" --merge "$scratch/share" --shard 0/2 "${b[@]}"
expect_nightly 2 "--merge '$scratch/nowhere': no such folder" --merge "$scratch/nowhere" --out "$scratch/m" "${b[@]}"
expect_nightly 2 "--merge '$scratch/plain': not a campaign folder" --merge "$scratch/plain" --out "$scratch/m" "${b[@]}"
expect_nightly 2 "--merge '$scratch/noshares': its shards/ holds no share" --merge "$scratch/noshares" "${b[@]}"
expect_nightly 2 "--merge: give --out OUT" --merge "$scratch/share/shards/0" "${b[@]}"
expect_nightly 2 "--out '$scratch/own' holds a campaign of its own" --merge "$scratch/share" --out "$scratch/own" "${b[@]}"
# a plain campaign may not run in a merged campaign's folder (its report would be lost)
expect_nightly 2 "--out '$scratch/share' holds a merged campaign" --hours 1 --out "$scratch/share" "${b[@]}"
# --no-build: the fuzzers must be there
forbid=""
expect_nightly 2 "--no-build: no $scratch/nobuild/fuzz/fuzz_gate_residual" --hours 1 "${o[@]}" --no-build --build-dir "$scratch/nobuild"
forbid=build-libfuzzer
expect_nightly 2 "unknown argument '--hour'" --hour 1 "${o[@]}" "${b[@]}"
expect_nightly 0 "^usage: .*--hours H" --help
check "--help prints no stray '#' line" bash -c '! grep -q "^#" <<<"$0"' "$output"
[ "$fails" -eq 0 ] || exit 1
