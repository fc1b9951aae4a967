#!/usr/bin/env bash
# Submits a sharded nightly campaign to Slurm (docs/nightly.md): a job that
# builds the fuzzers once, a job array with one share per host
# (`fuzz/nightly.sh --shard I/N`) that starts when the build succeeded, and a
# merge job (`fuzz/nightly.sh --merge`) that runs once every share has ended,
# however it ended (--dependency=afterany), so that a share that failed or hit
# its time limit still has its corpus and failures merged and reported.
#
#   cluster/slurm/submit.sh --out DIR [--shards N] [--hours H] [--gpus G] [--jobs M]
#                           [--impl SPEC]... [--setup FILE] [-- SBATCH-OPTION...]
#
# DIR must be on a filesystem every node can read and write (the shares read
# DIR/corpus and write DIR/shards/I; the fuzzers are built in DIR/build-fuzz).
# This checkout must be readable from the nodes too: the jobs run its scripts.
# --setup FILE is sourced at the start of every job (module loads, a
# toolchain: clang-14 or $LIBFUZZER_A and the CUDA toolkit). Options after
# `--` go to every sbatch call (e.g. --partition=gpu --account=proj).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
out="" shards=4 hours=8 gpus=1 jobs="" setup="" impls=() extra=()
usage() {
  echo "usage: cluster/slurm/submit.sh --out DIR [--shards N] [--hours H] [--gpus G] [--jobs M]" >&2
  echo "                               [--impl SPEC]... [--setup FILE] [-- SBATCH-OPTION...]" >&2
  exit 2
}
bad() { echo "submit: $*" >&2; usage; }
while [ $# -gt 0 ]; do
  case "$1" in
    --out|--shards|--hours|--gpus|--jobs|--impl|--setup)
      [ $# -ge 2 ] && [ -n "$2" ] || bad "$1 needs a value"
      case "$1" in
        --out) out=$2 ;; --shards) shards=$2 ;; --hours) hours=$2 ;; --gpus) gpus=$2 ;;
        --jobs) jobs=$2 ;; --impl) impls+=("$2") ;; --setup) setup=$2 ;;
      esac
      shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) usage ;;
    *) bad "unknown argument '$1'" ;;
  esac
done
[ -n "$out" ] || bad "--out DIR is required (a folder on a shared filesystem)"
[[ $shards =~ ^[0-9]+$ ]] && [ "$shards" -ge 1 ] || bad "--shards '$shards': not a positive whole number"
[[ $gpus =~ ^[0-9]+$ ]] && [ "$gpus" -ge 1 ] || bad "--gpus '$gpus': not a positive whole number"
[ -z "$jobs" ] || { [[ $jobs =~ ^[0-9]+$ ]] && [ "$jobs" -ge "$gpus" ]; } || bad "--jobs '$jobs': not a whole number >= --gpus"
awk -v h="$hours" 'BEGIN { exit !(h + 0 > 0) }' || bad "--hours '$hours': not a positive number"
[ -z "$setup" ] || [ -r "$setup" ] || bad "--setup '$setup': cannot read it"
command -v sbatch >/dev/null || { echo "submit: sbatch not found (is this a Slurm login node?)" >&2; exit 3; }
mkdir -p "$out/slurm-logs"
out=$(cd "$out" && pwd)
[ -z "$setup" ] || setup=$(cd "$(dirname "$setup")" && pwd)/$(basename "$setup")

# What every job reads (sbatch exports the submitting environment by default).
export GATECHECK_SRC=$src GATECHECK_CAMPAIGN=$out GATECHECK_SHARDS=$shards GATECHECK_HOURS=$hours
export GATECHECK_GPUS=$gpus GATECHECK_JOBS=${jobs:-} GATECHECK_SETUP=$setup
GATECHECK_IMPLS=$(IFS=,; echo "${impls[*]:-}")
export GATECHECK_IMPLS
# A share's time limit: the campaign, plus a margin for its start, the last
# crash it may be replaying and its report (Slurm's SIGTERM at the limit still
# leaves a report, status "interrupted").
limit=$(awk -v h="$hours" 'BEGIN { printf "%d", h * 60 + 30 }')
common=(--parsable --output="$out/slurm-logs/%x-%A_%a.out" "${extra[@]}")
build=$(sbatch "${common[@]}" --job-name=gatecheck-build "$src/cluster/slurm/build.sbatch")
array=$(sbatch "${common[@]}" --job-name=gatecheck-shard --dependency=afterok:"$build" \
  --array=0-$((shards - 1)) --gres=gpu:"$gpus" --time="$limit" "$src/cluster/slurm/shard.sbatch")
merge=$(sbatch "${common[@]}" --job-name=gatecheck-merge --dependency=afterany:"$array" "$src/cluster/slurm/merge.sbatch")
echo "submitted: build $build, $shards share(s) in array $array, merge $merge; campaign $out"
echo "  watch: squeue -j $build,$array,$merge; report: $out/report.md once $merge has ended"
