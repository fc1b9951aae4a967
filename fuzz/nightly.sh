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
# signatures already known, so one bug does not stop the campaign. A crash of
# the implementation itself (a signal, an exit, a hang) is a failure too: the
# replay runs its calls in child processes, and if the replay dies or finds
# nothing, the crash input itself is recorded with the fuzzer's repro command.
# A crash cannot be skipped like a known signature: a worker whose fuzzer
# stops three times in a row on known failures stops. At the end the corpus
# is merged (-merge=1) and DIR/report.{md,html,json} written.
# Running again with the same DIR resumes: corpus, crashes, failures/ and
# known signatures stay; the previous run's report moves to DIR/history/.
#
# Exit codes (the same as `gatecheck check`'s where they overlap):
#   0    no new failure
#   1    new failure(s)
#   2    usage: a bad option or value, an --out that cannot be a folder, an
#        unknown --impl or an unknown name in GATECHECK_FUZZ_PROPERTIES, or
#        the fuzzers did not build
#   3    cannot run: an --impl that does not load, --gpus N without N GPUs,
#        or a worker whose fuzzer kept failing (report status "failed")
#   130  interrupted by SIGINT (Ctrl-C), 143 by SIGTERM: the workers stop,
#        the corpus is merged and the report written for what was done
#        (status "interrupted"); a fuzzer that does not stop on SIGTERM (a
#        plugin may catch it) gets SIGKILL 10 s later
# If the campaign is killed outright (SIGKILL), its workers stop within a
# second or two; the next run in the same DIR says the previous one did not
# finish.
#
# Fuzzers are built into --build-dir (default build-fuzz/): clang-14 with
# libFuzzer + ASan + UBSan here, or g++ with $LIBFUZZER_A and trace-cmp where
# there is no clang (the GPU machine; see ../shared/device/remote-setup.sh).
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
hours="" out="" gpus="" jobs="" build="$root/build-fuzz" seeds="$root/corpus/seeds/fuzz_gate_residual"
impls=()
usage() {
  cat <<'EOF'
usage: fuzz/nightly.sh --hours H [--gpus N | --jobs N] [--impl SPEC]... --out DIR
                       [--build-dir D] [--seeds D]
  --hours H      campaign length in hours (a positive number; at least 10 s are run)
  --gpus N       one worker per GPU, default impl cuda
  --jobs N       N CPU workers (default 1), default impl host
  --impl SPEC    host, cuda, torch-eager[@cuda] or plugin:PATH[@cuda] (repeatable)
  --out DIR      campaign folder; running again with the same DIR resumes
  --build-dir D  where the libFuzzer targets are built (default build-fuzz/)
  --seeds D      seed inputs (default corpus/seeds/fuzz_gate_residual)
exit: 0 no new failure, 1 new failure(s), 2 usage, 3 cannot run, 130/143 interrupted
EOF
}
bad() { echo "nightly: $*" >&2; usage >&2; exit 2; }
is_count() { [[ $1 =~ ^[0-9]+$ ]] && [ "$((10#$1))" -ge 1 ]; }
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --hours|--gpus|--jobs|--impl|--out|--build-dir|--seeds)
      # "--out --jobs 2" must not take --jobs as the folder's name
      [ $# -ge 2 ] && [ -n "$2" ] && [[ $2 != --* ]] || bad "$1 needs a value"
      case "$1" in
        --hours) hours=$2 ;; --gpus) gpus=$2 ;; --jobs) jobs=$2 ;; --impl) impls+=("$2") ;;
        --out) out=$2 ;; --build-dir) build=$2 ;; --seeds) seeds=$2 ;;
      esac
      shift 2 ;;
    *) bad "unknown argument '$1'" ;;
  esac
done
[ -n "$hours" ] && [ -n "$out" ] || bad "--hours and --out are required"
[[ $hours =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)$ ]] && awk -v h="$hours" 'BEGIN { exit !(h > 0) }' ||
  bad "--hours '$hours': not a positive number of hours"
hours=$(awk -v h="$hours" 'BEGIN { printf "%g", h }')  # a JSON number (".5" is not)
[ -z "$gpus" ] || is_count "$gpus" || bad "--gpus '$gpus': not a positive whole number"
[ -z "$jobs" ] || is_count "$jobs" || bad "--jobs '$jobs': not a positive whole number"
[ -n "$gpus" ] && [ -n "$jobs" ] && bad "give --gpus or --jobs, not both"
[ -d "$seeds" ] || bad "--seeds '$seeds': not a folder"
seconds=$(awk -v h="$hours" 'BEGIN { s = int(h * 3600); print (s < 10 ? 10 : s) }')
if [ -n "$gpus" ]; then mode=gpu; workers=$((10#$gpus)); [ ${#impls[@]} -eq 0 ] && impls=(cuda)
else mode=cpu; workers=$((10#${jobs:-1})); [ ${#impls[@]} -eq 0 ] && impls=(host); fi
impl_list=$(IFS=,; echo "${impls[*]}")
say() { echo "nightly: $*" >&2; }
exec 3>&2  # the campaign's own stderr, for a run whose stderr goes to its log (the watchdog's say)

# --- campaign folder: checked before the build, which takes minutes ----------
# (unchecked, a failed mkdir left out="" and the folders went to /)
if ! err=$(mkdir -p -- "$out" 2>&1) || ! out_abs=$(cd -- "$out" 2>/dev/null && pwd) || [ ! -w "$out_abs" ]; then
  echo "nightly: --out '$out': cannot make or write that folder${err:+ ($err)}" >&2
  exit 2
fi
out=$out_abs

# --- build the libFuzzer targets, and check the implementations --------------
"$root/fuzz/build-libfuzzer.sh" "$build" fuzz_gate_residual gatecheck-fuzz-tools || { say "the fuzzers did not build"; exit 2; }
fz=$build/fuzz/fuzz_gate_residual
tools=$build/fuzz/gatecheck-fuzz-tools
# ASan with CUDA needs the shadow gap unprotected; leaks are not our findings.
export ASAN_OPTIONS=${ASAN_OPTIONS:-protect_shadow_gap=0:detect_leaks=0:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export GATECHECK_FUZZ_IMPL=$impl_list
# The fuzzer reads GATECHECK_FUZZ_PROPERTIES at its first input, and a typo
# there showed only as a worker giving up mid-campaign: ask the tools, which
# read it as the fuzzer does and name the valid properties.
if ! err=$("$tools" check-properties 2>&1 >/dev/null); then
  say "${err:-gatecheck-fuzz-tools check-properties failed}"
  exit 2
fi
# A fuzzer that cannot make its implementation exits at its first input, and
# restarting it all night looked like a clean campaign: ask first.
"$tools" check-impl ${gpus:+--gpus "$gpus"} >/dev/null  # (what cannot run goes to stderr)
case $? in
  0) ;;
  2) say "unknown implementation in --impl $impl_list (see above)"; exit 2 ;;
  *) say "cannot run here: --impl $impl_list${gpus:+ on $gpus GPU(s)} (see above)"; exit 3 ;;
esac

# --- resume ------------------------------------------------------------------
if [ -f "$out/campaign.json" ]; then
  prev_status=$(sed -n 's/.*"status": "\([a-z]*\)".*/\1/p' "$out/campaign.json")
  prev_pid=$(sed -n 's/.*"pid": \([0-9]*\).*/\1/p' "$out/campaign.json")
  if [ "$prev_status" = running ] && [ -n "$prev_pid" ] && grep -qs nightly.sh "/proc/$prev_pid/cmdline"; then
    say "--out '$out': the campaign of pid $prev_pid is still running there"
    exit 2
  fi
  prev=$out/history/$(date +%s)
  mkdir -p "$prev"
  had_report=no; [ -e "$out/report.md" ] && had_report=yes
  for f in campaign.json timeline.tsv failures.jsonl stats report.json report.md report.html execs_per_s.svg features.svg; do
    [ -e "$out/$f" ] && mv "$out/$f" "$prev/"
  done
  if [ "$prev_status" = running ]; then
    say "resuming in $out: the previous run did not finish (killed? its campaign.json still says \"running\")" \
        "and wrote no report; its campaign.json, timeline and stats moved to $prev"
  elif [ $had_report = yes ]; then
    say "resuming in $out (previous run: ${prev_status:-unknown}; its report moved to $prev)"
  else
    say "resuming in $out (previous run: ${prev_status:-unknown}, no report; its files moved to $prev)"
  fi
fi
mkdir -p "$out"/{corpus,crashes,failures,logs,stats,work} || { say "--out '$out': cannot make its subfolders"; exit 2; }
touch "$out/known_signatures.txt" "$out/failures.jsonl" "$out/timeline.tsv"
stopfile=$out/work/stop
rm -f "$stopfile" "$out"/work/w*.gaveup
campaign_pid=$$
start=$(date +%s)
end=$((start + seconds))
json_str() { printf '%s' "$1" | tr -d '\000-\037' | sed 's/\\/\\\\/g; s/"/\\"/g'; }
write_campaign() {  # status [note]
  printf '{"hours": %s, "seconds": %s, "mode": "%s", "workers": %s, "impls": ["%s"], "started": %s, "ended": %s, "status": "%s", "note": "%s", "pid": %s, "fuzzer": "%s"}\n' \
    "$hours" "$(( $(date +%s) - start ))" "$mode" "$workers" "$(json_str "$impl_list" | sed 's/,/", "/g')" "$start" \
    "$(date +%s)" "$1" "$(json_str "${2:-}")" "$campaign_pid" "$(json_str "$fz")" > "$out/campaign.json"
}
write_campaign running
flags=(-dict="$root/fuzz/fuzz_gate_residual.dict" -max_len=256 -timeout=10 -use_value_profile=1 -print_final_stats=1 -reload=1)

. "$root/fuzz/nightly_worker.sh"

# --- run the workers until the end, a signal, or their own stop --------------
interrupted=""
on_signal() { interrupted=$1; touch "$stopfile"; }  # the workers' watchdogs see the file
trap 'on_signal INT' INT
trap 'on_signal TERM' TERM
say "$workers $mode worker(s), impl $impl_list, ${seconds}s, corpus $out/corpus"
pids=()
for ((w = 0; w < workers; w++)); do worker $w & pids+=($!); done

# Progress and the timeline: the last libFuzzer status line of each worker.
alive() { local p; for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && return 0; done; return 1; }
field() { sed -n "s|.*$1 \([0-9]*\).*|\1|p" <<<"$2"; }
while alive; do
  sleep "$([ -n "$interrupted" ] && echo 1 || echo 5)" & sleeper=$!  # once stopping, the workers end soon
  wait $sleeper; kill $sleeper 2>/dev/null  # not a plain sleep: a trapped signal ends a wait at once
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
until wait; do :; done  # a trapped signal ends a wait early
if [ -t 2 ]; then echo >&2; elif [ "${status_line:-}" != "${logged:-}" ]; then echo "$status_line" >&2; fi
[ -n "$interrupted" ] && say "stopped by SIG$interrupted after $(( $(date +%s) - start ))s of ${seconds}s"

say "merging the corpus (-merge=1)"
rm -rf "$out/corpus.merged" && mkdir -p "$out/corpus.merged"
if GATECHECK_FUZZ_IGNORE=$(paste -sd, "$out/known_signatures.txt") "$fz" -merge=1 "$out/corpus.merged" "$out/corpus" \
    >"$out/logs/merge.log" 2>&1; then
  rm -rf "$out/corpus" && mv "$out/corpus.merged" "$out/corpus"
else
  say "merge failed (see $out/logs/merge.log); keeping the unmerged corpus"
fi

# --- status, report, exit code -------------------------------------------------
gave_up=$(for f in "$out"/work/w*.gaveup; do [ -e "$f" ] && echo "$(basename "$f" .gaveup): $(cat "$f")"; done | paste -sd';' -)
if [ -n "$interrupted" ]; then write_campaign interrupted "stopped by SIG$interrupted"
elif [ -n "$gave_up" ]; then write_campaign failed "worker(s) gave up: $gave_up"
else write_campaign finished; fi
"$tools" report "$out" >&2
newf=$(grep -c '"new":true' "$out/failures.jsonl")
[ -n "$gave_up" ] && say "worker(s) gave up, so this campaign is not a clean one: $gave_up"
if [ -n "$interrupted" ]; then
  say "interrupted; $newf new failure(s) so far; report $out/report.md"
  [ "$interrupted" = INT ] && exit 130
  exit 143
fi
if [ "$newf" -gt 0 ]; then
  say "$newf new failure(s); cases under $out/failures, report $out/report.md"
  exit 1
fi
[ -n "$gave_up" ] && { say "report $out/report.md"; exit 3; }
say "no new failures; report $out/report.md"
