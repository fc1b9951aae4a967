# The issues' check targets on the GPU, each a whole check at the issues' 60 s, scale tier included:
# split_invariance on cuda-repro for each op (issue 35), and rmsnorm_modulate's default check on
# cuda, every claimed property (issue 34). From the repository root on the GPU machine, after a
# bench/device/run.sh whose build has the gatecheck target (build-device). Files under $OUT/targets.
B=build-device; O=$OUT/targets; mkdir -p $O; GC=$B/cli/gatecheck
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > $O/machine.txt
for op in gate_residual rmsnorm_modulate; do
  timeout 200 $GC check --op $op --impl cuda-repro --properties split_invariance --device cuda --seed 35 --seconds 60 \
    --corpus $O/corpus-split-$op --json $O/split-$op.json > $O/split-$op.txt 2>&1
  echo "split_invariance $op exit $?"
done
timeout 200 $GC check --op rmsnorm_modulate --impl cuda --device cuda --seed 34 --seconds 60 --corpus $O/corpus-rms-cuda \
  --json $O/rms-cuda.json > $O/rms-cuda.txt 2>&1
echo "rmsnorm_modulate cuda exit $?"
for f in $O/split-gate_residual.txt $O/split-rmsnorm_modulate.txt $O/rms-cuda.txt; do
  echo "== $f"; grep -E "^(cuda|implementation|---)|scale tier|over its time|FAIL" $f | head -30
done
python3 - $O/split-gate_residual.json $O/split-rmsnorm_modulate.json <<'PY'
import json, sys
for f in sys.argv[1:]:
    j = json.load(open(f))
    for r in j.get('results', []):
        sk = r.get('scale_skipped', [])
        runs = r.get('scale_runs', [])
        print(f, r.get('impl'), r.get('property'), r.get('verdict'), r.get('cases'), 'cases;', len(runs),
              'scale cases in', round(sum(x.get('seconds', 0) for x in runs), 2), 's;', len(sk), 'skipped')
        for s in sk[:6]: print('   ', s)
PY
# Everything under $OUT in one file that comes back (the tool returns at most 8).
bash bench/device/pack_out.sh "$OUT"
