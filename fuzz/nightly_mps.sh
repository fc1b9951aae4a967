# Sourced by fuzz/nightly.sh: CUDA MPS for several fuzzer workers on one GPU.
# Each worker is a process, and so a CUDA context of its own; without MPS the
# GPU time-slices between contexts, so that sixteen workers on one H200 ran
# fewer executions per second in all than one (bench/results/nightly). Under
# an MPS daemon the workers' kernels share the GPU as one process's streams
# would. --mps auto (the default) uses a daemon where one serves already
# (CUDA_MPS_PIPE_DIRECTORY), else starts one for the campaign and stops it at
# the end; it stays off with one worker per GPU, and where MPS is missing or
# its first client fails, saying why. --mps on makes those failures fatal.
# Sets mps_state: what the campaign ran with, for its log and campaign.json.

mps_ours=""
mps_state="off"

mps_stop() {
  [ -n "$mps_ours" ] || return 0
  echo quit | nvidia-cuda-mps-control >/dev/null 2>&1
  rm -rf "$mps_ours"
  mps_ours=""
}

mps_off() {  # reason: MPS off, or with --mps on, exit 3 saying why
  mps_stop
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
  mps_state="off ($1)"
  if [ "$mps_mode" = on ]; then say "--mps on: $1"; exit 3; fi
}

# mps_start GPUS WORKERS: after the fuzzers are built (their tools check a client).
mps_start() {
  [ "$mps_mode" = off ] && { mps_state="off (--mps off)"; return 0; }
  [ "$2" -gt "$1" ] || { mps_state="off (one worker per GPU: nothing to share)"; return 0; }
  if [ -n "${CUDA_MPS_PIPE_DIRECTORY:-}" ] && [ -p "$CUDA_MPS_PIPE_DIRECTORY/control" ]; then
    mps_state="on (the daemon at $CUDA_MPS_PIPE_DIRECTORY)"
  else
    command -v nvidia-cuda-mps-control >/dev/null || { mps_off "no nvidia-cuda-mps-control on PATH"; return 0; }
    # (a short path: the daemon's pipes are sockets, whose paths are short)
    mps_ours=$(mktemp -d /tmp/gatecheck-mps.XXXXXX) || { mps_off "cannot make a folder under /tmp"; return 0; }
    export CUDA_MPS_PIPE_DIRECTORY=$mps_ours/pipe CUDA_MPS_LOG_DIRECTORY=$mps_ours/log
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    if ! err=$(nvidia-cuda-mps-control -d 2>&1); then
      mps_off "nvidia-cuda-mps-control -d failed: ${err:-no message}"
      return 0
    fi
    mps_state="on (a daemon of this campaign)"
  fi
  # Its first client: the implementations' check, under MPS.
  if ! err=$(timeout 60 "$tools" check-impl --gpus "$1" 2>&1 >/dev/null); then
    local log=""
    [ -n "$mps_ours" ] && log=$(tail -3 "$CUDA_MPS_LOG_DIRECTORY/control.log" 2>/dev/null | tr '\n' ' ')
    mps_off "a CUDA client failed under MPS: $(tail -1 <<<"$err")${log:+; daemon log: $log}"
  fi
}
