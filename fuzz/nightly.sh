#!/usr/bin/env bash
# The nightly fuzz campaign (wrapped by `gatecheck nightly`).
#
#   fuzz/nightly.sh --hours H [--gpus N | --jobs N] [--impl SPEC]... --out DIR
#                   [--build-dir D] [--seeds D]
#
# One libFuzzer worker per GPU (CUDA_VISIBLE_DEVICES=i, default impl cuda) or
# N forked CPU workers (default impl host), sharing DIR/corpus. Each crash is
# minimised (-minimize_crash), turned into a JSON regression case with its
# repro command (gatecheck-fuzz-tools regress), and de-duplicated by
# signature property|impl|outputs; a worker then restarts, ignoring the
# signatures already known, so one bug does not stop the campaign. At the end
# the corpus is merged (-merge=1) and DIR/report.{md,html,json} written.
# Running again with the same DIR resumes: corpus, crashes, failures/ and
# known signatures stay; the previous run's report moves to DIR/history/.
# Exit: 0 no new failure, 1 new failure(s), 2 usage or build error.
#
# Fuzzers are built into --build-dir (default build-fuzz/): clang-14 with
# libFuzzer + ASan + UBSan here, or g++ with $LIBFUZZER_A and trace-cmp where
# there is no clang (the GPU machine; see ../shared/device/remote-setup.sh).
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
hours="" out="" gpus=0 jobs=0 build="$root/build-fuzz" seeds="$root/corpus/seeds/fuzz_gate_residual"
impls=()
usage() { sed -n '4,6p' "$0" | sed 's/^# //' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --hours) hours=$2; shift 2 ;;
    --gpus) gpus=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --impl) impls+=("$2"); shift 2 ;;
    --out) out=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    -h|--help) usage ;;
    *) echo "nightly: unknown argument '$1'" >&2; usage ;;
  esac
done
[ -n "$hours" ] && [ -n "$out" ] || { echo "nightly: --hours and --out are required" >&2; usage; }
[ "$gpus" -gt 0 ] && [ "$jobs" -gt 0 ] && { echo "nightly: give --gpus or --jobs, not both" >&2; exit 2; }
seconds=$(awk -v h="$hours" 'BEGIN { s = int(h * 3600); print (s < 10 ? 10 : s) }')
if [ "$gpus" -gt 0 ]; then mode=gpu; workers=$gpus; [ ${#impls[@]} -eq 0 ] && impls=(cuda)
else mode=cpu; workers=$(( jobs > 0 ? jobs : 1 )); [ ${#impls[@]} -eq 0 ] && impls=(host); fi
impl_list=$(IFS=,; echo "${impls[*]}")
say() { echo "nightly: $*" >&2; }

# --- build the libFuzzer targets ---------------------------------------------
"$root/fuzz/build-libfuzzer.sh" "$build" fuzz_gate_residual gatecheck-fuzz-tools || exit 2
fz=$build/fuzz/fuzz_gate_residual
tools=$build/fuzz/gatecheck-fuzz-tools

# --- campaign folder (resumable) ---------------------------------------------
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ -f "$out/campaign.json" ]; then
  prev=$out/history/$(date +%s)
  mkdir -p "$prev"
  for f in campaign.json timeline.tsv failures.jsonl stats report.json report.md report.html execs_per_s.svg features.svg; do
    [ -e "$out/$f" ] && mv "$out/$f" "$prev/"
  done
  say "resuming in $out (previous report moved to $prev)"
fi
mkdir -p "$out"/{corpus,crashes,failures,logs,stats,work}
touch "$out/known_signatures.txt" "$out/failures.jsonl" "$out/timeline.tsv"
start=$(date +%s)
end=$((start + seconds))
write_campaign() {  # $1 = status
  printf '{"hours": %s, "seconds": %s, "mode": "%s", "workers": %s, "impls": ["%s"], "started": %s, "ended": %s, "status": "%s", "fuzzer": "%s"}\n' \
    "$hours" "$(( $(date +%s) - start ))" "$mode" "$workers" "${impl_list//,/\", \"}" "$start" "$(date +%s)" "$1" "$fz" \
    > "$out/campaign.json"
}
write_campaign running
# ASan with CUDA needs the shadow gap unprotected; leaks are not our findings.
export ASAN_OPTIONS=${ASAN_OPTIONS:-protect_shadow_gap=0:detect_leaks=0:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export GATECHECK_FUZZ_IMPL=$impl_list
flags=(-dict="$root/fuzz/fuzz_gate_residual.dict" -max_len=256 -timeout=10 -use_value_profile=1 -print_final_stats=1 -reload=1)

# A crash: minimise the bytes, make the regression case(s), de-duplicate.
process_crash() {  # worker crash-file ignore-list
  local w=$1 crash=$2 ignore=$3 min="$out/crashes/min-$(basename "$2")"
  GATECHECK_FUZZ_IGNORE=$ignore GATECHECK_FUZZ_FAILURES="$out/work/w$w" \
    "$fz" -minimize_crash=1 -max_total_time=30 -exact_artifact_path="$min" "$crash" >"$out/logs/min-$(basename "$crash").log" 2>&1
  [ -s "$min" ] || min=$crash
  "$tools" regress "$min" --out "$out/failures" 2>>"$out/logs/regress.log" | while read -r line; do
    sig=$(printf '%s' "$line" | sed -n 's/.*"signature":"\([^"]*\)".*/\1/p')
    (
      flock 9
      if grep -qxF "$sig" "$out/known_signatures.txt"; then isnew=false; else isnew=true; echo "$sig" >>"$out/known_signatures.txt"; fi
      printf '{"new":%s,"worker":%s,%s\n' "$isnew" "$w" "${line#\{}" >>"$out/failures.jsonl"
      [ $isnew = true ] && say "NEW failure $sig: $(printf '%s' "$line" | sed -n 's/.*"repro":"\([^"]*\)".*/\1/p')"
    ) 9>"$out/.lock"
  done
}

worker() {  # index
  local w=$1 run=0 errors=0
  while :; do
    local left=$(( end - $(date +%s) ))
    [ $left -le 2 ] && break
    local ignore log=$out/logs/w$w-r$run.log
    ignore=$(paste -sd, "$out/known_signatures.txt")
    if [ $mode = gpu ]; then export CUDA_VISIBLE_DEVICES=$w; fi
    GATECHECK_FUZZ_IGNORE=$ignore GATECHECK_FUZZ_STATS="$out/stats/w$w-r$run.json" GATECHECK_FUZZ_FAILURES="$out/work/w$w" \
      "$fz" "${flags[@]}" -max_total_time=$left -artifact_prefix="$out/crashes/w$w-" "$out/corpus" "$seeds" >"$log" 2>&1
    local rc=$?
    local crash
    crash=$(sed -n 's/.*Test unit written to \([^ ]*\).*/\1/p' "$log" | tail -1)
    if [ -n "$crash" ]; then
      process_crash "$w" "$crash" "$ignore"
    elif [ $rc -ne 0 ]; then
      errors=$((errors + 1))
      say "worker $w: fuzzer exited $rc without a crash input (see $log)"
      [ $errors -ge 3 ] && break
      sleep 1
    fi
    run=$((run + 1))
  done
}

say "$workers $mode worker(s), impl $impl_list, ${seconds}s, corpus $out/corpus"
pids=()
for ((w = 0; w < workers; w++)); do worker $w & pids+=($!); done

# Progress and the timeline: the last libFuzzer status line of each worker.
alive() { local p; for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && return 0; done; return 1; }
field() { sed -n "s|.*$1 \([0-9]*\).*|\1|p" <<<"$2"; }
while alive; do
  sleep 5
  t=$(( $(date +%s) - start )) tot_eps=0 ft=0
  for ((w = 0; w < workers; w++)); do
    log=$(ls -t "$out"/logs/w$w-r*.log 2>/dev/null | head -1)
    [ -n "$log" ] || continue
    line=$(grep -a 'exec/s:' "$log" | tail -1)
    [ -n "$line" ] || continue
    execs=$(sed -n 's/^#\([0-9]*\).*/\1/p' <<<"$line")
    f=$(field 'ft:' "$line") c=$(field 'cov:' "$line") e=$(field 'exec/s:' "$line") corp=$(field 'corp:' "$line")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$w" "${execs:-0}" "${f:-0}" "${c:-0}" "${e:-0}" "${corp:-0}" >>"$out/timeline.tsv"
    tot_eps=$((tot_eps + ${e:-0}))
    [ "${f:-0}" -gt $ft ] && ft=${f:-0}
  done
  newf=$(grep -c '"new":true' "$out/failures.jsonl")
  status_line=$(printf 'nightly: %5ss/%ss  exec/s %7s  features %6s  corpus %5s  new failures %s' \
    "$t" "$seconds" "$tot_eps" "$ft" "$(ls "$out/corpus" | wc -l)" "$newf")
  if [ -t 2 ]; then printf '\r%s ' "$status_line" >&2           # a terminal: one line, redrawn
  elif [ "$t" -ge "${next_log:-0}" ]; then echo "$status_line" >&2; logged=$status_line; next_log=$((t + 60)); fi  # a log: a line a minute
done
wait
if [ -t 2 ]; then echo >&2; elif [ "${status_line:-}" != "${logged:-}" ]; then echo "$status_line" >&2; fi

say "merging the corpus (-merge=1)"
rm -rf "$out/corpus.merged" && mkdir -p "$out/corpus.merged"
if GATECHECK_FUZZ_IGNORE=$(paste -sd, "$out/known_signatures.txt") "$fz" -merge=1 "$out/corpus.merged" "$out/corpus" \
    >"$out/logs/merge.log" 2>&1; then
  rm -rf "$out/corpus" && mv "$out/corpus.merged" "$out/corpus"
else
  say "merge failed (see $out/logs/merge.log); keeping the unmerged corpus"
fi
write_campaign finished
"$tools" report "$out" >&2
newf=$(grep -c '"new":true' "$out/failures.jsonl")
if [ "$newf" -gt 0 ]; then
  say "$newf new failure(s); cases under $out/failures, report $out/report.md"
  exit 1
fi
say "no new failures; report $out/report.md"
