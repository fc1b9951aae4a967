#!/usr/bin/env bash
# python: the Python door on the GPU (docs/python.md).
#  1. `gatecheck check` on every peer of gatecheck.peers on CUDA, PEER_SECONDS
#     (60) each, the four at once (one process each, sharing the GPU and the
#     16 cores), seed 1, the default properties plus eager_exact, which no
#     peer claims (where torch.compile fuses the forward's two roundings into
#     one, it shows there as a finding). Beside them, a fifth process gives
#     compiled's eager_exact a PEER_SECONDS budget of its own: in the full
#     check, compiling each new shape leaves that last property a case or
#     two. Files: check-NAME.{txt,json,cmd,rc} (NAME: the peer, or
#     compiled-eager_exact) and peers-check.json (all five with their
#     commands and exit codes).
#  2. Cases/s per property of Python implementations against the same
#     kernels through the C ABI, in one `gatecheck bench --harness` run on
#     CUDA: cuda vs python:bench/python_door_kernels.py:kernels (the
#     project's CUDA kernels through torch.ops, their own backward: the door
#     alone) and vs python:gatecheck.peers:gatecheck_op (the same through
#     autograd, as users call it), torch-eager vs
#     python:gatecheck.peers:diffusers_eager (eager PyTorch); then the eager
#     pair on the CPU, all at --jobs 1 (the door calls Python one call at a
#     time, so the ratio is taken at one worker), each figure the same
#     BENCH_CASES (600) cases for every implementation. Files:
#     harness-{cuda,cpu}.{txt,json}, ratios.txt.
# About 4 minutes on the H200 (16 cores): 60-100 s for the checks (compiled
# compiles inside its 60 s), 1-2 minutes for the CUDA bench (600 cases x 8
# properties x 5, at 100-900 cases/s), under a minute for the CPU's.
#  3. Where a door call's time goes, piece by piece, outside gatecheck's process
#     (bench/python_door_costs.py: door-costs.txt) and inside it
#     (bench/python_door_probe.py under bench --harness: door-probe.{json,txt}).
# PEER_SECONDS, BENCH_CASES and DEVICE override the budgets and the device
# (DEVICE=cpu runs what can run here, for a dry run); PYTHON_PARTS (default
# "peers ratios costs") picks the parts that run.
if [ -f "$(dirname "$0")/../stage_common.sh" ]; then
  . "$(dirname "$0")/../stage_common.sh"
else  # standalone: the same names
  set -u
  : "${OUT:?OUT unset}" "${BUILD:?BUILD unset}"
  D="$OUT/python" GC="$BUILD/cli/gatecheck"
  mkdir -p "$D"
fi
PEER_SECONDS=${PEER_SECONDS:-60}
BENCH_CASES=${BENCH_CASES:-600}
DEVICE=${DEVICE:-cuda}
[ -x "$GC" ] || { echo "python: $GC was not built"; exit 1; }
[ -f "$BUILD/python/gatecheck/_door.py" ] ||
  { echo "python: the Python door was not built ($BUILD/python/gatecheck is missing: see 'Python door' in the configure output)"; exit 1; }
PY=$(sed -n 's/^GATECHECK_PYTHON_EXECUTABLE:INTERNAL=//p;s/^Python3_EXECUTABLE:FILEPATH=//p' "$BUILD/CMakeCache.txt" | tail -1)
[ -x "$PY" ] || PY=python3
# error_inputs last: on CUDA its probes run in worker processes that each
# import torch, so its first case per worker outlasts its share of the budget,
# and a property after it would be left one case.
properties=accuracy,row_invariance,segment_invariance,repeatable,inputs_untouched,full_write,no_oob_write,eager_exact,error_inputs
peers="diffusers_eager eager_deterministic compiled gatecheck_op"

PYTHON_PARTS=${PYTHON_PARTS:-peers ratios costs}
part() { case " $PYTHON_PARTS " in *" $1 "*) return 0 ;; esac; return 1; }

# 1. The peers, at once; no PYTHONPATH: the CLI finds its own package.
peer_check() {  # peer_check NAME PEER PROPERTIES: in the background
  local cmd="$GC check --impl python:gatecheck.peers:$2 --device $DEVICE --seconds $PEER_SECONDS --seed 1 --properties $3 --corpus $D/corpus --json $D/check-$1.json"
  echo "$cmd" > "$D/check-$1.cmd"
  ( env -u PYTHONPATH $cmd > "$D/check-$1.txt" 2>&1; echo $? > "$D/check-$1.rc" ) &
}
part peers && for peer in $peers; do peer_check "$peer" "$peer" "$properties"; done
part peers && peer_check compiled-eager_exact compiled eager_exact
wait
part peers && "$PY" - "$D" "$DEVICE" "$PEER_SECONDS" $peers compiled-eager_exact <<'EOF'
import json, os, sys
d, device, seconds, peers = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4:]
out = {"stage": "python", "commit": os.environ.get("COMMIT", ""), "device": device, "seconds_each": seconds,
       "run": "the five checks at once (each peer, and compiled on eager_exact alone), one process each, "
              "sharing the GPU", "peers": {}}
for p in peers:
    rc = int(open(f"{d}/check-{p}.rc").read().strip() or -1)
    entry = {"command": open(f"{d}/check-{p}.cmd").read().strip(), "exit": rc}
    try:
        entry["report"] = json.load(open(f"{d}/check-{p}.json"))
    except (OSError, ValueError):
        entry["report"] = None  # could not run: the message is in output_tail
    entry["output_tail"] = open(f"{d}/check-{p}.txt", errors="replace").read().splitlines()[-40:]
    out["peers"][p] = entry
json.dump(out, open(f"{d}/peers-check.json", "w"), indent=1)
for p, e in out["peers"].items():
    r = e["report"]
    if r is None:
        print(f"  {p}: exit {e['exit']}, no report: {e['output_tail'][-1] if e['output_tail'] else ''}")
        continue
    fails = [x["property"] for x in r["results"] if "failure" in x and x["failure"]["claimed"]]
    finds = [x["property"] for x in r["results"] if "failure" in x and not x["failure"]["claimed"]]
    cases = sum(x["cases"] for x in r["results"])
    print(f"  {p}: exit {e['exit']}, {cases} cases, claimed failures {fails or 'none'}, findings {finds or 'none'}")
EOF

# 2. Python against the C ABI, the same kernels, one bench run per device.
bench() {  # bench FILE DEVICE CASES IMPL...
  local file=$1 device=$2 cases=$3
  shift 3
  local args=()
  for i in "$@"; do args+=(--impl "$i"); done
  local json=${file%.txt}.json
  echo "$GC bench --harness --device $device ${args[*]} --cases-per-property $cases --jobs 1 --json $json" > "$file.cmd"
  env -u PYTHONPATH "$GC" bench --harness --device "$device" "${args[@]}" --cases-per-property "$cases" --jobs 1 \
    --json "$json" > "$file" 2>&1
}
part ratios && if [ "$DEVICE" = cuda ]; then
  bench "$D/harness-cuda.txt" cuda "$BENCH_CASES" cuda python:bench/python_door_kernels.py:kernels \
    python:gatecheck.peers:gatecheck_op torch-eager python:gatecheck.peers:diffusers_eager
fi
part ratios && bench "$D/harness-cpu.txt" cpu "$BENCH_CASES" torch-eager python:gatecheck.peers:diffusers_eager
part ratios && "$PY" - "$D" <<'EOF' | tee "$D/ratios.txt"
import json, sys
d = sys.argv[1]
pairs = [("cuda@cuda", "python:bench/python_door_kernels.py:kernels@cuda"),
         ("cuda@cuda", "python:gatecheck.peers:gatecheck_op@cuda"),
         ("torch-eager@cuda", "python:gatecheck.peers:diffusers_eager@cuda"),
         ("torch-eager@cpu", "python:gatecheck.peers:diffusers_eager@cpu")]
rates = {}
for name in ("harness-cuda.json", "harness-cpu.json"):
    try:
        for row in json.load(open(f"{d}/{name}"))["rows"]:
            if row["jobs"] == 1:  # the door calls Python one call at a time: compare at --jobs 1
                rates[(row["impl"], row["property"])] = float(row["cases_per_second"])
    except (OSError, ValueError, KeyError):
        pass
worst = None
print("cases/s, C ABI vs Python, per property (ratio: C ABI / Python; the target is <= 2)")
for c, p in pairs:
    props = [k[1] for k in rates if k[0] == c]
    for prop in props:
        a, b = rates[(c, prop)], rates.get((p, prop))
        if b is None:
            continue
        ratio = a / b if b > 0 else float("inf")
        worst = ratio if worst is None else max(worst, ratio)
        print(f"  {c:<18} {prop:<20} {a:9.1f}   {p:<50} {b:9.1f}   {ratio:6.2f}x")
print(f"worst ratio {worst:.2f}x" if worst is not None else "no pair measured")
EOF

# 3. The door's pieces.
part costs && { echo "PYTHONPATH=$BUILD/python $PY bench/python_door_costs.py --device $DEVICE";
  PYTHONPATH=$BUILD/python "$PY" bench/python_door_costs.py --device "$DEVICE"; } 2>&1 | tee "$D/door-costs.txt"
probe=gatecheck_op; [ "$DEVICE" = cuda ] || probe=diffusers_eager
part costs && { echo "DOOR_PROBE_OUT=$D/door-probe.json $GC bench --harness --jobs 1 --device $DEVICE --impl python:bench/python_door_probe.py:$probe --properties accuracy,row_invariance --seconds-per-property 2";
  env -u PYTHONPATH DOOR_PROBE_OUT="$D/door-probe.json" "$GC" bench --harness --jobs 1 --device "$DEVICE" \
    --impl "python:bench/python_door_probe.py:$probe" --properties accuracy,row_invariance --seconds-per-property 2;
  cat "$D/door-probe.json"; } > "$D/door-probe.txt" 2>&1
echo "python: parts $PYTHON_PARTS on $DEVICE; $(tail -1 "$D/ratios.txt" 2>/dev/null)"
