# evidence: the checks the two GPU issues ask for, as users run them, in one file (evidence.log)
# beside their JSON reports:
#   check-rms.json    gatecheck check --op rmsnorm_modulate --impl cuda --device cuda --seed 34
#                     (the default 60 s: every claimed property, the scale tier, error_inputs and
#                     the memory properties)
#   check-split.json  gatecheck check --impl cuda-repro --impl cuda --device cuda
#                     --properties split_invariance,accuracy --seconds 60 --seed 34
#                     (the two at once: they share the GPU and the host's cores)
#   rms-sweep.json/.html  gatecheck sweep --op rmsnorm_modulate --quick on cuda, the LibTorch op
#                     as users call it, torch eager and torch.compile, compared with RL-Kernel's
#                     B200 report (bench/reference/h3_rmsnorm_b200.json)
# About 4 minutes on the H200 after the build.
. "$(dirname "$0")/../stage_common.sh"
need "$GC"
L="$D/evidence.log"
: > "$L"
one() {  # one NAME ARGS...: a check's command, output and exit code into the log
  local name=$1; shift
  local t0; t0=$(date +%s)
  env -u PYTHONPATH timeout 300 "$GC" "$@" --json "$D/check-$name.json" --corpus "/tmp/corpus-$name" > "/tmp/$name.txt" 2>&1
  echo "## gatecheck $* (exit $?, $(( $(date +%s) - t0 )) s)" > "/tmp/$name.head"
}
one rms check --op rmsnorm_modulate --impl cuda --device cuda --seed 34 &
one split check --impl cuda-repro --impl cuda --device cuda --properties split_invariance,accuracy --seconds 60 --seed 34 &
wait
for n in rms split; do cat "/tmp/$n.head" "/tmp/$n.txt" >> "$L"; echo >> "$L"; done
P=python:gatecheck.peers_rmsnorm_modulate
sweep=(sweep --op rmsnorm_modulate --impl cuda --impl "$P:rmsnorm_modulate_gatecheck_op" --impl torch-eager
       --impl "$P:rmsnorm_modulate_compiled" --device cuda --quick --skip-unavailable --timeout 300
       --json "$D/rms-sweep.json" --html "$D/rms-sweep.html" --corpus /tmp/sweep-corpus
       --compare bench/reference/h3_rmsnorm_b200.json)
t0=$(date +%s)
env -u PYTHONPATH timeout 300 "$GC" "${sweep[@]}" > /tmp/sweep.log 2>&1
echo "## gatecheck ${sweep[*]} (exit $?, $(( $(date +%s) - t0 )) s)" >> "$L"
cat /tmp/sweep.log >> "$L"
grep -E "^## |seed .*claimed|FAIL|inconclusive|verdict" "$L" | cut -c1-220
