#!/bin/sh
# exports_no_libstdcxx.sh LIB...: fails (exit 1) when a shared library exports libstdc++'s own
# code: std::locale, std::ios_base or std::codecvt members, which no user code instantiates, so
# they are there only when libstdc++ was linked in statically (a toolchain that links it so by
# default). Exported, some of its calls bind to the process's libstdc++.so.6 (loaded by PyTorch)
# and some to the library's own copy, whose locale ids the process's locales do not know: the
# torch op crashed formatting a number into an error message that way
# (bench/results/torch_op_link/). -Wl,--exclude-libs,ALL keeps such a copy to itself.
status=0
for lib in "$@"; do
  [ -f "$lib" ] || { echo "exports_no_libstdcxx.sh: no file $lib"; exit 2; }
  found=$(nm -D -C --defined-only "$lib" | grep -E ' std::(locale::|ios_base::|codecvt<)')
  if [ -n "$found" ]; then
    echo "$lib exports $(printf '%s\n' "$found" | wc -l) symbols of libstdc++'s own code, e.g.:"
    printf '%s\n' "$found" | head -3
    status=1
  else
    echo "$lib: exports none of libstdc++'s own code"
  fi
done
exit $status
