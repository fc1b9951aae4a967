# One rmsnorm_modulate kernel under ncu, line by line: its SASS lines with the most stall samples
# and the most instructions executed, its instruction mix, and ncu's sections. For each NAME=REGEX
# in KERNELS (a regex of mangled names), at bf16 32768 x DIM x 9 (DIM: the kernel's own, after a
# colon), into $OUT/profile/NAME-*. From the repository root on the GPU machine, after
#   . .deps/remote-setup.sh && export OUT && BUILD_TARGETS="gatecheck-rmsnorm-bench" bench/device/run.sh rms_iterate
# e.g. KERNELS="onepass=bwd_onepass_kernelINS_6bf16_tELi2ELb1:5376 staged=fwd_staged_kernelINS_6bf16_t:5001"
B=${BUILD:-build-device}; O=$OUT/profile; mkdir -p $O; RB=$B/bench/gatecheck-rmsnorm-bench
cuobjdump -sass $RB > $O/all.sass 2>&1
for item in ${KERNELS:-onepass=bwd_onepass_kernelINS_6bf16_tELi2ELb1:5376}; do
  name=${item%%=*}; rest=${item#*=}; K=${rest%%:*}; dim=${rest##*:}
  timeout 200 ncu --clock-control none --kernel-name-base mangled -k "regex:$K" --launch-count 1 --set full \
    --import-source yes -o $O/$name -f $RB --rows 32768 --dims $dim --gates 9 --dtypes bf16 --reps 1 --no-torch > $O/$name-ncu.log 2>&1
  echo "$name: ncu exit $?"
  ncu --import $O/$name.ncu-rep --page details --print-details all > $O/$name-details.txt 2>&1
  ncu --import $O/$name.ncu-rep --page source --csv --print-source sass > $O/$name-source.csv 2>&1
  python3 - "$O/$name-source.csv" > $O/$name-lines.txt <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
hi = next(i for i, r in enumerate(rows) if any('Sampling' in c for c in r))
h = rows[hi]; body = [r for r in rows[hi + 1:] if len(r) == len(h)]
st = next(i for i, c in enumerate(h) if c.startswith('Warp Stall Sampling (All'))
ex = h.index('Instructions Executed'); src = h.index('Source')
num = lambda r, i: float(r[i].replace(',', '') or 0)
ts, te = sum(num(r, st) for r in body), sum(num(r, ex) for r in body)
print(f'{len(body)} SASS lines; {te:.0f} warp instructions executed')
print('== the 60 lines with the most stall samples')
for r in sorted(body, key=lambda r: -num(r, st))[:60]:
    print(f'{100 * num(r, st) / ts:5.1f}%  {r[0]}  {r[src]}')
print('== every line, in order: instructions executed (share), stall share')
for r in body:
    print(f'{num(r, ex):12.0f} {100 * num(r, ex) / te:5.2f}% {100 * num(r, st) / ts:5.2f}%  {r[0]}  {r[src]}')
PY
  awk -v k="$K" '$0 ~ "Function : " { f = ($0 ~ k) } f' $O/all.sass > $O/$name.sass
  grep -oE '^\s+/\*[0-9a-f]+\*/\s+(@!?U?P[0-9T] )?[A-Z][A-Z0-9_.]*' $O/$name.sass | awk '{print $NF}' | sed 's/\..*//' \
    | sort | uniq -c | sort -rn > $O/$name-mix.txt
  head -3 $O/$name-lines.txt; head -25 $O/$name-mix.txt
  grep -E "Duration|Issued Warp Per Scheduler|Warp Cycles Per Issued|Registers Per|Achieved Occupancy|DRAM Throughput" $O/$name-details.txt | head -8
done
rm -f $O/all.sass
