"""gatecheck::rmsnorm_modulate as users call it, from Python (pytest).

- a bad index raises, naming the row, the value and the op, at the next call
  of an op on the stream (once the device has finished the bad call) or at
  torch.ops.gatecheck.check_errors(); nothing is written;
- GATECHECK_OP_CHECKED=1 raises from the call itself;
- a first call inside a capture fails and says why;
- a replay with a bad index is reported like a call, and a good replay after
  it computes again;
- a forward+backward step of two layers (shift and scale column blocks of a
  modulation table) captured with torch.cuda.graph replays bit-identical to
  the same step run eagerly, for new values each replay;
- torch.compile(fullgraph=True) traces the op and its backward op with no graph
  break and gives the same bits as the op uncompiled (PyTorch 2);
- FakeTensor (the Meta kernels) gives the CUDA kernels' shapes, dtypes and
  strides; torch.library.opcheck passes on both ops (where torch has it).

Run (without a CUDA device every test is skipped, "no CUDA device"):
  GATECHECK_TORCH_OP=build/kernels/torch_op/libgatecheck_torch_op.so \\
    python3 -m pytest -q tests/cuda/rmsnorm_torch_op_as_called_test.py
"""
import os
import subprocess
import sys
import textwrap

import pytest
import torch

# The op library, the pending-error fixture and the bit helpers (the same directory).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from op_as_called import (LIB, check_errors, inside, no_pending_errors, ops, poisoned_pool,  # noqa: E402,F401
                          same_bits, untouched)

op = ops.rmsnorm_modulate
op_backward = ops.rmsnorm_modulate_backward


def inputs(rows, dim, gates, seed, dt=torch.bfloat16):
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(rows, dim, device="cuda", dtype=dt, generator=g)
    w = 1 + 0.1 * torch.randn(dim, device="cuda", dtype=dt, generator=g)
    table = 0.1 * torch.randn(gates, 6 * dim, device="cuda", dtype=dt, generator=g)
    idx = torch.randint(gates, (rows,), device="cuda", generator=g)
    go = torch.randn(rows, dim, device="cuda", dtype=dt, generator=g)
    return x, w, table, idx, go


def test_bad_index_raises_at_the_next_call_naming_row_value_and_op_and_writes_nothing():
    rows, dim, gates = 1000, 72, 9
    x, w, table, good, go = inputs(rows, dim, gates, seed=2)
    shift, scale = table[:, :dim], table[:, dim:2 * dim]
    bad = good.clone()
    bad[417], bad[530] = 9, -5  # the first bad row is named
    message = r"gatecheck::rmsnorm_modulate: index\[417\] = 9 is out of range \[0, 9\)"

    with poisoned_pool() as span:
        out = op(x, w, shift, scale, bad, 1e-6)  # no sync: nothing raised yet
    assert inside(out, span), "out is not in the poisoned pool; the check below would be blind"
    torch.cuda.synchronize()
    assert untouched(out), "the forward wrote its output despite a bad index"
    with pytest.raises(RuntimeError, match=message + ".*by an earlier forward on this stream"):
        op(x, w, shift, scale, good, 1e-6)
    assert same_bits(op(x, w, shift, scale, good, 1e-6), op(x, w, shift, scale, good, 1e-6))

    op(x, w, shift, scale, bad, 1e-6)
    with pytest.raises(RuntimeError, match=message + ".*forward"):
        check_errors()
    check_errors()  # each error once

    with poisoned_pool() as span:
        grads = op_backward(go, x, w, scale, bad, 1e-6)
    torch.cuda.synchronize()
    assert all(inside(t, span) for t in grads), "an output is not in the poisoned pool"
    assert all(untouched(t) for t in grads), "the backward wrote an output despite a bad index"
    with pytest.raises(RuntimeError, match=message + ".*by an earlier backward"):
        check_errors()

    # gate_residual's op on the same stream raises it, naming rmsnorm_modulate.
    op(x, w, shift, scale, bad, 1e-6)
    torch.cuda.synchronize()
    with pytest.raises(RuntimeError, match=message + ".*forward"):
        torch.ops.gatecheck.gate_residual(x, scale, good, x)

    # Through autograd: the index goes bad between the forward and the backward.
    xr = x.clone().requires_grad_(True)
    idx = good.clone()
    out = op(xr, w, shift, scale, idx, 1e-6)
    idx.data[417] = 9  # .data: autograd's version check would catch the change first
    out.backward(go)
    with pytest.raises(RuntimeError, match=message + ".*backward"):
        check_errors()


CHECKED_SCRIPT = textwrap.dedent(r"""
    import sys, torch
    torch.ops.load_library(sys.argv[1])
    op = torch.ops.gatecheck.rmsnorm_modulate
    x = torch.ones(3, 64, device="cuda", dtype=torch.bfloat16)
    w = torch.ones(64, device="cuda", dtype=torch.bfloat16)
    t = torch.zeros(9, 64, device="cuda", dtype=torch.bfloat16)
    try:
        op(x, w, t, t, torch.tensor([0, 1, 9], device="cuda"), 1e-6)
        print("CALL: no error")
    except RuntimeError as e:
        print("CALL:", str(e).splitlines()[0])
""")


def test_checked_mode_raises_from_the_call():
    env = dict(os.environ, GATECHECK_OP_CHECKED="1")
    r = subprocess.run([sys.executable, "-c", CHECKED_SCRIPT, LIB], env=env, capture_output=True, text=True, timeout=120)
    assert "CALL: gatecheck::rmsnorm_modulate (forward): index[2] = 9 is out of range [0, 9)" in r.stdout, \
        r.stdout + r.stderr
    env.pop("GATECHECK_OP_CHECKED")
    r = subprocess.run([sys.executable, "-c", CHECKED_SCRIPT, LIB], env=env, capture_output=True, text=True, timeout=120)
    assert "CALL: no error" in r.stdout, r.stdout + r.stderr


def test_first_call_inside_a_capture_fails_and_says_why():
    x, w, table, idx, _ = inputs(8, 64, 3, seed=1)
    fresh = torch.cuda.Stream()
    g = torch.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="call it once on this stream before capturing"):
        with torch.cuda.graph(g, stream=fresh):
            op(x, w, table[:, :64], table[:, 64:128], idx, 1e-6)


class TwoLayers:
    """Two norms with modulation, as in a transformer block: shift and scale
    column blocks of one modulation table, the second layer on the first's
    output with its own weight and table block."""

    def __init__(self, rows, dim, gates, seed, dt=torch.bfloat16):
        g = torch.Generator(device="cuda").manual_seed(seed)
        def leaf(*shape, scale=1.0, mean=0.0):
            return (mean + scale * torch.randn(*shape, device="cuda", dtype=dt, generator=g)).requires_grad_(True)
        self.dim = dim
        self.x = leaf(rows, dim)
        self.w1, self.w2 = leaf(dim, scale=0.1, mean=1.0), leaf(dim, scale=0.1, mean=1.0)
        self.table = leaf(gates, 6 * dim, scale=0.1)
        self.idx = torch.randint(gates, (rows,), device="cuda", generator=g)
        self.go = torch.randn(rows, dim, device="cuda", dtype=dt, generator=g)

    def leaves(self):
        return [self.x, self.w1, self.w2, self.table]

    def forward(self, f=None):
        return (f or self.layers)(self.x, self.w1, self.w2, self.table, self.idx)

    def layers(self, x, w1, w2, table, idx):
        d = self.dim
        a = op(x, w1, table[:, :d], table[:, d:2 * d], idx, 1e-6)
        return op(a, w2, table[:, 3 * d:4 * d], table[:, 4 * d:5 * d], idx, 1e-5)

    def step(self):
        out = self.forward()
        out.backward(self.go)
        return out

    def load(self, other):
        with torch.no_grad():
            for a, b in zip(self.leaves() + [self.idx, self.go], other.leaves() + [other.idx, other.go]):
                a.copy_(b)

    def results(self, out):
        return [out] + [t.grad for t in self.leaves()]


NAMES = ["out", "grad x", "grad w1", "grad w2", "grad table"]


@pytest.mark.parametrize("gates", [9, 2048])  # few gates with many tiles each; about one gate per row
def test_captured_step_replays_bit_identical_to_eager(gates):
    rows, dim = 2048, 256
    m = TwoLayers(rows, dim, gates, seed=3)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm-up on the capture stream: its first call allocates
        for _ in range(2):
            for t in m.leaves():
                t.grad = None
            m.step()
    torch.cuda.current_stream().wait_stream(s)
    for t in m.leaves():
        t.grad = None
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=s):
        static_out = m.step()
    for seed in (4, 5):
        ref = TwoLayers(rows, dim, gates, seed=seed)
        m.load(ref)
        graph.replay()
        expected = ref.results(ref.step())  # eager, the same values
        torch.cuda.synchronize()
        for name, a, b in zip(NAMES, m.results(static_out), expected):
            assert same_bits(a, b), f"seed {seed}: {name} of the replay differs from eager"
    check_errors()


def test_replay_with_a_bad_index_reports_it_and_a_good_replay_computes_again():
    rows, dim, gates = 512, 128, 9
    x, w, table, idx, _ = inputs(rows, dim, gates, seed=9)
    shift, scale = table[:, :dim], table[:, dim:2 * dim]
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        op(x, w, shift, scale, idx, 1e-6)  # the stream's first call allocates its state
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=s):
        static_out = op(x, w, shift, scale, idx, 1e-6)
    good = idx.clone()
    idx[100] = gates
    graph.replay()
    with pytest.raises(RuntimeError, match=r"gatecheck::rmsnorm_modulate: index\[100\] = 9 is out of range"):
        check_errors()
    idx.copy_(good)
    graph.replay()
    torch.cuda.synchronize()
    assert same_bits(static_out, op(x, w, shift, scale, good, 1e-6)), "a good replay after a bad one"


def test_compile_fullgraph_traces_op_and_backward_and_gives_the_same_bits():
    if not hasattr(torch, "compile"):
        pytest.skip(f"torch {torch.__version__} has no torch.compile")
    from torch._dynamo.backends.common import aot_autograd
    import torch._dynamo as dynamo  # "import torch._dynamo" would make torch a local name here

    m = TwoLayers(1024, 256, 9, seed=6)
    expected = [t.clone() for t in m.results(m.step())]

    graphs = {}
    def keep(name):
        def compiler(gm, example_inputs):
            graphs[name] = str(gm.graph)
            return gm
        return compiler
    dynamo.reset()
    traced = torch.compile(m.layers, fullgraph=True, backend=aot_autograd(fw_compiler=keep("fw"), bw_compiler=keep("bw")))
    for t in m.leaves():
        t.grad = None
    m.forward(traced).backward(m.go)
    assert "gatecheck.rmsnorm_modulate.default" in graphs.get("fw", ""), graphs.get("fw")
    assert "gatecheck.rmsnorm_modulate_backward.default" in graphs.get("bw", ""), graphs.get("bw")

    dynamo.reset()
    compiled = torch.compile(m.layers, fullgraph=True)  # Inductor
    for t in m.leaves():
        t.grad = None
    out = m.forward(compiled)
    out.backward(m.go)
    torch.cuda.synchronize()
    for name, a, b in zip(NAMES, m.results(out), expected):
        assert same_bits(a, b), f"{name} compiled differs from the op uncompiled"
    check_errors()


def test_fake_tensors_give_the_kernels_shapes_dtypes_and_strides():
    from torch._subclasses.fake_tensor import FakeTensorMode

    x, w, table, idx, go = inputs(300, 40, 7, seed=8, dt=torch.float16)
    shift, scale = table[:, :40], table[:, 40:80]
    real = [op(x, w, shift, scale, idx, 1e-6)] + list(op_backward(go, x, w, scale, idx, 1e-6))
    with FakeTensorMode(allow_non_fake_inputs=True) as mode:
        fx, fw, ft, fi, fg = (mode.from_tensor(t) for t in (x, w, table, idx, go))
        fake = [op(fx, fw, ft[:, :40], ft[:, 40:80], fi, 1e-6)] + list(op_backward(fg, fx, fw, ft[:, 40:80], fi, 1e-6))
    for name, r, f in zip(["out", "dx", "dweight", "dshift", "dscale"], real, fake):
        assert (tuple(f.shape), f.dtype, f.stride(), f.device) == (tuple(r.shape), r.dtype, r.stride(), r.device), name


def test_opcheck_schema_fake_autograd_and_aot_dispatch():
    """torch.library.opcheck on both ops: the schema, the Meta kernels against
    the CUDA ones (FakeTensor), the autograd registration, and AOTAutograd
    with dynamic shapes."""
    if not hasattr(torch.library, "opcheck"):
        pytest.skip(f"torch {torch.__version__} has no torch.library.opcheck")
    x, w, table, idx, go = inputs(96, 64, 5, seed=7)
    x, w, table = (t.requires_grad_(True) for t in (x, w, table))
    shift, scale = table[:, :64].detach().requires_grad_(True), table[:, 64:128].detach().requires_grad_(True)
    torch.library.opcheck(op.default, (x, w, shift, scale, idx, 1e-6))
    torch.library.opcheck(op_backward.default, (go, x.detach(), w.detach(), scale.detach(), idx, 1e-6))
    check_errors()
