#!/usr/bin/env bash
# Runs a sharded nightly campaign on Kubernetes (docs/nightly.md): the shared
# campaign volume (pvc.yaml), an Indexed Job of N shares (shards-job.yaml),
# then, once that Job has ended however it ended, the merge Job
# (merge-job.yaml), whose log ends with the report's summary.
#
#   cluster/kubernetes/run.sh --image IMAGE [--shards N] [--hours H] [--jobs M]
#                             [--seed S] [--namespace NS]
#
# IMAGE is built from cluster/kubernetes/Dockerfile. A previous campaign's
# Jobs of the same names are deleted first; the volume (and so the corpus,
# the shares' folders and the known failures) stays from night to night.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
image="" shards=4 hours=8 jobs=16 seed=$(date +%s) ns=()
usage() {
  echo "usage: cluster/kubernetes/run.sh --image IMAGE [--shards N] [--hours H] [--jobs M] [--seed S] [--namespace NS]" >&2
  exit 2
}
bad() { echo "run: $*" >&2; usage; }
while [ $# -gt 0 ]; do
  case "$1" in
    --image|--shards|--hours|--jobs|--seed|--namespace)
      [ $# -ge 2 ] && [ -n "$2" ] || bad "$1 needs a value"
      case "$1" in
        --image) image=$2 ;; --shards) shards=$2 ;; --hours) hours=$2 ;; --jobs) jobs=$2 ;;
        --seed) seed=$2 ;; --namespace) ns=(--namespace "$2") ;;
      esac
      shift 2 ;;
    -h|--help) usage ;;
    *) bad "unknown argument '$1'" ;;
  esac
done
[ -n "$image" ] || bad "--image IMAGE is required (built from cluster/kubernetes/Dockerfile)"
[[ $shards =~ ^[0-9]+$ ]] && [ "$shards" -ge 1 ] || bad "--shards '$shards': not a positive whole number"
[[ $jobs =~ ^[0-9]+$ ]] && [ "$jobs" -ge 1 ] || bad "--jobs '$jobs': not a positive whole number"
[[ $seed =~ ^[0-9]+$ ]] || bad "--seed '$seed': not a whole number"
awk -v h="$hours" 'BEGIN { exit !(h + 0 > 0) }' || bad "--hours '$hours': not a positive number"
command -v kubectl >/dev/null || { echo "run: kubectl not found" >&2; exit 3; }
k() { kubectl "${ns[@]}" "$@"; }

# The manifests with this campaign's values (the lines they mark).
render() {  # file
  sed -E -e "s|^(\s*image:) gatecheck-fuzz:latest|\1 $image|" \
         -e "s/^(\s*(completions|parallelism):) [0-9]+/\1 $shards/" \
         -e "/name: GATECHECK_SHARDS/{n;s/value: \"[0-9]+\"/value: \"$shards\"/}" \
         -e "/name: GATECHECK_HOURS/{n;s/value: \"[0-9.]+\"/value: \"$hours\"/}" \
         -e "/name: GATECHECK_JOBS/{n;s/value: \"[0-9]+\"/value: \"$jobs\"/}" \
         -e "/name: GATECHECK_SEED/{n;s/value: \"[0-9]+\"/value: \"$seed\"/}" "$here/$1"
}

k apply -f "$here/pvc.yaml"
k delete job gatecheck-nightly-shards gatecheck-nightly-merge --ignore-not-found
render shards-job.yaml | k create -f -
echo "run: $shards share(s) for $hours h, $jobs worker(s) each, seed $seed; waiting for them to end"
# afterany: the merge runs once the shares' Job is Complete or Failed.
while :; do
  state=$(k get job gatecheck-nightly-shards -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type} {end}')
  case " $state " in *" Complete "*|*" Failed "*) break ;; esac
  sleep 60
done
echo "run: the shares' Job ended ($state); merging"
render merge-job.yaml | k create -f -
k wait --for=condition=ready pod -l job-name=gatecheck-nightly-merge --timeout=30m >/dev/null || true
k logs -f job/gatecheck-nightly-merge || true
while :; do
  state=$(k get job gatecheck-nightly-merge -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type} {end}')
  case " $state " in *" Complete "*) echo "run: no new failures; report /campaign/report.md on the volume"; exit 0 ;;
                     *" Failed "*) echo "run: the merge failed or found new failures (see its log above); report /campaign/report.md"; exit 1 ;; esac
  sleep 10
done
