#!/usr/bin/env bash
# scale_budget.sh GATECHECK PLUGIN WORK [PROPERTIES [OP]]: the scale tier keeps
# to its budget when its cases are expensive. With the slow-rows plugin (5 us a
# row, so a scale case of 2^17 rows costs over half a second a call) on
# repeatable and segment_invariance (the default); with the slow-parts plugin
# (host-repro whose exchange's partial sleeps 20 ms, as a part costs on a GPU)
# on split_invariance. Each property keeps its slice (4 s over the properties)
# within a 0.5 s margin, plus what the report itself says the cases in flight
# ran past their share or the slice, with each case's size (or, for draws that
# never ran, their time); the run ends within the budget plus the same. Every
# scale case that ran is listed under scale_runs, those past their allowance
# among the overruns too, and every draw skipped under scale_skipped, with the
# estimate that did not fit.
. "$(dirname "$0")/script_start.sh"
props=${4:-repeatable,segment_invariance} op=${5:-gate_residual}
"$gc" check --op "$op" --impl "plugin:$plugin" --properties "$props" --claims "$props" \
  --seconds 4 --scale-share 0.5 --jobs 2 --seed 3 --corpus "$work/c" --json "$work/r.json" >"$work/out" 2>"$work/err"
rc=$?
[ $rc -eq 0 ] || [ $rc -eq 4 ] || fail "check exited $rc (want 0, or 4 if too few cases ran)"
# The slow-rows run always has draws too costly for the share left; the
# slow-parts run may not (a loaded machine's first case can take the whole share).
must_skip=$([ -z "${4:-}" ] && echo 1 || echo 0)
python3 - "$work/r.json" "$props" "$must_skip" <<'PY' || fail "a property or the run went past its budget (above)"
import collections, json, re, sys
j = json.load(open(sys.argv[1]))
slice_s, margin, bad, total_over = 4.0 / len(sys.argv[2].split(",")), 0.5, 0, 0.0
runs = [s for r in j["results"] for s in r["scale_runs"]]
keys = {"case", "parts", "units", "allowance_seconds", "estimate_seconds", "seconds", "waited_seconds",
        "expected_wait_seconds"}
if any(set(s) != keys for s in runs):
    print("a scale_runs entry without", keys, ":", runs); bad = 1
if any(not 0 <= s.get("waited_seconds", 0) <= s["seconds"] for s in runs):
    print("a scale case waited outside [0, its seconds]:", runs); bad = 1
scale = j["coverage"]["scale"]
if len(runs) != scale["cases"] or abs(sum(s["seconds"] for s in runs) - scale["seconds"]) > 1e-6:
    print(f"scale_runs ({len(runs)} cases) are not the coverage's {scale['cases']} scale cases"); bad = 1
# Each draw counted as skipped is listed under scale_skipped; one skipped as
# too costly carries the estimate that did not fit the time its slot had left.
skips = [k for r in j["results"] for k in r["scale_skipped"]]
skipped_why = collections.Counter(k["why"] for k in skips)
if skipped_why != collections.Counter(scale.get("skipped", {})):
    print("scale_skipped", skipped_why, "is not the coverage's", scale.get("skipped")); bad = 1
for k in skips:  # (the time left may be below zero: a slot whose share was spent when it was drawn)
    if k["why"].startswith("estimated") and \
            not k.get("estimate_seconds", -1) + k.get("expected_wait_seconds", -1) > k.get("left_seconds", float("inf")):
        print("a draw skipped as too costly without an estimate past the time left:", k); bad = 1
if sys.argv[3] == "1" and not any(k["why"].startswith("estimated") for k in skips):
    print("no draw was skipped as too costly: the plugin's cost should force some"); bad = 1
for r in j["results"]:
    for s in r["scale_runs"]:
        if s["allowance_seconds"] >= 0 and s["seconds"] > s["allowance_seconds"] + 0.05 and \
                not any(s["case"] in o for o in r["overruns"]):
            print("a scale run past its allowance, not among the overruns:", s); bad = 1
    over = 0.0
    for o in r["overruns"]:
        m = re.search(r"([0-9.]+) s past the ([0-9.]+) s its share had left", o) or \
            re.search(r"ending ([0-9.]+) s past the property's slice", o)
        named = "elements" in o or "past the property's slice" in o or o.startswith("scale draws that did not run")
        if not m or not named:
            print("overrun without its size or time:", o); bad = 1
        else:
            over += float(m.group(1))
    total_over += over
    print(f"{r['property']}: {r['seconds']:.2f} s, {r['cases']} cases, overruns {r['overruns']}")
    if r["seconds"] > slice_s + margin + over:
        print(f"  past its slice: {r['seconds']:.2f} s > {slice_s} + {margin} + {over:.2f}"); bad = 1
if j["seconds"] > 4.0 + margin + total_over:
    print(f"run: {j['seconds']:.2f} s > 4 + {margin} + {total_over:.2f}"); bad = 1
sys.exit(bad)
PY
if [ $fails -ne 0 ]; then
  cat "$work/out"
  exit 1
fi
