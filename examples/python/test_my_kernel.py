"""Testing your own gate_residual op with gatecheck, from pytest.

    PYTHONPATH=build/python python3 -m pytest examples/python/test_my_kernel.py

The op below is the kind people write: a torch.autograd.Function whose forward
rounds once per op and whose backward sums grad_gate in fp32. gatecheck checks
it against its float64 oracle (accuracy), across batch splits (bitwise batch
invariance), run to run (repeatability), for writes where there should be
none, and for clear errors on bad input. The test is the last five lines.
"""
import torch

import gatecheck


class GateResidual(torch.autograd.Function):
    """out = res + gate[index] * y"""

    @staticmethod
    def forward(ctx, res, gate, index, y):
        if y.shape != res.shape or gate.shape[1] != res.shape[1] or tuple(index.shape) != (res.shape[0],):
            raise ValueError(f"shapes disagree: res {tuple(res.shape)}, gate {tuple(gate.shape)}, "
                             f"index {tuple(index.shape)}, y {tuple(y.shape)}")
        if res.shape[0] and gate.shape[0] == 0:
            raise ValueError(f"gates = 0 with {res.shape[0]} rows")
        bad = (index < 0) | (index >= gate.shape[0])
        if bool(bad.any()):
            r = int(bad.nonzero()[0, 0])
            raise IndexError(f"index[{r}] = {int(index[r])} is out of range for gates = {gate.shape[0]}")
        ctx.save_for_backward(gate, index, y)
        prod = (gate.index_select(0, index).float() * y.float()).to(res.dtype)
        return (res.float() + prod.float()).to(res.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        gate, index, y = ctx.saved_tensors
        grad_gate = torch.zeros(gate.shape, dtype=torch.float32)
        grad_gate.index_add_(0, index, grad_out.float() * y.float())
        grad_y = (grad_out.float() * gate.index_select(0, index).float()).to(y.dtype)
        return grad_out, grad_gate.to(gate.dtype), None, grad_y


def test_gate_residual(tmp_path):
    # 40 cases a property, whatever the machine's load: a short time budget on a busy
    # machine can leave a property under the floor of cases, which is inconclusive, not a pass.
    report = gatecheck.check(GateResidual, seconds=0, cases=40, corpus=tmp_path)
    print(report)  # the table; pytest shows it with -s, or when the test fails
    report.raise_on_failure()
    assert all(row.cases > 0 for row in report.rows)
