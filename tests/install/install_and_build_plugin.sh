#!/usr/bin/env bash
# install_and_build_plugin.sh BUILD_DIR SOURCE_DIR WORK [PYTHON]
# cmake --install into WORK/prefix; the example plugin built out of tree
# against it (find_package(gatecheck CONFIG), gatecheck::plugin_abi); the
# installed CLI checks that plugin; with PYTHON (the Python door is built),
# the installed package finds the installed CLI, and the installed CLI the
# installed peers.
set -u
build=$1 src=$2 work=$3 python=${4:-}
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 || { cat "$work/install.log"; fail "cmake --install"; }
config=$(find "$prefix" -name gatecheckConfig.cmake | head -n 1)
[ -n "$config" ] || fail "no gatecheckConfig.cmake installed"
cmake -S "$src/examples/plugin/out_of_tree" -B "$work/plugin" -DCMAKE_PREFIX_PATH="$prefix" >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log"; fail "configuring the plugin against the installed gatecheck"; }
cmake --build "$work/plugin" >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "building the plugin"; }
plugin=$work/plugin/libmy_gate_residual.so
[ -f "$plugin" ] || fail "no $plugin"
grep -Eq -- "(-I|-isystem )$prefix/include" "$work/plugin/CMakeFiles/my_gate_residual.dir/flags.make" ||
  fail "the plugin does not take gatecheck_plugin.h from the installed tree"
# Both ABI headers are installed, and a v2 plugin (the test op's, which
# includes only gatecheck_plugin_v2.h) compiles against the installed tree alone.
for h in gatecheck_plugin.h gatecheck_plugin_v2.h; do
  [ -f "$prefix/include/$h" ] || fail "$h is not installed under $prefix/include"
done
${CC:-cc} -std=c11 -fsyntax-only -I"$prefix/include" "$src/tests/ops/scaled_add_plugin.c" >"$work/v2.log" 2>&1 ||
  { cat "$work/v2.log"; fail "a v2 plugin does not compile against the installed headers"; }
gc=$prefix/bin/gatecheck
"$gc" check --impl "plugin:$plugin" --seconds 0 --cases 30 --seed 1 --corpus "$work/c" >"$work/check.log" 2>&1 ||
  { cat "$work/check.log"; fail "the installed gatecheck does not pass the plugin"; }
grep -Eq "libmy_gate_residual.so@cpu +accuracy +yes +[1-9][0-9]* +pass" "$work/check.log" || { cat "$work/check.log"; fail "no accuracy row"; }
if [ -n "$python" ]; then
  pydir=$(dirname "$(find "$prefix" -path '*/gatecheck/_door.py' | head -n 1)")
  [ -d "$pydir" ] || fail "no Python package installed"
  found=$(cd / && PYTHONPATH=$(dirname "$pydir") "$python" -c 'import gatecheck; print(gatecheck._cli())') || fail "import gatecheck"
  [ "$(readlink -f "$found")" = "$(readlink -f "$gc")" ] || fail "the installed package runs $found, not $gc"
  (cd / && env -u PYTHONPATH "$gc" check --impl python:gatecheck.peers:diffusers_eager --properties accuracy --cases 2 \
     --seconds 0 --seed 1 --corpus "$work/p" >"$work/peer.log" 2>&1) || { cat "$work/peer.log"; fail "the installed CLI and peers"; }
fi
echo OK
