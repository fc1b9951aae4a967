#!/usr/bin/env bash
# shrink_unknown_property.sh GATECHECK WORK: an unknown property, given with
# --property or recorded in the file, is a usage error that names where it
# came from, before any "shrinking ..." line announces it.
set -u
gc=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
src=$(dirname "$0")/../../corpus/regressions/host-accuracy-inf-residual-overflowing-product.json
# expect NAME WANT_LINE ARGS...: exit 2, stderr has WANT_LINE, stdout announces nothing
expect() {
  local name=$1 want=$2 rc
  shift 2
  "$gc" shrink "$@" --out "$work/$name.min.json" >"$work/$name.out" 2>"$work/$name.err"
  rc=$?
  [ "$rc" -eq 2 ] || fail "$name: exit $rc (want 2)"
  grep -qF "$want" "$work/$name.err" || { cat "$work/$name.err"; fail "$name: no '$want'"; }
  [ ! -s "$work/$name.out" ] || { cat "$work/$name.out"; fail "$name: it announced a shrink"; }
}
expect flag "gatecheck shrink: --property: unknown property 'nope' (accuracy," "$src" --property nope
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); d["failure"]["property"] = "acuracy"; json.dump(d, open(sys.argv[2], "w"))' \
  "$src" "$work/typo.json"
expect recorded "gatecheck shrink: $work/typo.json records unknown property 'acuracy'" "$work/typo.json"
[ "$fails" -eq 0 ] && echo OK
exit "$fails"
