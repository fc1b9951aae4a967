"""gate_residual's split exchange as LibTorch ops (kernels/torch_op):
gate_residual_grad_gate_state, gate_residual_state_combine and
gate_residual_state_finalize.

On `cpu` (host-repro's kernels): for bf16, fp16 and fp32, and every k from 2
to 8, the batch cut into contiguous micro-batches of different sizes, into
strided shards and into a random partition: the parts' states combined in
rank order are the full batch's state word for word, and finalized, its
grad_gate bit for bit, which is host-repro's own backward's (its plugin,
ABI v1). The combine in reversed, shuffled and tree order gives the same
words. The shared-index form and strided inputs give the same state. The
control, which must differ for some case: the parts' grad_gate summed in
fp32 in rank order and rounded, as frameworks combine gradients. Then the
Meta kernels and the argument errors, on the CPU and on meta tensors (the
Meta kernel raises for every bad rank, dtype and size the CPU kernel does).

On `cuda` (cuda-repro's kernels; exit 77 without a CUDA device): the same
equalities on the device, and each CUDA state equals the CPU op's state word
for word; a bad index is raised by check_errors().

usage: torch_op_state_test.py LIBGATECHECK_TORCH_OP.so REPRO_PLUGIN.so cpu|cuda [--errors-only]
(--errors-only: the argument errors alone, without the splits before them)
"""
import ctypes
import faulthandler
import os
import sys

import torch

DTYPES = {torch.float32: 0, torch.float16: 1, torch.bfloat16: 2}
SHAPES = [(600, 24, 5), (257, 3, 1), (64, 130, 7)]  # rows, dim, gates
CUDA_SHAPES = SHAPES + [(5000, 200, 32)]  # several tiles per gate


def load(path):
    if torch.cuda.is_available():
        torch.ops.load_library(path)
    else:  # a LibTorch without CUDA: its c10::cuda functions bound lazily (kernels/torch_op/README.md)
        ctypes.CDLL(path, mode=os.RTLD_LAZY | os.RTLD_GLOBAL)


class Problem(ctypes.Structure):
    _fields_ = [("rows", ctypes.c_int64), ("dim", ctypes.c_int64), ("gates", ctypes.c_int64),
                ("dtype", ctypes.c_int32), ("device", ctypes.c_int32), ("stream", ctypes.c_void_p)]


class Plugin(ctypes.Structure):
    _fields_ = [("abi_version", ctypes.c_uint32), ("name", ctypes.c_char_p), ("devices", ctypes.c_uint32),
                ("forward", ctypes.c_void_p),
                ("backward", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(Problem), *[ctypes.c_void_p] * 7)),
                ("last_error", ctypes.CFUNCTYPE(ctypes.c_char_p))]


def host_repro_grad_gate(plugin, grad_out, gate, index, y):
    """host-repro's full backward (its plugin, ABI v1): its grad_gate."""
    rows, dim = grad_out.shape
    grad_res, grad_y, grad_gate = torch.empty_like(grad_out), torch.empty_like(grad_out), torch.empty_like(gate)
    p = Problem(rows, dim, gate.shape[0], DTYPES[gate.dtype], 0, None)
    rc = plugin.backward(ctypes.byref(p), grad_out.data_ptr(), gate.data_ptr(), index.data_ptr(), y.data_ptr(),
                         grad_res.data_ptr(), grad_gate.data_ptr(), grad_y.data_ptr())
    assert rc == 0, plugin.last_error()
    return grad_gate


def batch(rows, dim, gates, dtype, seed, device="cpu"):
    """Rows of very different magnitudes, so that the order of an fp32 sum matters."""
    g = torch.Generator().manual_seed(seed)
    y = torch.randn(rows, dim, generator=g).to(dtype)
    grad_out = (torch.randn(rows, dim, generator=g) * torch.exp(4 * torch.randn(rows, 1, generator=g))).to(dtype)
    gate = (0.1 * torch.randn(gates, dim, generator=g)).to(dtype)
    index = torch.randint(0, gates, (rows,), generator=g)
    return [t.to(device) for t in (grad_out, gate, index, y)]


def bits(t):
    return t.view(torch.int32 if t.dtype == torch.float32 else torch.int16)


def same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(bits(a).cpu(), bits(b).cpu())


def splits(rows, k, seed):
    """(name, [row indices of each part]) for k parts: contiguous micro-batches of
    different sizes, strided shards, a random partition."""
    g = torch.Generator().manual_seed(seed)
    cuts = sorted(torch.randperm(rows - 1, generator=g)[:k - 1].add(1).tolist())
    edges = [0] + cuts + [rows]
    owner = torch.randint(0, k, (rows,), generator=g)
    return [("contiguous", [torch.arange(a, b) for a, b in zip(edges, edges[1:])]),
            ("strided", [torch.arange(r, rows, k) for r in range(k)]),
            ("partition", [torch.nonzero(owner == r).flatten() for r in range(k)])]


class Checker:
    def __init__(self):
        self.failures, self.checks = [], 0

    def expect(self, ok, what):
        self.checks += 1
        if not ok:
            self.failures.append(what)
            print("FAIL:", what, flush=True)


def check_splits(ops, plugin, device, shapes, chk):
    """Returns the number of cases where the control (fp32 sum of the parts' grad_gate) differs."""
    state, combine, finalize = (ops.gate_residual_grad_gate_state, ops.gate_residual_state_combine,
                                ops.gate_residual_state_finalize)
    control_differs = cases = 0
    for dtype in (torch.bfloat16, torch.float16, torch.float32):
        for si, (rows, dim, gates) in enumerate(shapes):
            grad_out, gate, index, y = batch(rows, dim, gates, dtype, 100 + si, device)
            full = state(grad_out, gate, index, y)
            full_gg = finalize(full, dtype)
            name = f"{device} {dtype} {rows}x{dim}, {gates} gates"
            chk.expect(tuple(full.shape) == (gates, dim, 4) and full.dtype == torch.int64, f"{name}: state shape")
            if device == "cpu":
                host = host_repro_grad_gate(plugin, grad_out, gate, index, y)
                chk.expect(same_bits(full_gg, host), f"{name}: finalized state != host-repro's grad_gate")
            else:
                cpu_args = [t.cpu() for t in (grad_out, gate, index, y)]
                cpu_full = state(*cpu_args)
                chk.expect(torch.equal(full.cpu(), cpu_full), f"{name}: cuda state != cpu state")
                chk.expect(same_bits(full_gg, finalize(cpu_full, dtype)), f"{name}: cuda finalize != cpu finalize")
            for k in range(2, 9):
                for how, parts in splits(rows, k, 1000 * si + k):
                    cases += 1
                    parts = [p.to(device) for p in parts]
                    states = [state(grad_out[p], gate, index[p], y[p]) for p in parts]
                    what = f"{name}, {k} {how} parts {[p.numel() for p in parts]}"
                    combined = combine(states)
                    chk.expect(torch.equal(combined, full), f"{what}: combined state != full batch's")
                    chk.expect(same_bits(finalize(combined, dtype), full_gg), f"{what}: grad_gate != full batch's")
                    check_combine_orders(chk, combine, states, full, what, control=how == "contiguous")
                    # The control: the parts' own grad_gate summed in fp32 in rank order, rounded.
                    fp32 = sum(finalize(s, dtype).float() for s in states).to(dtype)
                    if not same_bits(fp32, full_gg):
                        control_differs += 1
    return control_differs, cases


def check_combine_orders(chk, combine, states, full, what, control):
    """The states combined in reversed, shuffled, tree and accumulation order give the
    full batch's state; with `control`, leaving the last part (not empty) out does not."""
    k, h = len(states), len(states) // 2
    perm = torch.randperm(k, generator=torch.Generator().manual_seed(k)).tolist()
    for order, c in (("reversed", combine(states[::-1])),
                     ("shuffled", combine([states[i] for i in perm])),
                     ("tree", combine([combine(states[h:]), combine(states[:h])])),
                     ("accumulated", accumulate(combine, states))):
        chk.expect(torch.equal(c, full), f"{what}: combine in {order} order differs")
    if control:  # the state comparator's control
        chk.expect(not torch.equal(combine(states[:-1]), full), f"{what}: a lost part went unseen")


def accumulate(combine, states):
    """Gradient accumulation: acc = combine([acc, micro-batch's state])."""
    acc = states[0]
    for s in states[1:]:
        acc = combine([acc, s])
    return acc


def check_forms(ops, device, chk):
    """The shared-index form and strided inputs give the full form's state."""
    state = ops.gate_residual_grad_gate_state
    grad_out, gate, index, y = batch(120, 40, 6, torch.bfloat16, 5, device)
    shared = index[:8]
    chk.expect(torch.equal(state(grad_out, gate, shared, y), state(grad_out, gate, shared.repeat(15), y)),
               f"{device}: the shared-index form's state differs")
    base = state(grad_out, gate, index, y)
    g_t, y_t = grad_out.t().contiguous().t(), y.t().contiguous().t()  # column-major views
    wide = torch.zeros(6, 80, dtype=gate.dtype, device=device)[:, ::2]  # gate: only its shape is read
    chk.expect(not g_t.is_contiguous() and torch.equal(state(g_t, wide, index, y_t), base),
               f"{device}: strided inputs give another state")
    chk.expect(torch.equal(state(grad_out[:0], gate, index[:0], y[:0]), torch.zeros_like(base)),
               f"{device}: the state of no rows is not all zeros")
    stacked = torch.stack([base, base])
    chk.expect(torch.equal(ops.gate_residual_state_combine(list(stacked.unbind(0))),
                           ops.gate_residual_state_combine([base, base])), f"{device}: a stacked tensor's unbind")


def check_meta(ops, chk):
    m = dict(device="meta")
    go, y = torch.empty(50, 12, dtype=torch.float16, **m), torch.empty(50, 12, dtype=torch.float16, **m)
    gate, idx = torch.empty(3, 12, dtype=torch.float16, **m), torch.empty(50, dtype=torch.long, **m)
    s = ops.gate_residual_grad_gate_state(go, gate, idx, y)
    chk.expect((tuple(s.shape), s.dtype, s.device.type) == ((3, 12, 4), torch.int64, "meta"), f"meta state: {s}")
    c = ops.gate_residual_state_combine([s, s])
    chk.expect((tuple(c.shape), c.dtype) == ((3, 12, 4), torch.int64), f"meta combine: {c}")
    f = ops.gate_residual_state_finalize(s, torch.bfloat16)
    chk.expect((tuple(f.shape), f.dtype) == ((3, 12), torch.bfloat16), f"meta finalize: {f}")


def expect_error(chk, f, text, where=""):
    """f raises a RuntimeError whose message holds `text`; `where` names the case in the report."""
    try:
        f()
    except RuntimeError as e:
        chk.expect(text in str(e), f"{where}expected {text!r} in: {str(e).splitlines()[0]}")
        return
    chk.expect(False, f"{where}no error; expected {text!r}")


def check_arg_errors(ops, device, chk, go, gate, idx, y):
    """The state op's bad ranks, dtypes and sizes: each raises naming the argument, on every
    dispatch key (cpu, cuda and meta: the Meta kernel rejects what the real ones reject)."""
    state = ops.gate_residual_grad_gate_state
    S = "gatecheck::gate_residual_grad_gate_state"
    e = lambda f, text: expect_error(chk, f, text, f"{device}: ")  # noqa: E731
    e(lambda: state(go.double(), gate.double(), idx, y.double()), f"{S}: dtype Double is not bf16, fp16 or fp32")
    e(lambda: state(go, gate, idx, y.half()), f"{S}: grad_out, gate and y must share one dtype")
    e(lambda: state(go.reshape(-1), gate, idx, y), f"{S}: grad_out must be 2-D")
    e(lambda: state(go[0], gate, idx, y), f"{S}: grad_out must be 2-D")
    e(lambda: state(go.reshape(-1), gate, idx, y.reshape(-1)), f"{S}: grad_out must be 2-D")
    e(lambda: state(go.reshape(1, 30, 8), gate, idx, y), f"{S}: grad_out must be 2-D")
    e(lambda: state(go, gate, idx, y.reshape(-1)), f"{S}: y must be 2-D")
    e(lambda: state(go, gate.reshape(-1), idx, y), f"{S}: gate must be 2-D")
    e(lambda: state(go, gate[0], idx, y), f"{S}: gate must be 2-D")
    e(lambda: state(go, gate, idx.int(), y), f"{S}: index must be int64")
    e(lambda: state(go, gate, idx.reshape(5, 6), y), f"{S}: index must be 1-D")
    e(lambda: state(go, gate, idx[0], y), f"{S}: index must be 1-D")
    e(lambda: state(go, gate, idx, y[:29]), f"{S}: grad_out [30, 8] and y [29, 8] differ")
    e(lambda: state(go, gate, idx, y[:, :7]), f"{S}: grad_out [30, 8] and y [30, 7] differ")
    e(lambda: state(go, gate[:, :7], idx, y), f"{S}: gate has 7 columns, grad_out has 8")
    e(lambda: state(go, gate, idx[:7], y), f"{S}: rows = 30 is neither the index length nor a multiple of it")
    e(lambda: state(go, gate, idx[:0], y), f"{S}: rows = 30 is neither the index length nor a multiple of it")


def check_errors(ops, device, chk):
    state, combine, finalize = (ops.gate_residual_grad_gate_state, ops.gate_residual_state_combine,
                                ops.gate_residual_state_finalize)
    go, gate, idx, y = batch(30, 8, 4, torch.bfloat16, 9, device)
    S, C, F = ("gatecheck::gate_residual_grad_gate_state", "gatecheck::gate_residual_state_combine",
               "gatecheck::gate_residual_state_finalize")
    e = lambda f, text: expect_error(chk, f, text)  # noqa: E731
    check_arg_errors(ops, device, chk, go, gate, idx, y)
    if device == "cpu":  # the Meta kernel, with the same arguments as meta tensors
        check_arg_errors(ops, "meta", chk, *[torch.empty_like(t, device="meta") for t in (go, gate, idx, y)])
    s = state(go, gate, idx, y)
    e(lambda: combine([]), f"{C}: states is empty")
    e(lambda: combine([s, s[:, :, :3]]), f"{C}: states[1] must be a state [gates, dim, 4]")
    e(lambda: combine([s, s.double()]), f"{C}: states[1] must be an int64 state")
    e(lambda: combine([s, s[:, :5]]), f"{C}: states[1] has shape [4, 5, 4], states[0] [4, 8, 4]")
    e(lambda: finalize(s.int(), torch.float32), f"{F}: state must be an int64 state")
    e(lambda: finalize(s.reshape(4, 32), torch.float32), f"{F}: state must be a state [gates, dim, 4]")
    e(lambda: finalize(s, torch.float64), f"{F}: dtype Double is not bf16, fp16 or fp32")
    if device == "cpu":
        summed = s.clone()
        summed[..., 3] += s[..., 3]  # a raw SUM of two states: top bins added
        e(lambda: finalize(summed, torch.float32), f"{F}: state is not a state: element ")
        e(lambda: combine([s, summed]), f"{C}: states[1] is not a state: element ")
        bad = idx.clone()
        bad[17] = 4
        e(lambda: state(go, gate, bad, y), f"{S}: partial: index[17]=4 outside [0, 4)")
        bad[17] = -1
        e(lambda: state(go, gate, bad, y), f"{S}: partial: index[17]=-1 outside [0, 4)")
    else:
        e(lambda: state(go, gate.cpu(), idx, y), f"{S}: gate is on cpu, grad_out on cuda")
        e(lambda: combine([s, s.cpu()]), f"{C}: states[1] is on cpu, states[0] on cuda")
        bad = idx.clone()
        bad[17] = 4
        state(go, gate, bad, y)  # found on the device, raised without a host sync by the next call or:
        e(lambda: ops.check_errors(), "index[17] = 4 is out of range [0, 4)")


def main():
    faulthandler.enable()  # a crash prints the Python line it happened at
    lib, plugin_path, device = sys.argv[1], sys.argv[2], sys.argv[3]
    errors_only = sys.argv[4:] == ["--errors-only"]  # the argument checks alone, in a fresh process
    if device == "cuda" and not torch.cuda.is_available():
        print("no CUDA device: skipped")
        sys.exit(77)
    load(lib)
    ops = torch.ops.gatecheck
    lib_plugin = ctypes.CDLL(plugin_path)
    lib_plugin.gatecheck_plugin_v1.restype = ctypes.POINTER(Plugin)
    plugin = lib_plugin.gatecheck_plugin_v1().contents
    chk = Checker()
    if not errors_only:
        differs, cases = check_splits(ops, plugin, device, SHAPES if device == "cpu" else CUDA_SHAPES, chk)
        print(f"{device}: {cases} splits (k = 2..8; contiguous, strided, partition; bf16, fp16, fp32): combined "
              f"states == the full batch's, in rank, reversed, shuffled, tree and accumulation order; finalized == "
              f"{'host-repro' if device == 'cpu' else 'the cpu op'}'s grad_gate", flush=True)
        print(f"control: the fp32 sum of the parts' grad_gate differs from the full batch's in {differs} of {cases} "
              f"splits", flush=True)
        chk.expect(differs > 0,
                   "the control (fp32 sum of the parts' grad_gate) never differed: the comparator is untested")
        check_forms(ops, device, chk)
        if device == "cpu":
            check_meta(ops, chk)
    check_errors(ops, device, chk)
    print(f"{device}: argument errors checked{' (and on meta)' if device == 'cpu' else ''}", flush=True)
    if chk.failures:
        print(f"FAIL: {len(chk.failures)} of {chk.checks} checks")
        sys.exit(1)
    print(f"OK: {chk.checks} checks")


if __name__ == "__main__":
    main()
