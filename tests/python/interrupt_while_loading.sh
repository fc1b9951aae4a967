#!/usr/bin/env bash
# interrupt_while_loading.sh GATECHECK SLOW_IMPORT_PY WORK
# Ctrl-C while a Python implementation is still importing (slow_import.py)
# stops check and sweep as a Ctrl-C during their cases does: exit 130 and
# "interrupted by SIGINT", and no KeyboardInterrupt reported as an
# implementation that could not load (exit 3).
. "$(dirname "$0")/../cli/script_start.sh"
slow=$2
# interrupt NAME ARGS...: gatecheck ARGS in a process group of its own, and
# SIGINT to that group (as a terminal's Ctrl-C sends it) once the import is under way
interrupt() {
  local name=$1 pid rc i
  shift
  set -m  # the background job gets a process group of its own
  GATECHECK_TEST_IMPORT_MARK="$work/$name.mark" "$gc" "$@" >"$work/$name.log" 2>&1 &
  pid=$!
  set +m
  for i in $(seq 600); do
    [ -e "$work/$name.mark" ] && break
    sleep 0.1
  done
  if [ ! -e "$work/$name.mark" ]; then
    kill -9 -- "-$pid"
    wait "$pid"
    cat "$work/$name.log"
    fail "$name: the import did not begin within 60 s"
    return
  fi
  kill -INT -- "-$pid"
  wait "$pid"
  rc=$?
  [ "$rc" -eq 130 ] || { cat "$work/$name.log"; fail "$name: exit $rc (want 130)"; }
  grep -q "interrupted by SIGINT" "$work/$name.log" || fail "$name: the report does not say it was interrupted"
  if grep -q "KeyboardInterrupt" "$work/$name.log"; then fail "$name: a KeyboardInterrupt reached the report"; fi
}
interrupt check check --impl "python:$slow:correct" --properties accuracy --seconds 0 --cases 5 --seed 1 \
  --corpus "$work/check"
interrupt sweep sweep --impl "python:$slow:correct" --json "$work/sweep.json" --corpus "$work/sweep"
[ "$fails" -eq 0 ] && echo OK
exit "$fails"
