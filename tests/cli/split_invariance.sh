#!/usr/bin/env bash
# split_invariance.sh GATECHECK WORKDIR
# host sums the parts' grad_gate the framework way: a finding (exit 0),
# shrunk, saved with its split (a plan of a split kind) and a repro line. The
# file replays: the finding again on host, a pass on host-repro, which claims
# the property and passes it with accuracy.
set -u
gc=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
"$gc" check --impl host --impl host-repro --properties split_invariance,accuracy --seed 1 --seconds 0 --cases 40 --scale-share 0 --jobs 1 \
  --corpus "$work/c" >"$work/check.log" 2>&1
rc=$?
cat "$work/check.log"
[ "$rc" -eq 0 ] || fail "expected exit 0 (a finding only), got $rc"
grep -Eq "host@cpu +split_invariance +no +[0-9]+ +finding" "$work/check.log" || fail "no finding on host"
grep -Eq "host-repro@cpu +split_invariance +yes +[0-9]+ +pass" "$work/check.log" || fail "host-repro does not pass"
grep -Eq "host-repro@cpu +accuracy +yes +[0-9]+ +pass" "$work/check.log" || fail "host-repro is not accurate"
grep -q "repro: ./gatecheck repro .*split_invariance.*--impl host" "$work/check.log" || fail "no repro line"
# host claims nothing of it; host-repro claims it with an exchange: neither is told it has none
! grep -q "declares no split exchange" "$work/check.log" || fail "a note on an implementation that needs none"
# host made to claim it is told, before its first case, how a split without an exchange is combined
"$gc" check --impl host --claims split_invariance --properties split_invariance --seed 1 --seconds 0 --cases 40 \
  --scale-share 0 --jobs 1 --corpus "$work/claimed" >"$work/claimed.log" 2>&1
head -n 3 "$work/claimed.log" | grep -q "note: host@cpu claims split_invariance but declares no split exchange: each split is combined as frameworks do" ||
  { cat "$work/claimed.log"; fail "no note up front for a claim with no exchange"; }
case_file=$(ls "$work"/c/host-split_invariance-*.json | head -n 1)
[ -n "$case_file" ] || fail "no case saved"
grep -Eq '"kind": *"(micro_batches|strided|ranks)"' "$case_file" || fail "the saved case has no split"
"$gc" repro "$case_file" --impl host >"$work/repro_host.log" 2>&1
cat "$work/repro_host.log"
grep -q "split_invariance: FAILED" "$work/repro_host.log" || fail "the saved split does not replay the finding"
"$gc" repro "$case_file" --impl host-repro >"$work/repro_repro.log" 2>&1 || { cat "$work/repro_repro.log"; fail "repro on host-repro failed"; }
grep -q "host-repro@cpu split_invariance: pass" "$work/repro_repro.log" || { cat "$work/repro_repro.log"; fail "host-repro does not pass the saved split"; }
echo OK
