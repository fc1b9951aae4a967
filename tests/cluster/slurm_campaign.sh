#!/usr/bin/env bash
# The sharded nightly campaign through a real Slurm (run inside
# tests/cluster/slurm_cluster.sh, which sets SLURM_CONF):
#   slurm_campaign.sh campaign|can-fail|all SRC BUILD PLUGIN CRASH_INPUT SEEDS SCRATCH
# SRC: the checkout whose cluster/slurm/submit.sh is run; BUILD: a libFuzzer
# build of the fuzzers (the build job checks it is up to date rather than
# building from nothing); PLUGIN: the planted fused-large-batch mutant;
# CRASH_INPUT + SEEDS: seeds with which every share hits the planted bug at once.
#
# campaign: two submissions of one campaign, at once, each of 4 shares on CPUs:
#   undisturbed: every share ran as an array task, after the build; the merge after
#          every share; the merged report counts every share's cases; the
#          corpus merged and de-duplicated; the planted bug listed once, found
#          by all four shares, with its repro command;
#   disturbed: share 2 killed (SIGKILL) while its crash input is in flight: the
#          merge still runs, names share 2 as not finished and keeps the input
#          with its repro command; share 1 requeued (scontrol requeue) once it
#          has recorded the bug: it runs again and the bug stays in its folder
#          and in the merged report;
#   both:  each run's files in its own folder (the layout check).
# can-fail: the same checks on two broken campaigns, which they must catch: a
#   submit.sh without the merge's --dependency, and a share that writes into
#   another share's folder.
# all: both, the four submissions at once (what ctest runs).
set -uo pipefail
mode=$1 src=$2 build=$3 plugin=$4 crash=$5 seeds=$6 scratch=$7
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../fuzz/nightly_expect.sh"  # check, fails
rm -rf "$scratch" && mkdir -p "$scratch/seeds"
cp "$seeds"/* "$crash" "$scratch/seeds/"
t0=$(date +%s)
elapsed() { echo "$(( $(date +%s) - t0 ))s"; }
json() { python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
records_are() { python3 -c "import json, sys; r = [json.loads(l) for l in open(sys.argv[1])]; sys.exit(not eval(sys.argv[2]))" "$@"; }

# submit SRC_ROOT ARGS...: prints the run folder
submit() {
  local root=$1 log
  shift
  log=$("$root/cluster/slurm/submit.sh" --shards 4 --hours 0.003 --gpus 0 --jobs 1 --seeds "$scratch/seeds" \
        --build-dir "$build" "$@" -- --cpus-per-task=1 2>&1) || { echo "FAIL: submit.sh: $log" >&2; return 1; }
  echo "$log" >&2
  sed -n 's/^submitted: .*; run \(.*\)$/\1/p' <<<"$log"
}
jobid() { sed -n "s/^$2 //p" "$1/jobs.txt"; }  # run kind
# field JOB NAME: NAME=value of every job (or array task) of JOB, one a line
field() { scontrol show job -o "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
wait_for() {  # seconds command...: until the command succeeds
  local limit=$1 i
  shift
  for ((i = 0; i < limit * 5; i++)); do "$@" && return 0; sleep 0.2; done
  return 1
}
ended() { [ -z "$(squeue -h -j "$1" 2>/dev/null)" ]; }
have_crash_input() { compgen -G "$1/crashes/w0-crash-*" >/dev/null; }
has_record() { [ -s "$1/failures.jsonl" ]; }
squeue_snapshot() { echo "\$ squeue"; squeue; }
fails_to() { ! "$@"; }  # the command must fail
descendants() { local c; echo "$1"; for c in $(pgrep -P "$1"); do descendants "$c"; done; }

# Every file of a run in its place: the run's own files, and in each share's
# folder only what nightly.sh writes there (a share writing elsewhere shows).
layout_ok() {  # run
  local run=$1 bad
  bad=$(cd "$run" && find . -mindepth 1 -maxdepth 1 | sed 's|^\./||' | grep -vxE \
    'shards|corpus|slurm-logs|jobs\.txt|known_signatures\.txt|campaign\.json|failures\.jsonl|failures|stats|logs|timeline\.tsv|report\.(json|md|html)|[a-z_]+\.svg|history|\.merge\.lock|\.lock')
  bad+=$(cd "$run/shards" && find . -mindepth 1 -maxdepth 1 | sed 's|^\./||' | grep -vxE '[0-3]')
  for d in "$run"/shards/*/; do
    bad+=$(cd "$d" && find . -mindepth 1 -maxdepth 1 | sed "s|^\./|${d#"$run/"}|" | grep -vE \
      '/(campaign\.json|corpus|crashes|failures|logs|stats|work|known_signatures\.txt|failures\.jsonl|timeline\.tsv|report\.(json|md|html)|[a-z_]+\.svg|history|\.lock)$')
  done
  [ -z "$bad" ] || { echo "    not in its place: $(echo $bad)"; return 1; }
}
# Each share's folder belongs to this run's array (its seed is the array's id),
# and the run's Slurm logs are its own jobs'.
own_files() {  # run
  local run=$1 array i f
  array=$(jobid "$run" array)
  for i in 0 1 2 3; do
    [ "$(json "$run/shards/$i/campaign.json" "d['seed']")" = "$array" ] || { echo "    shards/$i: not array $array's"; return 1; }
  done
  for f in "$run"/slurm-logs/*; do
    grep -qE -- "-($(jobid "$run" build)|$array|$(jobid "$run" merge))_" <<<"$(basename "$f")" ||
      { echo "    $f: not this run's"; return 1; }
  done
}
every_share_an_array_task() {  # run
  local run=$1 array ids
  array=$(jobid "$run" array)
  ids=$(field "$array" ArrayTaskId | sort -n | paste -sd,)
  [ "$ids" = 0,1,2,3 ] || { echo "    array $array tasks: '$ids'"; return 1; }
  for i in 0 1 2 3; do
    [ -f "$run/slurm-logs/gatecheck-shard-${array}_$i.out" ] || { echo "    no log of task $i"; return 1; }
    [ "$(json "$run/shards/$i/campaign.json" "d['shard']")" = "$i/4" ] || { echo "    shards/$i is not share $i/4"; return 1; }
  done
}
# after FIRST SECOND: every job of SECOND started once every job of FIRST had ended
after() {
  local last first
  last=$(field "$1" EndTime | sort | tail -1) first=$(field "$2" StartTime | sort | head -1)
  echo "    $1 ended by $last, $2 started $first"
  [ -n "$last" ] && [ -n "$first" ] && [[ ! $first < $last ]]
}
cases_sum() {  # run: the shares' own case counts, summed
  local run=$1 s=0 i n
  for i in 0 1 2 3; do n=$(json "$run/shards/$i/report.json" "d['cases']") || return 1; s=$((s + n)); done
  echo $s
}
corpus_deduplicated() {  # run
  local run=$1 n dup
  n=$(ls "$run/corpus" | wc -l)
  dup=$(cd "$run/corpus" && md5sum -- * | awk '{print $1}' | sort | uniq -d | wc -l)
  echo "    $n inputs in the merged corpus, $dup duplicated"
  grep -q 'MERGE-OUTER: successful' "$run/logs/merge.log" && [ "$n" -gt 0 ] && [ "$dup" -eq 0 ]
}

# --- can-fail: broken campaigns the checks must catch ------------------------------
can_fail_submit() {  # sets runA, runB
  # A checkout whose submit.sh forgets the merge's dependency.
  broken=$scratch/no-dependency-src
  mkdir -p "$broken/cluster"
  for e in "$src"/*; do [ "$(basename "$e")" = cluster ] || ln -s "$e" "$broken/"; done
  cp -R "$src/cluster/slurm" "$broken/cluster/"
  sed -i 's/ --dependency=afterany:"$array"//' "$broken/cluster/slurm/submit.sh"
  check "the broken submit.sh submits its merge without a dependency" \
    bash -c 'grep -q "job-name=gatecheck-merge" "$0" && ! grep -qF -- "--dependency=afterany:\"\$array\"" "$0"' "$broken/cluster/slurm/submit.sh"
  check "... where this checkout's submit.sh has one" grep -qF -- '--dependency=afterany:"$array"' "$src/cluster/slurm/submit.sh"
  # A share that writes into another share's folder.
  cat >"$scratch/outside.sh" <<'SETUP'
if [ "${SLURM_ARRAY_TASK_ID:-}" = 3 ]; then mkdir -p "$GATECHECK_RUN/shards/0" && echo 3 >"$GATECHECK_RUN/shards/0/from-share-3"; fi
SETUP
  runA=$(submit "$broken" --out "$scratch/no-dependency" --impl host) || exit 1
  runB=$(submit "$src" --out "$scratch/outside" --impl host --setup "$scratch/outside.sh") || exit 1
}
can_fail_check() {
  wait_for 150 ended "$(jobid "$runA" array)"; wait_for 150 ended "$(jobid "$runB" merge)"
  echo "$(elapsed): both broken campaigns ended"
  check "no dependency: caught (the merge started before the shares had ended)" \
    fails_to after "$(jobid "$runA" array)" "$(jobid "$runA" merge)"
  check "outside its folder: caught (the layout check fails)" fails_to layout_ok "$runB"
  check "outside its folder: the rest of that campaign is in order" every_share_an_array_task "$runB"
}

case $mode in campaign|can-fail|all) ;; *) echo "usage: slurm_campaign.sh campaign|can-fail|all ..." >&2; exit 2 ;; esac
if [ "$mode" = can-fail ]; then
  can_fail_submit
  squeue_snapshot
  can_fail_check
  echo "$(elapsed) in all"
  [ "$fails" -eq 0 ] || exit 1
  exit 0
fi

# --- campaign (and, with all, the broken ones at the same time) ----------------------
  # Shares 1 and 2 run the planted plugin, 0 and 3 the host implementation
  # (--setup is sourced by every job; the merge then runs on both).
  echo "case \${SLURM_ARRAY_TASK_ID:-} in 1|2) GATECHECK_IMPLS=plugin:$plugin ;; esac" >"$scratch/impls.sh"
  run_undisturbed=$(submit "$src" --out "$scratch/camp" --setup "$scratch/impls.sh") || exit 1
  sleep 1  # (the run folders are named by the second)
  run_disturbed=$(submit "$src" --out "$scratch/camp" --setup "$scratch/impls.sh") || exit 1
  [ "$mode" = all ] && can_fail_submit
  squeue_snapshot
  a2=$(jobid "$run_disturbed" array)
  # the disturbed campaign, share 2: nightly.sh and every process under it die at once
  # (SIGKILL, as in a node lost) while its crash input is being minimised.
  # (Slurm's scancel turns SIGKILL into a cancel, which nightly.sh gets as
  # SIGTERM and handles: the tree is killed directly, stopped first.)
  if wait_for 60 have_crash_input "$run_disturbed/shards/2" && ! has_record "$run_disturbed/shards/2"; then
    pid=$(json "$run_disturbed/shards/2/campaign.json" "d['pid']")
    tree=$(descendants "$pid")
    echo "$(elapsed): share 2/4 of array ${a2} has a crash input in flight: SIGKILL to its nightly.sh (pid $pid) and all under it"
    kill -STOP $tree 2>/dev/null; kill -KILL $tree 2>/dev/null
  else echo "FAIL: share 2/4 of array ${a2}: no crash input in flight to kill"; fails=$((fails + 1)); fi
  # the disturbed campaign, share 1: requeued once it has recorded the planted bug
  if wait_for 60 has_record "$run_disturbed/shards/1"; then
    echo "$(elapsed): share 1/4 of array ${a2} recorded a failure: scontrol requeue ${a2}_1"
    scontrol requeue "${a2}_1"
    squeue_snapshot
  else echo "FAIL: share 1/4 of array ${a2} recorded nothing to requeue with"; fails=$((fails + 1)); fi
  check "the undisturbed campaign's jobs ended within 150 s" wait_for 150 ended "$(jobid "$run_undisturbed" merge)"
  check "the disturbed campaign's jobs ended within 150 s" wait_for 150 ended "$(jobid "$run_disturbed" merge)"
  echo "$(elapsed): both submissions ended"
  echo "\$ scontrol show job (state, exit code, restarts of each job and array task)"
  for r in "$run_undisturbed" "$run_disturbed"; do
    for k in build array merge; do
      scontrol show job -o "$(jobid "$r" $k)" | while read -r line; do
        grep -oE '^JobId=[0-9]+|ArrayJobId=[0-9]+|ArrayTaskId=[0-9]+|JobName=[^ ]+|JobState=[A-Z]+|Restarts=[0-9]+|ExitCode=[0-9:]+' <<<"$line" | paste -sd' '
      done
    done
  done

  # --- the undisturbed campaign -----------------------------------------------------------
  r=$run_undisturbed a=$(jobid "$run_undisturbed" array)
  check "undisturbed: every share ran as a task of array $a" every_share_an_array_task "$r"
  check "undisturbed: the shares started after the build job" after "$(jobid "$r" build)" "$a"
  check "undisturbed: the merge started after every share had ended" after "$a" "$(jobid "$r" merge)"
  check "undisturbed: every share finished (exit 0, or 1: a new failure)" \
    test "$(field "$a" ExitCode | sort -u | paste -sd,)" = 0:0,1:0
  got=$(json "$r/report.json" "d['cases']") want=$(cases_sum "$r")
  check "undisturbed: the merged report counts every share's cases ($got = $want)" test "${got:-x}" = "${want:-y}" -a "${want:-0}" -gt 0
  check "undisturbed: the corpus merged and de-duplicated" corpus_deduplicated "$r"
  check "undisturbed: the planted bug is one record, found by shares 1/4 and 2/4" records_are "$r/failures.jsonl" \
    "len(r) == 1 and r[0]['signature'].startswith('row_invariance|plugin:') and 'mutant_fused_large_batch' in r[0]['signature'] and r[0]['shards'] == ['1/4', '2/4'] and r[0]['records'] == 2"
  case_file=$(sed -n 's/.*"case":"\([^"]*\)".*/\1/p' "$r/failures.jsonl")
  check "undisturbed: its repro command names the merged case file" grep -qF "gatecheck repro $r/failures/" "$r/failures.jsonl"
  check "undisturbed: the case file fails on the plugin" bash -c '! "$0" check-case --impl "plugin:$1" "$2" >/dev/null 2>&1' \
    "$build/fuzz/gatecheck-fuzz-tools" "$plugin" "$case_file"
  check "undisturbed: the report lists it once" test "$(grep -c '^- \*\*NEW\*\* `row_invariance|plugin:' "$r/report.md")" -eq 1

  # --- the disturbed campaign: a killed share, a requeued share ---------------------------
  r=$run_disturbed
  check "disturbed: every share ran as a task of array $a2" every_share_an_array_task "$r"
  check "disturbed: the merge started after every share had ended" after "$a2" "$(jobid "$r" merge)"
  check "disturbed: share 2's task failed ($(field "${a2}_2" JobState) $(field "${a2}_2" ExitCode))" test "$(field "${a2}_2" JobState)" = FAILED
  check "disturbed: the merged report is incomplete: share 2/4 did not finish" \
    grep -q 'share 2/4 did not finish' "$r/report.md"
  inflight=$(cd "$r/shards/2/crashes" && ls w0-crash-* | head -1)
  check "disturbed: share 2's in-flight crash input $inflight is kept, with its repro command" records_are "$r/failures.jsonl" \
    "any(x['case'] == '$r/failures/$inflight' and x['repro'].endswith(x['case']) and x['shards'] == ['2/4'] for x in r)"
  sed -n "s/.*\"repro\":\"\([^\"]*$inflight\)\".*/    repro: \1/p" "$r/failures.jsonl"
  check "disturbed: share 1's task was requeued once (Restarts=1)" test "$(field "${a2}_1" Restarts)" = 1
  check "disturbed: share 1 ran twice (its first attempt in history/)" test -n "$(ls "$r/shards/1/history" 2>/dev/null)"
  check "disturbed: share 1's second attempt finished" grep -q '"status": "finished"' "$r/shards/1/campaign.json"
  check "disturbed: share 1 kept the planted bug it found before the requeue" \
    grep -q '"signature":"row_invariance|plugin:.*mutant_fused_large_batch' "$r/shards/1/failures.jsonl"
  check "disturbed: the merged report has it from share 1/4" records_are "$r/failures.jsonl" \
    "any('mutant_fused_large_batch' in x['signature'] and '1/4' in x['shards'] for x in r)"

  # --- two submissions, two folders ----------------------------------------------
  check "the runs have folders of their own ($(basename "$run_undisturbed"), $(basename "$run_disturbed"))" test "$run_undisturbed" != "$run_disturbed"
  for r in "$run_undisturbed" "$run_disturbed"; do
    check "$(basename "$r"): every file in its place" layout_ok "$r"
    check "$(basename "$r"): its shares' folders and logs are its own jobs'" own_files "$r"
  done
  check "the campaign folder holds the runs, the merged corpus and the known failures" test \
    "$(cd "$scratch/camp" && ls -A | paste -sd' ')" = ".campaign.lock corpus known_signatures.txt latest runs"
  [ "$mode" = all ] && can_fail_check
  echo "$(elapsed) in all"
  [ "$fails" -eq 0 ] || exit 1

