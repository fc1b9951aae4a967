#!/usr/bin/env bash
# nightly_interrupt.sh NIGHTLY BUILD SCRATCH: Ctrl-C (SIGINT to the process
# group), SIGTERM (to the script) and SIGHUP (to the group, as a closed
# terminal sends it) stop an hour-long campaign within a minute: no fuzzer is
# left, the report is written for what was done (its cases counted:
# libFuzzer's interrupt skips the exit handler's last count), campaign.json
# says "interrupted", and the exit code is 130, 143 or 129. Ctrl-C used to
# make the fuzzers exit 72, the workers restart them, and the campaign run to
# its end and exit 0; SIGHUP ended it with no report and "running" in its
# campaign.json. A campaign whose output's reader went away (a pipe to
# `head -n 1`) still runs and reports; it used to die of SIGPIPE at its next
# status line.
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
interrupt hangup HUP group 129

# The campaign's stderr into a pipe whose reader has gone: then SIGTERM to the
# campaign (its pid from campaign.json; the group's leader is the pipeline).
dir=$scratch/closed-pipe rc=""
rm -rf "$dir"
env --default-signal=INT setsid bash -c '"$@" 2>&1 | head -n 1 >"$0"' "$dir.log" \
  "$nightly" --out "$dir" --hours 1 --jobs 1 --impl host --build-dir "$build" --no-build &
pid=$!
groups+=("$pid")
if wait_fuzzing "$dir"; then
  sleep 8  # past the first status lines, which went to the closed pipe
  campaign=$(sed -n 's/.*"pid": \([0-9]*\).*/\1/p' "$dir/campaign.json")
  check "closed pipe: the campaign outlived its reader" kill -0 "$campaign"
  kill -TERM "$campaign" 2>/dev/null
  if wait_gone "$pid" 60; then
    check "closed pipe: campaign.json says \"interrupted\"" grep -q '"status": "interrupted"' "$dir/campaign.json"
    check "closed pipe: the report is written" grep -q "status: interrupted (stopped by SIGTERM)" "$dir/report.md"
  else
    echo "FAIL: closed pipe: still running 60 s after SIGTERM"; fails=$((fails + 1))
  fi
else
  fails=$((fails + 1))
fi
# A signal during the corpus merge at the end stops the merge (libFuzzer's
# merge ran its step again after Ctrl-C and the campaign went on): the corpus
# is kept as it was, the report written, and no merge process is left. The
# campaign's corpus gets 3000 random inputs as it starts, so that the merge
# takes some 20 s here.
dir=$scratch/merge rc=""
start_campaign "$dir" --hours 0.001 --jobs 1 --impl host --build-dir "$build" --no-build
groups+=("$pid")
for ((i = 0; i < 120; i++)); do [ -d "$dir/corpus" ] && break; sleep 0.5; done
python3 -c 'import os, sys
for i in range(3000): open(os.path.join(sys.argv[1], "r%05d" % i), "wb").write(os.urandom(64))' "$dir/corpus"
for ((i = 0; i < 240; i++)); do [ -s "$dir/logs/merge.log" ] && break; sleep 0.5; done
if [ -s "$dir/logs/merge.log" ]; then
  before=$(ls "$dir/corpus" | wc -l)
  sleep 3
  kill -TERM "$pid"
  if wait_gone "$pid" 20; then
    check "SIGTERM in the merge: exit $rc (want 143)" test "$rc" -eq 143
    check "SIGTERM in the merge: it says the merge stopped" grep -q "stopped by SIGTERM during the corpus merge" "$dir.log"
    check "SIGTERM in the merge: the corpus is kept ($before inputs)" test "$(ls "$dir/corpus" | wc -l)" -eq "$before"
    check "SIGTERM in the merge: the report is written" grep -q "status: interrupted (stopped by SIGTERM)" "$dir/report.md"
    sleep 1
    check "SIGTERM in the merge: no merge process left" test -z "$(pgrep -f -- "-merge=1 $dir/corpus.merged")"
  else
    echo "FAIL: SIGTERM in the merge: still running 20 s later"; tail -n 3 "$dir.log"; fails=$((fails + 1))
  fi
else
  echo "FAIL: the merge did not start within 120 s"; tail -n 3 "$dir.log"; fails=$((fails + 1))
fi
# The same in `--merge` (of that campaign, whose corpus was kept unmerged): exit 143, the
# report written, and its status the merge's, not the share's.
merged=$scratch/merged rc=""
env --default-signal=INT setsid "$nightly" --merge "$dir" --out "$merged" --build-dir "$build" --no-build \
  >"$merged.log" 2>&1 &
pid=$!
groups+=("$pid")
for ((i = 0; i < 120; i++)); do [ -s "$merged/logs/merge.log" ] && break; sleep 0.5; done
if [ -s "$merged/logs/merge.log" ]; then
  sleep 3
  kill -TERM "$pid"
  if wait_gone "$pid" 20; then
    check "SIGTERM in --merge: exit $rc (want 143)" test "$rc" -eq 143
    check "SIGTERM in --merge: it says the merge stopped" grep -q "stopped by SIGTERM during the corpus merge" "$merged.log"
    check "SIGTERM in --merge: the report says so" \
      grep -q "status: interrupted (stopped by SIGTERM during the corpus merge (the corpus is not merged)" "$merged/report.md"
  else
    echo "FAIL: SIGTERM in --merge: still running 20 s later"; tail -n 3 "$merged.log"; fails=$((fails + 1))
  fi
else
  echo "FAIL: the --merge did not start its corpus merge within 60 s"; tail -n 3 "$merged.log"; fails=$((fails + 1))
fi
[ "$fails" -eq 0 ] || exit 1
