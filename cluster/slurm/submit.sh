#!/usr/bin/env bash
# Submits a sharded nightly campaign to Slurm (docs/nightly.md): a job that
# builds the fuzzers (or checks that they are up to date), a job array with one
# share per host (`fuzz/nightly.sh --shard I/N`) that starts when the build
# succeeded, and a merge job (`fuzz/nightly.sh --merge`) that runs once every
# share has ended, however it ended (--dependency=afterany), so that a share
# that failed or hit its time limit still has its corpus and failures merged
# and reported (a share that never wrote its folder is reported missing).
#
#   cluster/slurm/submit.sh --out DIR [--shards N] [--hours H] [--gpus G] [--jobs M]
#                           [--impl SPEC]... [--setup FILE] [--build-dir D] [--seeds D]
#                           [-- SBATCH-OPTION...]
#
# Each submission is a run of its own, in DIR/runs/<time>-<pid>/ (its shares
# in shards/I, its report, its jobs' logs in slurm-logs/ and their ids in
# jobs.txt), so two submissions never mix their files. A run starts from the
# campaign's corpus and known failures (DIR/corpus, DIR/known_signatures.txt)
# and its merge hands them back, merged, for the next run; DIR/latest points
# at the last merged run.
# DIR must be on a filesystem every node can read and write; the fuzzers are
# built in --build-dir (default DIR/build-fuzz). This checkout must be
# readable from the nodes too: the jobs run its scripts.
# --gpus 0 runs the shares and the merge on CPUs (no --gres; impl host unless
# --impl says otherwise). A requeued share (scontrol requeue, a node lost)
# continues in its folder and keeps what it had found (nightly.sh --continue).
# --setup FILE is sourced at the start of every job (module loads, a
# toolchain: clang-14 or $LIBFUZZER_A and the CUDA toolkit). Options after
# `--` go to every sbatch call (e.g. --partition=gpu --account=proj).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
out="" shards=4 hours=8 gpus=1 jobs="" setup="" build="" seeds="" impls=() extra=()
usage() {
  echo "usage: cluster/slurm/submit.sh --out DIR [--shards N] [--hours H] [--gpus G] [--jobs M]" >&2
  echo "                               [--impl SPEC]... [--setup FILE] [--build-dir D] [--seeds D] [-- SBATCH-OPTION...]" >&2
  exit 2
}
bad() { echo "submit: $*" >&2; usage; }
while [ $# -gt 0 ]; do
  case "$1" in
    --out|--shards|--hours|--gpus|--jobs|--impl|--setup|--build-dir|--seeds)
      [ $# -ge 2 ] && [ -n "$2" ] || bad "$1 needs a value"
      case "$1" in
        --out) out=$2 ;; --shards) shards=$2 ;; --hours) hours=$2 ;; --gpus) gpus=$2 ;;
        --jobs) jobs=$2 ;; --impl) impls+=("$2") ;; --setup) setup=$2 ;;
        --build-dir) build=$2 ;; --seeds) seeds=$2 ;;
      esac
      shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) usage ;;
    *) bad "unknown argument '$1'" ;;
  esac
done
[ -n "$out" ] || bad "--out DIR is required (a folder on a shared filesystem)"
[[ $shards =~ ^[0-9]+$ ]] && [ "$shards" -ge 1 ] || bad "--shards '$shards': not a positive whole number"
[[ $gpus =~ ^[0-9]+$ ]] || bad "--gpus '$gpus': not a whole number (0: on CPUs)"
[ -z "$jobs" ] || { [[ $jobs =~ ^[0-9]+$ ]] && [ "$jobs" -ge 1 ] && [ "$jobs" -ge "$gpus" ]; } ||
  bad "--jobs '$jobs': not a positive whole number >= --gpus"
awk -v h="$hours" 'BEGIN { exit !(h + 0 > 0) }' || bad "--hours '$hours': not a positive number"
[ -z "$setup" ] || [ -r "$setup" ] || bad "--setup '$setup': cannot read it"
[ -z "$seeds" ] || [ -d "$seeds" ] || bad "--seeds '$seeds': not a folder"
command -v sbatch >/dev/null || { echo "submit: sbatch not found (is this a Slurm login node?)" >&2; exit 3; }
mkdir -p "$out" || bad "--out '$out': cannot make that folder"
out=$(cd "$out" && pwd)
[ -z "$setup" ] || setup=$(cd "$(dirname "$setup")" && pwd)/$(basename "$setup")
[ -z "$seeds" ] || seeds=$(cd "$seeds" && pwd)
[ -n "$build" ] || build=$out/build-fuzz
mkdir -p "$build" && build=$(cd "$build" && pwd)
# This run's own folder, started from the campaign's corpus and known failures.
run=$out/runs/$(date -u +%Y%m%d-%H%M%S)-$$
mkdir -p "$run/slurm-logs" "$run/corpus"
[ -d "$out/corpus" ] && cp -R "$out/corpus/." "$run/corpus/"
[ -f "$out/known_signatures.txt" ] && cp "$out/known_signatures.txt" "$run/"

# What every job reads (sbatch exports the submitting environment by default).
export GATECHECK_SRC=$src GATECHECK_CAMPAIGN=$out GATECHECK_RUN=$run GATECHECK_BUILD=$build GATECHECK_SHARDS=$shards
export GATECHECK_HOURS=$hours GATECHECK_GPUS=$gpus GATECHECK_JOBS=${jobs:-} GATECHECK_SETUP=$setup GATECHECK_SEEDS=$seeds
GATECHECK_IMPLS=$(IFS=,; echo "${impls[*]:-}")
export GATECHECK_IMPLS
# A share's time limit: the campaign, plus a margin for its start, the last
# crash it may be replaying and its report (Slurm's SIGTERM at the limit still
# leaves a report, status "interrupted").
limit=$(awk -v h="$hours" 'BEGIN { printf "%d", h * 60 + 30 }')
gres=(); [ "$gpus" -gt 0 ] && gres=(--gres=gpu:"$gpus")
merge_gres=(); [ "$gpus" -gt 0 ] && merge_gres=(--gres=gpu:1)
common=(--parsable --output="$run/slurm-logs/%x-%A_%a.out" "${extra[@]}")
build_id=$(sbatch "${common[@]}" --job-name=gatecheck-build "$src/cluster/slurm/build.sbatch")
array=$(sbatch "${common[@]}" --job-name=gatecheck-shard --dependency=afterok:"$build_id" \
  --array=0-$((shards - 1)) "${gres[@]}" --time="$limit" "$src/cluster/slurm/shard.sbatch")
merge=$(sbatch "${common[@]}" --job-name=gatecheck-merge --dependency=afterany:"$array" "${merge_gres[@]}" \
  "$src/cluster/slurm/merge.sbatch")
printf 'build %s\narray %s\nmerge %s\n' "$build_id" "$array" "$merge" >"$run/jobs.txt"
echo "submitted: build $build_id, $shards share(s) in array $array, merge $merge; run $run"
echo "  watch: squeue -j $build_id,$array,$merge; report: $run/report.md once $merge has ended"
