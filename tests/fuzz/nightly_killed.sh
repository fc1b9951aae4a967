#!/usr/bin/env bash
# nightly_killed.sh NIGHTLY BUILD SCRATCH: when a campaign is killed outright
# (SIGKILL, no trap runs), its re-parented workers stop their fuzzers within
# seconds instead of fuzzing on to the end time; and the next run in the same
# folder says that the previous one did not finish, without claiming to have
# moved a report that was never written (but refuses while it still runs).
set -uo pipefail
nightly=$1 build=$2 scratch=$3
. "$(dirname "$0")/nightly_expect.sh"
. "$(dirname "$0")/nightly_signals.sh"
dir=$scratch/camp
start_campaign "$dir" --hours 1 --jobs 1 --impl host --build-dir "$build"
groups+=("$pid")
wait_fuzzing "$dir" || exit 1
# (while it runs, a second campaign may not resume in its folder)
expect_nightly 2 "the campaign of pid $pid is still running" --hours 0.003 --jobs 1 --out "$dir" --build-dir "$build"
kill -KILL "$pid"
wait "$pid" 2>/dev/null  # (and no "Killed" line from bash)
# (a watchdog polls each second, then allows its fuzzer 10 s after SIGTERM before
# SIGKILL: 20 s leaves room for a loaded machine)
wait_no_fuzzers "$pid" 20
check "no fuzzer left 20 s after the campaign was killed" test -z "$(fuzzers_left "$pid")"
check "campaign.json still says \"running\"" grep -q '"status": "running"' "$dir/campaign.json"
forbid="report moved"
expect_nightly 0 "the previous run did not finish" --hours 0.003 --jobs 1 --impl host --out "$dir" --build-dir "$build"
[ "$fails" -eq 0 ] || exit 1
