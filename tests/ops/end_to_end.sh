#!/usr/bin/env bash
# scaled_add, an op defined only under tests/ops, through gatecheck as it is:
# gatecheck ops, check (host, a C plugin through the ABI v2, Python), the
# planted bug caught, shrunk, saved as a version-2 corpus file naming its op,
# replayed by repro, shrunk again by shrink; the Python door's
# gatecheck.check(op=...); and fuzz/'s fuzz target built for the op, which
# finds the bug and saves a case that repro replays.
# usage: end_to_end.sh GATECHECK GOOD_PLUGIN PLANTED_PLUGIN FUZZ_TARGET SCALED_ADD_PY PYTHON_PACKAGE_DIR PYTHON
set -uo pipefail
gc=$1 good=$2 planted=$3 fuzz=$4 py=$5 pkg=$6 python=$7
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
run() {  # run WANT_EXIT LOG -- CMD...: CMD's output into LOG; its exit must be WANT_EXIT
  local want=$1 log=$2; shift 3
  "$@" > "$log" 2>&1
  local rc=$?
  [ "$rc" -eq "$want" ] || { fail "exit $rc, want $want: $*"; tail -30 "$log"; }
}
has() { grep -qE -- "$2" "$1" || { fail "$1 lacks /$2/"; tail -20 "$1"; }; }

# The catalog knows it, with its tensors in order.
run 0 "$tmp/ops" -- "$gc" ops scaled_add
has "$tmp/ops" "^scaled_add: out = x \* w\[index\] \+ b"
has "$tmp/ops" "b +column +\[dim\] +forward \(the backward does not read it\)"
has "$tmp/ops" "grad_w +table +\[gates, dim\] +backward, segment_sum, the gradient of w"
has "$tmp/ops" "segment_invariance +grad_w"
has "$tmp/ops" "implementations: host \(cpu\)"

# Its host implementation and a correct C plugin pass every default property.
run 0 "$tmp/host" -- "$gc" check --op scaled_add --impl host --seconds 0 --cases 30 --seed 3 --corpus "$tmp/c0"
for p in accuracy row_invariance segment_invariance repeatable inputs_untouched full_write no_oob_write error_inputs; do
  has "$tmp/host" "host@cpu +$p +yes +30 +pass"
done
run 0 "$tmp/good" -- "$gc" check --op scaled_add --impl "plugin:$good" --seconds 0 --cases 30 --seed 3 --corpus "$tmp/c0"
has "$tmp/good" "seed 3, .*: 0 claimed properties failed"

# The planted bug (grad_b one row short) is caught and shrunk to two rows.
run 1 "$tmp/bug" -- "$gc" check --op scaled_add --impl "plugin:$planted" --seconds 0 --cases 30 --seed 3 \
  --properties accuracy --corpus "$tmp/c1"
has "$tmp/bug" "FAILURE: plugin:.* accuracy"
has "$tmp/bug" "minimal case: [a-z0-9]+ rows=2 dim=1 "
has "$tmp/bug" "\[grad_b\] 1 of 1 elements wrong"
saved=$(sed -n 's/^  saved: //p' "$tmp/bug" | head -1)
[ -f "$saved" ] || fail "no saved file ($saved)"
has "$saved" '"version": 2'
has "$saved" '"op": "scaled_add"'
has "$saved" '"b": \['
repro=$(sed -n 's/^  repro: //p' "$tmp/bug" | head -1)
echo "$repro" | grep -q "^./gatecheck repro " || fail "repro line: $repro"
# repro reads the op from the file: the plugin still fails, host passes.
run 1 "$tmp/repro" -- "$gc" repro "$saved"
has "$tmp/repro" "accuracy: FAIL \(still failing\)"
run 0 "$tmp/repro-host" -- "$gc" repro "$saved" --impl host
has "$tmp/repro-host" "host@cpu accuracy: pass"
# shrink on the file: already minimal, it stays a failing two-row case of scaled_add.
run 0 "$tmp/shrink" -- "$gc" shrink "$saved" --out "$tmp/min.json"
has "$tmp/min.json" '"op": "scaled_add"'
has "$tmp/min.json" '"rows": 2'
run 2 "$tmp/shrink-op" -- "$gc" shrink "$saved" --op gate_residual --out "$tmp/x.json"
has "$tmp/shrink-op" "--op gate_residual, but .* is a case of scaled_add"

# The Python door calls the op's tensors in its order: x, w, index, b.
run 0 "$tmp/py" -- "$gc" check --op scaled_add --impl "python:$py:good" --seconds 0 --cases 20 --seed 5 \
  --properties accuracy,row_invariance,segment_invariance,full_write --corpus "$tmp/c2"
has "$tmp/py" "seed 5, .*: 0 claimed properties failed"
run 1 "$tmp/py-bug" -- "$gc" check --op scaled_add --impl "python:$py:tail_bug" --seconds 0 --cases 20 --seed 5 \
  --properties accuracy --corpus "$tmp/c2"
has "$tmp/py-bug" "minimal case: [a-z0-9]+ rows=1 dim=1 gates=2"
has "$tmp/py-bug" "\[(out|grad_x)\] 1 of 1 elements wrong"
# ... and gatecheck.check(op=...) runs gatecheck itself on it.
GATECHECK_CLI=$gc PYTHONPATH="$pkg:$(dirname "$py")" "$python" - "$tmp/c3" > "$tmp/pycheck" 2>&1 <<'PYEOF' ||
import sys
import gatecheck
import scaled_add
r = gatecheck.check(scaled_add.tail_bug, op="scaled_add", seconds=0, cases=20, seed=5, properties=["accuracy"],
                    corpus=sys.argv[1])
assert not r.passed, r
assert r.failures[0].minimal_case.startswith(("bf16 rows=1 dim=1", "f16 rows=1 dim=1", "f32 rows=1 dim=1")), r.failures[0]
r = gatecheck.check(scaled_add.good, op="scaled_add", seconds=0, cases=20, seed=5, properties=["accuracy"],
                    corpus=sys.argv[1])
assert r.passed, r
print("python door: ok")
PYEOF
  { fail "gatecheck.check(op=scaled_add)"; cat "$tmp/pycheck"; }

# fuzz/'s target built for the op: random inputs through the planted plugin
# find the bug, save a case that repro replays; host finds nothing.
mkdir -p "$tmp/inputs"
for i in $(seq 1 40); do head -c 96 /dev/urandom > "$tmp/inputs/in$i"; done
GATECHECK_FUZZ_IMPL=host "$fuzz" -runs=0 "$tmp/inputs" > "$tmp/fuzz-host" 2>&1 || { fail "fuzz on host"; tail "$tmp/fuzz-host"; }
GATECHECK_FUZZ_IMPL="plugin:$planted" GATECHECK_FUZZ_FAILURES="$tmp/ff" "$fuzz" -runs=0 "$tmp/inputs" > "$tmp/fuzz-bug" 2>&1 &&
  fail "fuzz_scaled_add did not abort on the planted bug"
has "$tmp/fuzz-bug" "claimed property failed"
found=$(ls "$tmp"/ff/*.json 2>/dev/null | head -1)
[ -f "$found" ] && has "$found" '"op": "scaled_add"' || fail "the fuzz target saved no case"
[ -f "$found" ] && run 1 "$tmp/fuzz-repro" -- "$gc" repro "$found"

[ $fails -eq 0 ] && echo "scaled_add end to end: every step as expected" || echo "$fails step(s) failed"
exit $((fails > 0))
