# The nightly campaign's worker loop and crash handling, sourced by
# fuzz/nightly.sh (which sets out, fz, tools, flags, inputs, impl_list, mode,
# gpus, gpus_given, workers, seed, shard_i, end, stopfile, campaign_pid and say).

# Stop when the campaign asks (the stop file, written on SIGINT/SIGTERM) or
# is gone (SIGKILLed: its workers, re-parented, must not fuzz on to the end).
stopping() { [ -e "$stopfile" ] || ! kill -0 "$campaign_pid" 2>/dev/null; }

# A worker's SIGINT (Ctrl-C reaches the whole process group), SIGTERM and SIGHUP
# (a lost terminal's, to the group too) stop its loop, not the worker: it still
# waits for its fuzzer. (A subshell left to die of them left nothing waiting
# for a fuzzer slow to exit.)
stop_on_signals() { trap 'touch "$stopfile"' INT TERM HUP; }
# Runs "$@" with SIGINT, SIGTERM and SIGHUP ignored, so that a subshell it
# starts begins with them ignored too (one that traps them would die of them).
with_signals_ignored() {
  local rc
  trap '' INT TERM HUP
  "$@"
  rc=$?
  stop_on_signals
  return $rc
}

# Runs "$@" in the background and returns its status once it has exited. A
# watchdog sends it SIGTERM as soon as stopping is true, so that a fuzzer run
# of hours (or a minimisation, a replay) does not outlive the campaign, and
# SIGKILL if it is still there 10 s later (a plugin may catch SIGTERM). The
# watchdog starts with SIGINT, SIGTERM and SIGHUP ignored: Ctrl-C reaches the whole
# process group, and the watchdog must outlive it to stop what does not stop
# by itself. The watchdog is stopped with SIGKILL for the same reason.
run_watched() {
  "$@" &
  local pid=$! wd rc again what a
  for a in "$@"; do case $a in env | *=*) ;; *) what=$(basename "$a"); break ;; esac; done
  start_watchdog() {
    ( while ! stopping; do sleep 1; done
      kill -TERM "$pid" 2>/dev/null || exit 0
      for ((i = 0; i < 10; i++)); do sleep 1; kill -0 "$pid" 2>/dev/null || exit 0; done
      say "$what (pid $pid) did not stop 10 s after SIGTERM; sent SIGKILL" 2>&3
      kill -KILL "$pid" 2>/dev/null ) &
    wd=$!
  }
  with_signals_ignored start_watchdog
  # A trapped signal ends a wait early (status > 128): wait until the process
  # is gone, then once more for its own status (127: the last wait had it).
  wait "$pid"; rc=$?
  while [ $rc -gt 128 ] && kill -0 "$pid" 2>/dev/null; do wait "$pid"; rc=$?; done
  if [ $rc -gt 128 ]; then wait "$pid" 2>/dev/null; again=$?; [ $again -ne 127 ] && rc=$again; fi
  kill -KILL "$wd" 2>/dev/null; wait "$wd" 2>/dev/null
  return $rc
}

give_up() {  # worker reason: the campaign then ends with status "failed", exit 3
  echo "$2" >"$out/work/w$1.gaveup"
  say "worker $1 gave up: $2"
}

# Appends one failure line (JSON from `regress`, or made below) to
# failures.jsonl, new or known by signature. Returns 0 if it was new. The
# locked subshell starts with SIGINT, SIGTERM and SIGHUP ignored (record_failure is
# called with_signals_ignored), so that Ctrl-C cannot cut a record in half.
record_failure() {  # worker json-line
  local w=$1 line=$2 sig
  sig=$(printf '%s' "$line" | sed -n 's/.*"signature":"\([^"]*\)".*/\1/p')
  (
    flock 9
    if grep -qxF "$sig" "$out/known_signatures.txt"; then isnew=false; else isnew=true; echo "$sig" >>"$out/known_signatures.txt"; fi
    printf '{"new":%s,"worker":%s,%s\n' "$isnew" "$w" "${line#\{}" >>"$out/failures.jsonl"
    [ $isnew = true ] && say "NEW failure $sig: $(printf '%s' "$line" | sed -n 's/.*"repro":"\([^"]*\)".*/\1/p')"
    [ $isnew = true ]
  ) 9>"$out/.lock"
}

# The record for a crash input that `regress` could not turn into a case:
# its replay died too (a crash in gatecheck's own code, or a plugin that only
# crashes after earlier calls), found nothing (a timeout, an out-of-memory,
# a failure that does not repeat), or the campaign stopped first. The input
# and the fuzzer's repro command are the evidence.
unreplayed_record() {  # crash-file min-file fuzzer-log regress-rc
  local crash=$1 min=$2 flog=$3 rc=$4 kind tag why summary sig
  kind=$(basename "$crash" | sed -n 's/^w[0-9]*-\([a-z-]*\)-[0-9a-f]*$/\1/p')  # crash, timeout, oom, leak, slow-unit
  if stopping; then tag=not-replayed why="the campaign stopped before the replay finished"
  elif [ "$rc" -eq 3 ]; then tag=not-reproduced why="the replay found no failure"
  elif [ "$rc" -gt 128 ]; then
    sig=SIG$(kill -l $((rc - 128)) 2>/dev/null || echo $((rc - 128)))
    tag=replay-died-$sig why="the replay died too, of $sig"
  else tag=replay-exited-$rc why="the replay exited $rc"; fi
  summary=$(grep -a -m1 -E 'SUMMARY: |ERROR: libFuzzer|ALARM: |deadly signal|==ERROR' "$flog" | sed 's/^==[0-9]*==//')
  printf '{"signature":"fuzzer-%s|%s|%s","property":"-","impl":"%s","case":"%s","repro":"GATECHECK_FUZZ_IMPL=%s %s %s","shape":"the crash input (no case: %s)","summary":"%s","input":"%s","crash":"%s (see logs/regress.log)"}\n' \
    "${kind:-crash}" "$(json_str "$impl_list")" "$tag" "$(json_str "$impl_list")" \
    "$(json_str "$min")" "$(json_str "$impl_list")" "$(json_str "$fz")" "$(json_str "$min")" \
    "$(json_str "$why")" "$(json_str "${summary:-the fuzzer stopped on this input}")" "$(json_str "$crash")" \
    "$(json_str "$why")"
}

# A crash: minimise the bytes, make the regression case(s), de-duplicate.
# Returns 0 if it recorded a new failure, 1 if only known ones, 2 if the
# replay could not even start (exit 2: a set-up error that nightly.sh's own
# checks missed, not a finding; the worker counts it as an error).
process_crash() {  # worker crash-file ignore-list fuzzer-log
  local w=$1 crash=$2 ignore=$3 flog=$4 name min lines rc line new=1
  name=$(basename "$crash")
  min=$out/crashes/min-$name
  # a crash found near the end must not keep the campaign 30 s past it
  local secs=$(( end - $(date +%s) )); [ $secs -gt 30 ] && secs=30; [ $secs -lt 5 ] && secs=5
  run_watched env GATECHECK_FUZZ_IGNORE="$ignore" GATECHECK_FUZZ_FAILURES="$out/work/w$w" \
    "$fz" -minimize_crash=1 -max_total_time=$secs -exact_artifact_path="$min" "$crash" >"$out/logs/min-$name.log" 2>&1
  [ -s "$min" ] || min=$crash
  lines=$out/work/regress-$name.jsonl
  # Without ASan's SEGV handler a crashing replay child dies of the signal
  # itself, and the record names it (with it: "exited with status 1").
  run_watched env ASAN_OPTIONS="$ASAN_OPTIONS:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0" \
    "$tools" regress "$min" --out "$out/failures" >"$lines" 2>>"$out/logs/regress.log"
  rc=$?
  if [ $rc -eq 2 ] && ! stopping; then return 2; fi
  [ $rc -eq 0 ] && [ -s "$lines" ] || unreplayed_record "$crash" "$min" "$flog" "$rc" >"$lines"
  while read -r line; do with_signals_ignored record_failure "$w" "$line" && new=0; done <"$lines"
  return $new
}

# With --seed S, fuzzer run r of worker w in share I gets -seed=S + 1000*(I*M + w) + r
# (M workers; below 2^31, and never 0, which would mean "pick one"): no two
# shares, workers or runs follow the same random sequence, and the log names it.
run_seed() {  # worker run
  [ -n "$seed" ] || return 0
  local s=$(( (seed + 1000 * (shard_i * workers + $1) + $2) % 2147483648 ))
  echo "-seed=$(( s == 0 ? 1 : s ))"
}

# Several workers per GPU: worker w runs on GPU w mod N, N = --gpus. Where the
# campaign was given a list of GPUs (a scheduler's CUDA_VISIBLE_DEVICES, such as
# Slurm's "2,3"), those are the N GPUs, in that order.
gpu_of_worker() {  # worker
  local given=() g
  IFS=, read -ra given <<<"${gpus_given:-}"
  g=$(($1 % gpus))
  echo "${given[$g]:-$g}"
}

worker() {  # index
  stop_on_signals
  local w=$1 run=0 errors=0 repeats=0 fuzzed=no left ignore log rc crash
  while ! stopping; do
    left=$(( end - $(date +%s) ))
    [ $left -le 2 ] && break
    log=$out/logs/w$w-r$run.log
    ignore=$(paste -sd, "$out/known_signatures.txt")
    if [ $mode = gpu ]; then export CUDA_VISIBLE_DEVICES; CUDA_VISIBLE_DEVICES=$(gpu_of_worker "$w"); fi
    run_watched env GATECHECK_FUZZ_IGNORE="$ignore" GATECHECK_FUZZ_STATS="$out/stats/w$w-r$run.json" \
      GATECHECK_FUZZ_FAILURES="$out/work/w$w" \
      "$fz" "${flags[@]}" $(run_seed "$w" "$run") -max_total_time=$left -artifact_prefix="$out/crashes/w$w-" \
      "${inputs[@]}" >"$log" 2>&1
    rc=$?
    run=$((run + 1))
    grep -q 'INITED' "$log" && fuzzed=yes
    crash=$(sed -n 's/.*Test unit written to \([^ ]*\).*/\1/p' "$log" | tail -1)
    if [ -n "$crash" ]; then  # processed even when stopping: it becomes a record
      process_crash "$w" "$crash" "$ignore" "$log"
      case $? in
        0) repeats=0 ;;
        1) repeats=$((repeats + 1))
           if [ $repeats -ge 3 ] && ! stopping; then
             give_up "$w" "its fuzzer stopped 3 times in a row on known failures (a crash cannot be skipped; see $out/failures.jsonl)"
             break
           fi ;;
        *) errors=$((errors + 1))
           say "worker $w: the crash input $crash could not be replayed: $(tail -n 1 "$out/logs/regress.log")" ;;
      esac
    # 72: libFuzzer interrupted (a signal), not an error; nor is any end once
    # stopping (the watchdog's SIGTERM or SIGKILL, or SIGPIPE from a symbolizer
    # the group's signal killed)
    elif [ $rc -ne 0 ] && [ $rc -ne 72 ] && ! stopping; then
      errors=$((errors + 1))
      say "worker $w: fuzzer exited $rc without a crash input (see $log)"
    fi
    stopping && return
    if [ $errors -ge 3 ]; then give_up "$w" "its fuzzer failed $errors times (see $out/logs/w$w-r*.log)"; return; fi
    [ $errors -gt 0 ] && sleep 1
  done
  # A worker whose fuzzer failed and never started fuzzing has tested nothing.
  if [ $errors -gt 0 ] && [ $fuzzed = no ] && ! stopping; then
    give_up "$w" "its fuzzer failed $errors time(s) and never started fuzzing (see $out/logs/w$w-r*.log)"
  fi
}
