"""Where a Python door call's time goes, piece by piece, on one device.

    PYTHONPATH=BUILD/python python3 bench/python_door_costs.py [--device cuda] [--iters 400]

Times gatecheck._door's forward and backward as gatecheck calls them (DLPack
capsules of preallocated buffers, the call's stream, then a wait for the
device), and each piece of them alone, for the peers diffusers_eager and
gatecheck_op and for bench/python_door_kernels.py's kernels (the last two on
CUDA only), at a small and a medium shape. Microseconds per
call, the median of --iters calls each followed by a device wait. A
benchmark that prints what it saw; it never fails on a number.
"""
import argparse
import os
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
    here = os.path.dirname(os.path.abspath(__file__))
    targets = {"diffusers_eager": "gatecheck.peers:diffusers_eager"}
    if dev == "cuda":
        targets["gatecheck_op"] = "gatecheck.peers:gatecheck_op"
        targets["kernels"] = os.path.join(here, "python_door_kernels.py") + ":kernels"
    print(f"torch {torch.__version__}, {dev}, median of {a.iters} calls, each followed by a device wait (us)")
    print(f"{'peer':<16} {'rows x dim':<11} {'piece':<44} {'us':>8}")
    for name, target in targets.items():
        door = _door.resolve(target, dev)
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
            both = (res, gate, index, y, out, go, gr, gg, gy)
            row("door.forward_backward (all of it)",
                lambda: _door.forward_backward(door, [to_dlpack(t) for t in both], sp, dev))
            row("  5 capsules (gatecheck makes these in C++)", lambda: [to_dlpack(t) for t in fwd_bufs])
            row("  5 capsules + torch.from_dlpack", lambda: [torch.from_dlpack(to_dlpack(t)) for t in fwd_bufs])
            if dev == "cuda":
                row("  the call's stream, set", lambda: _door._enter_stream(sp, dev))
            row("  the forward alone", lambda: door._fwd(res, gate, index, y))
            row("  storing out (checks + copy_)", lambda: _door._store("forward", "out", res, out, "[rows, dim]"))

            if door._bwd is None:
                row("  autograd: forward again + grad",
                    lambda: _door._autograd(*_door._forward_with_grad(door, res, gate, index, y), go))
            else:
                row("  its own backward", lambda: door._bwd(go, res, gate, index, y))
            row("  a device wait alone", lambda: None)
            for piece, us in rows_of:
                print(f"{name:<16} {f'{rows} x {dim}':<11} {piece:<44} {us:8.1f}")
        # As a check calls it: every call a new shape and dtype (rows up to
        # 1100, dim up to 300, as the default limits), each buffer set used once per round.
        g = torch.Generator(device="cpu").manual_seed(2)
        sets = []
        for _ in range(48):
            rows, dim, gates = (int(torch.randint(lo, hi, (1,), generator=g)) for lo, hi in ((1, 1101), (1, 301), (1, 65)))
            dt = (torch.float32, torch.bfloat16, torch.float16)[int(torch.randint(0, 3, (1,), generator=g))]
            mk = lambda *s: torch.randn(*s, generator=g).to(dt).to(dev)
            bufs = (mk(rows, dim), mk(gates, dim), torch.randint(0, gates, (rows,), generator=g).to(dev), mk(rows, dim),
                    torch.empty(rows, dim, dtype=dt, device=dev), mk(rows, dim), torch.empty(rows, dim, dtype=dt, device=dev),
                    torch.empty(gates, dim, dtype=dt, device=dev), torch.empty(rows, dim, dtype=dt, device=dev))
            sets.append(bufs)
        at = [0]

        def varied(fn):
            def once():
                b = sets[at[0] % len(sets)]
                at[0] += 1
                fn(b)
            return once
        fwd = varied(lambda b: _door.forward(door, [to_dlpack(t) for t in b[:5]], sp, dev))
        bwd = varied(lambda b: _door.backward(door, [to_dlpack(t) for t in (b[5], b[0], b[1], b[2], b[3], b[6], b[7], b[8])], sp, dev))
        fb = varied(lambda b: _door.forward_backward(door, [to_dlpack(t) for t in b], sp, dev))
        for piece, fn in (("door.forward, a new shape each call", fwd), ("door.backward, a new shape each call", bwd),
                          ("door.forward_backward, a new shape each call", fb)):
            print(f"{name:<16} {'varied':<11} {piece:<44} {timed(fn, a.iters, sync):8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
