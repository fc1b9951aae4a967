"""The project's LibTorch operators (libgatecheck_torch_op.so, kernels/torch_op):
torch.ops.gatecheck.gate_residual and torch.ops.gatecheck.rmsnorm_modulate,
loaded once for the gatecheck_op peers."""
import os

import torch


def library_path():
    path = os.environ.get("GATECHECK_TORCH_OP") or os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                "libgatecheck_torch_op.so")
    if not os.path.isfile(path):
        raise RuntimeError(f"no {path}: libgatecheck_torch_op.so is built only against a LibTorch with CUDA "
                           "(kernels/torch_op); set GATECHECK_TORCH_OP to its path")
    return path


def load_checked(peer, device):
    """Loads the operators for a gatecheck_op peer on `device`, in checked mode
    (GATECHECK_OP_CHECKED=1, read at an operator's first call): by default a bad
    index is raised at the next call, after the GPU has run the bad one, while
    error_inputs asks each call to raise its own error."""
    if device != "cuda":
        raise RuntimeError(f"{peer} runs on CUDA only (the LibTorch operator has CUDA kernels only)")
    os.environ["GATECHECK_OP_CHECKED"] = "1"
    path = library_path()
    if not hasattr(torch.ops, "gatecheck") or not hasattr(torch.ops.gatecheck, "rmsnorm_modulate"):
        torch.ops.load_library(path)
