# rmsnorm_peers: rmsnorm_modulate's Python peers (gatecheck.peers) checked on CUDA, as a user
# would: each peer alone, PEER_SECONDS (40) each, seed 33, the op's default properties. The
# peers' declared contracts (what eager PyTorch does not keep) say which failures are claimed.
# Files: check-NAME.{txt,json,cmd,rc}. About 2 minutes on the H200.
. "$(dirname "$0")/../stage_common.sh"
need "$GC"
PEER_SECONDS=${PEER_SECONDS:-40}
for peer in rmsnorm_modulate_diffusers rmsnorm_modulate_rms_norm rmsnorm_modulate_compiled; do
  cmd="$GC check --op rmsnorm_modulate --impl python:gatecheck.peers:$peer --device cuda --seconds $PEER_SECONDS --seed 33 --corpus $D/corpus --json $D/check-$peer.json"
  echo "$cmd" > "$D/check-$peer.cmd"
  env -u PYTHONPATH $cmd > "$D/check-$peer.txt" 2>&1
  rc=$?; echo $rc > "$D/check-$peer.rc"
  echo "$peer: exit $rc; $(grep -E '^seed|inconclusive|FAIL' "$D/check-$peer.txt" | tr '\n' ' ' | cut -c1-300)"
done
