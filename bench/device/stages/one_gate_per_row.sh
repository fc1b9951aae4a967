# one_gate_per_row: the benchmark in the regime of one gate per row (as
# many gates as rows), at 4097, 32768 and 131072 rows, 3072 and 5376
# columns, bf16 and fp16, the index sorted, shuffled (each gate's rows in
# random order: every gate row read once, as the bytes count) or random
# (about 37% of the gates unused, whose rows the byte count includes: its
# percentages flatter). Files: one_gate_per_row.{json,log,md}.
# About 2 minutes on the H200.
. "$(dirname "$0")/../stage_common.sh"
need "$BENCH"
args="--gates rows/1 --patterns sorted,shuffled,random"
echo "## $BENCH $args --json $D/one_gate_per_row.json"
timeout 300 "$BENCH" $args --json "$D/one_gate_per_row.json" > "$D/one_gate_per_row.log" 2>&1
rc=$?
grep -vE "^      (a copy|an empty kernel plus)" "$D/one_gate_per_row.log" | tail -45
[ $rc -eq 0 ] || { echo "one_gate_per_row: gatecheck-bench exited $rc"; exit 1; }
python3 bench/render_table.py "$D/one_gate_per_row.json" > "$D/one_gate_per_row.md"
echo "one_gate_per_row: $(python3 bench/render_table.py --summary "$D/one_gate_per_row.json")"
