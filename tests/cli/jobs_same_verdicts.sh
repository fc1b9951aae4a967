#!/usr/bin/env bash
# jobs_same_verdicts.sh GATECHECK BROKEN_PLUGIN GRID_LIMIT_PLUGIN WORKDIR
# check --jobs 1 and --jobs 4 with the same --seed and --cases give the same
# JSON results: cases, verdicts, coverage (the scale tier's too), the saved
# counterexample, its shrink and its reproduce string (all but the times), on
# a passing run (host), on a failing one (the broken example plugin, behind
# the plugin lock) and on one that fails only at scale (the grid-limit plugin,
# its scale case shrunk and saved as a spec file). --seconds 0: with a case
# budget only, the scale tier takes every 1/share-th case.
set -u
gc=$1 plugin=$2 grid=$3 work=$4
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
    j["coverage"]["scale"].pop("seconds")
    for r in j["results"]:
        r.pop("seconds")
        for s in r["scale_runs"]:
            s.pop("seconds")
        if "failure" in r:
            r["failure"].pop("seconds_to_find")
            f = r["failure"]
            f["repro"] = f["repro"].replace(os.path.dirname(f["case_file"]), "CORPUS")  # each run has its own
            f["case_file"] = os.path.basename(f["case_file"])
    return j
a, b = load(sys.argv[1]), load(sys.argv[2])
if a != b:
    print("FAIL: %s and %s differ" % (sys.argv[1], sys.argv[2]))
    print(json.dumps(a, indent=1)[:3000])
    print(json.dumps(b, indent=1)[:3000])
    sys.exit(1)
PY
}

run host1 0 --impl host --seed 5 --seconds 0 --cases 20 --max-rows 200 --max-dim 40 --jobs 1
run host4 0 --impl host --seed 5 --seconds 0 --cases 20 --max-rows 200 --max-dim 40 --jobs 4
grep -q "4 jobs" "$work/host4.log" || fail "the header does not say 4 jobs"
same "$work/host1.json" "$work/host4.json"

run broken1 1 --impl "plugin:$plugin" --seed 5 --seconds 0 --cases 30 --max-rows 200 --max-dim 40 --jobs 1
run broken4 1 --impl "plugin:$plugin" --seed 5 --seconds 0 --cases 30 --max-rows 200 --max-dim 40 --jobs 4
same "$work/broken1.json" "$work/broken4.json"
python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results']; sys.exit(0 if any('failure' in x for x in r) else 1)" \
  "$work/broken4.json" || fail "the broken plugin's failure is not in the JSON: this proves nothing"
python3 -c "import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))['coverage']['scale']['cases'] > 0 else 1)" \
  "$work/host4.json" || fail "no scale case ran on host: the scale tier was not compared"

run grid1 1 --impl "plugin:$grid" --properties inputs_untouched,full_write --seed 3 --seconds 0 --cases 24 --scale-share 0.25 --jobs 1
run grid4 1 --impl "plugin:$grid" --properties inputs_untouched,full_write --seed 3 --seconds 0 --cases 24 --scale-share 0.25 --jobs 4
same "$work/grid1.json" "$work/grid4.json"
python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results']; sys.exit(0 if any(x.get('failure', {}).get('scale') is True for x in r) else 1)" \
  "$work/grid4.json" || fail "the grid-limit plugin's failure is not a scale failure in the JSON: this proves nothing"
echo OK
