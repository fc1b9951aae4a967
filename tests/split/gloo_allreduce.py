"""torch.distributed (gloo, CPU) with host-repro's split exchange, reached
through its plugin's C ABI (gatecheck_split_exchange_v2): each rank takes the
state of its shard of the batch (binned: 4 int64 words an element, the last
holding the top bin in its low byte), the states are all-reduced in two
integer steps (MAX of the top bins; each state aligned to them by the
exchange's combine; SUM), and the finalized grad_gate equals the
single-process full batch's bit for bit, for 2 and 4 ranks and contiguous or
strided shards; so does gradient accumulation over micro-batches of
different sizes (the exchange's combine). The control: all-reducing each
rank's grad_gate itself (in fp32, as DDP would) differs.

usage: gloo_allreduce.py PLUGIN.so WORKDIR
"""
import ctypes
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

ROWS, DIM, GATES = 1000, 24, 5
DTYPES = {torch.float32: 0, torch.float16: 1, torch.bfloat16: 2}


class Problem(ctypes.Structure):
    _fields_ = [("rows", ctypes.c_int64), ("dim", ctypes.c_int64), ("gates", ctypes.c_int64),
                ("dtype", ctypes.c_int32), ("device", ctypes.c_int32), ("stream", ctypes.c_void_p)]


class Tensor(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("shape", ctypes.c_int64 * 2), ("data", ctypes.c_void_p)]


class Call(ctypes.Structure):
    _fields_ = [("op", ctypes.c_char_p), ("problem", Problem), ("num_tensors", ctypes.c_int32),
                ("tensors", ctypes.POINTER(Tensor)), ("num_scalars", ctypes.c_int32), ("scalars", ctypes.c_void_p)]


U64P = ctypes.POINTER(ctypes.c_uint64)


class Exchange(ctypes.Structure):
    _fields_ = [("abi_version", ctypes.c_uint32), ("op", ctypes.c_char_p), ("state", ctypes.c_char_p),
                ("state_words", ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.POINTER(Problem))),
                ("partial", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(Call), U64P)),
                ("combine", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(Problem), ctypes.POINTER(U64P),
                                             ctypes.c_int32, U64P)),
                ("finalize", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(Call), U64P)),
                ("last_error", ctypes.CFUNCTYPE(ctypes.c_char_p))]


class Plugin(ctypes.Structure):
    _fields_ = [("abi_version", ctypes.c_uint32), ("name", ctypes.c_char_p), ("devices", ctypes.c_uint32),
                ("forward", ctypes.c_void_p),
                ("backward", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(Problem), *[ctypes.c_void_p] * 7)),
                ("last_error", ctypes.CFUNCTYPE(ctypes.c_char_p))]


class ReproHost:
    def __init__(self, path):
        lib = ctypes.CDLL(path)
        lib.gatecheck_split_exchange_v2.restype = ctypes.POINTER(Exchange)
        lib.gatecheck_plugin_v1.restype = ctypes.POINTER(Plugin)
        self.ex = lib.gatecheck_split_exchange_v2(b"gate_residual").contents
        self.v1 = lib.gatecheck_plugin_v1().contents

    @staticmethod
    def _problem(rows, dtype):
        return Problem(rows, DIM, GATES, DTYPES[dtype], 0, None)

    def _call(self, grad_out, gate, index, y, grad_gate=None):
        """A backward call of gate_residual: res, gate, index, y, grad_out; out, grad_res, grad_y, grad_gate."""
        p = self._problem(index.numel(), gate.dtype)
        d = DTYPES[gate.dtype]

        def t(name, x, dt=d, ndim=2):
            shape = (ctypes.c_int64 * 2)(x.shape[0] if x is not None else 0,
                                          x.shape[1] if x is not None and ndim == 2 else 0)
            return Tensor(name, dt, ndim, shape, x.data_ptr() if x is not None else None)

        ts = (Tensor * 9)(t(b"res", None), t(b"gate", gate), t(b"index", index, 3, 1), t(b"y", y),
                          t(b"grad_out", grad_out), t(b"out", None), t(b"grad_res", None), t(b"grad_y", None),
                          t(b"grad_gate", grad_gate))
        self._keep = ts
        return Call(b"gate_residual", p, 9, ts, 0, None)

    def partial(self, grad_out, gate, index, y):
        words = self.ex.state_words(ctypes.byref(self._problem(index.numel(), gate.dtype)))
        state = torch.zeros(words, dtype=torch.int64)
        rc = self.ex.partial(ctypes.byref(self._call(grad_out, gate, index, y)),
                             ctypes.cast(state.data_ptr(), U64P))
        assert rc == 0, self.ex.last_error()
        return state

    def combine(self, states, rows, dtype):
        """The exchange's combine of int64 states (rank order)."""
        out = torch.zeros_like(states[0])
        ptrs = (U64P * len(states))(*[ctypes.cast(x.data_ptr(), U64P) for x in states])
        rc = self.ex.combine(ctypes.byref(self._problem(rows, dtype)), ptrs, len(states),
                             ctypes.cast(out.data_ptr(), U64P))
        assert rc == 0, self.ex.last_error()
        return out

    def all_reduce(self, state, rows, dtype):
        """The all-reduce of binned states: MAX of the top bins (the low byte of every
        fourth word), each state aligned to them (combined with an empty state of that
        top bin), then SUM of the words with the top bin taken out, which is put back."""
        words = state.view(-1, 4)
        top = words[:, 3] & 0xff
        dist.all_reduce(top, op=dist.ReduceOp.MAX)
        empty = torch.zeros_like(state)
        empty.view(-1, 4)[:, 3] = top
        aligned = self.combine([state, empty], rows, dtype)
        aligned.view(-1, 4)[:, 3] -= top
        dist.all_reduce(aligned, op=dist.ReduceOp.SUM)  # ordinary integer all-reduces, both
        aligned.view(-1, 4)[:, 3] += top
        return aligned

    def finalize(self, state, grad_out, gate, index, y):
        grad_gate = torch.empty(GATES, DIM, dtype=gate.dtype)
        rc = self.ex.finalize(ctypes.byref(self._call(grad_out, gate, index, y, grad_gate)),
                              ctypes.cast(state.data_ptr(), U64P))
        assert rc == 0, self.ex.last_error()
        return grad_gate

    def backward_grad_gate(self, grad_out, gate, index, y):
        """The plugin's own full backward (ABI v1): its grad_gate."""
        n = index.numel()
        grad_res, grad_y = torch.empty(n, DIM, dtype=gate.dtype), torch.empty(n, DIM, dtype=gate.dtype)
        grad_gate = torch.empty(GATES, DIM, dtype=gate.dtype)
        rc = self.v1.backward(ctypes.byref(self._problem(n, gate.dtype)), grad_out.data_ptr(), gate.data_ptr(),
                              index.data_ptr(), y.data_ptr(), grad_res.data_ptr(), grad_gate.data_ptr(),
                              grad_y.data_ptr())
        assert rc == 0, self.v1.last_error()
        return grad_gate


def batch(dtype, seed):
    g = torch.Generator().manual_seed(seed)
    y = torch.randn(ROWS, DIM, generator=g).to(dtype)
    grad_out = (torch.randn(ROWS, DIM, generator=g) * torch.exp(4 * torch.randn(ROWS, 1, generator=g))).to(dtype)
    gate = (0.1 * torch.randn(GATES, DIM, generator=g)).to(dtype)
    index = torch.randint(0, GATES, (ROWS,), generator=g)
    return grad_out, gate, index, y


def bits(t):
    return t.view(torch.int32 if t.dtype == torch.float32 else torch.int16)


def shard(rank, world, how, seed):
    if how == "strided":
        return torch.arange(rank, ROWS, world)
    g = torch.Generator().manual_seed(seed)
    cuts = sorted(torch.randperm(ROWS - 1, generator=g)[:world - 1].add(1).tolist())
    edges = [0] + cuts + [ROWS]
    return torch.arange(edges[rank], edges[rank + 1])


def report_shards(rank, what, same, framework_same, failures):
    """Rank 0 prints the shards' verdict; any rank queues a failure: the all-reduced
    state not the full batch's, or the fp32 control not differing from it."""
    if rank == 0:
        print(f"{what}: all-reduced state finalized {'==' if same else '!='} full batch; fp32 all-reduce of the "
              f"gradients {'==' if framework_same else '!='} full batch", flush=True)
    if not same:
        failures.put(f"{what}: the all-reduced state differs from the full batch's")
    if framework_same:
        failures.put(f"{what}: the control (fp32 all-reduce) did not differ")


def worker(rank, world, plugin, store, failures):
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=world)
    ex = ReproHost(plugin)
    for dtype in (torch.bfloat16, torch.float16, torch.float32):
        for how in ("contiguous", "strided"):
            grad_out, gate, index, y = batch(dtype, 7)
            rows = shard(rank, world, how, 11)
            part = (grad_out[rows].contiguous(), gate, index[rows].contiguous(), y[rows].contiguous())
            state = ex.all_reduce(ex.partial(*part), rows.numel(), dtype)
            got = ex.finalize(state, grad_out, gate, index, y)
            full = ex.backward_grad_gate(grad_out, gate, index, y)
            same = torch.equal(bits(got), bits(full))
            # The control: each rank's own grad_gate, all-reduced in fp32 and rounded (what DDP does).
            mine = ex.backward_grad_gate(*part).float()
            dist.all_reduce(mine, op=dist.ReduceOp.SUM)
            framework_same = torch.equal(bits(mine.to(dtype)), bits(full))
            report_shards(rank, f"world {world}, {how} shards, {dtype}", same, framework_same, failures)
    dist.destroy_process_group()


def accumulation(plugin):
    """Gradient accumulation over micro-batches of 1, 7, 100, 250 and the rest, in one process."""
    ex = ReproHost(plugin)
    bad = []
    for dtype in (torch.bfloat16, torch.float16, torch.float32):
        grad_out, gate, index, y = batch(dtype, 3)
        edges = [0, 1, 8, 108, 358, ROWS]
        acc = None
        for a, b in zip(edges, edges[1:]):
            s = ex.partial(grad_out[a:b].contiguous(), gate, index[a:b].contiguous(), y[a:b].contiguous())
            acc = s if acc is None else ex.combine([acc, s], b - a, dtype)  # the accumulator
        same = torch.equal(bits(ex.finalize(acc, grad_out, gate, index, y)),
                           bits(ex.backward_grad_gate(grad_out, gate, index, y)))
        print(f"accumulation over micro-batches {[b - a for a, b in zip(edges, edges[1:])]}, {dtype}: "
              f"{'==' if same else '!='} full batch", flush=True)
        if not same:
            bad.append(str(dtype))
    return bad


def main():
    plugin, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    bad = accumulation(plugin)
    ctx = mp.get_context("spawn")
    for world in (2, 4):
        store = os.path.join(work, f"store{world}")
        if os.path.exists(store):
            os.remove(store)
        failures = ctx.Queue()
        mp.spawn(worker, args=(world, plugin, store, failures), nprocs=world, join=True)
        while not failures.empty():
            bad.append(failures.get())
    if bad:
        print("FAIL: " + "; ".join(bad))
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
