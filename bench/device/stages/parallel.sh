# parallel: check's throughput with --jobs (docs/parallel.md). `gatecheck
# bench --harness` on cuda, every property at --jobs 1 and at --jobs
# $PARALLEL_JOBS (default 16) one after the other, with where a case's time
# goes; the same on host (the CPU figure); then a whole `check --impl cuda`
# at --jobs 1 and --jobs N for PARALLEL_CHECK_SECONDS each (default 20),
# which must pass (the scale tier on, at its default share, as in any check). The summary sets
# each property's cases/s at --jobs N beside --jobs 1. Files: cuda.{txt,json}, host.{txt,json},
# check-jobs1.{log,json}, check-jobsN.{log,json}, summary.txt.
# PARALLEL_IMPL (default cuda) names the implementation (host: a dry run
# of this script on a machine without a GPU). About 2.5 minutes on the H200
# (16 cores).
if [ -f "$(dirname "$0")/../stage_common.sh" ]; then
  . "$(dirname "$0")/../stage_common.sh"
else  # (a tree without bench/device/run.sh: the same, spelled out)
  set -u
  : "${OUT:?OUT unset}" "${BUILD:?BUILD unset}"
  D="$OUT/$(basename "$0" .sh)"
  mkdir -p "$D"
  GC="$BUILD/cli/gatecheck"
  need() { for f in "$@"; do [ -x "$f" ] || { echo "parallel: $f was not built"; exit 1; }; done; }
fi
need "$GC"
impl=${PARALLEL_IMPL:-cuda}
[ "$impl" != cuda ] || nvidia-smi -L >/dev/null 2>&1 || { echo "parallel: no GPU (PARALLEL_IMPL=host runs it on the CPU)"; exit 77; }
jobs=${PARALLEL_JOBS:-16}
secs=${PARALLEL_SECONDS:-4}
check_secs=${PARALLEL_CHECK_SECONDS:-20}
corpus=/tmp/gatecheck-parallel-corpus
rm -rf "$corpus"

echo "## $GC bench --harness --impl $impl --seconds-per-property $secs --jobs $jobs"
"$GC" bench --harness --impl "$impl" --seconds-per-property "$secs" --jobs "$jobs" --json "$D/cuda.json" > "$D/cuda.txt" 2>&1 ||
  { cat "$D/cuda.txt"; echo "parallel: bench --harness on $impl failed"; exit 1; }
cat "$D/cuda.txt"
echo "## $GC bench --harness --impl host --seconds-per-property 2 --jobs $jobs"
"$GC" bench --harness --impl host --seconds-per-property 2 --jobs "$jobs" --json "$D/host.json" > "$D/host.txt" 2>&1 ||
  { cat "$D/host.txt"; echo "parallel: bench --harness on host failed"; exit 1; }
cat "$D/host.txt"

rc=0
for j in 1 "$jobs"; do
  name=check-jobs$([ "$j" = 1 ] && echo 1 || echo N)
  echo "## $GC check --impl $impl --seed 23 --seconds $check_secs --jobs $j"
  "$GC" check --impl "$impl" --seed 23 --seconds "$check_secs" --jobs "$j" --corpus "$corpus/$j" --json "$D/$name.json" \
    > "$D/$name.log" 2>&1
  c=$?
  grep -E "^$impl@|claimed propert" "$D/$name.log"
  [ $c -eq 0 ] || { echo "parallel: check --impl $impl --jobs $j exited $c"; rc=1; }
done

python3 - "$D" "$jobs" <<'PY' | tee "$D/summary.txt"
import json, os, sys
d, jobs = sys.argv[1], sys.argv[2]
rows = json.load(open(os.path.join(d, "cuda.json")))["rows"]
n = [r for r in rows if r["jobs"] != 1]
one = {r["property"]: r for r in rows if r["jobs"] == 1}
print("%-20s %12s %12s %8s" % ("property", "--jobs 1", "--jobs " + jobs, "speed-up"))
for r in n:
    p = r["property"]
    y = r["cases_per_second"] / one[p]["cases_per_second"] if one[p]["cases_per_second"] else float("nan")
    print("%-20s %12.1f %12.1f %7.1fx" % (p, one[p]["cases_per_second"], r["cases_per_second"], y))
mean = sum(r["cases_per_second"] for r in n) / len(n)
mean1 = sum(r["cases_per_second"] for r in one.values()) / len(one)
print("mean over the properties: %.1f cases/s at --jobs %s (%.1f at --jobs 1)" % (mean, jobs, mean1))
for name in ("check-jobs1", "check-jobsN"):
    j = json.load(open(os.path.join(d, name + ".json")))
    cases = sum(r["cases"] for r in j["results"])
    print("%s: %d cases in %.1f s = %.0f cases/s, %s" % (name, cases, j["seconds"], cases / j["seconds"],
          "every claimed property held" if all(r["passed"] or not r["claimed"] for r in j["results"]) else "a claimed property FAILED"))
PY
echo "parallel: $(grep -E '^mean over' "$D/summary.txt")"
exit $rc
