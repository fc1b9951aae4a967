#!/usr/bin/env bash
# quick_cpu.sh GATECHECK WORK SEED_REPORT IMPL...: `gatecheck sweep --quick`
# on the CPU implementations, compared with the seed report: exit 0, a report
# that follows the seed's schema with --quick's counts, gatecheck's block
# beside the seed's fields, and a self-contained HTML page. Prints its time.
set -u
gc=$1 work=$2 seed=$3
shift 3
rm -rf "$work" && mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
args=()
for i in "$@"; do args+=(--impl "$i"); done
start=$(date +%s%N)
# As in an exported tree (git archive, a tarball, a container image), where a
# nightly job runs: git finds no repository, so the commit and the dirty flag
# are null, and the page must still be written.
GIT_DIR="$work/no-git" "$gc" sweep "${args[@]}" --quick --json "$work/r.json" --html "$work/r.html" --corpus "$work/corpus" \
  --compare "$seed" >"$work/out.txt" 2>"$work/err.txt"
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
echo "sweep --quick of $*: $((ms / 1000)).$((ms % 1000 / 100)) s (exit $rc)"
[ $rc -eq 0 ] || { fail "exit $rc (want 0)"; tail -20 "$work/err.txt"; }
"$gc" sweep --validate "$work/r.json" || fail "the report does not follow the seed's schema"
python3 - "$work/r.json" "$@" <<'PY' || fail "the report's content (above)"
import json, sys
r = json.load(open(sys.argv[1]))
impls = sys.argv[2:]
bad = []
def need(cond, what):
    if not cond: bad.append(what)
need(r["kind"] == "gatecheck_sweep" and r["quick"] is True and r["quick_scaling"], "kind, quick, quick_scaling")
need(r["grid"]["dim"] == 336 and r["grid"]["accuracy_rows"] == [257, 2048], "the quick grid")
for key in ("gpu", "driver", "cuda", "torch", "cpu"):
    need(key in r["environment"], "environment." + key)
need("commit" in r and "timing" in r and "wall_us" in r["timing"], "commit, timing words")
need(r["commit"] is None and r["tracked_tree_dirty"] is None, "no git: commit and tracked_tree_dirty null")
plain = r["results"]["plain"]
for i in impls:
    e = plain.get(i + "@cpu")
    if e is None:
        bad.append("no results for " + i); continue
    g = e["gatecheck"]
    for k in ("segment_invariance", "accuracy", "latency", "seeds", "verdicts", "failures", "contract"):
        need(k in g, i + ": gatecheck." + k)
    need(set(g["verdicts"]) >= {"batch_invariant", "params_repeatable", "segment_invariance", "split_invariance",
                                "accuracy", "eager_exact"},
         i + ": verdicts")
    need(all(v in ("pass", "fail", "finding") for v in g["verdicts"].values()), i + ": verdict words")
    for n in ("257", "2048"):
        a = g["accuracy"][n]["outputs"]
        need(all(a[o]["max_ulps"] is not None for o in a), i + ": max_ulps at " + n)
        lat = g["latency"][n]["fwd_bwd"]
        need(lat["wall_us"] > 0 and lat["copy_wall_us"] > 0 and lat["gpu_us"] is None and lat["event_us"] is None,
             i + ": CPU timing is wall-clock only at " + n)
        need(e["accuracy_latency"][n]["fwd_bwd_us"] == lat["wall_us"], i + ": the seed's fwd_bwd_us is the wall clock")
    need(g["segment_invariance"]["cases"] == 6 and g["segment_invariance"]["gate_segments_compared"] > 0,
         i + ": segment_invariance ran 6 cases")
if "host" in impls:
    # everything but split_invariance, which host does not claim (its parts summed the framework way)
    v = dict(plain["host@cpu"]["gatecheck"]["verdicts"])
    need(v.pop("split_invariance") == "finding", "host's split_invariance is a finding")
    need(set(v.values()) == {"pass"}, "host passes everything else")
if "torch-eager" in impls:
    t = plain["torch-eager@cpu"]["gatecheck"]
    # bf16 grad_gate accumulates in the dtype: unclaimed, so a finding, saved and replayed
    need(t["verdicts"]["accuracy"] == "finding", "torch-eager@cpu accuracy is a finding")
    f = [x for x in t["failures"] if x["check"] == "accuracy"]
    need(f and f[0]["replayed"] and f[0]["case_file"] and f[0]["repro"].startswith("./gatecheck repro "),
         "torch-eager's accuracy finding saved with a replay")
    c = r["compare"]
    pair = [p for p in c["pairs"] if p["ours"] == "torch-eager@cpu"]
    need(pair and pair[0]["theirs"] == "diffusers", "torch-eager paired with the seed's diffusers row")
    # On the CPU eager's grad_gate is repeatable; on the B200 it was not: a verdict that differs, marked
    diff = [f["field"] for f in pair[0]["fields"] if f.get("differs")] if pair else []
    need("batch_invariance.params_repeatable" in diff, "params_repeatable marked as differing from the seed")
if bad:
    print("\n".join("  " + b for b in bad)); sys.exit(1)
print("ok: the report's fields, verdict words, CPU timing and comparison")
PY
html=$work/r.html
[ -s "$html" ] || fail "no HTML page"
grep -q "<svg" "$html" || fail "the page has no chart"
grep -q "(tracked files: unknown)" "$html" || fail "the page does not say the tree's state is unknown"
if grep -Eiq "https?:|src=|href=|<link|<script|@import" "$html"; then
  fail "the page is not self-contained:"; grep -Eion "https?:|src=|href=|<link|<script|@import" "$html" | head -3
fi
for i in "$@"; do grep -q "<th>$i@cpu" "$html" || fail "the page has no column for $i@cpu"; done
[ $fails -eq 0 ] && echo "ok: quick sweep, schema, content and a self-contained page"
[ $fails -eq 0 ] || exit 1
