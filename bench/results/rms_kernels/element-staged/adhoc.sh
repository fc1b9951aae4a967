# One-off commands after run.sh (their results: $OUT/adhoc; the commands go into the results' cmd.txt).
B=build-device; O=$OUT/adhoc; mkdir -p $O; RB=$B/bench/gatecheck-rmsnorm-bench
timeout 150 $RB --rows 32768,131072 --dims 3072,5376,5001 --gates 9 --dtypes bf16 > $O/table.md 2>&1; echo "table exit $?"
GATECHECK_RMS_FWD_EXP=1 timeout 60 $RB --rows 32768,131072 --dims 5001 --gates 9 --dtypes bf16,f16 --no-torch > $O/table-staged.md 2>&1; echo "staged exit $?"
timeout 60 $RB --rows 32768,131072 --dims 5001 --gates 9 --dtypes f16 --no-torch > $O/table-f16.md 2>&1; echo "f16 exit $?"
timeout 70 $B/cli/gatecheck check --impl cuda-repro --properties split_invariance --device cuda --seconds 30 --jobs 8 --seed 1 --corpus $O/c1 --json $O/split-gr.json > $O/split-gr.txt 2>&1 &
timeout 70 $B/cli/gatecheck check --op rmsnorm_modulate --impl cuda-repro --properties split_invariance --device cuda --seconds 30 --jobs 8 --seed 34 --corpus $O/c2 --json $O/split-rms.json > $O/split-rms.txt 2>&1
wait; echo "checks done"
obj=$(find $B -name "rmsnorm_modulate_cuda.cu.o" | head -1)
for k in _ZN9gatecheck19rmsnorm_cuda_detail10fwd_kernelINS_6bf16_tELb0ELi0ELi3ELi256EEEvNS0_4PtrsE _ZN9gatecheck19rmsnorm_cuda_detail17fwd_staged_kernelINS_6bf16_tELi3ELi256EEEvNS0_4PtrsE; do
  cuobjdump -sass -fun $k $obj > $O/${k:38:20}.sass 2>&1
done; ls -la $O
