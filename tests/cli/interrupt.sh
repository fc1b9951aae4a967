#!/usr/bin/env bash
# interrupt.sh GATECHECK PLUGIN WORK SLOW_PLUGIN: Ctrl-C (SIGINT) or SIGTERM
# stops a check gracefully: it exits 130 or 143, still prints the table and
# the summary (which says it was interrupted), writes --json, saves what it
# found, and leaves no in-flight case for the next run to "recover" as a
# crash. (It used to die at once: no report, no JSON, and an in-flight
# snapshot left behind.) A shrink stopped so writes the smallest failing case
# it has, which still fails; a repro of many files says which it replayed.
. "$(dirname "$0")/script_start.sh"
slow=$4
# stop NAME SIGNAL AFTER WANT ARGS...: gatecheck check ARGS, sent SIGNAL after AFTER s
stop() {
  local name=$1 sig=$2 after=$3 want=$4 rc t0
  shift 4
  t0=$(date +%s)
  timeout --preserve-status -s "$sig" "$after" "$gc" check "$@" --json "$work/$name.json" --corpus "$work/$name" \
    >"$work/$name.out" 2>"$work/$name.err"
  rc=$?
  [ $rc -eq "$want" ] || fail "$name: exit $rc (want $want)"
  [ $(( $(date +%s) - t0 )) -lt 30 ] || fail "$name: the run went on after SIG$sig"
  grep -q "^interrupted by SIG$sig: the results above cover only what ran before it" "$work/$name.out" ||
    fail "$name: the summary does not say it was interrupted"
  grep -q "^implementation .*verdict" "$work/$name.out" || fail "$name: no results table"
  grep -q '"interrupted": true' "$work/$name.json" || fail "$name: --json missing or not marked interrupted"
  if ls "$work/$name"/inflight-* >/dev/null 2>&1; then fail "$name: an in-flight case was left behind"; fi
}
stop int INT 3 130 --impl host --seconds 60 --seed 5
stop term TERM 3 143 --impl host --seconds 60 --seed 5
# A failure found before the stop is still shrunk, saved and reported.
stop found INT 4 130 --impl "plugin:$plugin" --properties accuracy,row_invariance,repeatable --seconds 60 --seed 42
grep -q "^FAILURE: plugin:.* accuracy" "$work/found.out" || fail "found: the failure found before the stop is not reported"
ls "$work/found"/*accuracy*.json >/dev/null 2>&1 || fail "found: the failure found before the stop was not saved"
# shrink: a long one (SLOW_PLUGIN takes 200 ms a call, some 30 candidates), stopped after 3 s.
{
  printf '{"format": "gatecheck-case", "version": 1, "dtype": "f32", "rows": 32, "dim": 16, "gates": 2, "index": ['
  for r in $(seq 0 31); do printf '%s%d' "$([ "$r" -gt 0 ] && echo ,)" $((r % 2)); done
  printf ']'
  row=$(printf '3f800000 %.0s' $(seq 1 16))  # a row of 16 ones: f32 bits, space-separated, a string a row
  row=${row% }
  for t in res gate y grad_out; do
    n=32; [ $t = gate ] && n=2
    printf ', "%s": [' $t
    for i in $(seq 1 $n); do printf '%s"%s"' "$([ "$i" -gt 1 ] && echo ,)" "$row"; done
    printf ']'
  done
  printf '}\n'
} >"$work/big.json"
timeout --preserve-status -s INT 3 "$gc" shrink "$work/big.json" --impl "plugin:$slow" --property accuracy \
  --out "$work/big.min.json" >"$work/shrink.out" 2>"$work/shrink.err"
rc=$?
[ $rc -eq 130 ] || fail "shrink: exit $rc (want 130)"
grep -q "^interrupted by SIGINT: the smallest failing case so far" "$work/shrink.out" || fail "shrink: does not say it was interrupted"
grep -q "^smallest case after [1-9][0-9]* steps" "$work/shrink.out" || fail "shrink: no step was taken before the stop"
"$gc" repro "$work/big.min.json" --impl "plugin:$slow" --property accuracy >"$work/repro.out" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "shrink: the case it wrote does not fail (repro exit $rc, want 1)"
# repro: many files of the slow plugin's failing case, stopped after 2 s: the
# check in hand is not counted, and the last line says what was not replayed.
files=()
for i in $(seq 1 30); do cp "$work/big.min.json" "$work/many-$i.json"; files+=("$work/many-$i.json"); done
# SIGINT once the first file's verdict is out (each file's lines are flushed as
# it ends), not after a fixed time: on a loaded machine that first file alone
# can take longer than any short timer.
"$gc" repro "${files[@]}" --impl "plugin:$slow" --property accuracy >"$work/repro-many.out" 2>"$work/repro-many.err" &
pid=$!
for _ in $(seq 1 600); do grep -q 'still failing)$' "$work/repro-many.out" && break; sleep 0.1; done
kill -INT $pid
wait $pid
rc=$?
[ $rc -eq 130 ] || fail "repro: exit $rc (want 130)"
grep -Eq "^repro: 30 files: [1-9][0-9]* still failing, 0 passing, 0 unusable \(bad file or arguments\); interrupted by SIGINT before the other [1-9][0-9]*$" \
  "$work/repro-many.out" || fail "repro: the last line does not say what ran before the stop: $(tail -n 1 "$work/repro-many.out")"
if [ $fails -ne 0 ]; then
  for f in "$work"/*.out "$work"/*.err; do echo "--- $f"; tail -n 8 "$f"; done
  exit 1
fi
echo "ok: SIGINT and SIGTERM stop check with its report, JSON and findings, shrink with its smallest case, and repro with what it replayed"
