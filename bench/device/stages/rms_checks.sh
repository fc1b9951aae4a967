# rms_checks: rmsnorm_modulate checked on cuda as users run it, at once, sharing the GPU:
#   check-cuda.{txt,json}   gatecheck check --op rmsnorm_modulate --impl cuda --device cuda (the default 60 s)
#   check-compiled.*        the torch.compile peer, 60 s (Inductor's compiles inside its time)
#   check-diffusers.*       diffusers' eager composition, 60 s, under its CUDA contract
# About 5 minutes on the H200.
. "$(dirname "$0")/../stage_common.sh"
need "$GC"
one() {  # one NAME TIMEOUT ARGS...: a check, its command, output and exit code
  local name=$1 limit=$2; shift 2
  echo "$GC check --op rmsnorm_modulate $* --device cuda --seed 34 --json $D/check-$name.json" > "$D/check-$name.cmd"
  local t0; t0=$(date +%s)
  env -u PYTHONPATH timeout "$limit" "$GC" check --op rmsnorm_modulate "$@" --device cuda --seed 34 --corpus "$D/corpus-$name" \
    --json "$D/check-$name.json" > "$D/check-$name.txt" 2>&1
  echo "$? after $(( $(date +%s) - t0 )) s" > "$D/check-$name.rc"
}
one cuda 200 --impl cuda &
one compiled 420 --impl python:gatecheck.peers:rmsnorm_modulate_compiled --seconds 60 &
one diffusers 200 --impl python:gatecheck.peers:rmsnorm_modulate_diffusers --seconds 60 &
wait
for n in cuda compiled diffusers; do
  echo "$n: exit $(cat "$D/check-$n.rc"); $(grep -E '^seed|inconclusive|FAIL|finding' "$D/check-$n.txt" | tr '\n' ' ' | cut -c1-400)"
done
