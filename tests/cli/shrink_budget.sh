#!/usr/bin/env bash
# shrink_budget.sh GATECHECK BROKEN_PLUGIN WORK: --shrink-seconds bounds each
# failure's shrink. At 0 the report gives the case as found and says the
# shrink was cut short (text, JSON and the saved file's note), never calling
# it minimal; with the default budget the same failure shrinks to a case the
# report calls minimal, and says nothing of a cut.
. "$(dirname "$0")/script_start.sh"
field() {  # FILE KEY -> the first failure's KEY
  python3 -c 'import json,sys
print([r["failure"][sys.argv[2]] for r in json.load(open(sys.argv[1]))["results"] if r.get("failure")][0])' "$1" "$2"
}
run() {  # NAME ARGS...
  local name=$1
  shift
  "$gc" check --impl "plugin:$plugin" --properties accuracy --seed 42 --cases 30 --seconds 0 \
    --corpus "$work/$name" --json "$work/$name.json" "$@" >"$work/$name.out" 2>&1
  local rc=$?
  [ $rc -eq 1 ] || { cat "$work/$name.out"; fail "$name: exit $rc (want 1, the claimed failure)"; }
}
run cut --shrink-seconds 0
grep -q "smallest case found (the shrink stopped early, at --shrink-seconds" "$work/cut.out" ||
  fail "cut: the report does not say the shrink was cut short"
grep -q "minimal case:" "$work/cut.out" && fail "cut: the report calls an unshrunk case minimal"
[ "$(field "$work/cut.json" shrink_cut_short)" = True ] || fail "cut: JSON shrink_cut_short is not true"
[ "$(field "$work/cut.json" shrink_steps)" = 0 ] || fail "cut: $(field "$work/cut.json" shrink_steps) shrink steps at a 0 s budget"
grep -q "cut short: a smaller case may fail" "$(field "$work/cut.json" case_file)" ||
  fail "cut: the saved file's note does not say the shrink was cut short"

run whole
grep -q "  minimal case:" "$work/whole.out" || fail "whole: no minimal case in the report"
grep -q "cut short" "$work/whole.out" && fail "whole: a shrink run to its end is reported cut short"
[ "$(field "$work/whole.json" shrink_cut_short)" = False ] || fail "whole: JSON shrink_cut_short is not false"
[ "$(field "$work/whole.json" shrink_steps)" -gt 0 ] || fail "whole: no shrink step"
[ $fails -eq 0 ] && echo "ok: --shrink-seconds 0 reports the case as found, cut short; the default shrinks it to a minimal case"
[ $fails -eq 0 ] || exit 1
