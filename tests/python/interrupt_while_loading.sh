#!/usr/bin/env bash
# interrupt_while_loading.sh GATECHECK SLOW_IMPORT_PY WORK
# Ctrl-C while a Python implementation is still importing (slow_import.py)
# ends check, sweep and bench --harness at once, with nothing to save: exit
# 130, "interrupted by SIGINT while an implementation was loading" and what
# was loading, and no KeyboardInterrupt reported as an implementation that
# could not load (exit 3). So does a Ctrl-C during a load that never ends
# (ops.py's setup_hangs), for check and for repro --isolate, which has no
# --timeout watchdog. bench --harness also ends at once (killed by SIGINT)
# during its calls, which run on worker threads (where CPython's own handler,
# had it been let in, would never have raised).
. "$(dirname "$0")/../cli/script_start.sh"
. "$(dirname "$0")/interrupt_group.sh"
slow=$2
ops=$(dirname "$slow")/ops.py
# interrupt NAME READY REPORTS ARGS...: gatecheck ARGS, and a Ctrl-C once the
# file READY has a line (slow_import.py's mark: the import is under way; or
# ops.py's pid log: calls are being made); REPORTS 1 if the command must say
# it was interrupted. It must exit 130.
interrupt() {
  local name=$1 ready=$2 reports=$3
  shift 3
  start_in_group "$work/$name.log" env GATECHECK_TEST_IMPORT_MARK="$work/$name.mark" \
    GATECHECK_TEST_PID_LOG="$work/$name.pids" "$gc" "$@"
  if ! interrupt_group_when "$ready"; then
    cat "$work/$name.log"
    fail "$name: ended (exit $group_rc), or not ready within 60 s, before the Ctrl-C"
    return
  fi
  [ "$group_rc" -eq 130 ] || { cat "$work/$name.log"; fail "$name: exit $group_rc (want 130)"; }
  if [ "$reports" = 1 ] && ! grep -q "interrupted by SIGINT" "$work/$name.log"; then
    fail "$name: the report does not say it was interrupted"
  fi
  if grep -q "KeyboardInterrupt" "$work/$name.log"; then fail "$name: a KeyboardInterrupt reached the report"; fi
}
# (a --load-timeout of 30 s: without the quit during a load, the hung ones end there, exit 3)
interrupt check_hung "$work/check_hung.mark" 1 check --impl "python:$ops:setup_hangs" --load-timeout 30 \
  --properties accuracy --seconds 0 --cases 5 --corpus "$work/check_hung"
printf '%s' '{"format": "gatecheck-case", "version": 1, "dtype": "f32", "rows": 1, "dim": 1, "gates": 1, "index": [0], "res": ["3f800000"], "gate": ["40000000"], "y": ["40400000"], "grad_out": ["3f800000"]}' \
  >"$work/one_row.json"
interrupt repro_hung "$work/repro_hung.mark" 1 repro "$work/one_row.json" --impl "python:$ops:setup_hangs" --isolate \
  --load-timeout 30 --property accuracy
interrupt check "$work/check.mark" 1 check --impl "python:$slow:correct" --properties accuracy --seconds 0 --cases 5 \
  --seed 1 --corpus "$work/check"
interrupt sweep "$work/sweep.mark" 1 sweep --impl "python:$slow:correct" --json "$work/sweep.json" \
  --corpus "$work/sweep"
# (a bench that ignored the Ctrl-C would end on its own within some 20 s, exit 0)
interrupt bench_import "$work/bench_import.mark" 0 bench --harness --impl "python:$slow:correct" \
  --properties accuracy --seconds-per-property 8
interrupt bench_calls "$work/bench_calls.pids" 0 bench --harness --impl "python:$ops:pid_logged" \
  --properties accuracy --seconds-per-property 8
for name in check_hung repro_hung check sweep; do
  grep -q "^  while loading python:" "$work/$name.log" || { cat "$work/$name.log"; fail "$name: what was loading is not named"; }
done
[ "$fails" -eq 0 ] && echo OK
exit "$fails"
