#!/usr/bin/env bash
# cli_mutant_plugin.sh GATECHECK PLUGIN EXPECTED_EXIT WORKDIR [CHECK ARGS...]
# Runs `gatecheck check` on a plugin and checks the exit code (CHECK ARGS
# replace the default budget: --seed 7 --cases 100 --seconds 60). On a failure
# (exit 1) it also checks that a counterexample was saved, that `gatecheck
# repro` still fails on it (exit 1) and that `gatecheck shrink` minimises it.
set -u
gatecheck=$1 plugin=$2 want=$3 work=$4
shift 4
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(--seed 7 --cases 100 --seconds 60)
rm -rf "$work" && mkdir -p "$work"
"$gatecheck" check --impl "plugin:$plugin" "${args[@]}" --corpus "$work/corpus" >"$work/check.log" 2>&1
rc=$?
cat "$work/check.log"
if [ "$rc" -ne "$want" ]; then echo "FAIL: gatecheck check exited $rc, expected $want"; exit 1; fi
[ "$want" -eq 0 ] && exit 0
saved=$(find "$work/corpus" -name '*.json' | sort | head -n 1)
if [ -z "$saved" ]; then echo "FAIL: no counterexample saved under $work/corpus"; exit 1; fi
"$gatecheck" repro "$saved" --impl "plugin:$plugin" >"$work/repro.log" 2>&1
rc=$?
cat "$work/repro.log"
if [ "$rc" -ne 1 ]; then echo "FAIL: gatecheck repro exited $rc on $saved, expected 1"; exit 1; fi
"$gatecheck" shrink "$saved" --impl "plugin:$plugin" --out "$work/min.json" >"$work/shrink.log" 2>&1
rc=$?
cat "$work/shrink.log"
if [ "$rc" -ne 0 ] || [ ! -s "$work/min.json" ]; then echo "FAIL: gatecheck shrink exited $rc"; exit 1; fi
"$gatecheck" repro "$work/min.json" --impl "plugin:$plugin" >/dev/null 2>&1
rc=$?
if [ "$rc" -ne 1 ]; then echo "FAIL: the shrunk case no longer fails (repro exited $rc)"; exit 1; fi
echo "OK"
