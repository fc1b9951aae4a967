#!/usr/bin/env bash
# plugin_stdout.sh GATECHECK PLUGIN WORK: what a plugin prints to stdout
# (printf, buffered, and write(1)), as it loads, in its calls and as it
# unloads, and from a thread of its own between calls, goes to stderr, so
# that stdout carries only gatecheck's report;
# nothing the plugin printed is lost. In process, under --isolate (forked
# children), and for repro. (It used to land in the middle of the report.)
. "$(dirname "$0")/script_start.sh"
# run NAME ARGS...: gatecheck ARGS must exit 0, with a clean stdout and the
# plugin's lines on stderr.
run() {
  local name=$1 rc
  shift
  "$gc" "$@" >"$work/$name.out" 2>"$work/$name.err"
  rc=$?
  [ $rc -eq 0 ] || fail "$name: gatecheck $* exited $rc (want 0)"
  if grep -q 'plugin stdout' "$work/$name.out"; then
    fail "$name: the plugin's output is in gatecheck's stdout:"
    grep -m5 -n 'plugin stdout' "$work/$name.out" | sed 's/^/    /'
  fi
  grep -Eq "$report" "$work/$name.out" || fail "$name: stdout lacks the report line /$report/"
  for where in load gatecheck_plugin_v1 forward backward unload ${threads:-}; do
    for how in 'printf' 'write\(1\)'; do
      grep -Eq "plugin stdout: $how in $where" "$work/$name.err" ||
        fail "$name: stderr lacks the plugin's $how in $where (lost?)"
    done
  done
  [ $fails -eq 0 ] && echo "ok: $name: stdout holds only the report; the plugin's lines are on stderr"
}
impl=plugin:$plugin
report='0 claimed properties failed'
# The plugin's own thread prints for a second from its load on, between calls
# too: in process, every line of it must reach stderr as well.
threads=thread
run check check --impl "$impl" --seed 5 --cases 3 --corpus "$work/corpus"
threads=""
run isolated check --impl "$impl" --isolate --seed 5 --cases 2 --properties accuracy,error_inputs \
  --corpus "$work/corpus-isolated"
# a case to replay: one row, host's own
printf '%s' '{"format": "gatecheck-case", "version": 1, "dtype": "f32", "rows": 1, "dim": 1, "gates": 1, "index": [0], "res": ["3f800000"], "gate": ["40000000"], "y": ["40400000"], "grad_out": ["3f800000"]}' >"$work/case.json"
report='accuracy: pass'
run repro repro "$work/case.json" --impl "$impl" --property accuracy
# Isolated, the forked child must not write gatecheck's pending report again.
run repro-isolated repro "$work/case.json" --impl "$impl" --property accuracy --isolate
n=$(grep -c "^$work/case.json: " "$work/repro-isolated.out")
[ "$n" -eq 1 ] || fail "repro-isolated: the case's line is in stdout $n times (want once)"
[ $fails -eq 0 ] || exit 1
