#!/usr/bin/env bash
# Stage scale: the scale tier on the H200 (docs/scale.md). About 5-6 minutes:
#  A (about 70 s) a default `gatecheck check --device cuda --seconds 60` (cuda and
#    torch-eager), beside two CPU checks of 60 s: host, and the fused-forward
#    plugin (a correct one-rounding forward) with half its budget at scale;
#  B (at most about 130 s) the grid-limit and atomic-order CUDA plugins, five seeds
#    each, and the correct and fused CUDA plugins: twelve default 60 s checks at
#    once, 8 GiB of device memory each; a bug's check stops at its first claimed
#    failure (--stop-on-failure: the cases up to it are a full run's) once shrunk;
#  C (at most about 130 s) the 32-bit-offsets plugin, five seeds at once, 25 GiB
#    each (a case past 2^31 elements of a 16-bit dtype needs 24 GiB);
#  D (about 20 s) scale_stress_probe: how often the atomic-order plugin's
#    grad_gate differs between reruns, unperturbed and under scheduling stress;
#    and the same on cuda, where it must never differ.
# Results in $OUT/scale/: check-*.txt and .json per run, corpus-*/ (the saved
# cases, scale spec files where large), stress-*.json, summary.txt.
# Passes when the default check fails no claimed property and reaches rows past
# 65,536, a segment of 16,384 rows and a case past 2^31 elements; every bug is
# caught on at least 4 of 5 seeds; the correct plugins and CPU checks pass.
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ -f "$here/../stage_common.sh" ]; then
  . "$here/../stage_common.sh"
else
  : "${OUT:?OUT unset}" "${BUILD:?BUILD unset}"
  D="$OUT/scale"
  GC="$BUILD/cli/gatecheck"
  mkdir -p "$D"
  need() { for f in "$@"; do [ -e "$f" ] || { echo "scale: $f was not built"; exit 1; }; done; }
fi
PL="$BUILD/tests/scale"
PROBE="$PL/scale_stress_probe"
FUSED_CPU="$BUILD/properties/mutants/gatecheck_mutant_fused_forward.so"
need "$GC" "$PROBE"
for b in correct fused grid_limit atomic_order offsets32; do need "$PL/gc_scale_cuda_$b.so"; done
[ -e "$FUSED_CPU" ] || { echo "scale: $FUSED_CPU was not built"; exit 1; }
nvidia-smi -L >/dev/null 2>&1 || { echo "scale: no GPU"; exit 77; }

# check NAME ARGS...: one gatecheck check, its report in check-NAME.txt and JSON in check-NAME.json
check() {
  local name=$1
  shift
  "$GC" check --corpus "$D/corpus-$name" --json "$D/check-$name.json" "$@" >"$D/check-$name.txt" 2>&1
  echo "$name exit $?" >>"$D/exits.txt"
}
: >"$D/exits.txt"

echo "A: default check on cuda (60 s), host and the fused-forward plugin on the CPU $(date -u +%T)"
check cuda-default --device cuda --seconds 60 --seed 1 &
check host-default --impl host --seconds 60 --seed 1 &
check cpu-fused --impl "plugin:$FUSED_CPU" --seconds 60 --seed 1 --scale-share 0.5 &
wait

echo "B: grid-limit and atomic-order plugins, 5 seeds each; correct and fused plugins $(date -u +%T)"
for bug in grid_limit atomic_order; do
  for seed in 1 2 3 4 5; do
    check "$bug-$seed" --impl "plugin:$PL/gc_scale_cuda_$bug.so" --device cuda --seconds 60 --seed "$seed" \
      --stop-on-failure --scale-memory-gib 8 &
  done
done
for ok in correct fused; do
  check "cuda-$ok" --impl "plugin:$PL/gc_scale_cuda_$ok.so" --device cuda --seconds 60 --seed 1 --scale-memory-gib 8 &
done
wait

echo "C: 32-bit offsets plugin, 5 seeds $(date -u +%T)"
for seed in 1 2 3 4 5; do
  check "offsets32-$seed" --impl "plugin:$PL/gc_scale_cuda_offsets32.so" --device cuda --seconds 60 --seed "$seed" \
    --stop-on-failure --scale-memory-gib 25 &
done
wait

echo "D: scheduling stress on float atomics $(date -u +%T)"
"$PROBE" --impl "plugin:$PL/gc_scale_cuda_atomic_order.so" --device cuda --rows 131072 --dim 256 --segment 65536 \
  --trials 40 --json "$D/stress-atomic-order.json" >"$D/stress-atomic-order.txt" 2>&1
"$PROBE" --impl "plugin:$PL/gc_scale_cuda_atomic_order.so" --device cuda --rows 16384 --dim 64 --segment 4097 \
  --trials 40 --json "$D/stress-atomic-order-small.json" >"$D/stress-atomic-order-small.txt" 2>&1
"$PROBE" --impl cuda --device cuda --rows 131072 --dim 256 --segment 65536 --trials 10 \
  --json "$D/stress-cuda.json" >"$D/stress-cuda.txt" 2>&1

python3 - "$D" <<'EOF' | tee "$D/summary.txt"
import glob, json, os, sys
d = sys.argv[1]
ok = True
def load(name):
    try:
        return json.load(open(os.path.join(d, f"check-{name}.json")))
    except Exception as e:
        return {"error": str(e)}
def claimed(r):
    return [x for x in r.get("results", []) if x.get("failure") and x["failure"].get("claimed")]
print("check                 claimed  scale cases  largest rows  segment     elements       past 2^31")
for name in ["cuda-default", "host-default", "cpu-fused", "cuda-correct", "cuda-fused"]:
    r = load(name)
    s = r.get("coverage", {}).get("scale", {})
    past = s.get("past", {}).get("elements > 2^31 - 1", 0)
    print(f"{name:20s}  {len(claimed(r)):7d}  {s.get('cases', 0):11d}  {s.get('max_rows', 0):12,d}  {s.get('max_segment', 0):7,d}  "
          f"{s.get('max_elements', 0):13,d}  {past:9d}" + (f"  ({r['error']})" if 'error' in r else ""))
    ok = ok and 'error' not in r and not claimed(r)
s = load("cuda-default").get("coverage", {}).get("scale", {})
targets = [("rows past 65,536", s.get("max_rows", 0) > 65536), ("a segment of 16,384 rows", s.get("max_segment", 0) >= 16384),
           ("a case past 2^31 elements", s.get("past", {}).get("elements > 2^31 - 1", 0) >= 1)]
for what, met in targets:
    print(f"default cuda check reaches {what}: {'yes' if met else 'NO'}")
    ok = ok and met
print()
print("planted bug     seed  caught by            after s  shrunk to (rows x dim x gates)  scale file")
for bug in ["grid_limit", "atomic_order", "offsets32"]:
    caught = 0
    for seed in range(1, 6):
        r = load(f"{bug}-{seed}")
        c = claimed(r)
        if c:
            caught += 1
            f = c[0]["failure"]
            print(f"{bug:14s}  {seed:4d}  {c[0]['property']:19s}  {f['seconds_to_find']:7.2f}  "
                  f"{f['rows']:>10,} x {f['dim']} x {f['gates']} {f['dtype']:4s}          {'yes' if f.get('scale') else 'no'}")
        else:
            print(f"{bug:14s}  {seed:4d}  NOT CAUGHT" + (f" ({r['error']})" if 'error' in r else ""))
    print(f"{bug}: caught on {caught} of 5 seeds")
    ok = ok and caught >= 4
print()
for name in ["stress-atomic-order", "stress-atomic-order-small", "stress-cuda"]:
    try:
        p = json.load(open(os.path.join(d, f"{name}.json")))
        print(f"{name}: {p['impl']} {p['dtype']} {p['rows']} x {p['dim']}, segment {p['segment']}: grad_gate differed in "
              f"{p['differ_unperturbed']} of {p['trials']} unperturbed reruns, {p['differ_stressed']} of {p['trials']} under stress")
        if name == "stress-cuda":
            ok = ok and p["differ_unperturbed"] == 0 and p["differ_stressed"] == 0
    except Exception as e:
        print(f"{name}: no result ({e})")
        ok = False
print("scale: " + ("PASS" if ok else "FAIL") + ": default cuda check, 3 planted bugs x 5 seeds, correct plugins, stress probe")
sys.exit(0 if ok else 1)
EOF
