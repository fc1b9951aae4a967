"""gatecheck::rmsnorm_modulate from Python without a GPU: the schema as Python
calls it (eps a float, 1e-6 by default), the Meta kernels' shapes, dtypes and
strides, autograd through the op and its backward op into a modulation
table's column blocks, the argument checks, and a double backward that raises.

Built against a LibTorch without CUDA, the library leaves its c10::cuda
functions undefined (kernels/torch_op/README.md): without a CUDA PyTorch it is
loaded with lazy binding, which the Meta kernels never need.
Usage: python3 rmsnorm_torch_op_meta_test.py PATH/libgatecheck_torch_op.so"""
import ctypes
import os
import sys

import torch


def load(path):
    if torch.cuda.is_available():
        torch.ops.load_library(path)
    else:
        ctypes.CDLL(path, mode=os.RTLD_LAZY | os.RTLD_GLOBAL)


def expect_error(f, text):
    try:
        f()
    except RuntimeError as e:
        assert text in str(e), f"expected {text!r} in: {e}"
        return
    raise AssertionError(f"no error; expected {text!r}")


def main():
    load(sys.argv[1])
    op, op_backward = torch.ops.gatecheck.rmsnorm_modulate, torch.ops.gatecheck.rmsnorm_modulate_backward
    m = dict(device="meta", dtype=torch.bfloat16)
    table = torch.empty(9, 6 * 40, **m, requires_grad=True)
    shift, scale = table[:, :40], table[:, 40:80]
    x = torch.empty(120, 40, **m, requires_grad=True)
    w = torch.empty(40, **m, requires_grad=True)
    idx = torch.empty(120, dtype=torch.long, device="meta")

    out = op(x, w, shift, scale, idx)  # eps by default
    assert (out.shape, out.dtype, out.is_contiguous()) == (x.shape, x.dtype, True), out
    assert out.requires_grad, "no autograd node on the op's output"
    go = torch.empty(120, 40, **m)
    gx, gw, gt = torch.autograd.grad(op(x, w, shift, scale, idx, eps=1e-5), (x, w, table), go)
    assert (gx.shape, gw.shape, gt.shape) == (x.shape, w.shape, table.shape), (gx.shape, gw.shape, gt.shape)
    grads = op_backward(go, x.detach(), w.detach(), scale.detach(), idx, 1e-6)
    assert [tuple(t.shape) for t in grads] == [(120, 40), (40,), (9, 40), (9, 40)], [t.shape for t in grads]
    assert all(t.is_contiguous() and t.dtype == torch.bfloat16 for t in grads)

    g2 = torch.autograd.grad(op(x, w, shift, scale, idx), x, go.clone().requires_grad_(True), create_graph=True)[0]
    expect_error(lambda: torch.autograd.grad(g2, x, go), "double backward")

    xd, wd, sh, sc = x.detach(), w.detach(), shift.detach(), scale.detach()
    expect_error(lambda: op(xd, wd.half(), sh, sc, idx), "gatecheck::rmsnorm_modulate: w has dtype Half, x has BFloat16")
    expect_error(lambda: op(xd, wd, sh, sc, idx.int()), "gatecheck::rmsnorm_modulate: index must be int64")
    expect_error(lambda: op(xd.reshape(-1), wd, sh, sc, idx), "gatecheck::rmsnorm_modulate: x must be 2-D")
    expect_error(lambda: op(xd, wd, sh.reshape(-1), sc, idx), "gatecheck::rmsnorm_modulate: shift must be 2-D")
    print("ok: meta shapes, autograd, argument checks, double backward")


if __name__ == "__main__":
    main()
