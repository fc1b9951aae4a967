# torch_op_link: where the torch op library's copy of libstdc++ code comes from, and which link
# keeps it out. Under the device's PyTorch the state op crashed formatting a number into an error
# message: its backtrace (stage state_op_trace) ran std::ostream::_M_insert<long> and libstdc++'s
# facet code from libgatecheck_torch_op.so itself, not from libstdc++.so.6. A library loaded
# RTLD_LOCAL by Python binds to its own copy first, and that copy's locale ids are not the
# process's. This stage prints the link line, what the library defines and exports of libstdc++,
# which archive on the link line defines it, then relinks the library three ways and runs the
# state op's argument checks (tests/split/torch_op_state_test.py --errors-only, cpu and cuda) with
# each; the first link that passes then runs the whole TorchOp.SplitState tests in its place.
# Build first: BUILD_TARGETS="gatecheck_torch_op gc_test_plugin_repro". Files: link.txt,
# symbols.txt, VARIANT-DEVICE.log, ctest.log. Exit 0 when the library as built passes.
. "$(dirname "$0")/../stage_common.sh"
dir="$BUILD/kernels/torch_op"
LIB="$dir/libgatecheck_torch_op.so"
PLUGIN="$BUILD/tests/split/libgc_test_plugin_repro.so"
link="$dir/CMakeFiles/gatecheck_torch_op.dir/link.txt"
[ -f "$LIB" ] && [ -f "$PLUGIN" ] && [ -f "$link" ] ||
  { echo "torch_op_link: build gatecheck_torch_op and gc_test_plugin_repro first"; exit 1; }
py=$(sed -n 's/^GATECHECK_TORCH_PYTHON:FILEPATH=//p' "$BUILD/CMakeCache.txt")
py=${py:-python3}
cp "$link" "$D/link.txt"
{
  echo "== libstdc++ code defined in the library (T/W: defined here)"
  nm -C "$LIB" | grep -E "codecvt<char16_t, char, __mbstate_t>::do_unshift|ostream::_M_insert<long>|num_put<char" | head -20
  echo "defined std:: symbols, exported: $(nm -C -D --defined-only "$LIB" | grep -c ' std::'), all: $(nm -C --defined-only "$LIB" | grep -c ' std::')"
  echo "== ldd"; ldd "$LIB"
  echo "== archives on the link line that define ostream::_M_insert<long> or the codecvt member"
  for a in $(tr ' ' '\n' < "$link" | grep '\.a$'); do
    f=$(cd "$dir" && realpath "$a" 2> /dev/null) || continue
    echo "$a: $(nm -A -C --defined-only "$f" 2> /dev/null | grep -cE "ostream::_M_insert<long>|codecvt<char16_t, char, __mbstate_t>::do_unshift")"
  done
  for l in $(tr ' ' '\n' < "$link" | sed -n 's/^-l//p' | sort -u); do
    for f in $(gcc -print-file-name="lib$l.a") /usr/local/cuda/lib64/lib"$l".a; do
      [ -f "$f" ] && echo "-l$l ($f): $(nm -A -C --defined-only "$f" 2> /dev/null | grep -cE "ostream::_M_insert<long>|codecvt<char16_t, char, __mbstate_t>::do_unshift")"
    done
  done
} > "$D/symbols.txt" 2>&1
head -8 "$D/symbols.txt"

# The variants: as built; static archives' symbols kept local; the shared libstdc++ ahead of
# every archive, so that no archive member is pulled in for a libstdc++ symbol.
base=$(cat "$link")
declare -A variants=(
  [as_built]=""
  [exclude_libs]="-Wl,--exclude-libs,ALL"
  [stdcxx_first]="-Wl,--push-state,--no-as-needed -lstdc++ -Wl,--pop-state"
)
rc=1
winner=""
for v in as_built exclude_libs stdcxx_first; do
  so="$dir/libgatecheck_torch_op.$v.so"
  if [ "$v" = as_built ]; then
    cp "$LIB" "$so"
  else  # the extra flags right after the objects, ahead of every library
    out_from="-o libgatecheck_torch_op.so" out_to="-o libgatecheck_torch_op.$v.so"
    first=" ../cuda/libgc_cuda.a"
    cmd=${base/"$out_from"/"$out_to"}
    cmd=${cmd/"$first"/" ${variants[$v]}$first"}
    echo "$cmd" > "$D/$v-link.log"
    (cd "$dir" && eval "$cmd") >> "$D/$v-link.log" 2>&1 || { echo "$v: link failed ($D/$v-link.log)"; continue; }
  fi
  ok=1
  for dev in cpu cuda; do
    timeout 120 "$py" tests/split/torch_op_state_test.py "$so" "$PLUGIN" "$dev" --errors-only > "$D/$v-$dev.log" 2>&1
    r=$?
    echo "$v $dev: exit $r ($(tail -1 "$D/$v-$dev.log" | cut -c1-100)); _M_insert<long> here: $(nm -C "$so" | grep -c 'T .*ostream::_M_insert<long>')"
    [ "$r" -eq 0 ] || [ "$r" -eq 77 ] || ok=0
  done
  [ "$v" = as_built ] && [ "$ok" = 1 ] && rc=0
  if [ "$ok" = 1 ] && [ -z "$winner" ]; then winner=$v; fi
done
if [ -n "$winner" ]; then
  cp "$LIB" "$dir/libgatecheck_torch_op.built.so"
  cp "$dir/libgatecheck_torch_op.$winner.so" "$LIB"
  (cd "$BUILD" && ctest -R 'TorchOp\.SplitState' --output-on-failure) > "$D/ctest.log" 2>&1
  echo "with $winner in its place: $(grep -E 'tests passed|tests failed' "$D/ctest.log")"
  cp "$dir/libgatecheck_torch_op.built.so" "$LIB"
fi
exit $rc
