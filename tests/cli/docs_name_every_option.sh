#!/usr/bin/env bash
# docs_name_every_option.sh GATECHECK CLI_MD: every option a command's --help lists is named in
# the command reference (docs/cli.md), so that a new option cannot land undocumented.
set -u
gc=$1 doc=$2
fails=0
for cmd in check repro shrink sweep bench nightly; do
  opts=$("$gc" "$cmd" --help 2>&1 | grep -oE '^ +(-h,)?--[a-z0-9-]+' | sed 's/^ *//; s/^-h,//' | sort -u)
  [ -n "$opts" ] || { echo "FAIL: $cmd --help lists no option"; fails=$((fails + 1)); continue; }
  for o in $opts; do
    [ "$o" = --help ] && continue
    grep -qE -- "$o([^a-z0-9-]|$)" "$doc" || { echo "FAIL: $cmd $o is not in $doc"; fails=$((fails + 1)); }
  done
done
[ "$fails" -eq 0 ] && echo OK
exit "$fails"
