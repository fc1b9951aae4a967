"""What the as-called tests of both LibTorch ops share (pytest, imported by
torch_op_as_called_test.py and rmsnorm_torch_op_as_called_test.py):

- the op library, loaded from GATECHECK_TORCH_OP once the module knows it has a
  CUDA device (without one the importing module is skipped, "no CUDA device");
- `no_pending_errors`, an autouse fixture wherever it is imported: an earlier
  test's error must not be raised by the next one, nor may a test leave one;
- bit comparisons, and a poisoned memory pool to see what an op wrote.
"""
import contextlib
import os

import pytest
import torch

if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)
LIB = os.environ.get("GATECHECK_TORCH_OP", "")
if not os.path.isfile(LIB):
    pytest.exit(f"GATECHECK_TORCH_OP={LIB!r} is not the op's library (libgatecheck_torch_op.so)", returncode=2)
if os.environ.get("GATECHECK_OP_CHECKED", "0") not in ("", "0"):
    pytest.exit("these tests are for the default mode: unset GATECHECK_OP_CHECKED", returncode=2)
torch.ops.load_library(LIB)
ops = torch.ops.gatecheck
check_errors = ops.check_errors


@pytest.fixture(autouse=True)
def no_pending_errors():
    check_errors()  # an earlier test's error must not be raised by this one
    yield
    try:
        check_errors()
    except RuntimeError as e:  # drained here, so that the next test starts clean
        for _ in range(8):
            try:
                check_errors()
                break
            except RuntimeError:
                pass
        pytest.fail(f"the test left an error pending: {e}")


def bits(t):
    return t.detach().contiguous().view(torch.int32 if t.dtype == torch.float32 else torch.int16)


def same_bits(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and torch.equal(bits(a), bits(b))


@contextlib.contextmanager
def poisoned_pool(byte=0x5A, nbytes=(1 << 20) - 512):
    """Allocations made inside come from a private pool of the caching allocator
    whose one segment (2 MiB, as for every block under 1 MiB) was filled with
    `byte` and freed, so they are carved from it and start out holding `byte`.
    (Freed blocks of the shared pool are no such promise: a partly used segment's
    free tail may come first.) Yields the poisoned address range; `inside` tells
    whether a tensor got its memory there."""
    if not hasattr(torch.cuda, "use_mem_pool"):  # a failure, not a skip: the only skip is "no CUDA device"
        pytest.fail(f"torch {torch.__version__} has no torch.cuda.use_mem_pool to poison an op's outputs")
    pool = torch.cuda.MemPool()
    with torch.cuda.use_mem_pool(pool):
        t = torch.full((nbytes,), byte, dtype=torch.uint8, device="cuda")
        span = (t.data_ptr(), t.data_ptr() + nbytes)
        del t
        yield span


def inside(t, span):
    return span[0] <= t.data_ptr() and t.data_ptr() + t.numel() * t.element_size() <= span[1]


def untouched(t, byte=0x5A):
    return bool((t.view(torch.uint8) == byte).all())
