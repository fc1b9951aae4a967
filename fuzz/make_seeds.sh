#!/usr/bin/env bash
# Regenerates corpus/seeds/<target>/ from the committed seed generator
# (gatecheck-fuzz-tools seeds), naming every file by the sha1 of its bytes.
# Usage: fuzz/make_seeds.sh [BUILD_DIR]   (default build/)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
tools=$build/fuzz/gatecheck-fuzz-tools
[ -x "$tools" ] || cmake --build "$build" --target gatecheck-fuzz-tools
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$tools" seeds "$tmp"
for target in "$tmp"/*/; do
  name=$(basename "$target")
  dest=$root/corpus/seeds/$name
  rm -rf "$dest"
  mkdir -p "$dest"
  for f in "$target"*; do
    cp "$f" "$dest/$(sha1sum "$f" | cut -d' ' -f1)"
  done
  echo "$name: $(ls "$dest" | wc -l) seeds in corpus/seeds/$name"
done
