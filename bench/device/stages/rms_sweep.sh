# rms_sweep: `gatecheck sweep --op rmsnorm_modulate` on the GPU, the full grid (batch
# invariance as the prior art checks it; accuracy and latency at RL-Kernel's sizes, 4097, 32768
# and 131072 rows x 5376, bf16, 9 gates), for cuda, the LibTorch op as users call it
# (rmsnorm_modulate_gatecheck_op), torch eager (torch-eager: LibTorch from C++) and
# torch.compile (rmsnorm_modulate_compiled), compared field by field with RL-Kernel's B200 report
# (bench/reference/h3_rmsnorm_b200.json), then checked against the schema (--validate).
# It builds its own targets (gatecheck, which brings the Python package and the torch op).
# Files: rms-sweep.json, rms-sweep.html, rms-sweep.log (progress, summary, comparison),
# cmd.txt (the command as run), validate.txt, problems.txt (what failed the stage), build.log,
# corpus/ (replays of failed comparisons).
# Settings:
#   RMS_SWEEP_SECONDS  the sweep's cap (default 480): past it the sweep stops as on Ctrl-C and
#                      writes what it has, marked interrupted (the stage then fails)
#   RMS_SWEEP_ARGS     replaces the grid options (default "--reps 50 --keep-failures 2": latency
#                      medians of 50 runs, not the prior art's 100, and 2 replays kept per check,
#                      to stay in time); "--quick" gives the prior art's quick grid
#   RMS_SWEEP_IMPLS    replaces the four implementations (space-separated specs)
#   RMS_SWEEP_DEVICE   cuda (default)
# --timeout 300: the longest stretches without progress are the float64 oracle at 131072 x 5376
# (the case, the reference on the machine's threads and the eager model: 60 s on the H200's
# host) and torch.compile's first compilations, up to four in one phase (inference and training
# graphs, dynamic and rows = 1); 300 s lets both through and still names a hung phase (exit 3)
# inside the stage's limit.
# Time on the H200 (bench/results/README.md, rms_sweep): on a cold machine the sweep needs more
# than 440 s (about 85 s before its first phase, then torch.compile's cold compilation at 131072
# rows). So run it twice with BUILD_TARGETS=gatecheck (bench/README.md), back to back: first
# with RMS_SWEEP_ARGS=--quick (83 s with the build), which shows the four run on the GPU and
# warms Inductor's cache; then the full grid took 419 s under the default cap of 480 s.
. "$(dirname "$0")/../stage_common.sh"
t0=$(date +%s)
P=python:gatecheck.peers_rmsnorm_modulate
impls=${RMS_SWEEP_IMPLS:-cuda $P:rmsnorm_modulate_gatecheck_op torch-eager $P:rmsnorm_modulate_compiled}
grid=${RMS_SWEEP_ARGS:---reps 50 --keep-failures 2}
device=${RMS_SWEEP_DEVICE:-cuda}
cmake --build "$BUILD" -j "$JOBS" --target gatecheck > "$D/build.log" 2>&1 ||
  { tail -20 "$D/build.log"; echo "rms_sweep: the build of gatecheck failed ($D/build.log)"; exit 1; }
need "$GC"
reference=bench/reference/h3_rmsnorm_b200.json
args=(sweep --op rmsnorm_modulate)
for i in $impls; do args+=(--impl "$i"); done
# shellcheck disable=SC2206  # the grid options are words
args+=(--device "$device" $grid --skip-unavailable --timeout 300 --json "$D/rms-sweep.json" --html "$D/rms-sweep.html"
       --corpus "$D/corpus" --compare "$reference")
echo "gatecheck ${args[*]}" > "$D/cmd.txt"
s0=$(date +%s)
env -u PYTHONPATH timeout -k 30 -s TERM "${RMS_SWEEP_SECONDS:-480}" "$GC" "${args[@]}" > "$D/rms-sweep.log" 2>&1
rc=$?
sweep_s=$(( $(date +%s) - s0 ))
grep -E "unavailable here|no progress|schema|^wrote" "$D/rms-sweep.log" | cut -c1-240
[ -f "$D/rms-sweep.json" ] || { tail -30 "$D/rms-sweep.log"; echo "rms_sweep: no report (exit $rc)"; exit 1; }
"$GC" sweep --validate "$D/rms-sweep.json" > "$D/validate.txt" 2>&1
vrc=$?
head -5 "$D/validate.txt"
# Each implementation in a few lines (the whole table and the comparison: rms-sweep.log), and
# what keeps the stage from passing (problems.txt): a claimed property that failed, an
# implementation that did not run, a run cut short.
python3 - "$D/rms-sweep.json" "$D/problems.txt" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
bad = []
num = lambda x: "-" if x is None else "%.1f" % x
for k, e in r["results"]["plain"].items():
    if "unavailable" in e:
        bad.append(k + " unavailable: " + e["unavailable"])
        continue
    g, o = e["gatecheck"], e["operator_report"]
    print(k + (": stopped by an error: " + g["error"] if g.get("error") else ""))
    print("  verdicts: " + ", ".join("%s %s" % cw for cw in g["verdicts"].items()))
    bad += ["%s: %s failed a claimed property" % (k, c) for c, w in g["verdicts"].items() if w == "fail"]
    print("  rows_batch_invariant %s, repeat_bitwise_equal %s, plain_bitwise_vs_nn_rmsnorm %s, bitwise vs eager %s"
          % (o["rows_batch_invariant"], o["repeat_bitwise_equal"], o.get("plain_bitwise_vs_nn_rmsnorm"),
             o["bitwise_vs_eager_model"]))
    print("  rel_error at %s rows: %s" % (o["rel_error_rows"], ", ".join("%s %.3g" % kv for kv in o["rel_error"].items())))
    for p in o["perf"]:
        print("  %s: fwd %s us, backward %s us" % (p["case"], num(p["fwd_us"]), num(p.get("backward_us"))))
c = r.get("compare") or {}
print("against RL-Kernel's %s report: %s verdict(s) differ; unpaired: ours %s, theirs %s"
      % ((c.get("their_environment") or {}).get("gpu"), c.get("verdicts_differ"), c.get("ours_unpaired"),
         c.get("theirs_unpaired")))
ran = [e for e in r["results"]["plain"].values() if "unavailable" not in e]
if ran and (r.get("interrupted") or not r.get("complete")):
    bad.append("the sweep did not finish (%.0f s, interrupted or incomplete): raise RMS_SWEEP_SECONDS, or "
               "RMS_SWEEP_ARGS=--quick" % r.get("seconds", 0))
open(sys.argv[2], "w").write("".join(b + "\n" for b in bad))
PY
[ -s "$D/problems.txt" ] && sed 's/^/rms_sweep: /' "$D/problems.txt" | cut -c1-300
status=ok
[ $rc -eq 0 ] && [ $vrc -eq 0 ] && [ ! -s "$D/problems.txt" ] || status=FAILED
first=$(head -1 "$D/problems.txt" | cut -c1-120)
echo "rms_sweep: $status${first:+ ($first)}; sweep exit $rc in ${sweep_s}s, validate exit $vrc; stage wall $(( $(date +%s) - t0 ))s"
[ $status = ok ]
