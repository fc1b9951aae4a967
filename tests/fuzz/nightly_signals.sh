# Sourced by nightly_interrupt.sh, nightly_killed.sh and nightly_stubborn.sh (after they set
# `scratch`): start a campaign in its own process group and wait for its
# fuzzer to run. Skips (77) where env cannot restore SIGINT.
env --default-signal=INT true 2>/dev/null || { echo "skipped: env --default-signal (coreutils 8.31+) is missing"; exit 77; }
rm -rf "$scratch" && mkdir -p "$scratch"

# start_campaign DIR ARGS...: nightly.sh in the background, its own session
# (so the test can signal its group as Ctrl-C does), with SIGINT restored:
# a background job of a script starts with SIGINT ignored, which no trap
# could undo. Sets `pid`; the output goes to DIR.log.
start_campaign() {
  local dir=$1
  shift
  rm -rf "$dir"
  env --default-signal=INT setsid "$nightly" --out "$dir" "$@" >"$dir.log" 2>&1 &
  pid=$!
}

# wait_fuzzing DIR: until worker 0's fuzzer has loaded the seeds (60 s at most).
wait_fuzzing() {
  local i
  for ((i = 0; i < 120; i++)); do
    grep -qs 'INITED' "$1/logs/w0-r0.log" && return 0
    sleep 0.5
  done
  echo "FAIL: no fuzzer started within 60 s; the campaign printed:"; tail -n 5 "$1.log"
  return 1
}

# wait_gone PID SECONDS: until PID has exited; its exit code is then in `rc`.
wait_gone() {
  local i
  for ((i = 0; i < $2 * 2; i++)); do
    kill -0 "$1" 2>/dev/null || { wait "$1"; rc=$?; return 0; }
    sleep 0.5
  done
  return 1
}

# fuzzers_left PGID: the fuzzer processes still in the campaign's group.
fuzzers_left() { pgrep -g "$1" -f fuzz_gate_residual; }

# wait_no_fuzzers PGID SECONDS: until no fuzzer is left in the group, or SECONDS
# pass (a watchdog's last `sleep 1`, and a killed fuzzer's exit, are slow on a
# loaded machine); the caller then checks fuzzers_left.
wait_no_fuzzers() {
  local i
  for ((i = 0; i < $2 * 2; i++)); do
    [ -z "$(fuzzers_left "$1")" ] && return
    sleep 0.5
  done
}

# Whatever happens, leave no process of the test's campaigns behind.
groups=()
cleanup() { local g; for g in "${groups[@]}"; do kill -KILL -- "-$g" 2>/dev/null; done; }
trap cleanup EXIT
