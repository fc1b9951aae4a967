"""gatecheck::gate_residual as users call it, from Python (pytest).

- grad_res is the incoming gradient itself (its storage), as in eager;
- a bad index raises, naming the row and the value, at the next call of the op
  on the stream (once the device has finished the bad call) or at
  torch.ops.gatecheck.check_errors(); nothing is written;
- GATECHECK_OP_CHECKED=1 raises from the call itself, and a step in that mode
  cannot be captured (it waits for the GPU);
- a first call inside a capture fails and says why;
- a forward+backward step of a small model captured with torch.cuda.graph
  replays bit-identical to the same step run eagerly;
- torch.compile(fullgraph=True) traces the op and its backward op with no graph
  break and gives the same bits as the op uncompiled;
- torch.library.opcheck passes on both ops (where torch has it).

Run (without a CUDA device every test is skipped, "no CUDA device"):
  GATECHECK_TORCH_OP=build/kernels/torch_op/libgatecheck_torch_op.so \\
    python3 -m pytest -q tests/cuda/torch_op_as_called_test.py
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

op = ops.gate_residual
op_backward = ops.gate_residual_backward


def eager(res, gate, index, y):
    rows = res.shape[0]
    return res + gate.index_select(0, index.repeat(rows // index.shape[0])) * y


def test_grad_res_is_the_incoming_gradient():
    torch.manual_seed(1)
    dt, rows, dim = torch.bfloat16, 4097, 256
    table = torch.randn(9, 6 * dim, device="cuda", dtype=dt, requires_grad=True)
    res = torch.randn(rows, dim, device="cuda", dtype=dt, requires_grad=True)
    y = torch.randn(rows, dim, device="cuda", dtype=dt, requires_grad=True)
    idx = torch.randint(9, (rows,), device="cuda")
    go = torch.randn(rows, dim, device="cuda", dtype=dt)
    gate = table[:, dim:2 * dim]
    ours = op(res, gate, idx, y)
    g = torch.autograd.grad(ours, (res, table, y), go)
    assert g[0].data_ptr() == go.data_ptr(), "grad_res is a copy of grad_out, not grad_out itself"
    e = eager(res, gate, idx, y)
    ge = torch.autograd.grad(e, (res, table, y), go)
    assert same_bits(ours, e) and same_bits(g[0], ge[0]) and same_bits(g[2], ge[2])


def test_bad_index_raises_at_the_next_call_naming_row_and_value_and_writes_nothing():
    torch.manual_seed(2)
    dt, rows, dim, gates = torch.bfloat16, 1000, 72, 9
    res = torch.randn(rows, dim, device="cuda", dtype=dt)
    y = torch.randn(rows, dim, device="cuda", dtype=dt)
    gate = torch.randn(gates, dim, device="cuda", dtype=dt)
    good = torch.randint(gates, (rows,), device="cuda")
    bad = good.clone()
    bad[417], bad[530] = 9, -5  # the first bad row is named
    message = r"index\[417\] = 9 is out of range \[0, 9\)"

    with poisoned_pool() as span:
        out = op(res, gate, bad, y)  # no sync: nothing raised yet
    assert inside(out, span), "out is not in the poisoned pool; the check below would be blind"
    torch.cuda.synchronize()
    assert untouched(out), "the forward wrote its output despite a bad index"
    with pytest.raises(RuntimeError, match=message + ".*by an earlier forward on this stream"):
        op(res, gate, good, y)
    assert same_bits(op(res, gate, good, y), eager(res, gate, good, y)), "the call after the error"

    op(res, gate, bad, y)
    with pytest.raises(RuntimeError, match=message + ".*forward"):
        check_errors()
    check_errors()  # each error once

    go = torch.randn(rows, dim, device="cuda", dtype=dt)
    with poisoned_pool() as span:
        grad_gate, grad_y = op_backward(go, gate, bad, y)
    torch.cuda.synchronize()
    assert inside(grad_gate, span) and inside(grad_y, span), "an output is not in the poisoned pool"
    assert untouched(grad_gate) and untouched(grad_y), "the backward wrote an output despite a bad index"
    with pytest.raises(RuntimeError, match=message + ".*by an earlier backward"):
        check_errors()

    # Through autograd: the index goes bad between the forward and the backward.
    res.requires_grad_(True)
    idx = good.clone()
    out = op(res, gate, idx, y)
    idx.data[417] = 9  # .data: autograd's version check would catch the change first
    out.backward(go)
    with pytest.raises(RuntimeError, match=message + ".*backward"):
        check_errors()


CHECKED_SCRIPT = textwrap.dedent(r"""
    import sys, torch
    torch.ops.load_library(sys.argv[1])
    op = torch.ops.gatecheck.gate_residual
    x = torch.zeros(3, 64, device="cuda", dtype=torch.bfloat16)
    gate = torch.zeros(9, 64, device="cuda", dtype=torch.bfloat16)
    try:
        op(x, gate, torch.tensor([0, 1, 9], device="cuda"), x)
        print("CALL: no error")
    except RuntimeError as e:
        print("CALL:", str(e).splitlines()[0])
    good = torch.tensor([0, 1, 8], device="cuda")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        op(x, gate, good, x)  # a first call on the capture stream
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(g, stream=s):
            op(x, gate, good, x)
        print("CAPTURE: captured")
    except RuntimeError as e:
        print("CAPTURE: failed:", str(e).splitlines()[0])
""")


def test_checked_mode_raises_from_the_call_and_cannot_be_captured():
    env = dict(os.environ, GATECHECK_OP_CHECKED="1")
    r = subprocess.run([sys.executable, "-c", CHECKED_SCRIPT, LIB], env=env, capture_output=True, text=True, timeout=120)
    lines = dict(line.split(": ", 1) for line in r.stdout.splitlines() if line.startswith(("CALL: ", "CAPTURE: ")))
    assert "index[2] = 9 is out of range [0, 9)" in lines.get("CALL", ""), r.stdout + r.stderr
    assert lines.get("CAPTURE", "").startswith("failed"), r.stdout + r.stderr
    # The same script in the default mode: the call does not raise, the capture works.
    env.pop("GATECHECK_OP_CHECKED")
    r = subprocess.run([sys.executable, "-c", CHECKED_SCRIPT, LIB], env=env, capture_output=True, text=True, timeout=120)
    lines = dict(line.split(": ", 1) for line in r.stdout.splitlines() if line.startswith(("CALL: ", "CAPTURE: ")))
    assert lines.get("CALL") == "no error" and lines.get("CAPTURE") == "captured", r.stdout + r.stderr


def test_first_call_inside_a_capture_fails_and_says_why():
    x = torch.zeros(8, 64, device="cuda", dtype=torch.bfloat16)
    gate = torch.zeros(3, 64, device="cuda", dtype=torch.bfloat16)
    idx = torch.zeros(8, dtype=torch.long, device="cuda")
    fresh = torch.cuda.Stream()
    g = torch.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="call it once on this stream before capturing"):
        with torch.cuda.graph(g, stream=fresh):
            op(x, gate, idx, x)


class TwoLayers:
    """Two residual gates, as in a transformer block: the first on a column
    block of a modulation table (a strided view), the second with the shared
    index form (index[r % S])."""

    def __init__(self, rows, dim, gates, shared, seed, dt=torch.bfloat16):
        g = torch.Generator(device="cuda").manual_seed(seed)
        def leaf(*shape):
            return torch.randn(*shape, device="cuda", dtype=dt, generator=g).requires_grad_(True)
        self.dim = dim
        self.table, self.gate2 = leaf(gates, 6 * dim), leaf(gates, dim)
        self.res, self.y1, self.y2 = leaf(rows, dim), leaf(rows, dim), leaf(rows, dim)
        self.idx = torch.randint(gates, (rows,), device="cuda", generator=g)
        self.idx_shared = torch.randint(gates, (shared,), device="cuda", generator=g)
        self.go = torch.randn(rows, dim, device="cuda", dtype=dt, generator=g)

    def leaves(self):
        return [self.table, self.gate2, self.res, self.y1, self.y2]

    def forward(self, f=None):
        f = f or self.layers
        return f(self.res, self.table, self.y1, self.gate2, self.y2, self.idx, self.idx_shared)

    def layers(self, res, table, y1, gate2, y2, idx, idx_shared):
        a = op(res, table[:, self.dim:2 * self.dim], idx, y1)
        return op(a, gate2, idx_shared, y2)

    def step(self):
        out = self.forward()
        out.backward(self.go)
        return out

    def load(self, other):
        """Copies another instance's values into this one's tensors (in place)."""
        with torch.no_grad():
            for a, b in zip(self.leaves() + [self.idx, self.idx_shared, self.go],
                            other.leaves() + [other.idx, other.idx_shared, other.go]):
                a.copy_(b)

    def results(self, out):
        return [out] + [t.grad for t in self.leaves()]


@pytest.mark.parametrize("gates", [9, 700])  # the one-kernel backward; an index plan in memory
def test_captured_step_replays_bit_identical_to_eager(gates):
    rows, dim, shared = 2048, 256, 256
    m = TwoLayers(rows, dim, gates, shared, seed=3)
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
        ref = TwoLayers(rows, dim, gates, shared, seed=seed)
        m.load(ref)
        graph.replay()
        expected = ref.results(ref.step())  # eager, the same values
        torch.cuda.synchronize()
        names = ["out", "grad table", "grad gate2", "grad res", "grad y1", "grad y2"]
        for name, a, b in zip(names, m.results(static_out), expected):
            assert same_bits(a, b), f"seed {seed}: {name} of the replay differs from eager"
    check_errors()


def test_compile_fullgraph_traces_op_and_backward_and_gives_the_same_bits():
    if not hasattr(torch, "compile"):
        pytest.skip(f"torch {torch.__version__} has no torch.compile")
    from torch._dynamo.backends.common import aot_autograd
    import torch._dynamo as dynamo  # "import torch._dynamo" would make torch a local name here

    rows, dim, gates, shared = 1024, 256, 9, 128
    m = TwoLayers(rows, dim, gates, shared, seed=6)
    out = m.step()
    expected = [t.clone() for t in m.results(out)]

    # What AOTAutograd traces: the op in the forward graph, its backward op in the backward graph.
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
    assert "gatecheck.gate_residual.default" in graphs.get("fw", ""), graphs.get("fw")
    assert "gatecheck.gate_residual_backward.default" in graphs.get("bw", ""), graphs.get("bw")
    assert "index_select" not in graphs["fw"] + graphs["bw"]

    dynamo.reset()
    compiled = torch.compile(m.layers, fullgraph=True)  # Inductor
    for t in m.leaves():
        t.grad = None
    out = m.forward(compiled)
    out.backward(m.go)
    torch.cuda.synchronize()
    names = ["out", "grad table", "grad gate2", "grad res", "grad y1", "grad y2"]
    for name, a, b in zip(names, m.results(out), expected):
        assert same_bits(a, b), f"{name} compiled differs from the op uncompiled"
    check_errors()


def test_opcheck_schema_fake_autograd_and_aot_dispatch():
    """torch.library.opcheck on both ops: the schema (no input mutated, no
    output aliasing an input), the Meta kernels against the CUDA ones
    (FakeTensor), the autograd registration, and AOTAutograd with dynamic
    shapes."""
    if not hasattr(torch.library, "opcheck"):
        pytest.skip(f"torch {torch.__version__} has no torch.library.opcheck")
    dt, rows, dim, gates = torch.bfloat16, 96, 64, 5
    g = torch.Generator(device="cuda").manual_seed(7)
    res, y = (torch.randn(rows, dim, device="cuda", dtype=dt, generator=g, requires_grad=True) for _ in range(2))
    gate = torch.randn(gates, dim, device="cuda", dtype=dt, generator=g, requires_grad=True)
    go = torch.randn(rows, dim, device="cuda", dtype=dt, generator=g)
    for idx in (torch.randint(gates, (rows,), device="cuda", generator=g),
                torch.randint(gates, (rows // 4,), device="cuda", generator=g)):  # one per row; shared
        torch.library.opcheck(op.default, (res, gate, idx, y))
        torch.library.opcheck(op_backward.default, (go, gate.detach(), idx, y.detach()))
    check_errors()
