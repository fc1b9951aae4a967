#!/usr/bin/env bash
# jobs_same_verdicts.sh GATECHECK BROKEN_PLUGIN WORKDIR
# check --jobs 1 and --jobs 4 with the same --seed and --cases give the same
# JSON results: cases, verdicts, coverage, the saved counterexample, its
# shrink and its reproduce string (all but the times), on a passing run (host)
# and on a failing one (the broken example plugin, behind the plugin lock).
set -u
gc=$1 plugin=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }

run() {  # NAME EXPECTED_EXIT ARGS...
  local name=$1 want=$2
  shift 2
  "$gc" check "$@" --corpus "$work/$name" --json "$work/$name.json" >"$work/$name.log" 2>&1
  local rc=$?
  [ "$rc" -eq "$want" ] || { cat "$work/$name.log"; fail "$name: exit $rc, expected $want"; }
}

same() {  # A.json B.json
  python3 - "$1" "$2" <<'PY' || exit 1
import json, os, sys
def load(path):
    j = json.load(open(path))
    for key in ("seconds", "jobs"):
        j.pop(key)
    for r in j["results"]:
        r.pop("seconds")
        if "failure" in r:
            r["failure"].pop("seconds_to_find")
            r["failure"]["case_file"] = os.path.basename(r["failure"]["case_file"])
    return j
a, b = load(sys.argv[1]), load(sys.argv[2])
if a != b:
    print("FAIL: %s and %s differ" % (sys.argv[1], sys.argv[2]))
    print(json.dumps(a, indent=1)[:3000])
    print(json.dumps(b, indent=1)[:3000])
    sys.exit(1)
PY
}

run host1 0 --impl host --seed 5 --cases 20 --max-rows 200 --max-dim 40 --jobs 1
run host4 0 --impl host --seed 5 --cases 20 --max-rows 200 --max-dim 40 --jobs 4
grep -q "4 jobs" "$work/host4.log" || fail "the header does not say 4 jobs"
same "$work/host1.json" "$work/host4.json"

run broken1 1 --impl "plugin:$plugin" --seed 5 --cases 60 --max-rows 200 --max-dim 40 --jobs 1
run broken4 1 --impl "plugin:$plugin" --seed 5 --cases 60 --max-rows 200 --max-dim 40 --jobs 4
same "$work/broken1.json" "$work/broken4.json"
python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results']; sys.exit(0 if any('failure' in x for x in r) else 1)" \
  "$work/broken4.json" || fail "the broken plugin's failure is not in the JSON: this proves nothing"
echo OK
