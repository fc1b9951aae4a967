#!/usr/bin/env bash
# nightly_stubborn.sh NIGHTLY BUILD PLUGIN SCRATCH: a plugin that catches and
# ignores SIGINT and SIGTERM (stubborn_signals.c) keeps its fuzzer alive
# through Ctrl-C. The campaign must still stop: its worker survives the
# group's SIGINT, waits for its fuzzer, and the watchdog sends SIGKILL when
# SIGTERM did not work. Exit 130, no fuzzer left, the kill named in the log.
# (Ctrl-C used to kill the workers and their watchdogs at once, so nothing
# waited for a fuzzer slow to exit: one was seen left after a CI run.)
set -uo pipefail
nightly=$1 build=$2 plugin=$3 scratch=$4
. "$(dirname "$0")/nightly_expect.sh"
. "$(dirname "$0")/nightly_signals.sh"

dir=$scratch/stubborn rc=""
start_campaign "$dir" --hours 1 --jobs 1 --impl "plugin:$plugin" --build-dir "$build"
groups+=("$pid")
wait_fuzzing "$dir" || exit 1
kill -INT -- "-$pid"
if ! wait_gone "$pid" 60; then
  echo "FAIL: Ctrl-C: still running 60 s later"; tail -n 5 "$dir.log"
  exit 1
fi
check "Ctrl-C: exit $rc (want 130)" test "$rc" -eq 130
sleep 2  # a watchdog's last `sleep 1`
left=$(fuzzers_left "$pid")
check "Ctrl-C: no fuzzer left${left:+ (left: $left)}" test -z "$left"
check "Ctrl-C: the log says the fuzzer was killed" grep -q "did not stop .* after SIGTERM; sent SIGKILL" "$dir.log"
check "Ctrl-C: campaign.json says \"interrupted\"" grep -q '"status": "interrupted"' "$dir/campaign.json"
[ "$fails" -eq 0 ] || exit 1
