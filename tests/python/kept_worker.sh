#!/usr/bin/env bash
# kept_worker.sh GATECHECK OPS_PY WORK
# Under --isolate, a Python implementation's error_inputs probes run in a
# fresh-process worker that each check thread keeps from case to case
# (ops.py's implementations log the pid of each call's process): one process
# for several cases (GATECHECK_ISOLATE_KEEP_WORKERS=0, one a case, shows the
# difference); a crash pinned on the probe that caused it; a bug that shows
# only in a worker that has served a case before still caught; no worker left
# after a run, an interrupted one included.
. "$(dirname "$0")/../cli/script_start.sh"
. "$(dirname "$0")/interrupt_group.sh"
ops=$2
# alive PID: a live process (not a zombie)
alive() { [ -r "/proc/$1/stat" ] && [ "$(sed 's/^.*) //' "/proc/$1/stat" | cut -d' ' -f1)" != Z ]; }
# no_survivors NAME: none of the pids in $work/NAME.pids is alive
no_survivors() {
  local p
  for p in $(sort -u "$work/$1.pids"); do
    if alive "$p"; then fail "$1: worker $p outlived the run"; kill -9 "$p"; fi
  done
}
# run NAME EXIT IMPL ARGS...: gatecheck check --isolate on python:OPS:IMPL's error_inputs, logging pids
run() {
  local name=$1 want=$2 impl=$3 rc
  shift 3
  GATECHECK_TEST_PID_LOG="$work/$name.pids" "$gc" check --impl "python:$ops:$impl" --isolate --properties error_inputs \
    --seed 1 --corpus "$work/$name" "$@" >"$work/$name.log" 2>&1
  rc=$?
  [ "$rc" -eq "$want" ] || { cat "$work/$name.log"; fail "$name: exit $rc (want $want)"; }
  touch "$work/$name.pids"
  no_survivors "$name"
}
distinct() { sort -u "$work/$1.pids" | wc -l; }

# One worker for four cases; one a case with the knob at 0; two workers at most with --jobs 2.
run reused 0 pid_logged --cases 4 --seconds 0 --jobs 1
[ "$(wc -l <"$work/reused.pids")" -ge 26 ] || fail "reused: fewer than two cases' probes ran"
[ "$(distinct reused)" -eq 1 ] || fail "reused: $(distinct reused) processes made the calls of 4 cases (want 1)"
GATECHECK_ISOLATE_KEEP_WORKERS=0 run one_a_case 0 pid_logged --cases 4 --seconds 0 --jobs 1
[ "$(distinct one_a_case)" -eq 4 ] || fail "one_a_case: $(distinct one_a_case) processes for 4 cases (want 4)"
run two_jobs 0 pid_logged --cases 8 --seconds 0 --jobs 2
[ "$(distinct two_jobs)" -le 2 ] || fail "two_jobs: $(distinct two_jobs) processes for 8 cases on 2 threads (want 2 at most)"

# A crash on a negative index: pinned on the two negative-index probes (forward
# and backward), each in a worker of its own; every other probe passes. Not
# shrunk: each candidate would crash a fresh worker, and this tests the pinning.
run crash 1 aborts_on_negative_index --cases 1 --seconds 0 --jobs 1 --shrink-seconds 0
grep -Eq "2 of [0-9]+ bad inputs not rejected as documented: negative index \(index\[[0-9]+\] = -1\): the call did not return: .* crashed: the isolated child \(pid [0-9]+\) was killed by SIGABRT.*; negative index \(index\[[0-9]+\] = -1\): the call did not return: .* crashed: the isolated child \(pid [0-9]+\) was killed by SIGABRT" \
  "$work/crash.log" || { cat "$work/crash.log"; fail "crash: not pinned on the two negative-index probes"; }

# A bug from a worker's 14th call on (the first probe of its second case);
# reported as found (its shrink, a fresh worker a candidate, is not what this tests).
run late_bug 1 late_index_bug --cases 4 --seconds 0 --jobs 1 --shrink-seconds 0
grep -Eq "index out of range \(index\[[0-9]+\] = [0-9]+, gates = [0-9]+\): forward accepted it \(no exception\)" "$work/late_bug.log" ||
  { cat "$work/late_bug.log"; fail "late_bug: the out-of-range index it accepted is not reported"; }
[ "$(head -n 14 "$work/late_bug.pids" | sort -u | wc -l)" -eq 1 ] ||
  fail "late_bug: the second case's first probe did not run in the worker of the first case"

# Ctrl-C (SIGINT to the run's process group, as a terminal sends it) once
# its first probe has run in a worker (not after a fixed delay: on a busy
# machine torch's import alone can outlast one): the run stops with its
# report, and its workers with it.
start_in_group "$work/int.log" env GATECHECK_TEST_PID_LOG="$work/int.pids" "$gc" check \
  --impl "python:$ops:pid_logged" --isolate --properties error_inputs --seconds 60 --seed 1 --jobs 2 --corpus "$work/int"
if interrupt_group_when "$work/int.pids"; then
  [ "$group_rc" -eq 130 ] || { cat "$work/int.log"; fail "int: exit $group_rc (want 130)"; }
  grep -q "^interrupted by SIGINT" "$work/int.log" || fail "int: the report does not say it was interrupted"
else
  cat "$work/int.log"
  fail "int: ended (exit $group_rc), or no probe ran within 60 s, before the Ctrl-C"
fi
touch "$work/int.pids"
no_survivors int
[ "$fails" -eq 0 ] && echo OK
exit "$fails"
