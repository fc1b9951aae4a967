#!/usr/bin/env bash
# planted.sh GATECHECK WORK BATCH_DEPENDENT NOT_REPEATABLE SEGMENT_DEPENDENT:
# the sweep on three plugins with one planted flaw each (planted_plugin.c),
# --quick. Each flaw must come out where it belongs, with the exact counts the
# grid gives, and every failed comparison kept must be saved as a corpus case
# that `gatecheck repro` still fails on (exit 1).
set -u
gc=$1 work=$2 batch=$3 repeat=$4 segment=$5
rm -rf "$work" && mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
"$gc" sweep --impl "plugin:$batch" --impl "plugin:$repeat" --impl "plugin:$segment" --quick --keep-failures 1 \
  --json "$work/r.json" --corpus "$work/corpus" >"$work/out.txt" 2>"$work/err.txt"
rc=$?
[ $rc -eq 1 ] || { fail "exit $rc (want 1: claimed properties failed)"; tail -20 "$work/err.txt"; }
"$gc" sweep --validate "$work/r.json" || fail "the report does not follow the seed's schema"
python3 - "$work/r.json" "$batch" "$repeat" "$segment" >"$work/files.txt" 2>"$work/problems.txt" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
plain = r["results"]["plain"]
batch, repeat, segment = (plain["plugin:" + p + "@cpu"] for p in sys.argv[2:5])
bad = []
def need(cond, what):
    if not cond: bad.append(what)
b = batch["batch_invariance"]
need(b["batch_invariant"] is False and batch["gatecheck"]["verdicts"]["batch_invariant"] == "fail",
     "batch-dependent: batch_invariant false, a claimed failure")
# out of every row flips in batches of more than 32 rows: all 64-row batches, none of 17
need(b["all_rows"]["17"] == {"rows": 51, "fwd_differ": 0, "rowgrad_differ": 0}, "all_rows 17: nothing differs")
need(b["all_rows"]["64"] == {"rows": 192, "fwd_differ": 192, "rowgrad_differ": 0}, "all_rows 64: every row's out")
s = b["full_vs_sub_batches"]  # the 256-row batch against its 1- and 7-row sub-batches (not the 64-row ones)
need((s["sub_batches"], s["fwd_differ"], s["rowgrad_differ"]) == (594, 2 * (256 + 37), 0), "full_vs_sub counts")
w = b["batch_size_sweep"]  # sizes 33, 63, 64 in three places, and the whole batch reversed: 10 a probe
need((w["comparisons"], w["differ"]) == (1176, 3 * 8 * 10) and len(w["first_failures"]) == 8, "batch_size_sweep counts")
need(b["params_repeatable"] is True, "batch-dependent: repeatable")
need(repeat["batch_invariance"]["params_repeatable"] is False and
     repeat["gatecheck"]["verdicts"]["params_repeatable"] == "fail", "not-repeatable: params_repeatable false")
need(repeat["batch_invariance"]["all_rows"]["64"]["fwd_differ"] == 0, "not-repeatable: rows invariant")
# grad_gate depends on the batch's mix of gates: the prior art's checks cannot see it, segment_invariance does
need(segment["batch_invariance"]["batch_invariant"] is True, "segment-dependent: the prior art's checks pass")
need(segment["gatecheck"]["verdicts"]["segment_invariance"] == "fail", "segment-dependent: segment_invariance fails")
for name, e, checks in (("batch", batch, ("all_rows", "full_vs_sub_batches", "batch_size_sweep")),
                        ("repeat", repeat, ("params_repeatable",)), ("segment", segment, ("segment_invariance",))):
    for c in checks:
        kept = [f for f in e["gatecheck"]["failures"] if f["check"] == c]
        need(len(kept) == 1, name + ": " + c + ": the first one kept")
        for f in kept:
            need(f["replayed"] and f["case_file"] and f["repro"] and f["element"][1] >= 0, name + ": " + c + " saved")
            print(f["case_file"], "plugin:" + sys.argv[{"batch": 2, "repeat": 3, "segment": 4}[name]])
if bad:
    print("\n".join("  " + x for x in bad), file=sys.stderr); sys.exit(1)
PY
[ $? -eq 0 ] || { fail "the report's content:"; cat "$work/problems.txt"; : >"$work/files.txt"; }
n=0
while read -r file impl; do
  "$gc" repro "$file" --impl "$impl" >"$work/repro.txt" 2>&1
  rc=$?
  [ $rc -eq 1 ] || { fail "repro $file --impl $impl: exit $rc (want 1)"; tail -5 "$work/repro.txt"; }
  n=$((n + 1))
done <"$work/files.txt"
[ $n -eq 5 ] || fail "$n saved cases replayed, not 5 (one a check)"
[ $fails -eq 0 ] && echo "ok: every planted flaw where it belongs, with the grid's counts; $n saved cases replay (repro exit 1)"
[ $fails -eq 0 ] || exit 1
