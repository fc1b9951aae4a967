"""The systems a user would otherwise pick for rmsnorm_modulate (RMSNorm, then
AdaLN's modulation), as Python implementations gatecheck can check. Exported by
gatecheck.peers:

    gatecheck check --op rmsnorm_modulate --impl python:gatecheck.peers:rmsnorm_modulate_diffusers

  rmsnorm_modulate_diffusers  diffusers' RMSNorm, then n * (1 + scale[index]) +
                              shift[index] as separate tensor ops; gradients by
                              autograd
  rmsnorm_modulate_rms_norm   F.rms_norm (PyTorch 2.4 and later), then the same
                              modulation
  rmsnorm_modulate_compiled   torch.compile of diffusers' composition (CUDA;
                              needs PyTorch 2 and an Inductor that runs here)
  rmsnorm_modulate_gatecheck_op
                              the project's torch.ops.gatecheck.rmsnorm_modulate,
                              called as users call it, through autograd (CUDA;
                              needs libgatecheck_torch_op.so: beside this file,
                              or GATECHECK_TORCH_OP=path)

Each is called as fn(x, w, shift, scale, index, eps=...) and checks its
arguments first (but rmsnorm_modulate_gatecheck_op, whose checks are the
operator's own), with messages that name the argument and its value. Where the
installed torch lacks a feature (F.rms_norm, torch.compile), its setup says so
and gatecheck reports that the implementation cannot run here.
"""
import math

import torch

from . import _compiled, _torch_op

__all__ = ["rmsnorm_modulate_diffusers", "rmsnorm_modulate_rms_norm", "rmsnorm_modulate_compiled",
           "rmsnorm_modulate_gatecheck_op"]

# What eager PyTorch is known not to keep for this op. diffusers' RMSNorm
# rounds the normalised row to the dtype before the weight, and the table
# gradients come from index_select's backward, index_add, which accumulates
# in the dtype (with atomics on CUDA).
_EAGER_16BIT = ("not accuracy for bf16,f16 (diffusers rounds x * rstd to the dtype before the weight; index_add "
                "sums dshift and dscale in the dtype)")
# On the CPU a NaN's sign and payload depend on whether its row fell in a
# vectorised loop or its tail, which the batch decides (as for gate_residual's
# eager; here in every dtype: seen in f32 and f16 out and dx).
_EAGER_CPU_NAN_BITS = ("not row_invariance:out (NaN bits depend on the row's place in the batch); "
                       "not row_invariance:dx (NaN bits depend on the row's place in the batch)")
_CUDA_ATOMICS = ("not repeatable (index_add uses atomics); "
                 "not segment_invariance (atomics order an index's rows by timing)")
# Seen on the H200: a row's dx, and in f32 its out, differ by an ulp with the
# batch around it (CUDA's reductions for the mean square and the statistics'
# backward follow the batch's shape).
_CUDA_ROWS = "not row_invariance (CUDA's reductions follow the batch's shape)"
# Seen on the H200: index_add on CUDA returns +0 for an f32 dshift whose sum
# is subnormal (-3.6e-39), as torch-eager's C++ composition does.
_CUDA_F32_FLUSH = ("not accuracy:dshift for f32 (index_add flushes subnormal sums); "
                   "not accuracy:dscale for f32 (index_add flushes subnormal sums)")
# Seen on the H200: Inductor specialises a batch of one row, whose dx then
# differs by an ulp from the same row's in a larger batch.
_COMPILED_ROWS = "not row_invariance (Inductor compiles a one-row batch apart from larger ones)"


def _check_args(x, w, shift, scale, index, eps):
    """The op contract's argument checks, each failure naming the argument and value."""
    if not isinstance(x, torch.Tensor) or x.dim() != 2:
        raise ValueError(f"x must be a 2-D tensor, got {getattr(x, 'shape', type(x).__name__)}")
    rows, dim = x.shape
    if not isinstance(w, torch.Tensor) or tuple(w.shape) != (dim,):
        raise ValueError(f"w has shape {tuple(getattr(w, 'shape', ()))}, x has dim = {dim}")
    for name, t in (("shift", shift), ("scale", scale)):
        if not isinstance(t, torch.Tensor) or t.dim() != 2 or t.shape[1] != dim:
            raise ValueError(f"{name} has shape {tuple(getattr(t, 'shape', ()))}, x has dim = {dim}")
    if shift.shape != scale.shape:
        raise ValueError(f"shift has shape {tuple(shift.shape)}, scale has {tuple(scale.shape)}")
    for name, t in (("w", w), ("shift", shift), ("scale", scale)):
        if t.dtype != x.dtype:
            raise ValueError(f"{name} has dtype {t.dtype}, x has {x.dtype}")
    if index.dim() != 1 or index.dtype != torch.int64:
        raise ValueError(f"index must be a 1-D int64 tensor, got {index.dtype} of shape {tuple(index.shape)}")
    if index.shape[0] != rows:
        raise ValueError(f"x has {rows} rows, index has {index.shape[0]} entries")
    if not (math.isfinite(eps) and eps > 0):
        raise ValueError(f"eps = {eps}: it must be finite and above 0")
    gates = shift.shape[0]
    if rows > 0 and gates == 0:
        raise ValueError(f"gates = 0 with rows = {rows}: every row needs a gate")
    if rows > 0 and dim == 0:
        raise ValueError(f"dim = 0 with rows = {rows}: a row's mean square needs a column")
    if rows > 0:
        lo, hi = int(index.min()), int(index.max())
        if lo < 0 or hi >= gates:
            bad = lo if lo < 0 else hi
            at = int((index == bad).nonzero()[0, 0])
            raise IndexError(f"index[{at}] = {bad} is out of range for gates = {gates}")


def _diffusers_rms_norm(x, w, eps):
    """diffusers.models.normalization.RMSNorm.forward, with its weight: the mean
    square in fp32, the normalised row rounded to a 16-bit weight's dtype, then
    multiplied by the weight in that dtype."""
    variance = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
    h = x * torch.rsqrt(variance + eps)
    if w.dtype in (torch.float16, torch.bfloat16):
        h = h.to(w.dtype)
    return h * w


def _modulate(n, shift, scale, index):
    """AdaLN's modulation as diffusers writes it: n * (1 + scale) + shift."""
    return n * (1 + scale.index_select(0, index)) + shift.index_select(0, index)


def _diffusers(x, w, shift, scale, index, eps):
    return _modulate(_diffusers_rms_norm(x, w, eps), shift, scale, index)


def rmsnorm_modulate_diffusers(x, w, shift, scale, index, eps):
    _check_args(x, w, shift, scale, index, eps)
    return _diffusers(x, w, shift, scale, index, eps)


rmsnorm_modulate_diffusers.gatecheck_claims = {
    "cpu": f"default; {_EAGER_16BIT}; {_EAGER_CPU_NAN_BITS}",
    "cuda": f"default; {_EAGER_16BIT}; {_CUDA_F32_FLUSH}; {_CUDA_ATOMICS}; {_CUDA_ROWS}",
}


class _RmsNorm:
    """F.rms_norm (nn.RMSNorm's function), then the modulation."""

    # F.rms_norm rounds once, as the op's formula does; the table gradients
    # are index_add's as in the composition, and the modulation's backward
    # hands F.rms_norm a gradient already rounded to the dtype (seen on the
    # H200: an f16 dweight 1.05 times its bound).
    _16BIT = ("not accuracy:dshift for bf16,f16 (index_add sums in the dtype); not accuracy:dscale for bf16,f16 "
              "(the same); not accuracy:dweight for bf16,f16 (its gradient arrives rounded to the dtype); "
              "not accuracy:dx for bf16,f16 (the same)")
    gatecheck_claims = {
        "cpu": f"default; {_16BIT}; {_EAGER_CPU_NAN_BITS}",
        "cuda": f"default; {_16BIT}; {_CUDA_ATOMICS}",
    }

    def gatecheck_setup(self, device):
        if not hasattr(torch.nn.functional, "rms_norm"):
            raise RuntimeError(f"torch.nn.functional.rms_norm needs PyTorch 2.4 or later; this is {torch.__version__}")

    def forward(self, x, w, shift, scale, index, eps):
        _check_args(x, w, shift, scale, index, eps)
        n = torch.nn.functional.rms_norm(x, (x.shape[1],), w, eps)
        return _modulate(n, shift, scale, index)


rmsnorm_modulate_rms_norm = _RmsNorm()


class _Compiled:
    """torch.compile of diffusers' composition: Inductor's kernels on CUDA."""

    gatecheck_claims = {"cuda": f"default; {_EAGER_16BIT}; {_CUDA_ATOMICS}; {_COMPILED_ROWS}"}

    def __init__(self):
        self._fn = None

    def gatecheck_setup(self, device):
        self._fn = _compiled.compile_on_cuda("rmsnorm_modulate_compiled", _diffusers, device)
        # Inductor must run here, or the check would only report its absence.
        x = torch.ones(2, 3, device="cuda", requires_grad=True)
        w = torch.ones(3, device="cuda", requires_grad=True)
        t = torch.zeros(1, 3, device="cuda", requires_grad=True)
        out = self._fn(x, w, t, t, torch.zeros(2, dtype=torch.int64, device="cuda"), 1e-6)
        torch.autograd.grad(out, (x, w, t), torch.ones_like(out))
        torch.cuda.synchronize()

    def forward(self, x, w, shift, scale, index, eps):
        _check_args(x, w, shift, scale, index, eps)
        return self._fn(x, w, shift, scale, index, eps)


rmsnorm_modulate_compiled = _Compiled()


class _GatecheckOp:
    """torch.ops.gatecheck.rmsnorm_modulate: the project's CUDA kernels as users
    call them, in the operator's checked mode (each call raises its own bad
    index; the default mode's deferred errors are tested in
    tests/cuda/rmsnorm_torch_op_as_called_test.py). Its own checks, not
    _check_args: error_inputs judges the operator's messages."""

    gatecheck_claims = {"cuda": "default"}

    def gatecheck_setup(self, device):
        _torch_op.load_checked("rmsnorm_modulate_gatecheck_op", device)

    def forward(self, x, w, shift, scale, index, eps):
        return torch.ops.gatecheck.rmsnorm_modulate(x, w, shift, scale, index, eps)


rmsnorm_modulate_gatecheck_op = _GatecheckOp()
