# profile: Nsight Compute (--set full, warp stall sampling) on one call of
# each kernel in PROFILE_KERNELS (regexes; default: the forward and the
# one-kernel backward) at PROFILE_SHAPE (default 4097 x 3072 x 9 bf16,
# random index, the shape where forward+backward misses its target), with
# PROFILE_VARIANT (default fused) as the backward. Per kernel: NAME-details.txt
# (DRAM and L2 traffic, occupancy, stall reasons) and NAME-regions.txt (stall
# samples split at the kernel's barriers, bench/ncu_stall_regions.py).
# About 2 minutes on the H200.
. "$(dirname "$0")/../stage_common.sh"
need "$BENCH"
command -v ncu > /dev/null || { echo "profile: no ncu on this machine"; exit 77; }
shape=${PROFILE_SHAPE:---dtypes bf16 --dims 3072 --rows 4097 --gates 9 --patterns random}
rc=0
for k in ${PROFILE_KERNELS:-fwd_kernel bwd_fused}; do
  name=$(echo "$k" | tr -c 'A-Za-z0-9_\n' '_')
  rep="/tmp/gatecheck-profile-$name"
  echo "## ncu --kernel-name regex:$k --set full: $BENCH $shape --bwd-variants ${PROFILE_VARIANT:-fused}"
  timeout 200 ncu --clock-control none --kernel-name "regex:$k" --launch-skip 5 --launch-count 1 --set full \
    --warp-sampling-interval 2 -f -o "$rep" "$BENCH" $shape --bwd-variants "${PROFILE_VARIANT:-fused}" --no-torch \
    --reps 50 --warmup 2 --warmup-ms 0 > "$D/$name-ncu.log" 2>&1 || { rc=1; tail -5 "$D/$name-ncu.log"; continue; }
  ncu --import "$rep.ncu-rep" --page details > "$D/$name-details.txt" 2>&1
  ncu --import "$rep.ncu-rep" --page source --csv --print-source sass > "$rep-source.csv" 2>&1
  python3 bench/ncu_stall_regions.py "$rep-source.csv" > "$D/$name-regions.txt" 2>&1
  grep -E "^  [a-z_].*\(|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per" "$D/$name-details.txt"
done
echo "profile: $(ls "$D"/*-details.txt 2>/dev/null | wc -l) kernel(s) profiled at $shape"
exit $rc
