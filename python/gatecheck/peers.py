"""The systems a user would otherwise pick for gate_residual, as Python
implementations gatecheck can check:

    gatecheck check --impl python:gatecheck.peers:diffusers_eager [--device cuda]

  diffusers_eager      res + gate.index_select(0, index) * y, gradients by
                       autograd (how diffusers writes it)
  eager_deterministic  the same under torch.use_deterministic_algorithms(True)
  compiled             torch.compile of the same formula (CUDA; needs PyTorch 2
                       and an Inductor that runs here)
  gatecheck_op         the project's torch.ops.gatecheck.gate_residual, called
                       as users call it, through autograd (CUDA; needs
                       libgatecheck_torch_op.so: beside this file, or
                       GATECHECK_TORCH_OP=path)

rmsnorm_modulate's peers (peers_rmsnorm_modulate.py) are exported here too:

    gatecheck check --op rmsnorm_modulate --impl python:gatecheck.peers:rmsnorm_modulate_diffusers

  rmsnorm_modulate_diffusers, rmsnorm_modulate_rms_norm (F.rms_norm, PyTorch
  2.4 and later), rmsnorm_modulate_compiled (CUDA, PyTorch 2),
  rmsnorm_modulate_gatecheck_op (torch.ops.gatecheck.rmsnorm_modulate; CUDA)

Each checks its arguments first, as torch-eager does in gatecheck, with
messages that name the argument and its value (on CUDA an unchecked index
ends in a device-side assert, and nothing after it runs). Each declares the
contract it is known to keep (gatecheck_claims): what the formula's kernels
are documented to do. Where a property is not established for a peer, it is
not claimed, and a check shows what it does as a finding or a pass.
"""
import contextlib

import torch

from . import _compiled, _torch_op
from .peers_rmsnorm_modulate import (rmsnorm_modulate_compiled, rmsnorm_modulate_diffusers,
                                     rmsnorm_modulate_gatecheck_op, rmsnorm_modulate_rms_norm)

__all__ = ["diffusers_eager", "eager_deterministic", "compiled", "gatecheck_op", "rmsnorm_modulate_diffusers",
           "rmsnorm_modulate_rms_norm", "rmsnorm_modulate_compiled", "rmsnorm_modulate_gatecheck_op"]

# What eager PyTorch is known not to keep, by device (as gatecheck's own
# torch-eager contract in properties/contract.cpp).
_EAGER_ACCUMULATES = "not accuracy:grad_gate for bf16,f16 (index_add accumulates in the dtype)"
_EAGER_CPU_NAN_BITS = ("not row_invariance:out for bf16 (NaN bits depend on the row's place in the batch); "
                       "not row_invariance:grad_y for bf16 (NaN bits depend on the row's place in the batch)")
_EAGER_CUDA_ATOMICS = ("not repeatable (index_add uses atomics); "
                       "not segment_invariance (atomics order a gate's rows by timing)")


def _check_args(res, gate, index, y):
    """The op contract's argument checks, each failure naming the argument and value."""
    for name, t in (("res", res), ("gate", gate), ("y", y)):
        if not isinstance(t, torch.Tensor) or t.dim() != 2:
            raise ValueError(f"{name} must be a 2-D tensor, got {getattr(t, 'shape', type(t).__name__)}")
        if t.dtype != res.dtype:
            raise ValueError(f"{name} has dtype {t.dtype}, res has {res.dtype}")
    rows, dim = res.shape
    if y.shape != res.shape:
        raise ValueError(f"y has shape {tuple(y.shape)}, res has {tuple(res.shape)}")
    if gate.shape[1] != dim:
        raise ValueError(f"gate has {gate.shape[1]} columns (shape {tuple(gate.shape)}), res has dim = {dim}")
    if index.dim() != 1 or index.dtype != torch.int64 or index.shape[0] != rows:
        raise ValueError(f"index must be int64 of shape ({rows},) for rows = {rows}, "
                         f"got {index.dtype} of shape {tuple(index.shape)}")
    gates = gate.shape[0]
    if rows > 0 and gates == 0:
        raise ValueError(f"gates = 0 with rows = {rows}: every row needs a gate")
    if rows > 0:
        lo, hi = int(index.min()), int(index.max())
        if lo < 0 or hi >= gates:
            bad = lo if lo < 0 else hi
            at = int((index == bad).nonzero()[0, 0])
            raise IndexError(f"index[{at}] = {bad} is out of range for gates = {gates}")


def _eager(res, gate, index, y):
    return res + gate.index_select(0, index) * y


def diffusers_eager(res, gate, index, y):
    _check_args(res, gate, index, y)
    return _eager(res, gate, index, y)


diffusers_eager.gatecheck_claims = {
    "cpu": f"default; {_EAGER_ACCUMULATES}; {_EAGER_CPU_NAN_BITS}",
    "cuda": f"default; {_EAGER_ACCUMULATES}; {_EAGER_CUDA_ATOMICS}",
}


@contextlib.contextmanager
def _deterministic():
    before = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(before)


class _EagerDeterministic:
    """Eager under deterministic algorithms, forward and backward alike."""

    gatecheck_claims = {
        "cpu": f"default; {_EAGER_ACCUMULATES}; {_EAGER_CPU_NAN_BITS}",
        # Deterministic index_add is documented repeatable; that it keeps a
        # gate's sum independent of the rest of the batch is not.
        "cuda": f"default; {_EAGER_ACCUMULATES}; not segment_invariance (not established for "
                "deterministic index_add)",
    }

    def forward(self, res, gate, index, y):
        _check_args(res, gate, index, y)
        with _deterministic():
            return _eager(res, gate, index, y)

    def backward(self, grad_out, res, gate, index, y):
        _check_args(res, gate, index, y)
        with _deterministic(), torch.enable_grad():
            leaves = [t.detach().requires_grad_(True) for t in (res, gate, y)]
            out = _eager(leaves[0], leaves[1], index, leaves[2])
            return torch.autograd.grad(out, leaves, grad_out)


eager_deterministic = _EagerDeterministic()


class _Compiled:
    """torch.compile of the eager formula: Inductor's kernels on CUDA."""

    gatecheck_claims = {
        # A fused one-rounding forward is within the oracle's bound (accuracy)
        # but not eager's rounding (eager_exact, opt-in, shows it). Inductor's
        # grad_gate is a scatter-add with atomics.
        "cuda": f"default; {_EAGER_ACCUMULATES}; {_EAGER_CUDA_ATOMICS}",
    }

    def __init__(self):
        self._fn = None

    def gatecheck_setup(self, device):
        self._fn = _compiled.compile_on_cuda("compiled", _eager, device)
        # Inductor must run here, or the check would only report its absence.
        x = torch.ones(2, 3, device="cuda", requires_grad=True)
        g = torch.ones(1, 3, device="cuda", requires_grad=True)
        out = self._fn(x, g, torch.zeros(2, dtype=torch.int64, device="cuda"), x)
        torch.autograd.grad(out, (x, g), torch.ones_like(out))
        torch.cuda.synchronize()

    def forward(self, res, gate, index, y):
        _check_args(res, gate, index, y)
        return self._fn(res, gate, index, y)


compiled = _Compiled()


class _GatecheckOp:
    """torch.ops.gatecheck.gate_residual: the project's CUDA kernels as users call them,
    in the operator's checked mode (GATECHECK_OP_CHECKED=1): by default a bad index is
    raised at the next call, after the GPU has run the bad one, while error_inputs
    asks each call to raise its own error. The default mode's deferred errors are
    tested in tests/cuda/torch_op_as_called_test.py."""

    gatecheck_claims = {"cuda": "default"}

    def gatecheck_setup(self, device):
        _torch_op.load_checked("gatecheck_op", device)

    def forward(self, res, gate, index, y):
        return torch.ops.gatecheck.gate_residual(res, gate, index, y)


gatecheck_op = _GatecheckOp()
