#!/usr/bin/env bash
# unheard_death.sh GATECHECK EXIT0_PLUGIN WORK SIGKILL_PLUGIN
# Deaths that no handler in the process sees: a plugin that calls _exit(0)
# mid-call, and one killed by SIGKILL (as the OOM killer kills). gatecheck's
# supervisor (cli/supervisor.h) still names the case in flight, which is on
# disk and replays, and the run ends as it should: exit 3 for the _exit(0)
# (never the 0 the plugin chose), death by SIGKILL for the kill. With 1 and 2
# workers. Without the supervisor (GATECHECK_SUPERVISOR=0) the same runs end
# unheard, which this test must see as failures.
. "$(dirname "$0")/script_start.sh"
killer=$4
# run NAME WANT_RC MESSAGE PLUGIN JOBS [ENV...]: one check; 0 if it ended with WANT_RC, said MESSAGE,
# and named a saved case that replays on host.
run() {
  local name=$1 want=$2 message=$3 lib=$4 jobs=$5
  shift 5
  env "$@" "$gc" check --impl "plugin:$lib" --seed 3 --seconds 20 --jobs "$jobs" --corpus "$work/$name" \
    >"$work/$name.log" 2>&1
  local rc=$?
  [ "$rc" -eq "$want" ] || { echo "$name: exit $rc (want $want)"; return 1; }
  grep -q "$message" "$work/$name.log" || { echo "$name: no '$message'"; return 1; }
  local snap
  snap=$(sed -n 's/.*the case is saved at \(.*\)$/\1/p' "$work/$name.log" | head -n 1)
  [ -n "$snap" ] && [ -s "$snap" ] || { echo "$name: no saved case named"; return 1; }
  grep -q "repro: ./gatecheck repro $snap --impl plugin:" "$work/$name.log" || { echo "$name: no repro command"; return 1; }
  "$gc" repro "$snap" --impl host >"$work/$name.repro.log" 2>&1 || { echo "$name: the case does not replay on host"; return 1; }
}
for jobs in 1 2; do
  run "exit0-j$jobs" 3 "the process ended with status 0 during a call" "$plugin" "$jobs" ||
    { cat "$work/exit0-j$jobs.log"; fail "_exit(0), $jobs jobs"; }
  run "sigkill-j$jobs" 137 "killed by SIGKILL .* during a call" "$killer" "$jobs" ||
    { cat "$work/sigkill-j$jobs.log"; fail "SIGKILL, $jobs jobs"; }
done
# The comparator can fail: unsupervised, the same deaths go unheard.
if run exit0-unsupervised 3 "the process ended with status 0 during a call" "$plugin" 1 GATECHECK_SUPERVISOR=0; then
  fail "unsupervised, the _exit(0) was reported all the same: this test cannot tell"
fi
if run sigkill-unsupervised 137 "killed by SIGKILL .* during a call" "$killer" 1 GATECHECK_SUPERVISOR=0; then
  fail "unsupervised, the SIGKILL was reported all the same: this test cannot tell"
fi
[ "$fails" -eq 0 ] && echo OK
exit "$fails"
