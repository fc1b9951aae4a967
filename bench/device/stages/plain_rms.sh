# plain_rms: rmsnorm_modulate's plain_bitwise_vs_nn_rmsnorm where LibTorch has at::rms_norm
# (PyTorch 2.4 and later): the plain part's tests (the rms_norm ones on the CPU and CUDA, which skip
# without rms_norm, and the F.rms_norm peer's sweep, whose field must be true), then a quick sweep
# on cuda of cuda, torch-eager and the F.rms_norm and diffusers peers against RL-Kernel's report.
# Files: ctest.log, sweep.json, sweep.html, sweep.txt. A few minutes after the build.
. "$(dirname "$0")/../stage_common.sh"
need "$GC"
(cd "$BUILD" && timeout 200 ctest -R "SweepPlain|sweep_plain_rms_norm_peer_is_bitwise|sweep_rmsnorm_quick_cpu" \
  --output-on-failure > "$D/ctest.log" 2>&1)
rc=$?
echo "ctest rc=$rc: $(grep -E 'tests passed' "$D/ctest.log"), $(grep -cE '\(Skipped\)' "$D/ctest.log") skipped"
grep -E "^\s*[0-9]+ - .*(Failed|Timeout|Skipped)" "$D/ctest.log" | head
env -u PYTHONPATH timeout 300 "$GC" sweep --op rmsnorm_modulate --impl cuda --impl torch-eager \
  --impl python:gatecheck.peers:rmsnorm_modulate_rms_norm --impl python:gatecheck.peers:rmsnorm_modulate_diffusers \
  --device cuda --quick --reps 0 --json "$D/sweep.json" --html "$D/sweep.html" \
  --compare bench/reference/h3_rmsnorm_b200.json --corpus /tmp/plain-rms-corpus > "$D/sweep.txt" 2>&1
echo "sweep rc=$?"
grep -E "^plain_bitwise_vs_nn_rmsnorm |plain_bitwise_vs_nn_rmsnorm (true|false|not computed)|^  S=|plain_bitwise_vs_nn_rmsnorm\." "$D/sweep.txt"
tail -1 "$D/sweep.txt"
exit $rc
