#!/usr/bin/env bash
# split_field.sh GATECHECK WORK [torch-eager]: the sweep's split_invariant,
# beside params_repeatable, on gate_residual --quick: true for host-repro (its
# declared exchange), false for host (the framework's fp32 sum; and for
# torch-eager when given), naming the split and the first differing element,
# saved with a replay; the page has the row; --validate passes the report and
# fails copies whose split_invariant disagrees with its splits or lacks the
# failed split; --compare lists the field.
set -u
gc=$1 work=$2
shift 2
rm -rf "$work" && mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
args=(--impl host --impl host-repro)
for i in "$@"; do args+=(--impl "$i"); done
"$gc" sweep "${args[@]}" --quick --reps 1 --json "$work/r.json" --html "$work/r.html" --corpus "$work/corpus" \
  --compare "$(dirname "$0")/../../bench/reference/h3_prior_art_b200.json" >"$work/out.txt" 2>"$work/err.txt"
rc=$?
[ $rc -eq 0 ] || { fail "exit $rc (want 0: host's failure is an unclaimed finding)"; tail -20 "$work/err.txt"; }
grep -E "^split_invariance +pass +finding \([0-9]+\)" "$work/out.txt" || fail "the summary has no split_invariance row (host-repro pass, host finding)"
"$gc" sweep --validate "$work/r.json" || fail "the report does not follow the schema"
python3 - "$work" "$@" <<'PY' || fail "the report's split fields (above)"
import copy, json, sys
work = sys.argv[1]
r = json.load(open(work + "/r.json"))
plain = r["results"]["plain"]
bad = []
def need(c, what):
    if not c: bad.append(what)
good = plain["host-repro@cpu"]
need(good["batch_invariance"]["split_invariant"] is True, "host-repro: split_invariant true")
need(good["gatecheck"]["verdicts"]["split_invariance"] == "pass", "host-repro: verdict pass")
s = good["gatecheck"]["split_invariance"]
need(s["splits"] == 24 and s["splits_failed"] == 0 and s["first_failure"] is None, "host-repro: 24 splits, none failed")
need(s["elements_compared"] > 0 and s["combine"].startswith("its declared exchange"), "host-repro: its exchange")
for name in ["host@cpu"] + [i + "@cpu" for i in sys.argv[2:]]:
    e = plain[name]
    need(e["batch_invariance"]["split_invariant"] is False, name + ": split_invariant false")
    need(e["batch_invariance"]["params_repeatable"] is True, name + ": params_repeatable still true beside it")
    g = e["gatecheck"]
    need(g["verdicts"]["split_invariance"] == "finding", name + ": an unclaimed finding")
    f = g["split_invariance"]["first_failure"]
    need(f and f["split"]["kind"] in ("micro_batches", "strided", "ranks") and f["split"]["parts"] >= 2
         and sum(f["split"]["part_rows"]) == f["rows"], name + ": the split named, its parts covering the batch")
    need(f and f["output"] == "grad_gate" and len(f["element"]) == 2 and f["bits"] != f["full_batch_bits"],
         name + ": the first differing element, its bits unequal")
    need(f and "split into" in f["detail"] and "the first at [" in f["detail"], name + ": the detail")
    need(g["split_invariance"]["combine"].startswith("none declared"), name + ": the framework combine")
    saved = [x for x in g["failures"] if x["check"] == "split_invariance"]
    need(saved and saved[0]["replayed"] and saved[0]["repro"].startswith("./gatecheck repro "),
         name + ": saved with a replay that fails")
fields = [x["field"] for p in r["compare"]["pairs"] for x in p.get("fields", [])]
need(not r["compare"]["pairs"] or "batch_invariance.split_invariant" in fields, "--compare lists split_invariant")
# Copies the schema check must fail: a split_invariant that disagrees with its
# splits, and a failure that does not name its split.
b1 = copy.deepcopy(r); b1["results"]["plain"]["host@cpu"]["batch_invariance"]["split_invariant"] = True
b2 = copy.deepcopy(r); del b2["results"]["plain"]["host@cpu"]["gatecheck"]["split_invariance"]["first_failure"]["split"]
b3 = copy.deepcopy(r); b3["results"]["plain"]["host-repro@cpu"]["batch_invariance"]["split_invariant"] = "yes"
for k, b in enumerate((b1, b2, b3), 1):
    json.dump(b, open("%s/bad-%d.json" % (work, k), "w"))
for x in bad: print("  " + x)
sys.exit(1 if bad else 0)
PY
"$gc" sweep --validate "$work/bad-1.json" "$work/bad-2.json" "$work/bad-3.json" >"$work/bad.txt" 2>&1
[ $? -eq 1 ] || fail "--validate passed copies with a wrong split field"
cat "$work/bad.txt"
grep -q "split_invariant.*splits failed\|split_invariance.invariant" "$work/bad.txt" || fail "bad-1: the disagreeing split_invariant not named"
grep -q "first_failure.split: missing" "$work/bad.txt" || fail "bad-2: the missing split not named"
grep -q "batch_invariance.split_invariant: is string, not boolean" "$work/bad.txt" || fail "bad-3: the wrong type not named"
grep -q "split_invariance (ours): grad_gate over ranks and micro-batches" "$work/r.html" || fail "the page has no split_invariance row"
grep -q "combined by none declared" "$work/r.html" || fail "the page does not say how host's parts were combined"
[ $fails -eq 0 ] && echo OK || exit 1
