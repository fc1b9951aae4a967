#!/usr/bin/env bash
# plugin_error_bytes.sh GATECHECK PLUGIN WORK
# A plugin whose last_error() holds bytes that are not UTF-8, a terminal's
# escape sequences and 6,000 more bytes: the failure is still a failure
# (exit 1) with a --json report that parses, the report and the saved file
# show the message escaped (\xff, \x1b) and cut to 4 KiB with a note, and no
# raw escape byte reaches the output.
. "$(dirname "$0")/script_start.sh"
"$gc" check --impl "plugin:$plugin" --properties accuracy --seed 1 --seconds 0 --cases 5 --jobs 1 \
  --corpus "$work/c" --json "$work/report.json" >"$work/check.log" 2>&1
rc=$?
[ "$rc" -eq 1 ] || { cat "$work/check.log"; fail "exit $rc (want 1: the claimed accuracy fails)"; }
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$work/report.json" || fail "--json's report does not parse"
grep -qF 'bad \xff\xfe bytes, \x1b[31mred\x1b[0m, a bell \x07, then x: xxx' "$work/check.log" ||
  fail "the message is not shown escaped"
grep -q "more bytes left out)" "$work/check.log" || fail "the long message is not cut with a note"
if LC_ALL=C grep -q $'[\x1b\x07\xff]' "$work/check.log" "$work/report.json"; then fail "a raw escape, bell or 0xff byte got through"; fi
saved=$(ls "$work"/c/*.json 2>/dev/null | head -n 1)
[ -n "$saved" ] || fail "no failure saved"
[ -n "$saved" ] && ! LC_ALL=C grep -q $'[\x1b\x07]' "$saved" || fail "the saved file holds a raw escape or bell"
[ "$fails" -eq 0 ] && echo OK
exit "$fails"
