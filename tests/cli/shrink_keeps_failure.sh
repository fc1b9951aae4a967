#!/usr/bin/env bash
# shrink_keeps_failure.sh GATECHECK ERROR_ROWS2_PLUGIN WORKDIR
# The plugin fails every case of 2 rows or more. Shrinking its row_invariance
# failure used to reach a 0-row case that fails only as "vacuous" (and then
# fails for every implementation). The saved case must keep the real failure:
# it still fails on the plugin and passes on host.
set -u
gc=$1 plugin=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
"$gc" check --impl "plugin:$plugin" --properties row_invariance --seed 1 --seconds 10 --corpus "$work/c" >"$work/check.log" 2>&1
rc=$?
cat "$work/check.log"
[ "$rc" -eq 1 ] || fail "expected exit 1, got $rc"
grep -q "forward returned 1: I refuse cases of 2 rows or more" "$work/check.log" || fail "the plugin's code and message are not shown as they are"
grep -qi "vacuous" "$work/check.log" && fail "the failure was shrunk into a vacuous one"
case_file=$(ls "$work"/c/*row_invariance*.json | head -n 1)
[ -n "$case_file" ] || fail "no case saved"
"$gc" repro "$case_file" --impl "plugin:$plugin" >"$work/repro_plugin.log" 2>&1
[ $? -eq 1 ] || { cat "$work/repro_plugin.log"; fail "the saved case does not fail on the plugin"; }
"$gc" repro "$case_file" --impl host >"$work/repro_host.log" 2>&1 || { cat "$work/repro_host.log"; fail "the saved case fails on host too"; }
echo OK
