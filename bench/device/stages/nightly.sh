#!/usr/bin/env bash
# Device stage "nightly": does the nightly campaign fill one H200? Runs from
# the repository root with OUT (results folder) in the environment (BUILD, the
# main build, is not needed: the fuzzers are their own build). Target: at
# least 1,000 executions/s summed over the workers of `--gpus 1 --jobs 16`.
#   1. builds the libFuzzer targets: clang-14 where there is one, else g++ with
#      libFuzzer's archive $LIBFUZZER_A (sources .deps/remote-setup.sh if
#      $LIBFUZZER_A is not set yet), into $NIGHTLY_FUZZ_BUILD
#      (default /tmp/gatecheck-build-fuzz; a kept one is only brought up to date);
#   2. the reference from the same run: one worker on the GPU,
#      $NIGHTLY_REF_SECONDS (default 20) s;
#   3. the same workers without MPS (--mps off), $NIGHTLY_NO_MPS_SECONDS
#      (default 30; 0 skips it): each worker a CUDA context of its own;
#   4. the machine filled: $NIGHTLY_JOBS workers (default: the cores) over
#      $NIGHTLY_GPUS GPU(s) (default 1), $NIGHTLY_SECONDS (default 75) s, impl
#      cuda, --mps auto (fuzz/nightly_mps.sh); nvidia-smi's compute processes
#      are sampled halfway through.
# (NIGHTLY_GPUS=0 NIGHTLY_IMPL=host runs the same stage on the CPU: a dry run
# of the stage itself on a machine without a GPU.)
# Writes under $OUT/nightly/: report.{json,md,html}, campaign.json,
# timeline.tsv and the charts of the full campaign, one-worker/ and no-mps/
# (the same for the references), compute-apps.csv, nightly.log, one-worker.log, build.log;
# summary.txt holds the last line printed.
# Time on the H200 (16 cores): the fuzzer build (80-90 s the first time),
# then about 20 + 30 + 75 s of campaigns and their corpus merges: ~2.5 min
# past the build (with 15 + 30 + 45 s: 224 s in all, build included).
set -uo pipefail
: "${OUT:?set OUT, the results folder}"
dir=$OUT/nightly
rm -rf "$dir" && mkdir -p "$dir"
say() { echo "nightly stage: $*"; }

if ! command -v clang++-14 >/dev/null && [ -z "${LIBFUZZER_A:-}" ] && [ -f .deps/remote-setup.sh ]; then
  . .deps/remote-setup.sh >"$dir/setup.log" 2>&1
fi
fb=${NIGHTLY_FUZZ_BUILD:-/tmp/gatecheck-build-fuzz}
t0=$(date +%s)
if ! fuzz/build-libfuzzer.sh "$fb" fuzz_gate_residual gatecheck-fuzz-tools >"$dir/build.log" 2>&1; then
  tail -30 "$dir/build.log"
  say "the fuzzers did not build (see $dir/build.log)"
  exit 1
fi
say "fuzzers built in $(( $(date +%s) - t0 )) s ($(grep -m1 -o 'configuring .*' "$dir/build.log" || echo "$fb, kept"))"

gpus=${NIGHTLY_GPUS:-1} jobs=${NIGHTLY_JOBS:-$(nproc)}
secs=${NIGHTLY_SECONDS:-75} ref_secs=${NIGHTLY_REF_SECONDS:-20}
hours() { awk -v s="$1" 'BEGIN { printf "%.6f", s / 3600 }'; }
keep() {  # campaign-folder destination
  mkdir -p "$2"
  for f in report.json report.md report.html campaign.json timeline.tsv execs_per_s.svg features.svg failures.jsonl; do
    [ -e "$1/$f" ] && cp "$1/$f" "$2/"
  done
  [ -n "$(ls "$1/failures" 2>/dev/null)" ] && cp -r "$1/failures" "$2/"
}
# figure FOLDER: "N cases in S s = X exec/s" from a campaign's report.json
figure() {
  python3 -c "import json, sys; r = json.load(open(sys.argv[1]))
print('%d cases in %.0f s = %.0f exec/s (status lines: mean %.0f, peak %.0f)' % (r['cases'], r['fuzz_seconds'],
      r['execs_per_s']['overall'], r['execs_per_s']['mean'], r['execs_per_s']['peak']))" "$1/report.json"
}
impl=${NIGHTLY_IMPL:-cuda}
run=(--impl "$impl" --build-dir "$fb" --no-build)
ref_gpus=() all_gpus=()
[ "$gpus" -gt 0 ] && ref_gpus=(--gpus 1) all_gpus=(--gpus "$gpus")

# --- the reference: one worker ------------------------------------------------
rm -rf /tmp/gatecheck-nightly-ref
fuzz/nightly.sh --hours "$(hours "$ref_secs")" "${ref_gpus[@]}" --jobs 1 "${run[@]}" --out /tmp/gatecheck-nightly-ref \
  >"$dir/one-worker.log" 2>&1
ref_rc=$?
keep /tmp/gatecheck-nightly-ref "$dir/one-worker"
ref=$(figure /tmp/gatecheck-nightly-ref 2>/dev/null || echo "no report")
say "1 worker: $ref (exit $ref_rc)"

# --- the same workers, each a CUDA context of its own ------------------------------
no_mps_secs=${NIGHTLY_NO_MPS_SECONDS:-30}
no_mps="not run"
if [ "$no_mps_secs" -gt 0 ] && [ "$gpus" -gt 0 ]; then
  rm -rf /tmp/gatecheck-nightly-no-mps
  fuzz/nightly.sh --hours "$(hours "$no_mps_secs")" "${all_gpus[@]}" --jobs "$jobs" --mps off "${run[@]}" \
    --out /tmp/gatecheck-nightly-no-mps >"$dir/no-mps.log" 2>&1
  keep /tmp/gatecheck-nightly-no-mps "$dir/no-mps"
  no_mps=$(figure /tmp/gatecheck-nightly-no-mps 2>/dev/null || echo "no report")
  say "$jobs workers without MPS: $no_mps"
fi

# --- the machine filled ---------------------------------------------------------
rm -rf /tmp/gatecheck-nightly
fuzz/nightly.sh --hours "$(hours "$secs")" "${all_gpus[@]}" --jobs "$jobs" "${run[@]}" --out /tmp/gatecheck-nightly \
  >"$dir/nightly.log" 2>&1 &
camp=$!
for ((i = 0; i < secs / 2 + 10; i++)); do kill -0 $camp 2>/dev/null || break; sleep 1; done
nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name,used_memory --format=csv >"$dir/compute-apps.csv" 2>&1
nvidia-smi --query-gpu=index,utilization.gpu,memory.used --format=csv >>"$dir/compute-apps.csv" 2>&1
wait $camp
rc=$?
keep /tmp/gatecheck-nightly "$dir"
on_gpu=$(grep -c fuzz_gate_residual "$dir/compute-apps.csv")
tail -4 "$dir/nightly.log"
full=$(figure /tmp/gatecheck-nightly 2>/dev/null || echo "no report")
eps=$(python3 -c "import json, sys; print(int(json.load(open(sys.argv[1]))['execs_per_s']['overall']))" \
  /tmp/gatecheck-nightly/report.json 2>/dev/null || echo 0)
mps=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1])).get('mps', '?'))" \
  /tmp/gatecheck-nightly/campaign.json 2>/dev/null || echo "?")
verdict="target >= 1000 exec/s: $([ "$eps" -ge 1000 ] && echo met || echo NOT met)"
summary="nightly: $jobs workers over $gpus GPU(s) ($impl, MPS $mps, $on_gpu fuzzer processes on the GPU halfway), ${secs} s: $full;"
summary+=" the same without MPS: $no_mps; 1 worker: $ref; $verdict; campaign exit $rc"
echo "$summary" | tee "$dir/summary.txt"
