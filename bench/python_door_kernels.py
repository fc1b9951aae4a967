"""The project's CUDA kernels through the Python door, and nothing else: what
the door itself costs against the C ABI.

    gatecheck bench --harness --jobs 1 --device cuda \\
        --impl cuda --impl python:bench/python_door_kernels.py:kernels

`kernels` calls torch.ops.gatecheck.gate_residual for the forward and
torch.ops.gatecheck.gate_residual_backward for the backward (grad_res is
grad_out itself), as an extension's author with an explicit backward would:
the same kernels as the `cuda` implementation, without autograd. So between
the two only the door stands (Python, the DLPack views, the stream, the
stores) and the operator's dispatch, which any Python caller of the kernels
pays. gatecheck.peers.gatecheck_op, called through autograd as users call it,
adds autograd's own cost on top. bench/device/stages/python.sh runs all three.
"""
import torch

from gatecheck import peers


class _Kernels:
    gatecheck_claims = {"cuda": "default"}

    def gatecheck_setup(self, device):
        peers.gatecheck_op.gatecheck_setup(device)  # loads the operator, in its checked mode

    def forward(self, res, gate, index, y):
        return torch.ops.gatecheck.gate_residual(res, gate, index, y)

    def backward(self, grad_out, res, gate, index, y):
        grad_gate, grad_y = torch.ops.gatecheck.gate_residual_backward(grad_out, gate, index, y)
        return grad_out, grad_gate, grad_y


kernels = _Kernels()
