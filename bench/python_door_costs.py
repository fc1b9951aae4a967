"""Where a Python door call's time goes, piece by piece, on one device.

    PYTHONPATH=BUILD/python python3 bench/python_door_costs.py [--device cuda] [--iters 400]

Times gatecheck._door's forward and backward as gatecheck calls them (DLPack
capsules of preallocated buffers, the call's stream, then a wait for the
device), and each piece of them alone, for the peers diffusers_eager and
gatecheck_op (CUDA only), at a small and a medium shape. Microseconds per
call, the median of --iters calls each followed by a device wait. A
benchmark that prints what it saw; it never fails on a number.
"""
import argparse
import statistics
import sys
import time

import torch
from torch.utils.dlpack import to_dlpack

from gatecheck import _door, peers


def timed(fn, iters, sync):
    fn()
    sync()
    t = []
    for _ in range(iters):
        t0 = time.perf_counter()
        fn()
        sync()
        t.append(time.perf_counter() - t0)
    return statistics.median(t) * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda", choices=["cpu", "cuda"])
    ap.add_argument("--iters", type=int, default=400)
    a = ap.parse_args()
    dev = a.device
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    stream = torch.cuda.Stream() if dev == "cuda" else None
    sp = stream.cuda_stream if stream is not None else 0
    names = ["diffusers_eager"] + (["gatecheck_op"] if dev == "cuda" else [])
    print(f"torch {torch.__version__}, {dev}, median of {a.iters} calls, each followed by a device wait (us)")
    print(f"{'peer':<16} {'rows x dim':<11} {'piece':<44} {'us':>8}")
    for name in names:
        door = _door.resolve(f"gatecheck.peers:{name}", dev)
        for rows, dim, gates in ((64, 32, 4), (512, 128, 16)):
            g = torch.Generator(device="cpu").manual_seed(1)
            mk = lambda *s: torch.randn(*s, generator=g).to(dev)
            res, y, gate, go = mk(rows, dim), mk(rows, dim), mk(gates, dim), mk(rows, dim)
            index = torch.randint(0, gates, (rows,), generator=g).to(dev)
            out, gr, gy = (torch.empty(rows, dim, device=dev) for _ in range(3))
            gg = torch.empty(gates, dim, device=dev)
            fwd_bufs, bwd_bufs = (res, gate, index, y, out), (go, res, gate, index, y, gr, gg, gy)
            rows_of = []

            def row(piece, fn):
                rows_of.append((piece, timed(fn, a.iters, sync)))

            row("door.forward (all of it)", lambda: _door.forward(door, [to_dlpack(t) for t in fwd_bufs], sp, dev))
            row("door.backward (all of it)", lambda: _door.backward(door, [to_dlpack(t) for t in bwd_bufs], sp, dev))
            row("  5 capsules (gatecheck makes these in C++)", lambda: [to_dlpack(t) for t in fwd_bufs])
            row("  5 capsules + torch.from_dlpack", lambda: [torch.from_dlpack(to_dlpack(t)) for t in fwd_bufs])
            if dev == "cuda":
                def ctx():
                    with _door._stream(sp, dev):
                        pass
                row("  the call's stream, entered and left", ctx)
            row("  the forward alone", lambda: door._fwd(res, gate, index, y))
            row("  storing out (checks + copy_)", lambda: _door._store("forward", "out", res, out, "[rows, dim]"))

            def grads():
                leaves = [t.detach().requires_grad_(True) for t in (res, gate, y)]
                with torch.enable_grad():
                    o = door._fwd(leaves[0], leaves[1], index, leaves[2])
                    return torch.autograd.grad(o, leaves, go, allow_unused=True)
            row("  autograd: forward again + grad", grads)
            row("  a device wait alone", lambda: None)
            for piece, us in rows_of:
                print(f"{name:<16} {f'{rows} x {dim}':<11} {piece:<44} {us:8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
