#!/usr/bin/env bash
# plain_peer.sh GATECHECK WORK: the plain part end to end with a known answer.
# rmsnorm_modulate's F.rms_norm peer (python:gatecheck.peers:
# rmsnorm_modulate_rms_norm) is F.rms_norm then n * (1 + scale) + shift, so
# with shift -0 and scale 0 its out is F.rms_norm's own result: its
# plain_bitwise_vs_nn_rmsnorm must be true, with 0 of every size's elements
# differing. The diffusers peer rounds x * rstd to the dtype before the
# weight, so its verdict is reported, not asserted. Skips (77) where this
# build's LibTorch has no rms_norm (GC_HAS_RMS_NORM=0).
set -u
gc=$1 work=$2
[ "${GC_HAS_RMS_NORM:-0}" = 1 ] || { echo "skipped: this LibTorch has no rms_norm"; exit 77; }
rm -rf "$work" && mkdir -p "$work"
peer=python:gatecheck.peers:rmsnorm_modulate_rms_norm
diffusers=python:gatecheck.peers:rmsnorm_modulate_diffusers
"$gc" sweep --op rmsnorm_modulate --impl "$peer" --impl "$diffusers" --quick --reps 0 --json "$work/r.json" \
  --corpus "$work/corpus" >"$work/out.txt" 2>"$work/err.txt"
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: exit $rc (want 0)"; tail -20 "$work/err.txt"; exit 1; }
grep -A4 "plain_bitwise_vs_nn_rmsnorm" "$work/out.txt"
python3 - "$work/r.json" "$peer@cpu" "$diffusers@cpu" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
plain = r["results"]["plain"]
o = plain[sys.argv[2]]["operator_report"]
sizes = o["plain_bitwise_vs_nn_rmsnorm_by_size"]
ok = o["plain_bitwise_vs_nn_rmsnorm"] is True and [s["differ"] for s in sizes] == [0, 0, 0] and \
    all(s["elements"] == s["rows"] * 5376 for s in sizes)
print(sys.argv[2], o["plain_bitwise_vs_nn_rmsnorm"], [(s["rows"], s["differ"], s["elements"]) for s in sizes])
d = plain[sys.argv[3]]["operator_report"]
print(sys.argv[3], d["plain_bitwise_vs_nn_rmsnorm"], [(s["rows"], s["differ"]) for s in d["plain_bitwise_vs_nn_rmsnorm_by_size"]])
if not ok:
    print("FAIL: F.rms_norm's own plain part is not F.rms_norm's, bit for bit:", o["plain_bitwise_vs_nn_rmsnorm_note"])
    sys.exit(1)
print("ok: the F.rms_norm peer's plain part is nn.RMSNorm's at every size")
PY
