#!/usr/bin/env bash
# crash_safety.sh GATECHECK SEGFAULT_PLUGIN WORKDIR [JOBS]
# A plugin that segfaults kills a plain `check`, but the case it was running is
# on disk, named in the crash message, replayable, and recovered as readable
# JSON by the next run; replayed on the plugin, it crashes again without
# losing what was printed before. With --isolate the same crash is a reported
# failure. With JOBS workers (default 1), the case named is the crashing
# worker's own snapshot.
set -u
gc=$1 plugin=$2 work=$3 jobs=${4:-1}
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }

"$gc" check --impl "plugin:$plugin" --seed 3 --seconds 20 --jobs "$jobs" --corpus "$work/c" >"$work/crash.log" 2>&1
rc=$?
cat "$work/crash.log"
[ "$rc" -ge 128 ] || fail "expected death by signal, got exit $rc"
grep -q "fatal signal SIGSEGV" "$work/crash.log" || fail "no signal named"
snap=$(sed -n 's/.*the case is saved at \(.*\)$/\1/p' "$work/crash.log" | head -n 1)
[ -n "$snap" ] && [ -s "$snap" ] || fail "crash message names no saved case"
[ "$(grep -c 'the case is saved at' "$work/crash.log")" -eq 1 ] || fail "the crash message names more than one case"
case "$snap" in
  */inflight-[0-9]*-[0-9]*.snapshot) ;;
  *) fail "the snapshot $snap is not a worker's (inflight-PID-W.snapshot)" ;;
esac
grep -q "repro: ./gatecheck repro $snap --impl plugin:" "$work/crash.log" || fail "no repro command printed"
"$gc" repro "$snap" --impl host >"$work/repro.log" 2>&1 || { cat "$work/repro.log"; fail "snapshot does not replay on host"; }
# Replayed on the plugin in process, it crashes again; what repro printed to
# stdout before the crashing call (the file's line) must not die with it.
"$gc" repro "$snap" --impl "plugin:$plugin" >"$work/repro-crash.out" 2>"$work/repro-crash.err"
rc=$?
[ "$rc" -ge 128 ] || { cat "$work/repro-crash.err"; fail "repro on the plugin: expected death by signal, got exit $rc"; }
grep -q "^$snap: " "$work/repro-crash.out" || { cat "$work/repro-crash.out"; fail "repro: the line printed before the crash was lost"; }

"$gc" check --impl host --seed 3 --seconds 0 --cases 25 --corpus "$work/c" >"$work/recover.log" 2>&1 || fail "recovery run failed"
grep -q "recovered as" "$work/recover.log" || { cat "$work/recover.log"; fail "the next run did not recover the snapshot"; }
ls "$work"/c/crash-*.json >/dev/null 2>&1 || fail "no crash-*.json written"
[ ! -e "$snap" ] || fail "snapshot left behind after recovery"

# (one property and a case budget: seed 3's 14th case of inputs_untouched has
# the 13 rows that crash the plugin; every isolated call is a process)
"$gc" check --impl "plugin:$plugin" --isolate --properties inputs_untouched --seed 3 --seconds 0 --cases 20 \
  --jobs "$jobs" --corpus "$work/i" >"$work/isolate.log" 2>&1
rc=$?
tail -n 30 "$work/isolate.log"
[ "$rc" -eq 1 ] || fail "--isolate: expected exit 1, got $rc"
grep -q "SIGSEGV" "$work/isolate.log" || fail "--isolate: crash not reported"
grep -q "repro: ./gatecheck repro .* --isolate$" "$work/isolate.log" || fail "--isolate: the crash's repro command lacks --isolate"
echo OK
