"""Where a Python door call's time goes, piece by piece, on one device.

    PYTHONPATH=BUILD/python python3 bench/python_door_costs.py [--device cuda] [--iters 400]

Times gatecheck._door's forward and backward as gatecheck calls them (DLPack
capsules of preallocated buffers, the call's stream, then a wait for the
device), and each piece of them alone, for the peers diffusers_eager and
gatecheck_op and for bench/python_door_kernels.py's kernels (the last two on
CUDA only), at a small and a medium shape. Microseconds per
call, the median of --iters calls each followed by a device wait. A
benchmark that prints what it saw; it never fails on a number.

The peers implement gate_residual; the door is handed gate_residual as
gatecheck describes it to the door (harness/impls/python_impl.cpp's
op_description, `gatecheck ops gate_residual`), and its buffers in the
order gatecheck passes them: a pass's inputs, then its outputs, each in the
op's order.
"""
import argparse
import os
import statistics
import sys
import time

import torch
from torch.utils.dlpack import to_dlpack

from gatecheck import _door, peers


def _tensor(name, role, pass_, grad_of=None, reduces=None):
    e = {"name": name, "role": role, "pass": pass_, "grad_of": grad_of}
    if reduces is not None:
        e["reduces"] = reduces
    return e


# gate_residual as the door receives it (op_description in python_impl.cpp).
GATE_RESIDUAL = {
    "name": "gate_residual",
    "inputs": [_tensor("res", "row", "forward"), _tensor("gate", "table", "forward"),
               _tensor("index", "index", "forward"), _tensor("y", "row", "forward"),
               _tensor("grad_out", "row", "backward", "out")],
    "outputs": [_tensor("out", "row", "forward", reduces=False),
                _tensor("grad_res", "row", "backward", "res", False),
                _tensor("grad_y", "row", "backward", "y", False),
                _tensor("grad_gate", "table", "backward", "gate", True)],
    "scalars": [],
}
NO_SCALARS = {}


def door_call(glue, door, bufs, stream, dev):
    """One call of the door's glue (_door.forward, backward or forward_backward)
    on these buffers; a call the door reports as failed stops the benchmark
    (its timing would be of a failure)."""
    failure = glue(door, [to_dlpack(t) for t in bufs], NO_SCALARS, stream, dev)
    if failure is not None:
        raise SystemExit(f"python_door_costs: {glue.__name__} failed: {failure[0]}\n{failure[1]}")


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
        door = _door.resolve(target, dev, GATE_RESIDUAL)
        for rows, dim, gates in ((64, 32, 4), (512, 128, 16)):
            g = torch.Generator(device="cpu").manual_seed(1)
            mk = lambda *s: torch.randn(*s, generator=g).to(dev)
            res, y, gate, go = mk(rows, dim), mk(rows, dim), mk(gates, dim), mk(rows, dim)
            index = torch.randint(0, gates, (rows,), generator=g).to(dev)
            out, gr, gy = (torch.empty(rows, dim, device=dev) for _ in range(3))
            gg = torch.empty(gates, dim, device=dev)
            # As gatecheck passes them: the pass's inputs, then its outputs, in the op's order.
            fwd_bufs, bwd_bufs = (res, gate, index, y, out), (res, gate, index, y, go, gr, gy, gg)
            rows_of = []

            def row(piece, fn):
                rows_of.append((piece, timed(fn, a.iters, sync)))

            row("door.forward (all of it)", lambda: door_call(_door.forward, door, fwd_bufs, sp, dev))
            row("door.backward (all of it)", lambda: door_call(_door.backward, door, bwd_bufs, sp, dev))
            both = (res, gate, index, y, go, out, gr, gy, gg)
            row("door.forward_backward (all of it)", lambda: door_call(_door.forward_backward, door, both, sp, dev))
            row("  5 capsules (gatecheck makes these in C++)", lambda: [to_dlpack(t) for t in fwd_bufs])
            row("  5 capsules + torch.from_dlpack", lambda: [torch.from_dlpack(to_dlpack(t)) for t in fwd_bufs])
            if dev == "cuda":
                row("  the call's stream, set", lambda: _door._enter_stream(sp, dev))
            row("  the forward alone", lambda: door._fwd(res, gate, index, y))
            row("  storing out (checks + copy_)", lambda: _door._store("forward", "out", res, out, "[rows, dim]"))

            if door._bwd is None:
                inputs = [res, gate, index, y, go]
                row("  autograd: forward again + grad",
                    lambda: _door._autograd(door, *_door._forward_with_grad(door, inputs, NO_SCALARS), inputs))
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
            # res, gate, index, y, grad_out, then out, grad_res, grad_y, grad_gate: the op's order
            bufs = (mk(rows, dim), mk(gates, dim), torch.randint(0, gates, (rows,), generator=g).to(dev), mk(rows, dim),
                    mk(rows, dim), torch.empty(rows, dim, dtype=dt, device=dev),
                    torch.empty(rows, dim, dtype=dt, device=dev), torch.empty(rows, dim, dtype=dt, device=dev),
                    torch.empty(gates, dim, dtype=dt, device=dev))
            sets.append(bufs)
        at = [0]

        def varied(fn):
            def once():
                b = sets[at[0] % len(sets)]
                at[0] += 1
                fn(b)
            return once
        fwd = varied(lambda b: door_call(_door.forward, door, b[:4] + b[5:6], sp, dev))
        bwd = varied(lambda b: door_call(_door.backward, door, b[:5] + b[6:], sp, dev))
        fb = varied(lambda b: door_call(_door.forward_backward, door, b, sp, dev))
        for piece, fn in (("door.forward, a new shape each call", fwd), ("door.backward, a new shape each call", bwd),
                          ("door.forward_backward, a new shape each call", fb)):
            print(f"{name:<16} {'varied':<11} {piece:<44} {timed(fn, a.iters, sync):8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
