# Sourced first by the CLI test scripts that take GATECHECK PLUGIN WORK:
# sets gc, plugin and work (emptied), and fail MESSAGE, which prints it and
# counts it in $fails.
set -u
gc=$1 plugin=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
