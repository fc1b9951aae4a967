# Sourced by the nightly_*.sh tests: run fuzz/nightly.sh and check its exit
# code and messages. Sets `output` to what it printed; counts failures in
# `fails` (the test exits 1 if any).
fails=0
# expect_nightly RC PATTERN ARGS...: nightly.sh ARGS exits RC and prints a
# line matching the extended regex PATTERN (and none matching $forbid, if set).
expect_nightly() {
  local want=$1 pattern=$2 got
  shift 2
  output=$("$nightly" "$@" 2>&1)
  got=$?
  if [ "$got" -ne "$want" ] || ! grep -qE -- "$pattern" <<<"$output" ||
     { [ -n "${forbid:-}" ] && grep -qE -- "$forbid" <<<"$output"; }; then
    echo "FAIL: nightly.sh $* -> exit $got (want $want and a line matching '$pattern'${forbid:+, none matching '$forbid'}); it printed:"
    grep -v '^\[' <<<"$output" | tail -n 12 | sed 's/^/    /'
    fails=$((fails + 1))
    return 1
  fi
  echo "ok: nightly.sh $* -> exit $got: $(grep -E -m1 -- "$pattern" <<<"$output")"
}
check() {  # description command...: the command must succeed
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}
