#!/usr/bin/env bash
# expect_exit.sh CODE REGEX -- COMMAND...
# Runs COMMAND; passes when it exits with CODE and its combined output matches
# the extended regex REGEX ("" matches anything). Prints the output otherwise.
set -u
want=$1 regex=$2
shift 2
[ "$1" = "--" ] && shift
out=$("$@" 2>&1)
rc=$?
if [ "$rc" -ne "$want" ]; then
  printf 'expected exit %s, got %s from: %s\n--- output ---\n%s\n' "$want" "$rc" "$*" "$out"
  exit 1
fi
if [ -n "$regex" ] && ! printf '%s' "$out" | grep -Eq -- "$regex"; then
  printf 'output of %s does not match /%s/\n--- output ---\n%s\n' "$*" "$regex" "$out"
  exit 1
fi
printf '%s\n' "$out" | tail -n 5
exit 0
