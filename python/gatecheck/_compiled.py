"""torch.compile for the compiled peers: on CUDA only, and with Dynamo's
recompile limits raised so that a check never runs eager in its place."""
import torch


def compile_on_cuda(peer, fn, device):
    """fn compiled (dynamic shapes, one graph) for the peer named `peer` on
    `device`; an error that names the peer and the cause where it cannot be."""
    if device != "cuda":
        raise RuntimeError(f"{peer} runs on CUDA only (Inductor's CPU backend compiles C++ for each new shape "
                           "class; check it with --device cuda)")
    if not hasattr(torch, "compile"):
        raise RuntimeError(f"torch.compile needs PyTorch 2.0 or later; this is {torch.__version__}")
    import torch._dynamo as dynamo  # "import torch._dynamo" would make torch a local name here
    # Every dtype, grad mode and 0/1-sized dimension is a graph of its own:
    # past the default limit Dynamo would silently run eager instead.
    for knob in ("recompile_limit", "cache_size_limit", "accumulated_recompile_limit",
                 "accumulated_cache_size_limit"):
        if hasattr(dynamo.config, knob):
            setattr(dynamo.config, knob, 4096)
    return torch.compile(fn, dynamic=True, fullgraph=True)
