#!/usr/bin/env bash
# interrupt.sh GATECHECK WORK SLOW_PLUGIN: Ctrl-C (SIGINT) or SIGTERM stops a
# sweep after the batch in hand; it still writes its report, marked
# interrupted and incomplete (and its page), and exits 128 + the signal. (SLOW_PLUGIN takes
# 200 ms a forward call: the sweep would run for hours.)
set -u
gc=$1 work=$2 slow=$3
rm -rf "$work" && mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
for sig in INT TERM; do
  start=$(date +%s)
  timeout --preserve-status -s "$sig" 3 "$gc" sweep --impl "plugin:$slow" --quick --json "$work/$sig.json" --html "$work/$sig.html" \
    --corpus "$work/corpus" >"$work/$sig.out" 2>&1
  rc=$? took=$(($(date +%s) - start))
  want=$([ $sig = INT ] && echo 130 || echo 143)
  [ $rc -eq "$want" ] || fail "SIG$sig: exit $rc (want $want)"
  [ $took -le 10 ] || fail "SIG$sig: took $took s to stop"
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r["interrupted"] and not r["complete"] else 1)' \
    "$work/$sig.json" || fail "SIG$sig: the report is missing or not marked interrupted and incomplete"
  grep -q "interrupted by SIG$sig: the report is partial" "$work/$sig.out" || fail "SIG$sig: the summary does not say so"
  grep -q "<b>interrupted</b>" "$work/$sig.html" || fail "SIG$sig: the page is missing or does not say interrupted"
  [ $fails -eq 0 ] && echo "ok: SIG$sig stopped the sweep in $took s with a partial report, exit $rc"
done
[ $fails -eq 0 ] || { tail -5 "$work"/*.out; exit 1; }
