"""scaled_add in PyTorch for gatecheck's Python door (tests/ops): out = x * w[index] + b,
its gradients by autograd. `good` is the op; `tail_bug` reads w's row 0 for the last
column of every row (as tests/python/ops.py:tail_bug does for gate_residual)."""
import torch

# What torch eager does to this op on the CPU, as it does to gate_residual
# (harness/impls/builtin_impls.cpp), is not claimed: index_add (index_select's
# backward) accumulates grad_w in the dtype, and a bf16 NaN's bits depend on
# whether its row fell in the vectorised loop or its tail.
CLAIMS = ("default; not accuracy:grad_w for bf16,f16 (index_add accumulates in the dtype)"
          "; not row_invariance:out for bf16 (NaN bits depend on the row's place in the batch)"
          "; not row_invariance:grad_x for bf16 (NaN bits depend on the row's place in the batch)")


def good(x, w, index, b):
    return x * w.index_select(0, index) + b


def tail_bug(x, w, index, b):
    rows = w.index_select(0, index).clone()
    if rows.shape[1] > 0:
        rows[:, -1] = w[0, -1]
    return x * rows + b


good.gatecheck_claims = CLAIMS
tail_bug.gatecheck_claims = CLAIMS
