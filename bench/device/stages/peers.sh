# peers: the op in PyTorch on this GPU, for comparison: torch eager, eager
# with deterministic algorithms and torch.compile, bf16 x 3072 at 4097,
# 32768 and 131072 rows (rows/1024 and rows/3 gates, sorted segments): time
# forward and forward+backward, grad_gate's error against float64 and its
# repeatability, beside the copy ceiling (bench/peers_h200.py).
# Files: peers.log, peers_h200.json. About 3 minutes on the H200.
. "$(dirname "$0")/../stage_common.sh"
OUT="$D" timeout 420 python3 bench/peers_h200.py > "$D/peers.log" 2>&1
rc=$?
sed -n '/^copy bandwidth .* (read+write)$/,$p' "$D/peers.log" | tail -25
[ $rc -eq 0 ] || { tail -20 "$D/peers.log"; echo "peers: exited $rc"; exit 1; }
echo "peers: $(grep -c '"impl"' "$D/peers.log") measurements, $(grep -c '"error"' "$D/peers.log") with an error (torch.compile may hit its recompile limit at 131072 rows); $D/peers_h200.json"
