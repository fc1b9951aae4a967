# split_invariance on cuda-repro for 30 s on each op at once, with the scale tier's cost model
# of this commit: how much of its share the tier uses, and what ran past it. From the
# repository root after bench/device/run.sh (its build in build-device); results in $OUT/adhoc.
B=build-device; O=$OUT/adhoc; mkdir -p $O
timeout 70 $B/cli/gatecheck check --impl cuda-repro --properties split_invariance --device cuda --seconds 30 --jobs 8 --seed 1 --corpus $O/c1 --json $O/split-gr.json > $O/split-gr.txt 2>&1 &
timeout 70 $B/cli/gatecheck check --op rmsnorm_modulate --impl cuda-repro --properties split_invariance --device cuda --seconds 30 --jobs 8 --seed 34 --corpus $O/c2 --json $O/split-rms.json > $O/split-rms.txt 2>&1
wait; echo "checks done"
