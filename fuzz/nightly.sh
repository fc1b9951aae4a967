#!/usr/bin/env bash
# The nightly fuzz campaign (wrapped by `gatecheck nightly`; docs/nightly.md).
#
#   fuzz/nightly.sh --hours H [--gpus N] [--jobs M] [--impl SPEC]... --out DIR
#                   [--shard I/N] [--seed S] [--build-dir D] [--no-build] [--seeds D]
#   fuzz/nightly.sh --merge DIR... [--out OUT] [--impl SPEC]... [--build-dir D] [--no-build]
#
# M libFuzzer workers (default 1, or N with --gpus N), spread round-robin over
# N GPUs (worker w sees CUDA_VISIBLE_DEVICES=w mod N; default impl cuda) or
# on the CPU (default impl host), sharing DIR/corpus. Each crash is
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
# Beyond one machine (docs/nightly.md): --shard I/N (0-based, 0 <= I < N) runs
# share I of a campaign whose folder DIR many hosts can read. The share works
# in DIR/shards/I/ (its own corpus for new inputs, crashes, failures, logs,
# report), reads DIR/corpus and DIR/known_signatures.txt, and gives worker w
# of run r the libFuzzer seed S + 1000*(I*M + w) + r when --seed S is given.
# --merge DIR... then merges the shards (their corpora with -merge=1 into
# OUT/corpus, their failures de-duplicated by signature) and writes one
# report for all of them; a single DIR holding shards/ is merged into itself.
#
# Exit codes (the same as `gatecheck check`'s where they overlap):
#   0    no new failure
#   1    new failure(s)
#   2    usage: a bad option or value, an --out that cannot be a folder, an
#        unknown --impl or an unknown name in GATECHECK_FUZZ_PROPERTIES, or
#        the fuzzers did not build; --merge: a folder that is not a campaign,
#        shards of different campaigns
#   3    cannot run: an --impl that does not load, --gpus N without N GPUs,
#        or a worker whose fuzzer kept failing (report status "failed");
#        --merge: a shard missing or not finished (report status "incomplete")
#   130  interrupted by SIGINT (Ctrl-C), 143 by SIGTERM, 129 by SIGHUP (a lost
#        terminal): the workers stop, the corpus is merged and the report
#        written for what was done (status "interrupted"); a fuzzer that does
#        not stop on SIGTERM (a plugin may catch it) gets SIGKILL 10 s later.
#        A signal during the corpus merge stops the merge and keeps the corpus
#        as it was. A closed stderr (its reader gone) loses the messages only.
# If the campaign is killed outright (SIGKILL), its workers stop within a
# second or two; the next run in the same DIR says the previous one did not
# finish.
#
# Fuzzers are built into --build-dir (default build-fuzz/): clang-14 with
# libFuzzer + ASan + UBSan here, or g++ with $LIBFUZZER_A and trace-cmp where
# there is no clang (the GPU machine; see ../shared/device/remote-setup.sh).
# --no-build uses them as they are (cluster tasks sharing one build).
set -uo pipefail
# A reader of stderr that goes away (`| tee` ended, an ssh session cut) must not end the campaign
# before its report: what it says there is lost, the files are still written.
trap '' PIPE

root=$(cd "$(dirname "$0")/.." && pwd)
hours="" out="" gpus="" jobs="" build="$root/build-fuzz" seeds="" op=gate_residual
shard="" seed="" no_build="" merging="" mps_mode=auto continuing=""
impls=() merge_dirs=()
usage() {
  cat <<'EOF2'
usage: fuzz/nightly.sh --hours H [--gpus N] [--jobs M] [--impl SPEC]... --out DIR
                       [--shard I/N] [--seed S] [--mps auto|on|off] [--build-dir D] [--no-build] [--seeds D]
                       [--op NAME] [--continue]
       fuzz/nightly.sh --merge DIR... [--out OUT] [--impl SPEC]... [--build-dir D] [--no-build]
  --hours H      campaign length in hours (a positive number; at least 10 s are run)
  --gpus N       spread the workers over N GPUs, round-robin; default impl cuda
  --jobs M       M libFuzzer workers (default 1, or N with --gpus N; at least N);
                 without --gpus they run on the CPU, default impl host
  --impl SPEC    host, cuda, torch-eager[@cuda] or plugin:PATH[@cuda] (repeatable)
  --mps MODE     several workers on one GPU share it through CUDA MPS: auto (the
                 default: where it runs, else without, saying why), on, or off
  --out DIR      campaign folder; running again with the same DIR resumes
  --shard I/N    run share I of N (0-based: 0 <= I < N) of the campaign in DIR:
                 it works in DIR/shards/I and reads the shared DIR/corpus
  --seed S       libFuzzer seeds S + 1000*(I*M + w) + r for worker w, run r
                 (default: each fuzzer run picks its own)
  --merge DIR... merge shard or campaign folders (a DIR holding shards/ means
                 all of them, merged into DIR): corpora with -merge=1 into
                 OUT/corpus, failures de-duplicated, one report in OUT
  --build-dir D  where the libFuzzer targets are built (default build-fuzz/)
  --no-build     use the fuzzers in --build-dir as they are (no build step)
  --op NAME      the op to fuzz (default gate_residual; gatecheck ops lists them):
                 its fuzz target fuzz_NAME, seeds and dictionary
  --continue     this run is the same run restarted (a scheduler's requeue): the
                 previous attempt's failures.jsonl and stats stay and count in
                 this run's report (without it they move to history/)
  --seeds D      seed inputs (default corpus/seeds/fuzz_NAME)
exit: 0 no new failure, 1 new failure(s), 2 usage, 3 cannot run or incomplete, 130/143/129 interrupted
EOF2
}
bad() { echo "nightly: $*" >&2; usage >&2; exit 2; }
# (nine digits at most: bash's arithmetic wraps past 2^63, and no machine has a billion workers)
is_count() { [[ $1 =~ ^[0-9]{1,9}$ ]] && [ "$((10#$1))" -ge 1 ]; }
given=()  # the options given, for --merge's conflicts
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --no-build) no_build=yes; shift ;;
    --continue) continuing=yes; given+=("$1"); shift ;;
    --merge)
      merging=yes; shift
      while [ $# -gt 0 ] && [[ $1 != --* ]]; do
        [ -n "$1" ] || bad "--merge: an empty folder name"
        merge_dirs+=("$1"); shift
      done
      [ ${#merge_dirs[@]} -gt 0 ] || bad "--merge needs at least one shard or campaign folder" ;;
    --hours|--gpus|--jobs|--impl|--out|--build-dir|--seeds|--shard|--seed|--mps|--op)
      # "--out --jobs 2" must not take --jobs as the folder's name
      [ $# -ge 2 ] && [ -n "$2" ] && [[ $2 != --* ]] || bad "$1 needs a value"
      given+=("$1")
      case "$1" in
        --hours) hours=$2 ;; --gpus) gpus=$2 ;; --jobs) jobs=$2 ;; --impl) impls+=("$2") ;;
        --out) out=$2 ;; --build-dir) build=$2 ;; --seeds) seeds=$2 ;; --shard) shard=$2 ;; --seed) seed=$2 ;;
        --mps) mps_mode=$2 ;; --op) op=$2 ;;
      esac
      shift 2 ;;
    *) bad "unknown argument '$1'" ;;
  esac
done
[[ $op =~ ^[a-z][a-z0-9_]*$ ]] || bad "--op '$op': not an op name (gatecheck ops lists them)"
fuzzer=fuzz_$op
if [ -z "$seeds" ]; then
  seeds=$root/corpus/seeds/$fuzzer
  [ -n "$merging" ] || [ -d "$seeds" ] || bad "--op '$op': no such op (no seeds in corpus/seeds/$fuzzer; gatecheck ops lists them)"
fi
export GATECHECK_FUZZ_OP=$op  # the tools decode and check inputs as this op's
if [ -n "$merging" ]; then
  for o in "${given[@]}"; do
    case $o in --hours|--gpus|--jobs|--shard|--seed|--seeds|--mps|--op|--continue) bad "--merge runs no campaign: it takes no $o" ;; esac
  done
else
  [ -n "$hours" ] && [ -n "$out" ] || bad "--hours and --out are required"
  [[ $hours =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)$ ]] && awk -v h="$hours" 'BEGIN { exit !(h > 0) }' ||
    bad "--hours '$hours': not a positive number of hours"
  hours=$(awk -v h="$hours" 'BEGIN { printf "%g", h }')  # a JSON number (".5" is not)
  [ -z "$gpus" ] || is_count "$gpus" || bad "--gpus '$gpus': not a positive whole number"
  case $mps_mode in auto|on|off) ;; *) bad "--mps '$mps_mode': give auto, on or off" ;; esac
  [ "$mps_mode" = on ] && [ -z "$gpus" ] && bad "--mps on needs --gpus (MPS shares a GPU between workers)"
  [ -z "$jobs" ] || is_count "$jobs" || bad "--jobs '$jobs': not a positive whole number"
  if [ -n "$gpus" ] && [ -n "$jobs" ] && [ "$((10#$jobs))" -lt "$((10#$gpus))" ]; then
    bad "--jobs '$jobs': fewer workers than --gpus $gpus (each GPU needs at least one; give --gpus $jobs to use $jobs GPU(s))"
  fi
  shard_i=0 shard_n=0
  if [ -n "$shard" ]; then
    [[ $shard =~ ^([0-9]{1,9})/([0-9]{1,9})$ ]] ||
      bad "--shard '$shard': not I/N (share I of N, 0-based, e.g. 0/4; N below a billion)"
    shard_i=$((10#${BASH_REMATCH[1]})) shard_n=$((10#${BASH_REMATCH[2]}))
    [ "$shard_n" -ge 1 ] || bad "--shard '$shard': N must be at least 1"
    [ "$shard_i" -lt "$shard_n" ] ||
      bad "--shard '$shard': I must be below N (shares are numbered from 0: 0/$shard_n .. $((shard_n - 1))/$shard_n)"
  fi
  if [ -n "$seed" ]; then
    [[ $seed =~ ^[0-9]+$ ]] && [ ${#seed} -le 10 ] && [ "$((10#$seed))" -le 2147483647 ] ||
      bad "--seed '$seed': not a whole number in 0..2147483647"
    seed=$((10#$seed))
  fi
  [ -d "$seeds" ] || bad "--seeds '$seeds': not a folder"
fi
say() { echo "nightly: $*" >&2; }
exec 3>&2  # the campaign's own stderr, for a run whose stderr goes to its log (the watchdog's say)
host=$(uname -n)
json_str() { printf '%s' "$1" | tr -d '\000-\037' | sed 's/\\/\\\\/g; s/"/\\"/g'; }

# --out must be (or become) a writable folder; `out` becomes its absolute path.
# (Unchecked, a failed mkdir left out="" and the folders went to /.)
use_out_folder() {
  local err out_abs
  if ! err=$(mkdir -p -- "$out" 2>&1) || ! out_abs=$(cd -- "$out" 2>/dev/null && pwd) || [ ! -w "$out_abs" ]; then
    echo "nightly: --out '$out': cannot make or write that folder${err:+ ($err)}" >&2
    exit 2
  fi
  out=$out_abs
}

# Builds the libFuzzer target and the tools into --build-dir (with --no-build,
# checks that they are there), and sets fz and tools.
build_fuzzers() {
  local f
  if [ -n "$no_build" ]; then
    for f in "$fuzzer" gatecheck-fuzz-tools; do
      [ -x "$build/fuzz/$f" ] || { say "--no-build: no $build/fuzz/$f (build it first: fuzz/build-libfuzzer.sh $build)"; exit 2; }
    done
    # A plain build's fuzz target is a replay program: it would run the seeds and nothing
    # else, and its -merge=1 would keep no input.
    grep -aq 'MERGE-OUTER' "$build/fuzz/$fuzzer" ||
      { say "--no-build: $build/fuzz/$fuzzer is not a libFuzzer build (a plain build's replay program?): give --build-dir the libFuzzer build, such as build/fuzz-libfuzzer"; exit 2; }
  else
    "$root/fuzz/build-libfuzzer.sh" "$build" "$fuzzer" gatecheck-fuzz-tools || { say "the fuzzers did not build (is there an op $op? gatecheck ops lists them)"; exit 2; }
  fi
  fz=$build/fuzz/$fuzzer
  tools=$build/fuzz/gatecheck-fuzz-tools
  # ASan with CUDA needs the shadow gap unprotected; leaks are not our findings.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-protect_shadow_gap=0:detect_leaks=0:allocator_may_return_null=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
}

# A fuzzer that cannot make its implementation exits at its first input, and
# restarting it all night looked like a clean campaign: ask first.
check_impls() {  # gpus
  "$tools" check-impl --gpus "$1" >/dev/null  # (what cannot run goes to stderr)
  case $? in
    0) ;;
    2) say "unknown implementation in --impl $GATECHECK_FUZZ_IMPL (see above)"; exit 2 ;;
    *) say "cannot run here: --impl $GATECHECK_FUZZ_IMPL$([ "$1" -gt 0 ] && echo " on $1 GPU(s)") (see above)"; exit 3 ;;
  esac
}

# Moves the last run's campaign.json, report and what it was made from to
# DIR/history/<time>/ (corpus, crashes, failures/ and known signatures stay).
# Sets `prev` to that folder and had_report to yes or no.
move_to_history() {  # dir
  local f
  prev=$1/history/$(date +%s)
  mkdir -p "$prev"
  had_report=no; [ -e "$1/report.md" ] && had_report=yes
  for f in campaign.json timeline.tsv failures.jsonl stats report.json report.md report.html execs_per_s.svg features.svg; do
    # --continue: the same run restarted keeps what its previous attempt found
    # and counted (its stats renamed, so that the new attempt's do not overwrite them)
    if [ -n "$continuing" ] && [ "$f" = failures.jsonl ]; then continue; fi
    if [ -n "$continuing" ] && [ "$f" = stats ] && [ -d "$1/stats" ]; then
      for s in "$1"/stats/w*.json; do [ -e "$s" ] && mv "$s" "$1/stats/a${prev##*/}-${s##*/}"; done
      continue
    fi
    [ -e "$1/$f" ] && mv "$1/$f" "$prev/"
  done
}

# libFuzzer's -merge=1 of the folders INPUT... into DEST (which is replaced
# only when the merge succeeds), skipping the failures listed in KNOWN.
merge_corpus() {  # dest log known input...
  local dest=$1 log=$2 known=$3
  shift 3
  say "merging the corpus (-merge=1)"
  rm -rf "$dest.merged" && mkdir -p "$dest.merged"
  local given kept
  given=$(find "$@" -maxdepth 1 -type f 2>/dev/null | wc -l)
  echo "nightly: $fz -merge=1 $dest.merged $*" >"$log"  # (which op's target merged)
  # In its own session, so that Ctrl-C reaches the script only: libFuzzer's merge outlives a
  # SIGINT of its inner process (it runs the step again), so a signal here stops its session.
  local before=$signals mpid rc
  GATECHECK_FUZZ_IGNORE=$(paste -sd, "$known") setsid "$fz" -merge=1 "$dest.merged" "$@" >>"$log" 2>&1 &
  mpid=$!
  wait "$mpid"; rc=$?
  while kill -0 "$mpid" 2>/dev/null; do  # a trapped signal ended the wait
    [ "$signals" -gt "$before" ] && kill -TERM -- "-$mpid" 2>/dev/null
    wait "$mpid"; rc=$?
  done
  if [ "$signals" -gt "$before" ]; then
    say "stopped by SIG$interrupted during the corpus merge; keeping the unmerged corpus"
    pkill -KILL -s "$mpid" 2>/dev/null  # (an inner merge process left behind)
    rm -rf "$dest.merged"
    return 1
  fi
  if [ $rc -eq 0 ]; then
    kept=$(find "$dest.merged" -maxdepth 1 -type f | wc -l)
    if [ "$kept" -eq 0 ] && [ "$given" -gt 0 ]; then  # a merge keeps an input of any corpus with one
      say "the merge kept none of $given inputs (see $log); keeping the unmerged corpus"
      rm -rf "$dest.merged"
      return 1
    fi
    rm -rf "$dest" && mv "$dest.merged" "$dest"
  else
    say "merge failed (see $log); keeping the unmerged corpus"
    rm -rf "$dest.merged"
    return 1
  fi
}

# SIGINT, SIGTERM and SIGHUP once the campaign runs (or a merge): the workers' watchdogs see the
# stop file, and a corpus merge under way stops (merge_corpus), which `signals` tells it. Before
# that (the build, the checks) a signal ends the script as it comes.
interrupted="" signals=0
on_signal() { interrupted=$1 signals=$((signals + 1)); [ -z "${stopfile:-}" ] || touch "$stopfile"; }
trap_signals() { trap 'on_signal INT' INT; trap 'on_signal TERM' TERM; trap 'on_signal HUP' HUP; }
exit_interrupted() { case $interrupted in INT) exit 130 ;; HUP) exit 129 ;; *) exit 143 ;; esac; }

if [ -n "$merging" ]; then
  . "$root/fuzz/nightly_merge.sh"
  merge_shards  # (exits)
fi

seconds=$(awk -v h="$hours" 'BEGIN { s = int(h * 3600); print (s < 10 ? 10 : s) }')
if [ -n "$gpus" ]; then mode=gpu; gpus=$((10#$gpus)); workers=$((10#${jobs:-$gpus})); [ ${#impls[@]} -eq 0 ] && impls=(cuda)
else mode=cpu; gpus=0; workers=$((10#${jobs:-1})); [ ${#impls[@]} -eq 0 ] && impls=(host); fi
impl_list=$(IFS=,; echo "${impls[*]}")
gpus_given=${CUDA_VISIBLE_DEVICES:-}  # the GPUs this campaign may use, if a scheduler says

# --- campaign folder: checked before the build, which takes minutes ----------
use_out_folder
if [ -z "$shard" ] && grep -qs '"mode": "merged"' "$out/campaign.json"; then
  bad "--out '$out' holds a merged campaign of shares: run a share there with --shard I/N, or use another folder"
fi
campaign_root=""  # --shard: the campaign's folder; this share works in its shards/I
if [ -n "$shard" ]; then
  campaign_root=$out out=$out/shards/$shard_i
  mkdir -p "$campaign_root/corpus" "$out" || { say "--out '$campaign_root': cannot make shards/$shard_i and corpus/ there"; exit 2; }
fi

# --- build the libFuzzer targets, and check the implementations --------------
build_fuzzers
export GATECHECK_FUZZ_IMPL=$impl_list
# The fuzzer reads GATECHECK_FUZZ_PROPERTIES at its first input, and a typo
# there showed only as a worker giving up mid-campaign: ask the tools, which
# read it as the fuzzer does and name the valid properties.
if ! err=$("$tools" check-properties 2>&1 >/dev/null); then
  say "${err:-gatecheck-fuzz-tools check-properties failed}"
  exit 2
fi
check_impls "$gpus"
. "$root/fuzz/nightly_mps.sh"
trap mps_stop EXIT
[ $mode = gpu ] && mps_start "$gpus" "$workers"

# --- resume ------------------------------------------------------------------
if [ -f "$out/campaign.json" ]; then
  prev_status=$(sed -n 's/.*"status": "\([a-z]*\)".*/\1/p' "$out/campaign.json")
  prev_pid=$(sed -n 's/.*"pid": \([0-9]*\).*/\1/p' "$out/campaign.json")
  prev_host=$(sed -n 's/.*"host": "\([^"]*\)".*/\1/p' "$out/campaign.json")
  # (a pid means something on its own host only: a share's folder on a shared
  # filesystem may say "running" for a host that died)
  if [ "$prev_status" = running ] && [ -n "$prev_pid" ] && [ "${prev_host:-$host}" = "$host" ] &&
     grep -qs nightly.sh "/proc/$prev_pid/cmdline"; then
    say "--out '$out': the campaign of pid $prev_pid is still running there"
    exit 2
  fi
  move_to_history "$out"
  if [ "$prev_status" = running ]; then
    say "resuming in $out: the previous run did not finish (killed${prev_host:+ on $prev_host}? its campaign.json" \
        "still says \"running\") and wrote no report; its campaign.json, timeline and stats moved to $prev"
  elif [ $had_report = yes ]; then
    say "resuming in $out (previous run: ${prev_status:-unknown}; its report moved to $prev)"
  else
    say "resuming in $out (previous run: ${prev_status:-unknown}, no report; its files moved to $prev)"
  fi
fi
mkdir -p "$out"/{corpus,crashes,failures,logs,stats,work} || { say "--out '$out': cannot make its subfolders"; exit 2; }
touch "$out/known_signatures.txt" "$out/failures.jsonl" "$out/timeline.tsv"
# A share skips what the campaign already knows (its last --merge wrote it).
if [ -n "$campaign_root" ] && [ -s "$campaign_root/known_signatures.txt" ]; then
  sort -u "$out/known_signatures.txt" "$campaign_root/known_signatures.txt" -o "$out/known_signatures.txt"
fi
stopfile=$out/work/stop
rm -f "$stopfile" "$out"/work/w*.gaveup "$out"/work/w*.ended
campaign_pid=$$
start=$(date +%s)
end=$((start + seconds))
write_campaign() {  # status [note]
  local now; now=$(date +%s)
  # fuzz_seconds: the workers' time, without the merge at the end (exec/s = cases / fuzz_seconds)
  printf '{"hours": %s, "seconds": %s, "fuzz_seconds": %s, "mode": "%s", "gpus": %s, "workers": %s, "impls": ["%s"], "started": %s, "ended": %s, "status": "%s", "note": "%s", "pid": %s, "host": "%s", "shard": "%s", "shard_index": %s, "shard_count": %s, "seed": "%s", "fuzzer": "%s", "mps": "%s"}\n' \
    "$hours" "$((now - start))" "$((${fuzz_end:-$now} - start))" "$mode" "$gpus" "$workers" \
    "$(json_str "$impl_list" | sed 's/,/", "/g')" "$start" "$now" "$1" "$(json_str "${2:-}")" "$campaign_pid" \
    "$(json_str "$host")" "$shard" "$shard_i" "$shard_n" "$seed" "$(json_str "$fz")" "$(json_str "$mps_state")" \
    > "$out/campaign.json"
}
write_campaign running
flags=(-max_len=256 -timeout=10 -use_value_profile=1 -print_final_stats=1 -reload=1)
# Where a worker's fuzzer reads: its own corpus first (new inputs go there and
# -reload shares them among the workers), then a share's campaign corpus.
[ -f "$root/fuzz/$fuzzer.dict" ] && flags+=(-dict="$root/fuzz/$fuzzer.dict")
inputs=("$out/corpus")
[ -n "$campaign_root" ] && inputs+=("$campaign_root/corpus")
inputs+=("$seeds")

. "$root/fuzz/nightly_worker.sh"

# --- run the workers until the end, a signal, or their own stop --------------
trap_signals
where=$mode; [ $mode = gpu ] && where="over $gpus GPU(s), MPS $mps_state"
say "${shard:+share $shard of the campaign in $campaign_root: }$workers worker(s) $where, impl $impl_list," \
    "${seconds}s, corpus $out/corpus${campaign_root:+ (and $campaign_root/corpus)}"
pids=()
# (each worker notes when it ended: the polling below is 5 s coarse)
for ((w = 0; w < workers; w++)); do { worker $w; date +%s >"$out/work/w$w.ended"; } & pids+=($!); done

# Progress and the timeline: the last libFuzzer status line of each worker
# (exec/s summed over the workers).
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
fuzz_end=$(cat "$out"/work/w*.ended 2>/dev/null | sort -n | tail -1)
if [ -t 2 ]; then echo >&2; elif [ "${status_line:-}" != "${logged:-}" ]; then echo "$status_line" >&2; fi
[ -n "$interrupted" ] && say "stopped by SIG$interrupted after $(( $(date +%s) - start ))s of ${seconds}s"

# A share's corpus is merged with the others' (and the campaign's) by --merge.
[ -z "$shard" ] && merge_corpus "$out/corpus" "$out/logs/merge.log" "$out/known_signatures.txt" "$out/corpus"

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
  exit_interrupted
fi
if [ "$newf" -gt 0 ]; then
  say "$newf new failure(s); cases under $out/failures, report $out/report.md"
  exit 1
fi
[ -n "$gave_up" ] && { say "report $out/report.md"; exit 3; }
say "no new failures; report $out/report.md"
