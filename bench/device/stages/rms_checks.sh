# rms_checks: rmsnorm_modulate checked on cuda as users run it, at once, sharing the GPU:
#   check-cuda.{txt,json}       gatecheck check --op rmsnorm_modulate --impl cuda --device cuda --seconds 60
#   check-compiled.{txt,json}   the torch.compile peer, 60 s, 2 jobs (Inductor compiles on the CPU: 16
#                               workers compiling at once starve each other past the hang timeout)
#   check-diffusers.{txt,json}  diffusers' eager composition, 60 s, under its CUDA contract
#   checks.txt                  each command, its exit code and wall time
# LIMIT (default 300) caps each check's wall time. About 5 minutes on the H200.
. "$(dirname "$0")/../stage_common.sh"
need "$GC"
LIMIT=${LIMIT:-300}
one() {  # one NAME ARGS...: a check, its command, output and exit code
  local name=$1; shift
  local cmd="$GC check --op rmsnorm_modulate $* --device cuda --seconds 60 --seed 34 --json $D/check-$name.json"
  local t0; t0=$(date +%s)
  env -u PYTHONPATH timeout "$LIMIT" $cmd --corpus "/tmp/corpus-$name" > "$D/check-$name.txt" 2>&1
  echo "$name: exit $? after $(( $(date +%s) - t0 )) s: $cmd" > "/tmp/rc-$name"
}
one cuda --impl cuda &
one compiled --impl python:gatecheck.peers:rmsnorm_modulate_compiled --jobs 2 --timeout 300 &
one diffusers --impl python:gatecheck.peers:rmsnorm_modulate_diffusers &
wait
cat /tmp/rc-cuda /tmp/rc-compiled /tmp/rc-diffusers > "$D/checks.txt"
for n in cuda compiled diffusers; do
  echo "$(cut -d: -f1-2 /tmp/rc-$n); $(grep -E 'FAIL|finding|hung' "$D/check-$n.txt" | tr -s ' ' | tr '\n' ';' | cut -c1-600)"
done
