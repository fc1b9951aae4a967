#!/usr/bin/env bash
# rmsnorm_quick.sh GATECHECK WORK OPERATOR_REPORT IMPL...: `gatecheck sweep
# --op rmsnorm_modulate --quick` on the CPU implementations (one timed run a
# call), compared with RL-Kernel's rmsnorm operator report: exit 0, a report
# that follows its schema with --quick's counts and holds the operator
# report's fields for each output, our fields beside theirs, and a page. A
# copy with one of those fields taken out must fail the schema check.
# plain_bitwise_vs_nn_rmsnorm is a verdict with each size's counts where this
# build's LibTorch has rms_norm (GC_HAS_RMS_NORM=1), else null with the
# reason; a copy whose verdict disagrees with its counts must fail the check.
set -u
gc=$1 work=$2 theirs=$3
shift 3
rm -rf "$work" && mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
args=()
for i in "$@"; do args+=(--impl "$i"); done
"$gc" sweep --op rmsnorm_modulate "${args[@]}" --quick --reps 1 --keep-failures 3 --timeout 120 --json "$work/r.json" \
  --html "$work/r.html" --corpus "$work/corpus" --compare "$theirs" >"$work/out.txt" 2>"$work/err.txt"
rc=$?
[ $rc -eq 0 ] || { fail "exit $rc (want 0)"; tail -20 "$work/err.txt"; }
"$gc" sweep --validate "$work/r.json" || fail "the report does not follow its schema"
grep -q "^plain_bitwise_vs_nn_rmsnorm " "$work/out.txt" "$work/err.txt" || fail "the summary has no plain_bitwise_vs_nn_rmsnorm row"
python3 - "$work/r.json" "$work/broken.json" "$work/broken_plain.json" "${GC_HAS_RMS_NORM:-0}" "$@" <<'PY' ||
import json, sys
r = json.load(open(sys.argv[1]))
has_rms_norm = sys.argv[4] == "1"
impls = sys.argv[5:]
bad = []
def need(cond, what):
    if not cond: bad.append(what)
outs = {"out", "dx", "dweight", "dshift", "dscale"}
need(r["op"] == "rmsnorm_modulate" and r["quick"] is True, "op, quick")
# the report's command is the one that made it, every option that shapes it
need(r["command"].startswith("gatecheck sweep --op rmsnorm_modulate --impl ") and
     " --quick --reps 1 --keep-failures 3 --timeout 120 --corpus %s/corpus --json %s --html " % (
         sys.argv[1].rsplit("/", 1)[0], sys.argv[1]) in r["command"], "the command as run: " + r["command"])
need(r["grid"]["accuracy_rows"] == [257, 2048, 8192] and r["grid"]["reps"] == 1, "the quick grid at the op's sizes")
need("eps 1e-06" in r["grid"]["data"] and "scale N(0,1) x 0.1" in r["grid"]["data"], "the data's words")
plain = r["results"]["plain"]
for i in impls:
    e = plain.get(i + "@cpu")
    if e is None:
        bad.append("no results for " + i); continue
    op = e["operator_report"]
    need(isinstance(op["rows_batch_invariant"], bool) and isinstance(op["repeat_bitwise_equal"], bool), i + ": verdicts")
    need(set(op["rel_error"]) == outs and all(v > 0 for v in op["rel_error"].values()), i + ": rel_error of each output")
    need([p["rows"] for p in op["perf"]] == [257, 2048, 8192], i + ": perf at each size")
    need(all(p["fwd_us"] > 0 and p["backward_us"] > 0 and p["fwd_gbps"] > 0 for p in op["perf"]), i + ": latencies")
    for n in ("257", "2048", "8192"):
        need(set(e["accuracy_latency"][n]["grad_rel_err"]) == {"x", "w", "shift", "scale"}, i + ": grad_rel_err keys")
        need(set(e["gatecheck"]["accuracy"][n]["outputs"]) == outs, i + ": our accuracy of each output at " + n)
        need(e["gatecheck"]["latency"][n]["bwd"]["wall_us"] > 0, i + ": the backward alone timed at " + n)
    need(e["gatecheck"]["segment_invariance"]["gate_segments_compared"] > 0, i + ": segment_invariance compared")
    # the plain part against nn.RMSNorm's at::rms_norm, or why not
    pf, note, sizes = op.get("plain_bitwise_vs_nn_rmsnorm", "absent"), op.get("plain_bitwise_vs_nn_rmsnorm_note", ""), \
        op.get("plain_bitwise_vs_nn_rmsnorm_by_size", [])
    need([s["rows"] for s in sizes] == [257, 2048, 8192], i + ": the plain part at each size")
    if has_rms_norm:
        need(isinstance(pf, bool) and "at::rms_norm" in note, i + ": plain_bitwise_vs_nn_rmsnorm computed: " + repr(pf))
        need(all(s["elements"] == s["rows"] * 5376 and 0 <= s["differ"] <= s["elements"] for s in sizes),
             i + ": the plain part's counts")
        need(pf == all(s["differ"] == 0 for s in sizes), i + ": the plain verdict is its counts' AND")
    else:
        need(pf is None and ("has no rms_norm" in note or "without LibTorch" in note),
             i + ": plain_bitwise_vs_nn_rmsnorm null with the reason: " + repr(pf) + " " + note)
        need(all(s["differ"] is None and s["note"] == note for s in sizes), i + ": no counts without a reference")
if "host" in impls:
    h = plain["host@cpu"]
    # host reduces in CUDA's order; the eager model pins LibTorch's CPU order (unclaimed)
    need({k for k, w in h["gatecheck"]["verdicts"].items() if w != "pass"} <= {"eager_exact", "split_invariance"},
         "host passes its claims")
# No implementation of rmsnorm_modulate declares an exchange: the parts' dweight,
# dshift and dscale summed the framework way differ from the full batch's, as
# split_invariance finds them (unclaimed), named with their split.
for i in impls:
    e = plain[i + "@cpu"]
    need(e["batch_invariance"]["split_invariant"] is False, i + ": split_invariant false")
    need(e["gatecheck"]["verdicts"]["split_invariance"] == "finding", i + ": split_invariance a finding")
    f = e["gatecheck"]["split_invariance"]["first_failure"]
    need(f and f["output"] in ("dweight", "dshift", "dscale") and f["split"]["parts"] >= 2, i + ": the split named")
    need(h["operator_report"]["rows_batch_invariant"] and h["operator_report"]["repeat_bitwise_equal"], "host invariant")
if "torch-eager" in impls:
    t = plain["torch-eager@cpu"]
    need(t["operator_report"]["bitwise_vs_eager_model"] == {"out": True}, "torch-eager's out is the eager model's")
    # eager sums dshift and dscale in the dtype: 20 times further from float64 (the prior art's finding)
    rel = t["operator_report"]["rel_error"]
    need(rel["dshift"] > 0.01 and rel["dscale"] > 0.01, "eager's dshift and dscale far from float64")
    need(t["gatecheck"]["verdicts"]["accuracy"] == "finding", "eager's accuracy is a finding")
    c = r["compare"]
    need(c["their_kind"] == "h3_operator_report", "compared with an operator report")
    pair = [p for p in c["pairs"] if p["ours"] == "torch-eager@cpu"]
    need(pair and pair[0]["theirs"] == "provider", "torch-eager paired with the provider")
    fields = {f["field"]: f for f in pair[0]["fields"]} if pair else {}
    for o in ("dx", "dweight", "dshift", "dscale"):
        f = fields.get("rel_error." + o, {})
        need(isinstance(f.get("ours"), float) and isinstance(f.get("theirs"), float), "rel_error." + o + " beside theirs")
    need("perf.S=4097 (ours: S=257).backward_us" in fields, "perf by size beside theirs")
    need(fields.get("accuracy.backward.provider.repeat_bitwise_equal", {}).get("theirs") is False, "their eager repeat")
# the schema check must name a field taken out
b = json.loads(json.dumps(r))
del b["results"]["plain"][impls[0] + "@cpu"]["operator_report"]["rel_error"]["dx"]
json.dump(b, open(sys.argv[2], "w"))
# ... and a plain verdict its counts do not give
b = json.loads(json.dumps(r))
o = b["results"]["plain"][impls[0] + "@cpu"]["operator_report"]
o["plain_bitwise_vs_nn_rmsnorm"] = o["plain_bitwise_vs_nn_rmsnorm"] is not True
json.dump(b, open(sys.argv[3], "w"))
if bad:
    print("\n".join("  " + x for x in bad)); sys.exit(1)
print("ok: the operator report's fields, ours and theirs")
PY
  fail "the report's content (above)"
"$gc" sweep --validate "$work/broken.json" >"$work/broken.txt" 2>&1
[ $? -eq 1 ] && grep -q "operator_report.rel_error.dx: missing" "$work/broken.txt" ||
  { fail "a report without rel_error.dx passes the schema check"; cat "$work/broken.txt"; }
"$gc" sweep --validate "$work/broken_plain.json" >"$work/broken_plain.txt" 2>&1
[ $? -eq 1 ] && grep -q "operator_report.plain_bitwise_vs_nn_rmsnorm: is .*, but its sizes' counts give" "$work/broken_plain.txt" ||
  { fail "a plain verdict its counts do not give passes the schema check"; cat "$work/broken_plain.txt"; }
html=$work/r.html
grep -q "<h1>gatecheck sweep: rmsnorm_modulate</h1>" "$html" || fail "the page does not name the op"
grep -q "rel_error.dscale" "$html" || fail "the page has no rel_error rows"
for i in "$@"; do grep -q "<th>$i@cpu" "$html" || fail "the page has no column for $i@cpu"; done
[ $fails -eq 0 ] && echo "ok: rmsnorm_modulate's quick sweep, its schema, the comparison and the page"
[ $fails -eq 0 ] || exit 1
