#!/usr/bin/env bash
# report_continued.sh TOOLS SCRATCH: the report of a run continued with --continue (a requeued
# Slurm task) counts every attempt's cases over every attempt's fuzzing time. It divided both
# attempts' cases by the last attempt's time, which doubled the exec/s of a run requeued halfway.
# An earlier attempt whose campaign.json is gone leaves the rate unknown rather than overstated.
set -u
tools=$1 dir=$2
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
rm -rf "$dir" && mkdir -p "$dir/stats" "$dir/history/1700000000"
campaign() { printf '{"hours": 1, "seconds": %s, "fuzz_seconds": %s, "mode": "cpu", "gpus": 0, "workers": 1, "impls": ["host"], "status": "%s"}\n' "$1" "$1" "$2"; }
campaign 100 finished >"$dir/campaign.json"
campaign 300 interrupted >"$dir/history/1700000000/campaign.json"
echo '{"cases": 2000}' >"$dir/stats/w0-r0.json"
echo '{"cases": 6000}' >"$dir/stats/a1700000000-w0-r0.json"
touch "$dir/failures.jsonl"
"$tools" report "$dir" >"$dir.out" 2>&1 || fail "report exited $?"
grep -q "8000 cases, 20 exec/s" "$dir.out" || { cat "$dir.out"; fail "not 8000 cases over 400 s"; }
grep -q "cases executed: 8000 over 2 attempts (--continue; 400 s of fuzzing in all); exec/s summed over the workers 20 " \
  "$dir/report.md" || { grep "cases executed" "$dir/report.md"; fail "report.md does not count both attempts' time"; }
grep -q '"attempts": 2' "$dir/report.json" || fail "report.json has no attempts: 2"
rm -r "$dir/history/1700000000"
"$tools" report "$dir" >"$dir.out" 2>&1 || fail "report exited $?"
grep -q "8000 cases, unknown exec/s" "$dir.out" || { cat "$dir.out"; fail "a rate for an attempt of unknown time"; }
grep -q "exec/s unknown: no history/1700000000/campaign.json" "$dir/report.md" || fail "report.md does not say why the rate is unknown"
[ "$fails" -eq 0 ] && echo OK
exit "$fails"
