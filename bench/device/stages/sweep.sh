#!/usr/bin/env bash
# Device stage "sweep": gatecheck sweep of the seed report's systems and ours
# on the GPU, in one run, compared with the seed's B200 report
# (bench/reference/h3_prior_art_b200.json). Run from the repository root with
# BUILD (a configured and built build dir) and OUT (the results folder) set;
# writes $OUT/sweep/:
#   h200-sweep.json   the report (the seed's schema, gatecheck's additions, the comparison)
#   h200-sweep.html   the same as one self-contained page
#   sweep.log         the sweep's progress and summary
#   corpus/           a replayable case for each failed comparison kept
# Implementations: cuda; torch-eager (LibTorch through the plugin ABI: the
# seed's "diffusers" row); and where this build has the Python door
# (python: implementations), the peers gatecheck_op (the project's LibTorch op
# as users call it), diffusers_eager (torch eager from Python) and compiled
# (torch.compile). Where there is no Python door they are listed as
# unavailable, with the reason, and the sweep goes on.
# SWEEP_IMPLS overrides the list (space-separated specs); SWEEP_SECONDS caps
# the run (default 330: the sweep then stops as on Ctrl-C and writes what it
# has, marked "interrupted"; the phases run for every implementation in turn,
# so rerun without python:gatecheck.peers:compiled if its compilations take that long);
# GATECHECK_COMMIT records the commit where the copy has no .git.
# Expected on the H200 (16 cores): about 2 minutes for cuda and torch-eager,
# 3-4 minutes with the three Python peers (torch.compile's compilations
# included, which vary).
set -uo pipefail
: "${BUILD:?set BUILD to a built build directory}" "${OUT:?set OUT to the results folder}"
out=$OUT/sweep
mkdir -p "$out"
gc=$BUILD/cli/gatecheck
if [ ! -x "$gc" ]; then
  echo "sweep stage: $gc is not built"
  exit 2
fi
impls=${SWEEP_IMPLS:-cuda torch-eager python:gatecheck.peers:gatecheck_op python:gatecheck.peers:diffusers_eager python:gatecheck.peers:compiled}
args=()
for i in $impls; do args+=(--impl "$i"); done
start=$(date +%s)
timeout -k 30 -s TERM "${SWEEP_SECONDS:-330}" "$gc" sweep "${args[@]}" --device cuda --skip-unavailable \
  --json "$out/h200-sweep.json" --html "$out/h200-sweep.html" --corpus "$out/corpus" \
  --compare bench/reference/h3_prior_art_b200.json >"$out/sweep.log" 2>&1
rc=$?
echo "sweep stage: gatecheck sweep exited $rc after $(($(date +%s) - start)) s; log: $out/sweep.log"
[ -f "$out/h200-sweep.json" ] || { tail -30 "$out/sweep.log"; exit 1; }
"$gc" sweep --validate "$out/h200-sweep.json"
python3 - "$out/h200-sweep.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
env = r["environment"]
print("sweep stage: %s, driver %s, CUDA %s, %.0f s%s" % (env.get("gpu"), env.get("driver"), env.get("cuda"),
      r["seconds"], ", INTERRUPTED" if r["interrupted"] else ""))
for name, e in r["results"]["plain"].items():
    if "unavailable" in e:
        print("  %-44s unavailable: %s" % (name, e["unavailable"]))
        continue
    v = e["gatecheck"]["verdicts"]
    al = e["accuracy_latency"]
    line = "  %-44s batch_invariant %s, params_repeatable %s, segments %s, accuracy %s" % (
        name, v["batch_invariant"], v["params_repeatable"], v["segment_invariance"], v["accuracy"])
    for n in sorted(al, key=int):
        line += "; %s rows: gate err %.4g, fwd+bwd %s us" % (n, al[n]["grad_rel_err"]["gate"] or 0,
                                                             "%.0f" % al[n]["fwd_bwd_us"] if al[n]["fwd_bwd_us"] else "-")
    print(line)
c = r.get("compare")
if c:
    print("  against the seed's %s report: %d verdict(s) differ" % (c["their_environment"].get("gpu"), c["verdicts_differ"]))
PY
exit $rc
