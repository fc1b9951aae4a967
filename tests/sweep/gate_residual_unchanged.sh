#!/usr/bin/env bash
# gate_residual_unchanged.sh GATECHECK WORK GOLDEN: gate_residual's sweep
# report, --quick on host, field for field as the golden file holds it (every
# verdict, count, error, bound and bit pattern; timings, paths and the
# machine left out by normalise_report.py). The golden file was written by
# the sweep before it took other ops; a change to gate_residual's report
# shows here as a diff.
set -u
gc=$1 work=$2 golden=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
"$gc" sweep --impl host --quick --json "$work/r.json" --corpus "$work/corpus" >"$work/out.txt" 2>&1
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: exit $rc (want 0)"; tail -20 "$work/out.txt"; exit 1; }
python3 "$here/normalise_report.py" "$work/r.json" >"$work/now.json" || exit 1
# The comparison must have something to compare: the golden file's errors are there.
grep -q '"fwd_rel_err": 0.0033' "$golden" || { echo "FAIL: the golden file holds no fwd_rel_err"; exit 1; }
if diff -u "$golden" "$work/now.json" >"$work/diff.txt"; then
  echo "ok: gate_residual's --quick host report is the golden one, field for field"
else
  echo "FAIL: gate_residual's report changed:"; head -60 "$work/diff.txt"; exit 1
fi
