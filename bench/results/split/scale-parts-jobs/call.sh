# Why gate_residual's split_invariance scale cases on cuda-repro take so long a part: the
# same check (seed 35, 20 s) with 16 jobs and with one, each scale case's parts and time,
# and the same for rmsnorm_modulate beside it. From the repository root on the GPU machine,
# after a bench/device/run.sh whose build has the gatecheck target (build-device).
B=build-device; O=$OUT/scale-parts-jobs; mkdir -p $O; GC=$B/cli/gatecheck
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > $O/machine.txt
nproc > $O/cpus.txt
for op in gate_residual rmsnorm_modulate; do
  for jobs in 16 1; do
    /usr/bin/time -f "%e s wall, %U s user, %S s system" -o $O/$op-jobs$jobs.time timeout 100 $GC check --op $op \
      --impl cuda-repro --properties split_invariance --device cuda --seed 35 --seconds 20 --jobs $jobs \
      --json $O/$op-jobs$jobs.json > $O/$op-jobs$jobs.txt 2>&1
    echo "$op jobs $jobs exit $?: $(cat $O/$op-jobs$jobs.time)"
  done
done
python3 - $O/*.json <<'PY'
import json, sys
for f in sys.argv[1:]:
    for r in json.load(open(f)).get('results', []):
        print(f.split('/')[-1], r.get('verdict'), r.get('cases'), 'cases')
        for s in r.get('scale_runs', []):
            print('   %-70s %3d parts %7.2f s (%.1f ms a part), estimated %.2f' % (s['case'][:70], s['parts'], s['seconds'],
                  1e3 * s['seconds'] / max(1, s['parts']), s['estimate_seconds']))
        print('   skipped', len(r.get('scale_skipped', [])))
PY
bash bench/device/pack_out.sh "$OUT"
