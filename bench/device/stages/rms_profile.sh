# rms_profile: where rmsnorm_modulate's kernels spend their time, at bf16 32768 x 5376 with 9
# gates (the issue's shape): each kernel of one forward and one backward under ncu, alone, with
# its DRAM and L2 bytes, DRAM and SM throughput, issue activity, occupancy and launch shape. File: profile.txt.
# About a minute on the H200.
. "$(dirname "$0")/../stage_common.sh"
RB="$BUILD/bench/gatecheck-rmsnorm-bench"
need "$RB"
M=gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size,launch__block_size,launch__shared_mem_per_block_dynamic
timeout 150 ncu --clock-control none --metrics "$M" --print-units base --launch-count 24 --csv "$RB" --rows 32768 \
  --dims "${DIMS:-5376}" --gates 9 --dtypes bf16 --reps 1 2>/dev/null | python3 -c "
import csv, sys, collections
rows = [r for r in csv.reader(l for l in sys.stdin if l.startswith('\"')) if len(r) > 10]
h = rows[0]; K = collections.OrderedDict()
for r in rows[1:]:
    key = (r[h.index('ID')], r[h.index('Kernel Name')][:60])
    K.setdefault(key, {})[r[h.index('Metric Name')]] = r[h.index('Metric Value')].replace(',', '')
short = {'gpu__time_duration.sum': ('us', 1e-3), 'sm__throughput.avg.pct_of_peak_sustained_elapsed': ('sm%', 1),
         'smsp__issue_active.avg.pct_of_peak_sustained_active': ('issue%', 1), 'dram__bytes_read.sum': ('rd MB', 1e-6), 'dram__bytes_write.sum': ('wr MB', 1e-6),
         'lts__t_bytes.sum': ('L2 MB', 1e-6), 'dram__throughput.avg.pct_of_peak_sustained_elapsed': ('dram%', 1),
         'sm__warps_active.avg.pct_of_peak_sustained_active': ('occ%', 1), 'launch__registers_per_thread': ('regs', 1),
         'launch__grid_size': ('grid', 1), 'launch__block_size': ('block', 1), 'launch__shared_mem_per_block_dynamic': ('dsmem', 1)}
print(' '.join(f'{v[0]:>8}' for v in short.values()), ' kernel')
for (i, name), m in K.items():
    print(' '.join(f'{float(m.get(k, \"nan\")) * v[1]:8.1f}' for k, v in short.items()), '', name)
" > "$D/profile.txt" 2>&1
cat "$D/profile.txt"
