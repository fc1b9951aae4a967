#!/usr/bin/env bash
# interrupt.sh GATECHECK PLUGIN WORK SLOW_PLUGIN: Ctrl-C (SIGINT), SIGTERM or
# SIGHUP stops a check gracefully: it exits 130, 143 or 129, still prints the table and
# the summary (which says it was interrupted), writes --json, saves what it
# found, and leaves no in-flight case for the next run to "recover" as a
# crash. (It used to die at once: no report, no JSON, and an in-flight
# snapshot left behind.) A shrink stopped so writes the smallest failing case
# it has, which still fails; a repro of many files says which it replayed.
. "$(dirname "$0")/script_start.sh"
slow=$4
. "$(dirname "$0")/signal_when.sh"
# stop NAME SIGNAL LINE WANT ARGS...: gatecheck check ARGS, sent SIGNAL once it prints LINE
stop() {
  local name=$1 sig=$2 line=$3 want=$4
  shift 4
  signal_when "$name" "$sig" "$line" "$gc" check "$@" --json "$work/$name.json" --corpus "$work/$name"
  [ $rc -eq "$want" ] || fail "$name: exit $rc (want $want)"
  grep -q "^interrupted by SIG$sig: the results above cover only what ran before it" "$work/$name.out" ||
    fail "$name: the summary does not say it was interrupted"
  grep -q "^implementation .*verdict" "$work/$name.out" || fail "$name: no results table"
  grep -q '"interrupted": true' "$work/$name.json" || fail "$name: --json missing or not marked interrupted"
  if ls "$work/$name"/inflight-* >/dev/null 2>&1; then fail "$name: an in-flight case was left behind"; fi
}
# The first progress line on stderr: cases are running, so the stop handlers
# (installed first thing) are in.
stop int INT '^\[check\] ' 130 --impl host --seconds 60 --seed 5
stop term TERM '^\[check\] ' 143 --impl host --seconds 60 --seed 5
# A closed terminal's SIGHUP too (it killed the run with no report, no JSON and its case in flight)
stop hangup HUP '^\[check\] ' 129 --impl host --seconds 60 --seed 5
# A failure found before the stop is still saved and reported: signalled once
# a progress line counts it (the count goes up once it is shrunk; to a file,
# progress is printed every 5 s).
stop found INT '^\[check\] .* [1-9][0-9]* failing$' 130 --impl "plugin:$plugin" \
  --properties accuracy,row_invariance,repeatable --seconds 60 --seed 42
grep -q "^FAILURE: plugin:.* accuracy" "$work/found.out" || fail "found: the failure found before the stop is not reported"
ls "$work/found"/*accuracy*.json >/dev/null 2>&1 || fail "found: the failure found before the stop was not saved"
# The stop came before the project's shrinker ran on it: not called minimal.
grep -q '"shrink_cut_short": true' "$work/found.json" || fail "found: --json does not mark its shrink cut short"
grep -q "^  smallest case found (the shrink stopped early" "$work/found.out" || fail "found: the report calls its case minimal"
# shrink: a long one (SLOW_PLUGIN takes 200 ms a call, some 30 candidates),
# stopped once its first step is printed (each step's line is flushed).
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
signal_when shrink INT '^  shrink step [0-9]+ ' "$gc" shrink "$work/big.json" --impl "plugin:$slow" --property accuracy \
  --out "$work/big.min.json"
[ $rc -eq 130 ] || fail "shrink: exit $rc (want 130)"
grep -q "^interrupted by SIGINT: the smallest failing case so far" "$work/shrink.out" || fail "shrink: does not say it was interrupted"
grep -q "^smallest case after [1-9][0-9]* steps" "$work/shrink.out" || fail "shrink: no step was taken before the stop"
"$gc" repro "$work/big.min.json" --impl "plugin:$slow" --property accuracy >"$work/repro.out" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "shrink: the case it wrote does not fail (repro exit $rc, want 1)"
# repro: many files of the slow plugin's failing case, stopped once the first
# file's verdict is out (each file's lines are flushed as it ends): the check in
# hand is not counted, and the last line says what was not replayed.
files=()
for i in $(seq 1 30); do cp "$work/big.min.json" "$work/many-$i.json"; files+=("$work/many-$i.json"); done
signal_when repro-many INT 'still failing\)$' "$gc" repro "${files[@]}" --impl "plugin:$slow" --property accuracy
[ $rc -eq 130 ] || fail "repro: exit $rc (want 130)"
grep -Eq "^repro: 30 files: [1-9][0-9]* still failing, 0 passing, 0 unusable \(bad file or arguments\); interrupted by SIGINT before the other [1-9][0-9]*$" \
  "$work/repro-many.out" || fail "repro: the last line does not say what ran before the stop: $(tail -n 1 "$work/repro-many.out")"
if [ $fails -ne 0 ]; then
  for f in "$work"/*.out "$work"/*.err; do echo "--- $f"; tail -n 8 "$f"; done
  exit 1
fi
echo "ok: SIGINT, SIGTERM and SIGHUP stop check with its report, JSON and findings, shrink with its smallest case, and repro with what it replayed"
