#!/usr/bin/env bash
# nightly_mps.sh MPS_SCRIPT SCRATCH: when the nightly campaign runs its GPU
# workers under CUDA MPS (fuzz/nightly_mps.sh), against a stand-in
# nvidia-cuda-mps-control and implementation check: off with one worker per
# GPU or --mps off; off, saying why, where the daemon is missing, does not
# start, or its first client fails (and then stopped again); exit 3 for those
# with --mps on; on with a daemon of its own, stopped by mps_stop; a daemon
# already serving is used and left running. (Real MPS needs a GPU:
# bench/device/stages/nightly.sh.)
set -uo pipefail
script=$1 scratch=$2
rm -rf "$scratch" && mkdir -p "$scratch/bin"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
say() { echo "nightly: $*"; }
# The stand-ins: the daemon starts unless $scratch/daemon_fails exists, and
# logs what it is asked; the implementations' check fails if $scratch/client_fails exists.
cat >"$scratch/bin/nvidia-cuda-mps-control" <<EOS
#!/usr/bin/env bash
if [ "\${1:-}" = -d ]; then
  [ -e "$scratch/daemon_fails" ] && { echo "An instance of this daemon is already running" >&2; exit 1; }
  echo "start \$CUDA_MPS_PIPE_DIRECTORY" >>"$scratch/calls"; exit 0
fi
echo "control: \$(cat)" >>"$scratch/calls"
EOS
cat >"$scratch/tools" <<EOS
#!/usr/bin/env bash
[ -e "$scratch/client_fails" ] && { echo "cudaErrorMpsConnectionFailed" >&2; exit 3; }
echo "client \${CUDA_MPS_PIPE_DIRECTORY:-none}" >>"$scratch/calls"
EOS
chmod +x "$scratch/bin/nvidia-cuda-mps-control" "$scratch/tools"
tools=$scratch/tools
. "$script"
case_() {  # name mode gpus workers [PATH]: runs mps_start in a subshell, prints mps_state and the env
  local name=$1 mode=$2 g=$3 w=$4 path=${5:-$scratch/bin:$PATH}
  rm -f "$scratch/calls"
  ( mps_mode=$mode PATH=$path; mps_start "$g" "$w"; echo "state=$mps_state pipe=${CUDA_MPS_PIPE_DIRECTORY:-}"; mps_stop ) \
    >"$scratch/$name.out" 2>&1
  echo $? >"$scratch/$name.rc"
}
has() { grep -q -- "$2" "$scratch/$1.out" || fail "$1: no '$2' in: $(cat "$scratch/$1.out")"; }
rc_is() { [ "$(cat "$scratch/$1.rc")" = "$2" ] || fail "$1: exit $(cat "$scratch/$1.rc"), want $2"; }
calls_have() { grep -q -- "$1" "$scratch/calls" 2>/dev/null || fail "$2: the stand-ins saw no '$1' ($(cat "$scratch/calls" 2>/dev/null))"; }

case_ one_per_gpu auto 2 2;          has one_per_gpu "state=off (one worker per GPU"; rc_is one_per_gpu 0
case_ asked_off off 1 16;            has asked_off "state=off (--mps off)"; rc_is asked_off 0
case_ missing auto 1 16 /usr/bin:/bin; has missing "state=off (no nvidia-cuda-mps-control on PATH)"; rc_is missing 0
case_ missing_on on 1 16 /usr/bin:/bin; has missing_on "--mps on: no nvidia-cuda-mps-control on PATH"; rc_is missing_on 3
case_ ours auto 1 16;                has ours "state=on (a daemon of this campaign) pipe=/tmp/gatecheck-mps"; rc_is ours 0
calls_have "start /tmp/gatecheck-mps" ours; calls_have "client /tmp/gatecheck-mps" ours; calls_have "control: quit" ours
ls -d /tmp/gatecheck-mps.* 2>/dev/null | grep -q . && fail "ours: mps_stop left its folder: $(ls -d /tmp/gatecheck-mps.*)"
touch "$scratch/client_fails"
case_ client auto 1 16;              has client "state=off (a CUDA client failed under MPS: cudaErrorMpsConnectionFailed" ; rc_is client 0
calls_have "control: quit" client_stopped_again
case_ client_on on 1 16;             has client_on "--mps on: a CUDA client failed under MPS"; rc_is client_on 3
rm -f "$scratch/client_fails"; touch "$scratch/daemon_fails"
case_ no_start auto 1 16;            has no_start "state=off (nvidia-cuda-mps-control -d failed: An instance"; rc_is no_start 0
rm -f "$scratch/daemon_fails"
mkdir -p "$scratch/theirs" && mkfifo "$scratch/theirs/control"
( export CUDA_MPS_PIPE_DIRECTORY=$scratch/theirs; case_ theirs auto 1 16 )
has theirs "state=on (the daemon at $scratch/theirs)"; rc_is theirs 0
grep -q "control: quit" "$scratch/calls" && fail "theirs: a daemon the campaign did not start was stopped"
[ "$fails" -eq 0 ] && echo OK
exit "$fails"
