#!/bin/sh
# check_names.py can fail: a copy of sweep/ with one property name compared as
# a string is caught, and the same copy without it passes.
set -eu
here=$(dirname "$0"); root=$1; t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
mkdir -p "$t/sweep"
cp "$root"/sweep/*.cpp "$t/sweep/"
python3 "$here/check_names.py" "$t" > /dev/null || { echo "a clean copy failed"; exit 1; }
echo 'bool planted(const std::string& p) { return p == "repeatable"; }' >> "$t/sweep/sweep.cpp"
if python3 "$here/check_names.py" "$t" > "$t/out"; then echo "the planted name was not found"; exit 1; fi
grep -q 'sweep/sweep.cpp:.*"repeatable"' "$t/out" || { echo "the hit does not name the file"; cat "$t/out"; exit 1; }
echo "check_names_test: the planted name was found"
