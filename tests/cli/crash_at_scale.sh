#!/usr/bin/env bash
# crash_at_scale.sh GATECHECK SEGFAULT_AT_SCALE_PLUGIN WORKDIR
# A plugin that segfaults past 65,536 rows, which only the scale tier reaches,
# with 4 workers: the crash names the crashing worker's in-flight snapshot,
# which holds the scale case's spec; it replays at scale on host, and the next
# run recovers it as a crash-*.json scale spec file that replays too; repro and
# shrink refuse it under --isolate, which cannot hold its calls. The same
# run without the scale tier passes: only a scale case reaches the crash.
set -u
gc=$1 plugin=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }

"$gc" check --impl "plugin:$plugin" --properties full_write --seed 3 --seconds 0 --cases 16 --scale-share 0.5 \
  --jobs 4 --corpus "$work/c" >"$work/crash.log" 2>&1
rc=$?
cat "$work/crash.log"
[ "$rc" -ge 128 ] || fail "expected death by signal, got exit $rc"
grep -q "fatal signal SIGSEGV" "$work/crash.log" || fail "no signal named"
grep -q "ran property full_write at scale on" "$work/crash.log" || fail "the crash message does not name a scale case"
snap=$(sed -n 's/.*the case is saved at \(.*\)$/\1/p' "$work/crash.log" | head -n 1)
[ -n "$snap" ] && [ -s "$snap" ] || fail "crash message names no saved case"
case "$snap" in
  */inflight-[0-9]*-[0-9]*.snapshot) ;;
  *) fail "the snapshot $snap is not a worker's (inflight-PID-W.snapshot)" ;;
esac
grep -q '"scale"' "$snap" || fail "$snap holds no scale spec"
"$gc" repro "$snap" --impl host >"$work/repro.log" 2>&1 || { cat "$work/repro.log"; fail "the snapshot does not replay on host"; }
rows=$(sed -n 's/.* rows=\([0-9]*\) .*/\1/p' "$work/repro.log" | head -n 1)
[ "${rows:-0}" -gt 65536 ] || { cat "$work/repro.log"; fail "the replayed case is not past 65,536 rows"; }
# --isolate cannot hold a scale case's calls: repro and shrink say so, where they crashed in process.
for cmd in repro shrink; do
  "$gc" $cmd "$snap" --impl "plugin:$plugin" --isolate >"$work/$cmd-isolate.log" 2>&1
  rc=$?
  [ "$rc" -eq 2 ] && grep -q "a scale-tier case, whose calls run in this process: --isolate cannot" "$work/$cmd-isolate.log" ||
    { cat "$work/$cmd-isolate.log"; fail "$cmd --isolate on a scale case: exit $rc, not refused as such"; }
done

"$gc" check --impl host --properties accuracy --seed 3 --seconds 0 --cases 25 --corpus "$work/c" >"$work/recover.log" 2>&1 ||
  fail "recovery run failed"
grep -q "recovered as" "$work/recover.log" || { cat "$work/recover.log"; fail "the next run did not recover the snapshot"; }
# (Every worker's snapshot is recovered; the crashing one's is the scale spec.)
saved=$(grep -l '"scale"' "$work"/c/crash-*full_write*.json 2>/dev/null | head -n 1)
[ -n "$saved" ] || fail "no crash-*.json holds the scale spec"
[ ! -e "$snap" ] || fail "snapshot left behind after recovery"
"$gc" repro "$saved" --impl host >/dev/null 2>&1 || fail "the recovered file does not replay on host"
"$gc" check --impl "plugin:$plugin" --properties full_write --seed 3 --seconds 0 --cases 16 --scale-share 0 \
  --jobs 4 --corpus "$work/small" >"$work/small.log" 2>&1 || { cat "$work/small.log"; fail "without the scale tier: not a pass"; }
echo OK
