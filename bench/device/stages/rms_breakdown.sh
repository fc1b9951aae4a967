# rms_breakdown: where rmsnorm_modulate's backward spends its time, kernel by kernel.
# ncu (clocks as they run, caches as they are) times every kernel of the benchmark's first
# forward and backward, at each SHAPES item (ROWSxDIMxGATES, bf16); the benchmark beside it
# gives the whole call, so the sum's shortfall is the gaps between kernels. File: breakdown.log.
. "$(dirname "$0")/../stage_common.sh"
RB="$BUILD/bench/gatecheck-rmsnorm-bench"
need "$RB"
L="$D/breakdown.log"
: > "$L"
for s in ${SHAPES:-4097x5376x9 32768x5376x9 32768x3072x32}; do
  IFS=x read -r r d g <<< "$s"
  {
    echo "== $s"
    timeout 120 ncu --clock-control none --cache-control none --launch-count 40 --metrics gpu__time_duration.sum \
      --csv "$RB" --rows "$r" --dims "$d" --gates "$g" --dtypes bf16 --reps 1 > "$D/ncu-$s.csv" 2>&1
    grep -E 'gpu__time_duration' "$D/ncu-$s.csv" | awk -F'","' '{ printf "%-4s %-70s %s %s\n", $1, substr($5, 1, 70), $(NF-1), $NF }' | tr -d '"'
    timeout 60 "$RB" --rows "$r" --dims "$d" --gates "$g" --dtypes bf16 2>&1 | tail -1
  } >> "$L" 2>&1
done
cat "$L" | cut -c1-160
