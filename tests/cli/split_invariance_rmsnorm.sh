#!/usr/bin/env bash
# split_invariance_rmsnorm.sh GATECHECK WORKDIR [with-torch]
# rmsnorm_modulate: host sums the parts' dweight, dshift and dscale the
# framework way, a finding (exit 0) with a saved case; host-repro declares its
# exchange, claims the property and passes it, with accuracy. The saved split
# replays: the finding again on host, a pass on host-repro. With with-torch,
# torch-eager shows the property as a finding too.
set -u
gc=$1 work=$2 torch=${3:-}
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
"$gc" check --op rmsnorm_modulate --impl host-repro --impl host --properties split_invariance,accuracy --seed 1 \
  --seconds 0 --cases 40 --scale-share 0 --jobs 1 --corpus "$work/c" >"$work/check.log" 2>&1
rc=$?
cat "$work/check.log"
[ "$rc" -eq 0 ] || fail "expected exit 0 (a finding only), got $rc"
grep -Eq "host@cpu +split_invariance +no +[0-9]+ +finding" "$work/check.log" || fail "no finding on host"
grep -Eq "host-repro@cpu +split_invariance +yes +[0-9]+ +pass" "$work/check.log" || fail "host-repro does not pass"
grep -Eq "host-repro@cpu +accuracy +yes +[0-9]+ +pass" "$work/check.log" || fail "host-repro is not accurate"
grep -Eq "host@cpu +accuracy +yes +[0-9]+ +pass" "$work/check.log" || fail "host is not accurate"
case_file=$(ls "$work"/c/host-split_invariance-*.json 2>/dev/null | head -n 1)
[ -n "$case_file" ] || fail "no case saved"
"$gc" repro "$case_file" --impl host >"$work/repro_host.log" 2>&1
cat "$work/repro_host.log"
grep -q "split_invariance: FAILED" "$work/repro_host.log" || fail "the saved split does not replay the finding"
grep -Eq "dweight|dshift|dscale" "$work/repro_host.log" || fail "the finding names no parameter gradient"
"$gc" repro "$case_file" --impl host-repro >"$work/repro_repro.log" 2>&1 || { cat "$work/repro_repro.log"; fail "repro on host-repro failed"; }
grep -q "host-repro@cpu split_invariance: pass" "$work/repro_repro.log" || { cat "$work/repro_repro.log"; fail "host-repro does not pass the saved split"; }
if [ "$torch" = with-torch ]; then
  "$gc" check --op rmsnorm_modulate --impl torch-eager --properties split_invariance --seed 2 --seconds 0 --cases 40 --jobs 1 \
    --scale-share 0 --corpus "$work/t" >"$work/torch.log" 2>&1
  rc=$?
  grep -E "split_invariance|elements differ" "$work/torch.log"
  [ "$rc" -eq 0 ] || fail "torch-eager: expected exit 0 (a finding only), got $rc"
  grep -Eq "torch-eager@cpu +split_invariance +no +[0-9]+ +finding" "$work/torch.log" || fail "no finding on torch-eager"
fi
echo OK
