# Where the one-pass backward's warps wait, at bf16 32768 x 5376 x 9 (its sums in shared memory):
# ncu's full set on one launch (onepass.ncu-rep; details.txt), its SASS lines with the most stall
# samples (hot-lines.txt), the SASS's instruction mix (mix.txt), and each kernel of a forward and
# backward alone (kernels.txt). From the repository root on the GPU machine, after
#   . .deps/remote-setup.sh && export OUT && BUILD_TARGETS="gatecheck-rmsnorm-bench" bench/device/run.sh rms_iterate
B=build-device; O=$OUT/stalls; mkdir -p $O; RB=$B/bench/gatecheck-rmsnorm-bench
K='regex:bwd_onepass_kernelINS_6bf16_tELi2ELb1'
timeout 200 ncu --clock-control none --kernel-name-base mangled -k "$K" --launch-count 1 --set full \
  --import-source yes -o $O/onepass -f $RB --rows 32768 --dims 5376 --gates 9 --dtypes bf16 --reps 1 --no-torch > $O/ncu.log 2>&1
echo "ncu exit $?"
ncu --import $O/onepass.ncu-rep --page details --print-details all > $O/details.txt 2>&1
ncu --import $O/onepass.ncu-rep --page source --csv --print-source sass > $O/source.csv 2>&1
python3 - "$O/source.csv" > $O/hot-lines.txt <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
hi = next(i for i, r in enumerate(rows) if any('Sampling' in c for c in r))
h = rows[hi]; body = [r for r in rows[hi + 1:] if len(r) == len(h)]
col = next(i for i, c in enumerate(h) if c.startswith('Warp Stall Sampling (All'))
src = next(i for i, c in enumerate(h) if c == 'Source')
tot = sum(float(r[col] or 0) for r in body)
print('columns:', h)
for r in sorted(body, key=lambda r: -float(r[col] or 0))[:60]:
    print(f'{100 * float(r[col] or 0) / tot:5.1f}%  ' + '  '.join(r[:3]) + '  ' + r[src])
PY
cuobjdump -sass -fun bwd_onepass_kernel $RB 2>/dev/null > $O/all.sass || cuobjdump -sass $RB > $O/all.sass
awk '/Function : .*bwd_onepass_kernelINS_6bf16_tELi2ELb1/{f=1;next} /Function :/{f=0} f' $O/all.sass > $O/onepass.sass
grep -oE '^\s+/\*[0-9a-f]+\*/\s+(@!?U?P[0-9T] )?[A-Z][A-Z0-9_.]*' $O/onepass.sass | awk '{print $NF}' | sed 's/\..*//' \
  | sort | uniq -c | sort -rn > $O/mix.txt
rm -f $O/all.sass
timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum --print-units base --launch-count 24 --csv $RB --rows 32768 \
  --dims 5376 --gates 9 --dtypes bf16 --reps 1 --no-torch 2>/dev/null | python3 bench/device/ncu_kernel_times.py > $O/kernels.txt 2>&1
head -70 $O/hot-lines.txt | cut -c1-200; head -40 $O/mix.txt; grep -iE "stall|cycles being|Duration|Throughput" $O/details.txt | head -40; cat $O/kernels.txt
# Everything under $OUT in one file that comes back (the tool returns at most 8).
bash bench/device/pack_out.sh "$OUT"
