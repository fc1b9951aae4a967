#!/usr/bin/env bash
# nightly_interrupt.sh NIGHTLY BUILD SCRATCH: Ctrl-C (SIGINT to the process
# group) and SIGTERM (to the script) stop an hour-long campaign within a
# minute: no fuzzer is left, the report is written for what was done (its
# cases counted: libFuzzer's interrupt skips the exit handler's last count),
# campaign.json says "interrupted", and the exit code is 130 (SIGINT) or 143
# (SIGTERM). Ctrl-C used to make the fuzzers exit 72, the workers restart them,
# and the campaign run to its end and exit 0.
set -uo pipefail
nightly=$1 build=$2 scratch=$3
. "$(dirname "$0")/nightly_expect.sh"
. "$(dirname "$0")/nightly_signals.sh"

interrupt() {  # name signal target want-rc: target "group" (Ctrl-C) or "script"
  local dir=$scratch/$1 sig=$2 want=$4 rc=""
  start_campaign "$dir" --hours 1 --jobs 1 --impl host --build-dir "$build"
  groups+=("$pid")
  wait_fuzzing "$dir" || { fails=$((fails + 1)); return; }
  sleep 3  # (a worker writes its count a second apart at most)
  if [ "$3" = group ]; then kill "-$sig" -- "-$pid"; else kill "-$sig" "$pid"; fi
  if ! wait_gone "$pid" 60; then
    echo "FAIL: SIG$sig to the $3: still running 60 s later"; tail -n 3 "$dir.log"
    fails=$((fails + 1)); return
  fi
  check "SIG$sig to the $3: exit $rc (want $want)" test "$rc" -eq "$want"
  wait_no_fuzzers "$pid" 10
  check "SIG$sig to the $3: no fuzzer left" test -z "$(fuzzers_left "$pid")"
  check "SIG$sig to the $3: campaign.json says \"interrupted\"" grep -q '"status": "interrupted"' "$dir/campaign.json"
  check "SIG$sig to the $3: the report is written" grep -q "status: interrupted (stopped by SIG$sig)" "$dir/report.md"
  check "SIG$sig to the $3: the report counts the cases run" grep -q "cases executed: [1-9]" "$dir/report.md"
}
interrupt ctrl-c INT group 130
interrupt term TERM script 143
[ "$fails" -eq 0 ] || exit 1
