"""Testing your own rmsnorm_modulate op with gatecheck, from pytest.

    PYTHONPATH=build/python python3 -m pytest examples/python/test_my_rmsnorm_modulate.py

The op below is RMSNorm followed by AdaLN's modulation, written as people write
a fused op: a torch.autograd.Function that keeps the statistics and every sum in
fp32 and rounds once per stored value, as the op's formula says
(`gatecheck ops rmsnorm_modulate`):

    rstd = 1/sqrt(mean_j x^2 + eps);  n = w * (rstd * x)
    out  = n * (1 + scale[index]) + shift[index]

gatecheck checks it against its float64 oracle (accuracy), across batch splits
(out and dx bitwise the same whatever rows share the batch; dshift and dscale
the same for each index's rows), run to run, for writes where there should be
none, and for clear errors on bad input. The test is the last five lines.
"""
import math

import torch

import gatecheck


def _rounded(t, dtype):
    """An fp32 result stored in the op's dtype, back in fp32 for the next step."""
    return t.to(dtype).float()


def _stored(t, dtype):
    """A result in the op's dtype, every NaN the same NaN: the CPU's vector and
    scalar loops make NaNs of different signs, and which loop a row falls in
    depends on the batch, so without this a NaN's bits would too."""
    t = t.to(dtype)
    return t.masked_fill(t.isnan(), float("nan"))


class RmsNormModulate(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, shift, scale, index, eps):
        rows, dim = x.shape
        if tuple(w.shape) != (dim,):
            raise ValueError(f"w has shape {tuple(w.shape)}, x has dim = {dim}")
        for name, t in (("shift", shift), ("scale", scale)):
            if t.dim() != 2 or t.shape[1] != dim:
                raise ValueError(f"{name} has shape {tuple(t.shape)}, x has dim = {dim}")
        if scale.shape != shift.shape:
            raise ValueError(f"scale has shape {tuple(scale.shape)}, shift has {tuple(shift.shape)}")
        if tuple(index.shape) != (rows,):
            raise ValueError(f"index has shape {tuple(index.shape)}, x has {rows} rows")
        if not (math.isfinite(eps) and eps > 0):
            raise ValueError(f"eps = {eps} must be finite and above 0")
        if rows and shift.shape[0] == 0:
            raise ValueError(f"gates = 0 with {rows} rows")
        if rows and dim == 0:
            raise ValueError(f"dim = 0 with {rows} rows")
        bad = (index < 0) | (index >= shift.shape[0])
        if bool(bad.any()):
            r = int(bad.nonzero()[0, 0])
            raise IndexError(f"index[{r}] = {int(index[r])} is out of range for gates = {shift.shape[0]}")
        xf = x.float()
        rstd = torch.rsqrt((xf * xf).mean(1, keepdim=True) + eps)
        n = _rounded(w.float() * (rstd * xf), x.dtype)
        f = _rounded(1 + scale.index_select(0, index).float(), x.dtype)
        out = _rounded(n * f, x.dtype) + shift.index_select(0, index).float()
        ctx.save_for_backward(x, w, scale, index, rstd, n)
        ctx.gates = shift.shape[0]
        return _stored(out, x.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        x, w, scale, index, rstd, n = ctx.saved_tensors
        xf, wf, g = x.float(), w.float(), grad_out.float()
        d = g * _rounded(1 + scale.index_select(0, index).float(), x.dtype)
        c = (wf * d * xf).sum(1, keepdim=True)
        dx = rstd * wf * d - xf * rstd ** 3 * c / x.shape[1]
        dweight = (d * xf * rstd).sum(0)
        # Each index's rows summed in fp32 (index_add_ on the CPU adds them in row order).
        dshift = torch.zeros(ctx.gates, x.shape[1]).index_add_(0, index, g)
        dscale = torch.zeros(ctx.gates, x.shape[1]).index_add_(0, index, g * n)
        t = x.dtype
        return _stored(dx, t), _stored(dweight, t), _stored(dshift, t), _stored(dscale, t), None, None


def test_rmsnorm_modulate(tmp_path):
    # 40 cases a property, whatever the machine's load: a short time budget on a busy
    # machine can leave a property under the floor of cases, which is inconclusive, not a pass.
    report = gatecheck.check(RmsNormModulate, op="rmsnorm_modulate", seconds=0, cases=40, corpus=tmp_path)
    print(report)  # the table; pytest shows it with -s, or when the test fails
    report.raise_on_failure()
    assert all(row.cases > 0 for row in report.rows)
