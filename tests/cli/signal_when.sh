# signal_when NAME SIG LINE CMD...: CMD in the background in a process group of
# its own (stdout to NAME.out, stderr to NAME.err); once either has a line
# matching LINE (grep -E, 60 s at most), SIG to the process and to its group,
# as timeout(1) sends it (gatecheck takes the two as one request). A signal
# test signals at the state it tests (docs/testing.md): a fixed delay can come
# before it on a loaded machine. Sets rc, and took (seconds from the signal to
# the exit); fails if LINE never comes or the run goes on 30 s after the signal
# (then killed).
# Sourced by tests/cli/interrupt.sh and tests/sweep/interrupt.sh; needs work and
# fail (tests/cli/script_start.sh sets them).
signal_when() {
  local name=$1 sig=$2 line=$3 pid t0
  shift 3
  set -m
  "$@" >"$work/$name.out" 2>"$work/$name.err" &
  pid=$!
  set +m
  for _ in $(seq 1 600); do
    grep -Eqs "$line" "$work/$name.out" "$work/$name.err" && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.1
  done
  if ! grep -Eqs "$line" "$work/$name.out" "$work/$name.err"; then
    fail "$name: the state to signal at never came (no line /$line/ in 60 s, or the run ended first)"
    kill -KILL -- -$pid 2>/dev/null
    wait $pid
    rc=-1 took=0
    return
  fi
  t0=$(date +%s)
  kill -s "$sig" -- $pid -$pid
  for _ in $(seq 1 300); do
    kill -0 $pid 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 $pid 2>/dev/null; then
    fail "$name: the run went on 30 s after SIG$sig"
    kill -KILL -- -$pid 2>/dev/null
  fi
  took=$(( $(date +%s) - t0 ))
  wait $pid
  rc=$?
}
