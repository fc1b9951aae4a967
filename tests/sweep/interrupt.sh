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
. "$(dirname "$0")/../cli/signal_when.sh"
for sig in INT TERM; do
  # Signalled once seed 4's all_rows starts (its progress line, stderr): seed
  # 3's cases are done, so the partial report holds something, and all_rows
  # (unlike split_invariance) stops between its batches.
  signal_when "$sig" "$sig" '^  \[[0-9.]+ s\] all_rows n=17 seed 4: ' "$gc" sweep --impl "plugin:$slow" --quick \
    --json "$work/$sig.json" --html "$work/$sig.html" --corpus "$work/corpus"
  [ $rc -ge 0 ] || continue  # (the state never came: signal_when said so)
  want=$([ $sig = INT ] && echo 130 || echo 143)
  [ $rc -eq "$want" ] || fail "SIG$sig: exit $rc (want $want)"
  [ $took -le 10 ] || fail "SIG$sig: took $took s after the signal to stop"
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r["interrupted"] and not r["complete"] else 1)' \
    "$work/$sig.json" || fail "SIG$sig: the report is missing or not marked interrupted and incomplete"
  grep -q '"all_rows": [1-9]' "$work/$sig.json" || fail "SIG$sig: the report does not hold seed 3's all_rows failures"
  grep -q "interrupted by SIG$sig: the report is partial" "$work/$sig.out" || fail "SIG$sig: the summary does not say so"
  grep -q "<b>interrupted</b>" "$work/$sig.html" || fail "SIG$sig: the page is missing or does not say interrupted"
  # Once the stop is heard, no progress line names a case that will not run.
  sed -n '/stopping after the case in hand/,$p' "$work/$sig.err" | grep -E '^  \[[0-9.]+ s\] ' &&
    fail "SIG$sig: a case was announced after the stop"
  [ $fails -eq 0 ] && echo "ok: SIG$sig stopped the sweep $took s after the signal, a partial report, exit $rc"
done
[ $fails -eq 0 ] || { tail -n 5 "$work"/*.out "$work"/*.err; exit 1; }
