#!/usr/bin/env bash
# nightly_gpus.sh WORKER_SCRIPT: which GPU each worker of `--gpus N --jobs M`
# runs on (gpu_of_worker in fuzz/nightly_worker.sh): worker w on GPU w mod N,
# several workers per GPU, and where a scheduler gave the campaign a list of
# GPUs in CUDA_VISIBLE_DEVICES (Slurm's "2,3"), on the (w mod N)-th of those,
# never on the node's own GPU 0. (The campaigns themselves need GPUs:
# bench/device/stages/nightly.sh.)
set -uo pipefail
. "$1"
fails=0
expect() {  # gpus given want-for-workers-0..
  local w got=()
  gpus=$1 gpus_given=$2
  shift 2
  for ((w = 0; w < $#; w++)); do got+=("$(gpu_of_worker $w)"); done
  if [ "${got[*]}" = "$*" ]; then echo "ok: --gpus $gpus, CUDA_VISIBLE_DEVICES='$gpus_given': workers on ${got[*]}"
  else echo "FAIL: --gpus $gpus, CUDA_VISIBLE_DEVICES='$gpus_given': workers on ${got[*]}, want $*"; fails=$((fails + 1)); fi
}
expect 1 "" 0 0 0 0
expect 2 "" 0 1 0 1 0
expect 4 "" 0 1 2 3 0 1 2 3
expect 2 "2,3" 2 3 2 3 2
expect 1 "5" 5 5 5
expect 2 "GPU-aa,GPU-bb" GPU-aa GPU-bb GPU-aa
[ "$fails" -eq 0 ] || exit 1
