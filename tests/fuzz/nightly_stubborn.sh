#!/usr/bin/env bash
# nightly_stubborn.sh NIGHTLY BUILD PLUGIN SCRATCH: a plugin that catches and
# ignores SIGINT and SIGTERM (stubborn_signals.c) keeps its fuzzer alive
# through Ctrl-C. The campaign must still stop: its worker survives the
# group's SIGINT, waits for its fuzzer, and the watchdog sends SIGKILL when
# SIGTERM did not work. Exit 130, no fuzzer left, the kill named in the log;
# the same for SIGTERM to the group (exit 143).
# (Ctrl-C used to kill the workers and their watchdogs at once, so nothing
# waited for a fuzzer slow to exit: one was seen left after a CI run.)
set -uo pipefail
nightly=$1 build=$2 plugin=$3 scratch=$4
. "$(dirname "$0")/nightly_expect.sh"
. "$(dirname "$0")/nightly_signals.sh"

# stop NAME SIGNAL WANT-RC: the signal to the campaign's whole process group
# (Ctrl-C; or a service manager's SIGTERM, which reaches the watchdogs too).
stop() {
  local name=$1 sig=$2 want=$3 dir=$scratch/$1 rc="" left
  # symbolize=0: no llvm-symbolizer child, which the group's signal would kill
  # and whose broken pipe would end the fuzzer (SIGPIPE) before SIGKILL could
  ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0:allocator_may_return_null=1:symbolize=0 \
    start_campaign "$dir" --hours 1 --jobs 1 --impl "plugin:$plugin" --build-dir "$build"
  groups+=("$pid")
  wait_fuzzing "$dir" || { fails=$((fails + 1)); return; }
  kill "-$sig" -- "-$pid"
  if ! wait_gone "$pid" 60; then
    echo "FAIL: $name: still running 60 s later"; tail -n 5 "$dir.log"
    fails=$((fails + 1)); return
  fi
  check "$name: exit $rc (want $want)" test "$rc" -eq "$want"
  wait_no_fuzzers "$pid" 10
  left=$(fuzzers_left "$pid")
  check "$name: no fuzzer left${left:+ (left: $left)}" test -z "$left"
  check "$name: the log says the fuzzer was killed" grep -q "did not stop .* after SIGTERM; sent SIGKILL" "$dir.log"
  check "$name: campaign.json says \"interrupted\"" grep -q '"status": "interrupted"' "$dir/campaign.json"
}
stop ctrl-c INT 130
stop group-term TERM 143
[ "$fails" -eq 0 ] || exit 1
