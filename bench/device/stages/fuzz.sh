# fuzz: the libFuzzer build of fuzz_gate_residual with g++ and the carried
# libFuzzer archive ($LIBFUZZER_A, trace-cmp and extra counters: there is no
# clang on the GPU machine) into $BUILD-fuzz, its executions per second on
# cuda and host, then a campaign with one GPU worker on cuda for
# FUZZ_HOURS (default 0.02: 72 s). Files: fuzz-build.log, fuzz-bench-cuda.txt,
# fuzz-bench-host.txt, nightly.log, report.{md,json,html}, *.svg,
# timeline.tsv, campaign.json. About 4 minutes on the H200 (the build first).
. "$(dirname "$0")/../stage_common.sh"
fb="$BUILD-fuzz"
camp=/tmp/gatecheck-fuzz-campaign
[ -n "${LIBFUZZER_A:-}" ] || { echo "fuzz: LIBFUZZER_A is unset: source .deps/remote-setup.sh first"; exit 1; }
fuzz/build-libfuzzer.sh "$fb" fuzz_gate_residual gatecheck-fuzz-tools > "$D/fuzz-build.log" 2>&1 ||
  { tail -30 "$D/fuzz-build.log"; echo "fuzz: the libFuzzer build failed"; exit 1; }
tools="$fb/fuzz/gatecheck-fuzz-tools"
"$tools" bench --impl cuda --seconds 20 > "$D/fuzz-bench-cuda.txt" 2>&1
"$tools" bench --impl host --seconds 10 > "$D/fuzz-bench-host.txt" 2>&1
cat "$D/fuzz-bench-cuda.txt" "$D/fuzz-bench-host.txt"
rm -rf "$camp"
echo "## fuzz/nightly.sh --hours ${FUZZ_HOURS:-0.02} --gpus 1 --build-dir $fb --out $camp"
fuzz/nightly.sh --hours "${FUZZ_HOURS:-0.02}" --gpus 1 --build-dir "$fb" --out "$camp" > "$D/nightly.log" 2>&1
rc=$?
tail -6 "$D/nightly.log"
for f in report.md report.json report.html execs_per_s.svg features.svg timeline.tsv campaign.json; do
  [ -f "$camp/$f" ] && cp "$camp/$f" "$D/"
done
cp -r "$camp/failures" "$D/" 2>/dev/null
echo "fuzz: campaign exit $rc; $(grep -m1 -E '^- cases executed' "$D/report.md" 2>/dev/null | sed 's/^- //'); $(grep -m1 -E '^- new failures' "$D/report.md" 2>/dev/null | sed 's/^- //')"
[ $rc -eq 0 ]
