"""Python implementations for the Python door's tests (tests/python/CMakeLists.txt):
a correct one, and each of the ways the door must report a broken one.

correct        fp32 math rounded once per op, grad_gate summed in fp32, arguments checked:
               keeps the default property set on the CPU
tail_bug       correct but for one planted bug: the last column of every row reads gate row 0
raises         raises on valid input, two calls deep (the traceback must show both)
rejects_empty  refuses problems with no rows or no columns, as some real ops do, and says so
               in its contract (valid rows>=1,dim>=1)
wrong_shape    returns out without its last column
wrong_dtype    returns out in float32 whatever the dtype
pid_logged     correct, and appends its process's pid to $GATECHECK_TEST_PID_LOG at each call:
               which processes made the calls (error_inputs' worker kept from case to case)
aborts_on_negative_index  correct, but a negative index kills its process (os.abort), as an
               unchecked index in a C extension would: the crash must be pinned on that probe
late_index_bug correct for its first 13 calls in a process, then it accepts an index out of range
               (it clamps it): a bug that shows only in a worker that has served a case before
               (error_inputs makes 13 calls a case); logs its pid as pid_logged does
backward_raises  forward correct, its backward raises: the failure must be the backward's
forward_logged correct, and appends a line to $GATECHECK_TEST_CALL_LOG at each forward: a case
               that runs forward and backward makes one forward (one call, as a training step)
shared_state   correct, but passes its arguments through module state across a pause that lets
               other threads run: two calls at once compute on each other's inputs (the door must
               call it from one thread at a time, whatever --jobs says)
"""
import os
import time

import torch


def check_args(res, gate, index, y):
    """Each bad argument raises, naming the argument and its value."""
    if y.shape != res.shape:
        raise ValueError(f"y has shape {tuple(y.shape)}, res has {tuple(res.shape)}")
    if gate.shape[1] != res.shape[1]:
        raise ValueError(f"gate has {gate.shape[1]} columns, res has {res.shape[1]}")
    if tuple(index.shape) != (res.shape[0],):
        raise ValueError(f"index has shape {tuple(index.shape)}, res has {res.shape[0]} rows")
    if res.shape[0] and gate.shape[0] == 0:
        raise ValueError(f"gates = 0 with {res.shape[0]} rows")
    bad = (index < 0) | (index >= gate.shape[0])
    if bool(bad.any()):
        r = int(bad.nonzero()[0, 0])
        raise IndexError(f"index[{r}] = {int(index[r])} is out of range for gates = {gate.shape[0]}")


def forward_math(res, gate, index, y):
    t = res.dtype
    prod = (gate.index_select(0, index).float() * y.float()).to(t)
    return (res.float() + prod.float()).to(t)


def backward_math(g, gate, index, y):
    """(grad_res, grad_gate, grad_y); grad_gate summed in fp32 (in row order on
    the CPU, in index_add_'s atomics' order on CUDA)."""
    grad_gate = torch.zeros(gate.shape, dtype=torch.float32, device=g.device)
    grad_gate.index_add_(0, index, g.float() * y.float())
    grad_y = (g.float() * gate.index_select(0, index).float()).to(g.dtype)
    return g, grad_gate.to(gate.dtype), grad_y


class GateResidual(torch.autograd.Function):
    @staticmethod
    def forward(ctx, res, gate, index, y):
        check_args(res, gate, index, y)
        ctx.save_for_backward(gate, index, y)
        return forward_math(res, gate, index, y)

    @staticmethod
    def backward(ctx, g):
        gate, index, y = ctx.saved_tensors
        grad_res, grad_gate, grad_y = backward_math(g, gate, index, y)
        return grad_res, grad_gate, None, grad_y


def correct(res, gate, index, y):
    return GateResidual.apply(res, gate, index, y)


class _TailBug:
    """forward and backward of their own (no autograd): the bug is the forward's alone."""

    def forward(self, res, gate, index, y):
        check_args(res, gate, index, y)
        out = forward_math(res, gate, index, y)
        if out.shape[1] > 0 and gate.shape[0] > 0:  # planted: the last column uses gate row 0
            last = (gate[0, -1].float() * y[:, -1].float()).to(res.dtype)
            out[:, -1] = (res[:, -1].float() + last.float()).to(res.dtype)
        return out

    def backward(self, grad_out, res, gate, index, y):
        check_args(res, gate, index, y)
        return backward_math(grad_out, gate, index, y)


tail_bug = _TailBug()


class _ForwardReturnsNone:
    """Its own backward is right; its forward writes nothing and returns None."""

    def forward(self, res, gate, index, y):
        check_args(res, gate, index, y)
        return None

    def backward(self, grad_out, res, gate, index, y):
        check_args(res, gate, index, y)
        return backward_math(grad_out, gate, index, y)


forward_returns_none = _ForwardReturnsNone()


def _planted(rows):
    raise RuntimeError(f"planted failure on valid input ({rows} rows)")


def raises(res, gate, index, y):
    return _planted(res.shape[0])


def raises_a_lone_surrogate(res, gate, index, y):
    raise ValueError("bad \udcff byte")  # not encodable as UTF-8 as it is


def rejects_empty(res, gate, index, y):
    if res.shape[0] == 0 or res.shape[1] == 0:
        raise ValueError(f"rejects_empty needs rows >= 1 and dim >= 1, got rows = {res.shape[0]}, dim = {res.shape[1]}")
    return correct(res, gate, index, y)


rejects_empty.gatecheck_claims = "default; valid rows>=1,dim>=1"


def wrong_shape(res, gate, index, y):
    return correct(res, gate, index, y)[:, :-1]


def wrong_dtype(res, gate, index, y):
    return correct(res, gate, index, y).float()


def unchecked(res, gate, index, y):
    """Correct on valid input, but checks nothing: torch's own errors name no argument."""
    return res + gate.index_select(0, index) * y


def bad_claims(res, gate, index, y):
    return correct(res, gate, index, y)


bad_claims.gatecheck_claims = "default; not acuracy:grad_gate"


def aborts(res, gate, index, y):
    import os
    os.abort()  # as a crashing extension would


_state = {}


def shared_state(res, gate, index, y):
    _state["args"] = (res, gate, index, y)
    time.sleep(0.0002)  # gives up the GIL: a second call running now would replace _state["args"]
    return correct(*_state["args"])


def _log_pid():
    path = os.environ.get("GATECHECK_TEST_PID_LOG")
    if path:
        with open(path, "a") as f:
            f.write(f"{os.getpid()}\n")


def pid_logged(res, gate, index, y):
    _log_pid()
    return correct(res, gate, index, y)


def aborts_on_negative_index(res, gate, index, y):
    _log_pid()
    if bool((index < 0).any()):
        os.abort()
    return correct(res, gate, index, y)


_calls = [0]


def late_index_bug(res, gate, index, y):
    _log_pid()
    _calls[0] += 1
    if _calls[0] > 13:  # planted: from the 14th call on, an index out of range is clamped, not refused
        index = index.clamp(max=max(gate.shape[0] - 1, 0))
    return correct(res, gate, index, y)


class _BackwardRaises(torch.autograd.Function):
    @staticmethod
    def forward(ctx, res, gate, index, y):
        check_args(res, gate, index, y)
        return forward_math(res, gate, index, y)

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("planted failure in backward")


def backward_raises(res, gate, index, y):
    return _BackwardRaises.apply(res, gate, index, y)


def forward_logged(res, gate, index, y):
    with open(os.environ["GATECHECK_TEST_CALL_LOG"], "a") as f:
        f.write("forward\n")
    return correct(res, gate, index, y)


def on_gatechecks_stream(res, gate, index, y):
    """Correct, but raises unless the call runs with gatecheck's own stream as
    the current one (the door sets it; a worker's is never the default stream,
    which only scale cases pass: run without them). CUDA only."""
    if torch.cuda.current_stream() == torch.cuda.default_stream():
        raise RuntimeError("called with the default stream current, not gatecheck's stream")
    return correct(res, gate, index, y)


def setup_hangs(res, gate, index, y):
    return correct(res, gate, index, y)


def _sleep_forever(device):
    import os
    import time
    mark = os.environ.get("GATECHECK_TEST_IMPORT_MARK")  # (interrupt_while_loading.sh waits for it)
    if mark:
        with open(mark, "w") as f:
            f.write("in gatecheck_setup\n")
    time.sleep(1000)


setup_hangs.gatecheck_setup = _sleep_forever  # loading never ends: --load-timeout must end the run
