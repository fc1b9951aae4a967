#!/usr/bin/env bash
# pack_out.sh: what a device call left under its OUT, in one file that comes back.
#
#   bash bench/device/pack_out.sh [DIR]        (DIR: default $OUT)
#
# The device tool brings back at most 8 files from $OUT, none more than two folders down, so a
# call that writes more (a build's logs and a stage's results) loses the rest. This packs every
# file under DIR into DIR/results.tgz and removes them, leaving that one file; a file of 12 MiB
# or more (an ncu report) is left where it is, and named.
dir=${1:-${OUT:-}}
[ -n "$dir" ] && [ -d "$dir" ] || { echo "pack_out.sh: no folder to pack: give one, or set OUT" >&2; exit 2; }
cd "$dir" || exit 2
list=$(mktemp) || exit 2
trap 'rm -f "$list"' EXIT
find . -type f ! -path ./results.tgz -size -$((12 << 20))c | sort > "$list"
if [ -s "$list" ]; then
  tar czf results.tgz -T "$list" || { echo "pack_out.sh: tar failed; the files are left as they were" >&2; exit 1; }
  xargs -d '\n' rm -f < "$list"
  find . -mindepth 1 -type d -empty -delete
fi
echo "pack_out.sh: $(wc -l < "$list") files in $dir/results.tgz"
find . -type f ! -path ./results.tgz | sed 's/^/pack_out.sh: left as it is (12 MiB or more): /'
