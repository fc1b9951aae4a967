"""gatecheck::gate_residual from Python (torch.ops.load_library) against torch
eager: out, grad_res and grad_y bit for bit, for bf16/fp16/fp32, a strided gate
view (a column block of a (9, 6*dim) table) and the shared-index form.
Usage: python3 torch_op_test.py PATH/libgatecheck_torch_op.so  (exit 77: skipped)."""
import sys

import torch

if not torch.cuda.is_available():
    print("skipped: no CUDA device")
    sys.exit(77)
torch.ops.load_library(sys.argv[1])
op = torch.ops.gatecheck.gate_residual


def bits(t):
    return t.contiguous().view(torch.int32 if t.dtype == torch.float32 else torch.int16)


failures = []
for dt in (torch.bfloat16, torch.float16, torch.float32):
    for rows, dim, gates, s in ((600, 72, 9, 600), (600, 72, 9, 120), (257, 13, 4, 257)):
        torch.manual_seed(rows + dim)
        table = torch.randn(gates, 6 * dim, device="cuda", dtype=dt, requires_grad=True)
        res = torch.randn(rows, dim, device="cuda", dtype=dt, requires_grad=True)
        y = torch.randn(rows, dim, device="cuda", dtype=dt, requires_grad=True)
        go = torch.randn(rows, dim, device="cuda", dtype=dt)
        idx = torch.randint(gates, (s,), device="cuda")
        gate = table[:, 2 * dim:3 * dim]
        ours = op(res, gate, idx, y)
        g1 = torch.autograd.grad(ours, (res, table, y), go)
        eager = res + gate.index_select(0, idx.repeat(rows // s)) * y
        g2 = torch.autograd.grad(eager, (res, table, y), go)
        label = f"{dt} rows={rows} dim={dim} S={s}"
        for name, a, b in (("out", ours, eager), ("grad_res", g1[0], g2[0]), ("grad_y", g1[2], g2[2])):
            if not torch.equal(bits(a), bits(b)):
                failures.append(f"{label}: {name} differs from eager ({(bits(a) != bits(b)).sum().item()} elements)")
        if g1[1][:, :2 * dim].abs().max().item() != 0:
            failures.append(f"{label}: grad_gate leaked outside the gate's column block")
print("\n".join(failures) if failures else "torch op (Python): out, grad_res, grad_y bitwise equal to eager in 9 cases")
sys.exit(1 if failures else 0)
