#!/usr/bin/env bash
# json_verdicts.sh GATECHECK BROKEN_PLUGIN WORK [torch-eager]: check --json
# says each result plainly, as the table does: "verdict" is "pass", "fail" (a
# claimed property failed) or "finding" (a failure the contract does not
# claim: torch-eager's bf16/f16 grad_gate), beside the older "claimed" and
# "passed", which cannot tell the last two apart.
. "$(dirname "$0")/script_start.sh"
verdicts() {  # FILE -> "property:verdict:passed" per result
  python3 -c 'import json,sys
for r in json.load(open(sys.argv[1]))["results"]:
    print("%s:%s:%s" % (r["property"], r["verdict"], str(r["passed"]).lower()))' "$1"
}
"$gc" check --impl "plugin:$plugin" --properties accuracy,repeatable --seed 42 --cases 30 --seconds 0 \
  --corpus "$work/broken" --json "$work/broken.json" >"$work/broken.out" 2>&1
[ $? -eq 1 ] || fail "the broken plugin's run did not exit 1"
got=$(verdicts "$work/broken.json" | tr '\n' ' ')
[ "$got" = "accuracy:fail:false repeatable:pass:true " ] || fail "broken plugin: verdicts '$got'"
grep -Eq "accuracy +yes +[0-9]+ +FAIL" "$work/broken.out" || fail "the table does not say FAIL"
if [ "${4:-}" = torch-eager ]; then
  "$gc" check --impl torch-eager --properties accuracy --seed 1 --cases 60 --seconds 0 \
    --corpus "$work/eager" --json "$work/eager.json" >"$work/eager.out" 2>&1
  [ $? -eq 0 ] || fail "the torch-eager run (a finding only) did not exit 0"
  got=$(verdicts "$work/eager.json" | tr '\n' ' ')
  [ "$got" = "accuracy:finding:false " ] || fail "torch-eager: verdicts '$got' (want accuracy:finding:false)"
  grep -Eq "accuracy +yes +[0-9]+ +finding" "$work/eager.out" || fail "the table does not say finding"
fi
[ $fails -eq 0 ] && echo "ok: --json verdicts pass, fail and finding, as the table"
[ $fails -eq 0 ] || exit 1
