#!/usr/bin/env bash
# empty_lists.sh GATECHECK WORK: a list option given empty, or with an empty item, is refused by
# name before anything runs. An unset shell variable ("--properties $P") or a stray comma
# ("accuracy,,repeatable") used to be read as "the default set" or as the names that were left,
# so a run checked other properties than its command line says.
set -u
gc=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
case_file=$(dirname "$0")/../../corpus/regressions/host-accuracy-inf-residual-overflowing-product.json
# expect NAME WANT ARGS...: exit 2, stderr has WANT, nothing on stdout
expect() {
  local name=$1 want=$2 rc
  shift 2
  "$gc" "$@" >"$work/$name.out" 2>"$work/$name.err"
  rc=$?
  [ "$rc" -eq 2 ] || fail "$name: exit $rc (want 2)"
  grep -qF -- "$want" "$work/$name.err" || { cat "$work/$name.err"; fail "$name: no '$want'"; }
  [ ! -s "$work/$name.out" ] || { head -5 "$work/$name.out"; fail "$name: it ran"; }
}
expect check_properties_empty "--properties: '' names no property" \
  check --impl host --properties '' --cases 1 --corpus "$work/c"
expect check_properties_gap "--properties: 'accuracy,,repeatable' has an empty item" \
  check --impl host --properties accuracy,,repeatable --cases 1 --corpus "$work/c"
expect check_properties_trailing "--properties: 'accuracy,' has an empty item" \
  check --impl host --properties accuracy, --cases 1 --corpus "$work/c"
expect check_claims_empty "--claims: '' names no claim" \
  check --impl host --claims '' --cases 1 --corpus "$work/c"
expect check_claims_gap "--claims: 'accuracy, ,repeatable' has an empty item" \
  check --impl host --claims 'accuracy, ,repeatable' --cases 1 --corpus "$work/c"
expect repro_property_empty "--property: '' names no property" repro "$case_file" --property ''
expect shrink_property_empty "--property: '' names no property" \
  shrink "$case_file" --property '' --out "$work/min.json"
expect bench_properties_gap "--properties: ',accuracy' has an empty item" \
  bench --harness --impl host --properties ,accuracy
# The same lists without the gap run (so each refusal above is the gap's).
"$gc" check --impl host --properties accuracy,repeatable --claims accuracy,repeatable --seconds 0 --cases 25 \
  --corpus "$work/ok" >"$work/ok.out" 2>&1 || { cat "$work/ok.out"; fail "the list without a gap: exit $?"; }
[ "$fails" -eq 0 ] && echo OK
exit "$fails"
