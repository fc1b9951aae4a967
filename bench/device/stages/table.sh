# table: the kernel benchmark's full table, 72 shapes (bf16 and fp16; 3072
# and 5376 columns; 4097, 32768 and 131072 rows; 9, rows/1024 and rows/3
# gates; sorted and random index), each beside torch eager and a copy of the
# same bytes. TABLE_ARGS adds gatecheck-bench options (e.g. a subset:
# TABLE_ARGS="--rows 4097 --dims 3072"). Files: table.json, table.log,
# table.md (rendered by bench/render_table.py). About 3 minutes on the H200.
. "$(dirname "$0")/../stage_common.sh"
need "$BENCH"
echo "## $BENCH ${TABLE_ARGS:-} --json $D/table.json"
timeout 420 "$BENCH" ${TABLE_ARGS:-} --json "$D/table.json" > "$D/table.log" 2>&1
rc=$?
grep -vE "^      (a copy|an empty kernel plus)" "$D/table.log" | tail -80
[ $rc -eq 0 ] || { echo "table: gatecheck-bench exited $rc"; exit 1; }
python3 bench/render_table.py "$D/table.json" > "$D/table.md"
echo "table: $(python3 bench/render_table.py --summary "$D/table.json")"
