# state_op_trace: the state op's crash at a 1-D grad_out under the device's PyTorch
# (kernels/torch_op/README.md), traced. tests/split/torch_op_state_test.py --errors-only runs the
# argument checks alone in a fresh process, on cuda and then on cpu; where one fails, it runs
# again under cuda-gdb in batch mode, which prints the C++ backtrace where it stopped. Build
# first: BUILD_TARGETS="gatecheck_torch_op gc_test_plugin_repro". Files: cmd.txt, DEVICE.log,
# DEVICE-gdb.log. Exit 0 when both pass (nothing to trace), 1 when one fails, 77 without cuda-gdb.
# Under a minute once built.
. "$(dirname "$0")/../stage_common.sh"
LIB="$BUILD/kernels/torch_op/libgatecheck_torch_op.so"
PLUGIN="$BUILD/tests/split/libgc_test_plugin_repro.so"
[ -f "$LIB" ] && [ -f "$PLUGIN" ] ||
  { echo "state_op_trace: build gatecheck_torch_op and gc_test_plugin_repro first ($LIB, $PLUGIN)"; exit 1; }
command -v cuda-gdb > /dev/null || { echo "state_op_trace: no cuda-gdb on this machine"; exit 77; }
py=$(sed -n 's/^GATECHECK_TORCH_PYTHON:FILEPATH=//p' "$BUILD/CMakeCache.txt")
rc=0
for dev in cuda cpu; do
  cmd=("${py:-python3}" tests/split/torch_op_state_test.py "$LIB" "$PLUGIN" "$dev" --errors-only)
  echo "${cmd[*]}" >> "$D/cmd.txt"
  timeout 60 "${cmd[@]}" > "$D/$dev.log" 2>&1
  r=$?
  echo "$dev: exit $r ($(tail -1 "$D/$dev.log" | cut -c1-120))"
  [ "$r" -eq 0 ] || [ "$r" -eq 77 ] && continue
  rc=1
  timeout 150 cuda-gdb -q -batch -ex 'set pagination off' -ex run -ex bt --args "${cmd[@]}" > "$D/$dev-gdb.log" 2>&1
  grep -E "^#[0-9]+ " "$D/$dev-gdb.log" | head -25 | cut -c1-220
done
exit $rc
