# budget: does a timed check keep its --seconds on the GPU, under any seed? The seed whose
# scale cases once took 68.8 s of a 20 s budget, then a run of seeds at 10 s each; each line
# gives the wall time beside the budget, the least cases any claimed property held on, and the
# exit code. Files: seed-1054733551882.txt/.json, seeds.txt. About 3 minutes on the H200.
. "$(dirname "$0")/../stage_common.sh"
need "$GC"
least_cases() {  # the fewest cases any claimed property ran, from --json
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); c=[p['cases'] for p in r['results'] if p.get('claimed')]; print(min(c) if c else 'none')" "$1" 2>/dev/null || echo '?'
}
one() {  # one SEED SECONDS FILE: a timed check on cuda, its wall time and its verdict
  local t0 t1 rc
  t0=$(date +%s.%N)
  timeout 300 "$GC" check --impl cuda --device cuda --seconds "$2" --jobs 16 --seed "$1" --json "$3.json" > "$3.txt" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  printf 'seed %-15s budget %3s s  wall %6.1f s  least claimed cases %-6s exit %s  %s\n' "$1" "$2" \
    "$(python3 -c "print($t1 - $t0)")" "$(least_cases "$3.json")" "$rc" "$(tail -1 "$3.txt" | cut -c1-80)"
}
one 1054733551882 20 "$D/seed-1054733551882" | tee "$D/seeds.txt"
for s in 1 42 7 1001 65537 314159 2718281 99991; do one "$s" 10 "/tmp/budget-$s"; done | tee -a "$D/seeds.txt"
