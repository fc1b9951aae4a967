#!/usr/bin/env bash
# json_stdout.sh GATECHECK PLUGIN WORK: "check --json -" (and --json
# /dev/stdout) puts the JSON alone on stdout and the report on stderr, even
# with a plugin that prints to stdout from its calls and a thread of its own.
# (--json /dev/stdout used to reach stderr once a plugin had loaded: fd 1 is
# stderr from then on.)
. "$(dirname "$0")/script_start.sh"
for target in - /dev/stdout; do
  name=json-${target//\//_}
  "$gc" check --impl "plugin:$plugin" --seed 5 --cases 3 --corpus "$work/corpus" --json "$target" \
    >"$work/$name.out" 2>"$work/$name.err"
  rc=$?
  [ $rc -eq 0 ] || fail "$name: exit $rc (want 0)"
  [ "$(head -c1 "$work/$name.out")" = "{" ] || fail "$name: stdout does not start with the JSON's '{'"
  [ "$(tail -n1 "$work/$name.out")" = "}" ] || fail "$name: stdout does not end with the JSON's '}'"
  grep -q '"results"' "$work/$name.out" || fail "$name: no \"results\" in the JSON on stdout"
  if grep -Eq 'plugin stdout|claimed properties failed' "$work/$name.out"; then
    fail "$name: stdout holds more than the JSON:"
    grep -Em3 -n 'plugin stdout|claimed properties failed' "$work/$name.out" | sed 's/^/    /'
  fi
  # the plugin's thread writes to stderr when it likes, even inside a report line: its
  # messages (each a line of its own) are taken out before the report's line is looked for
  sed -z 's/plugin stdout: [^\n]*\n//g' "$work/$name.err" | grep -q '0 claimed properties failed' ||
    fail "$name: the report is not on stderr"
  [ $fails -eq 0 ] && echo "ok: $name: the JSON alone on stdout, the report on stderr"
done
[ $fails -eq 0 ] || exit 1
