#!/usr/bin/env bash
# rmsnorm_mutants.sh GATECHECK WORK TWIN BATCH_SPLIT TILE_INDEX DTYPE_STATISTICS:
# `gatecheck sweep --op rmsnorm_modulate --quick` on rmsnorm's mutant plugins
# (properties/mutants/) and their correct twin. Each planted bug must come out
# in the field it breaks, with the twin clean; each kept failure is saved as a
# case that `gatecheck repro` still fails on (exit 1).
set -u
gc=$1 work=$2 twin=$3 split=$4 tile=$5 dstat=$6
rm -rf "$work" && mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
"$gc" sweep --op rmsnorm_modulate --impl "plugin:$twin" --impl "plugin:$split" --impl "plugin:$tile" \
  --impl "plugin:$dstat" --quick --reps 0 --keep-failures 1 --json "$work/r.json" --corpus "$work/corpus" \
  >"$work/out.txt" 2>"$work/err.txt"
rc=$?
[ $rc -eq 1 ] || { fail "exit $rc (want 1: claimed properties failed)"; tail -20 "$work/err.txt"; }
"$gc" sweep --validate "$work/r.json" || fail "the report does not follow its schema"
python3 - "$work/r.json" "$twin" "$split" "$tile" "$dstat" >"$work/files.txt" 2>"$work/problems.txt" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
plain = r["results"]["plain"]
twin, split, tile, dstat = (plain["plugin:" + p + "@cpu"] for p in sys.argv[2:6])
bad = []
def need(cond, what):
    if not cond: bad.append(what)
v = lambda e: e["gatecheck"]["verdicts"]
op = lambda e: e["operator_report"]
# (eager_exact is unclaimed: the twin reduces in CUDA's order, the eager model in LibTorch's CPU one)
# (nor split_invariance: the twin declares no exchange)
need({k for k, w in v(twin).items() if w != "pass"} <= {"eager_exact", "split_invariance"},
     "the twin passes every claim: %s" % v(twin))
need(op(twin)["rows_batch_invariant"] and op(twin)["repeat_bitwise_equal"], "the twin: rows invariant, repeatable")
# a row reduction split by a factor of the batch's rows: rows differ between batches
need(op(split)["rows_batch_invariant"] is False and v(split)["batch_invariant"] == "fail", "batch split: rows vary")
need(op(split)["repeat_bitwise_equal"] is True, "batch split: still repeatable")
# the last row of each 4-row tile modulated by the next table row: wrong, and it depends on the row's place
need(v(tile)["accuracy"] == "fail" and op(tile)["rows_batch_invariant"] is False, "tile index: inaccurate, rows vary")
need(op(tile)["rel_error"]["out"] > 10 * op(twin)["rel_error"]["out"], "tile index: out's error above the twin's")
# statistics in the dtype: out of the oracle's bounds, and further from float64 than the twin
need(v(dstat)["accuracy"] == "fail", "dtype statistics: accuracy fails")
need(op(dstat)["rel_error"]["out"] > 2 * op(twin)["rel_error"]["out"], "dtype statistics: out's error above the twin's")
for name, e, check, i in (("split", split, "all_rows", 3), ("tile", tile, "accuracy", 4),
                          ("dstat", dstat, "accuracy", 5)):
    kept = [f for f in e["gatecheck"]["failures"] if f["check"] == check]
    need(len(kept) == 1, name + ": " + check + ": the first one kept")
    for f in kept:
        need(f["replayed"] and f["case_file"] and f["repro"], name + ": " + check + " saved and replayed")
        print(f["case_file"], "plugin:" + sys.argv[i])
if bad:
    print("\n".join("  " + x for x in bad), file=sys.stderr); sys.exit(1)
PY
[ $? -eq 0 ] || { fail "the report's content:"; cat "$work/problems.txt"; }
n=0
while read -r file impl; do
  "$gc" repro "$file" --impl "$impl" >"$work/repro.txt" 2>&1
  rc=$?
  [ $rc -eq 1 ] || { fail "repro $file --impl $impl: exit $rc (want 1)"; tail -5 "$work/repro.txt"; }
  n=$((n + 1))
done <"$work/files.txt"
[ $n -eq 3 ] || fail "$n saved cases replayed, not 3"
[ $fails -eq 0 ] && echo "ok: each planted rmsnorm bug in the field it breaks, the twin clean; $n saved cases replay"
[ $fails -eq 0 ] || exit 1
