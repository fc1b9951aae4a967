#!/usr/bin/env bash
# interrupt_while_loading.sh GATECHECK SLOW_IMPORT_PY WORK
# Ctrl-C while a Python implementation is still importing (slow_import.py)
# stops check and sweep as a Ctrl-C during their cases does: exit 130 and
# "interrupted by SIGINT", and no KeyboardInterrupt reported as an
# implementation that could not load (exit 3). bench --harness, which has
# nothing to save, ends at once (killed by SIGINT), whether the Ctrl-C comes
# during the import or during the calls, which run on worker threads (where
# CPython's own handler, had it been let in, would never have raised).
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
interrupt check "$work/check.mark" 1 check --impl "python:$slow:correct" --properties accuracy --seconds 0 --cases 5 \
  --seed 1 --corpus "$work/check"
interrupt sweep "$work/sweep.mark" 1 sweep --impl "python:$slow:correct" --json "$work/sweep.json" \
  --corpus "$work/sweep"
# (a bench that ignored the Ctrl-C would end on its own within some 20 s, exit 0)
interrupt bench_import "$work/bench_import.mark" 0 bench --harness --impl "python:$slow:correct" \
  --properties accuracy --seconds-per-property 8
interrupt bench_calls "$work/bench_calls.pids" 0 bench --harness --impl "python:$ops:pid_logged" \
  --properties accuracy --seconds-per-property 8
[ "$fails" -eq 0 ] && echo OK
exit "$fails"
