"""rmsnorm_modulate's split exchange as LibTorch ops (kernels/torch_op), on the
CPU: rmsnorm_modulate_param_grad_state, rmsnorm_modulate_state_combine and
rmsnorm_modulate_state_finalize.

For bf16, fp16 and fp32, and every k from 2 to 8, the batch cut into
contiguous micro-batches of different sizes, into strided shards and into a
random partition: the parts' states combined in rank order are the full
batch's state word for word, and finalized, its dweight, dshift and dscale
bit for bit, which are host-repro's own backward's (its plugin, ABI v2). The
combine in reversed, shuffled, tree and accumulated order gives the same
words; without its last part it does not. The control, which must differ for
some case: the parts' gradients summed in fp32 in rank order and rounded, as
frameworks combine gradients. Then the Meta kernels and the argument errors.

On `cuda` (cuda-repro's kernels; exit 77 without a CUDA device): each CUDA
state equals the CPU op's word for word and finalizes to its bits; the
parts' CUDA states combined on the device are the full batch's; argument
errors as on the CPU, and a bad index raised by check_errors().

usage: rmsnorm_torch_op_state_test.py LIBGATECHECK_TORCH_OP.so REPRO_PLUGIN.so [cpu|cuda]
"""
import ctypes
import faulthandler
import sys

import torch

from torch_op_state_test import Checker, Problem, check_combine_orders, expect_error, load, same_bits, splits

DTYPES = {torch.float32: 0, torch.float16: 1, torch.bfloat16: 2}
I64 = 3
SHAPES = [(600, 24, 5), (257, 3, 1), (64, 130, 7)]  # rows, dim, gates
EPS = 1e-6
S, C, F = ("gatecheck::rmsnorm_modulate_param_grad_state", "gatecheck::rmsnorm_modulate_state_combine",
           "gatecheck::rmsnorm_modulate_state_finalize")


class Tensor(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("shape", ctypes.c_int64 * 2), ("data", ctypes.c_void_p)]


class Scalar(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("value", ctypes.c_double)]


class Call(ctypes.Structure):
    _fields_ = [("op", ctypes.c_char_p), ("problem", Problem), ("num_tensors", ctypes.c_int32),
                ("tensors", ctypes.POINTER(Tensor)), ("num_scalars", ctypes.c_int32),
                ("scalars", ctypes.POINTER(Scalar))]


class OpPlugin(ctypes.Structure):
    _fields_ = [("abi_version", ctypes.c_uint32), ("name", ctypes.c_char_p), ("op", ctypes.c_char_p),
                ("devices", ctypes.c_uint32), ("forward", ctypes.c_void_p),
                ("backward", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(Call))),
                ("last_error", ctypes.CFUNCTYPE(ctypes.c_char_p))]


def host_repro_grads(plugin, grad_out, x, w, scale, index):
    """host-repro's full backward (its plugin, ABI v2): dweight, dshift, dscale."""
    rows, dim = x.shape
    gates = scale.shape[0]
    shift, out = torch.zeros_like(scale), torch.empty_like(x)
    dx, dw, dshift, dscale = torch.empty_like(x), torch.empty_like(w), torch.empty_like(scale), torch.empty_like(scale)
    named = [("x", x), ("w", w), ("shift", shift), ("scale", scale), ("index", index), ("grad_out", grad_out),
             ("out", None), ("dx", dx), ("dweight", dw), ("dshift", dshift), ("dscale", dscale)]
    tensors = (Tensor * len(named))()
    for t, (name, v) in zip(tensors, named):
        like = out if v is None else v
        t.name, t.ndim = name.encode(), like.dim()
        t.dtype = I64 if like.dtype == torch.int64 else DTYPES[like.dtype]
        t.shape[0], t.shape[1] = like.shape[0], (like.shape[1] if like.dim() == 2 else 0)
        t.data = None if v is None else v.data_ptr()
    scalars = (Scalar * 1)(Scalar(b"eps", EPS))
    call = Call(b"rmsnorm_modulate", Problem(rows, dim, gates, DTYPES[x.dtype], 0, None), len(named), tensors, 1,
                scalars)
    rc = plugin.backward(ctypes.byref(call))
    assert rc == 0, plugin.last_error()
    return dw, dshift, dscale


def batch(rows, dim, gates, dtype, seed):
    """Rows and gradients of very different magnitudes, so that the order of an fp32 sum matters."""
    g = torch.Generator().manual_seed(seed)
    x = (torch.randn(rows, dim, generator=g) * torch.exp(2 * torch.randn(rows, 1, generator=g))).to(dtype)
    w = (1 + 0.1 * torch.randn(dim, generator=g)).to(dtype)
    scale = (0.1 * torch.randn(gates, dim, generator=g)).to(dtype)
    index = torch.randint(0, gates, (rows,), generator=g)
    grad_out = (torch.randn(rows, dim, generator=g) * torch.exp(4 * torch.randn(rows, 1, generator=g))).to(dtype)
    return grad_out, x, w, scale, index


def check_splits(ops, plugin, chk):
    """Returns (cases where the fp32 control differs, cases)."""
    state, combine, finalize = (ops.rmsnorm_modulate_param_grad_state, ops.rmsnorm_modulate_state_combine,
                                ops.rmsnorm_modulate_state_finalize)
    control_differs = cases = 0
    for dtype in (torch.bfloat16, torch.float16, torch.float32):
        for si, (rows, dim, gates) in enumerate(SHAPES):
            grad_out, x, w, scale, index = batch(rows, dim, gates, dtype, 200 + si)
            full = state(grad_out, x, w, scale, index, EPS)
            full_grads = finalize(full, dtype)
            name = f"{dtype} {rows}x{dim}, {gates} gates"
            chk.expect(tuple(full.shape) == (1 + 2 * gates, dim, 4) and full.dtype == torch.int64, f"{name}: state shape")
            host = host_repro_grads(plugin, grad_out, x, w, scale, index)
            for what, got, want in zip(("dweight", "dshift", "dscale"), full_grads, host):
                chk.expect(same_bits(got, want), f"{name}: finalized {what} != host-repro's")
            for k in range(2, 9):
                for how, parts in splits(rows, k, 1000 * si + k):
                    cases += 1
                    states = [state(grad_out[p], x[p], w, scale, index[p], EPS) for p in parts]
                    what = f"{name}, {k} {how} parts {[p.numel() for p in parts]}"
                    combined = combine(states)
                    chk.expect(torch.equal(combined, full), f"{what}: combined state != full batch's")
                    chk.expect(all(same_bits(a, b) for a, b in zip(finalize(combined, dtype), full_grads)),
                               f"{what}: gradients != full batch's")
                    check_combine_orders(chk, combine, states, full, what, control=how == "contiguous")
                    # The control: each part's gradients, summed in fp32 in rank order and rounded.
                    mine = [finalize(s, dtype) for s in states]
                    fp32 = [sum(m[i].float() for m in mine).to(dtype) for i in range(3)]
                    if not all(same_bits(a, b) for a, b in zip(fp32, full_grads)):
                        control_differs += 1
    return control_differs, cases


def check_meta(ops, chk):
    m = dict(device="meta", dtype=torch.float16)
    g, x, w = torch.empty(50, 12, **m), torch.empty(50, 12, **m), torch.empty(12, **m)
    scale, idx = torch.empty(3, 12, **m), torch.empty(50, dtype=torch.long, device="meta")
    s = ops.rmsnorm_modulate_param_grad_state(g, x, w, scale, idx, EPS)
    chk.expect((tuple(s.shape), s.dtype, s.device.type) == ((7, 12, 4), torch.int64, "meta"), f"meta state: {s}")
    c = ops.rmsnorm_modulate_state_combine([s, s])
    chk.expect((tuple(c.shape), c.dtype) == ((7, 12, 4), torch.int64), f"meta combine: {c}")
    f = ops.rmsnorm_modulate_state_finalize(s, torch.bfloat16)
    chk.expect([(tuple(t.shape), t.dtype) for t in f] == [((12,), torch.bfloat16), ((3, 12), torch.bfloat16),
                                                         ((3, 12), torch.bfloat16)], f"meta finalize: {f}")


def check_errors(ops, chk):
    state, combine, finalize = (ops.rmsnorm_modulate_param_grad_state, ops.rmsnorm_modulate_state_combine,
                                ops.rmsnorm_modulate_state_finalize)
    g, x, w, scale, idx = batch(30, 8, 4, torch.bfloat16, 9)
    e = lambda f, text: expect_error(chk, f, text)  # noqa: E731
    e(lambda: state(g.double(), x.double(), w.double(), scale.double(), idx, EPS), f"{S}: dtype Double is not bf16")
    e(lambda: state(g, x, w.half(), scale, idx, EPS), f"{S}: w has dtype Half, x has BFloat16")
    e(lambda: state(g.reshape(-1), x, w, scale, idx, EPS), f"{S}: grad_out must be 2-D")
    e(lambda: state(g, x, w.reshape(2, 4), scale, idx, EPS), f"{S}: w must be 1-D")
    e(lambda: state(g, x, w, scale, idx.int(), EPS), f"{S}: index must be int64")
    e(lambda: state(g[:29], x, w, scale, idx, EPS), f"{S}: grad_out [29, 8] and x [30, 8] differ")
    P = f"{S}: partial: rmsnorm_modulate_bwd"
    e(lambda: state(g, x, w[:7], scale, idx, EPS), f"{P}: w has shape [1, 7], expected [1, 8]")
    e(lambda: state(g, x, w, scale[:, :7], idx, EPS), f"{P}: scale has shape [4, 7], expected [4, 8]")
    e(lambda: state(g, x, w, scale, idx, 0.0), f"{P}: eps = 0 is not positive and finite")
    e(lambda: state(g, x, w, scale[:0], idx, EPS), f"{P}: gates = 0 with rows = 30 > 0")
    bad = idx.clone()
    bad[17] = 4
    e(lambda: state(g, x, w, scale, bad, EPS), f"{P}: index[17] = 4 is out of range [0, 4) (gates = 4)")
    e(lambda: finalize(torch.zeros(8, 3, 4, dtype=torch.long), torch.float32), f"{F}: state must be a state "
      f"[1 + 2 x gates, dim, 4] (from {S}): its first dimension 8 is not odd")
    empty = state(g[:0], x[:0], w, scale, idx[:0], EPS)  # no rows: the empty state, finalized to zeros
    chk.expect(torch.equal(empty, torch.zeros(9, 8, 4, dtype=torch.long)), "the state of no rows is not all zeros")
    s = state(g, x, w, scale, idx, EPS)
    e(lambda: combine([]), f"{C}: states is empty")
    e(lambda: combine([s, s[:, :, :3]]), f"{C}: states[1] must be a state [1 + 2 x gates, dim, 4]")
    e(lambda: combine([s, s.double()]), f"{C}: states[1] must be an int64 state")
    e(lambda: combine([s, s[:, :5]]), f"{C}: states[1] has shape [9, 5, 4], states[0] [9, 8, 4]")
    e(lambda: finalize(s.int(), torch.float32), f"{F}: state must be an int64 state")
    e(lambda: finalize(s[:8], torch.float32), f"{F}: state must be a state [1 + 2 x gates, dim, 4]")
    e(lambda: finalize(s, torch.float64), f"{F}: dtype Double is not bf16, fp16 or fp32")
    summed = s.clone()
    summed[..., 3] += s[..., 3]  # a raw SUM of two states: top bins added
    e(lambda: finalize(summed, torch.float32), f"{F}: state is not a state: element ")
    e(lambda: combine([s, summed]), f"{C}: states[1] is not a state: element ")


def check_cuda(ops, chk):
    """CUDA states, combines and finalizes against the CPU op's."""
    state, combine, finalize = (ops.rmsnorm_modulate_param_grad_state, ops.rmsnorm_modulate_state_combine,
                                ops.rmsnorm_modulate_state_finalize)
    cases = 0
    for dtype in (torch.bfloat16, torch.float16, torch.float32):
        for si, (rows, dim, gates) in enumerate(SHAPES + [(5000, 200, 32)]):
            cpu = batch(rows, dim, gates, dtype, 300 + si)
            dev = [t.cuda() for t in cpu]
            name = f"cuda {dtype} {rows}x{dim}, {gates} gates"
            full_cpu = state(*cpu, EPS)
            full = state(*dev, EPS)
            chk.expect(full.is_cuda and torch.equal(full.cpu(), full_cpu), f"{name}: cuda state != cpu state")
            for what, a, b in zip(("dweight", "dshift", "dscale"), finalize(full, dtype), finalize(full_cpu, dtype)):
                chk.expect(a.is_cuda and same_bits(a.cpu(), b), f"{name}: cuda finalize of {what} != cpu finalize")
            grad_out, x, w, scale, index = dev
            for k in (2, 5, 8):
                for how, parts in splits(rows, k, 2000 * si + k):
                    cases += 1
                    parts = [p.cuda() for p in parts]
                    states = [state(grad_out[p], x[p], w, scale, index[p], EPS) for p in parts]
                    chk.expect(torch.equal(combine(states[::-1]).cpu(), full_cpu),
                               f"{name}, {k} {how} parts: combined cuda states != the full batch's")
    print(f"cuda: {cases} splits: cuda states combined on the device == the cpu op's full batch state", flush=True)
    g, x, w, scale, idx = [t.cuda() for t in batch(30, 8, 4, torch.bfloat16, 9)]
    e = lambda f, text: expect_error(chk, f, text)  # noqa: E731
    P = f"{S}: partial: rmsnorm_modulate_bwd"
    e(lambda: state(g, x, w[:7], scale, idx, EPS), f"{P}: w has shape [1, 7], expected [1, 8]")
    e(lambda: state(g, x, w, scale, idx, 0.0), f"{P}: eps = 0 is not positive and finite")
    e(lambda: state(g, x.cpu(), w, scale, idx, EPS), f"{S}: grad_out is on cuda:0, x on cpu")
    bad = idx.clone()
    bad[17] = 4
    state(g, x, w, scale, bad, EPS)  # found on the device, raised without a host sync by the next call or:
    e(lambda: ops.check_errors(), "index[17] = 4 is out of range [0, 4)")


def main():
    faulthandler.enable()  # a crash prints the Python line it happened at
    lib, plugin_path = sys.argv[1], sys.argv[2]
    device = sys.argv[3] if len(sys.argv) > 3 else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        print("no CUDA device: skipped")
        sys.exit(77)
    load(lib)
    if device == "cuda":
        chk = Checker()
        check_cuda(torch.ops.gatecheck, chk)
        if chk.failures:
            print(f"FAIL: {len(chk.failures)} of {chk.checks} checks")
            sys.exit(1)
        print(f"OK: {chk.checks} checks")
        return
    ops = torch.ops.gatecheck
    entry = ctypes.CDLL(plugin_path).gatecheck_plugin_v2
    entry.restype, entry.argtypes = ctypes.POINTER(OpPlugin), [ctypes.c_char_p]
    plugin = entry(b"rmsnorm_modulate").contents
    chk = Checker()
    differs, cases = check_splits(ops, plugin, chk)
    print(f"cpu: {cases} splits: combined states equal to the full batch's; the fp32 control "
          f"differs in {differs}", flush=True)
    chk.expect(differs > 0, "the fp32 control never differed: the cases cannot tell the combines apart")
    check_meta(ops, chk)
    check_errors(ops, chk)
    if chk.failures:
        print(f"FAIL: {len(chk.failures)} of {chk.checks} checks")
        sys.exit(1)
    print(f"OK: {chk.checks} checks")


if __name__ == "__main__":
    main()
