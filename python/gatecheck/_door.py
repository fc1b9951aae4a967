"""The Python door's glue: how gatecheck calls a Python implementation.

gatecheck (harness/python_impl.cpp) resolves a target once, then for every
call hands over DLPack capsules that view its own guarded buffers, so that
its poison, canary and untouched-input checks see every write the
implementation makes. The results come back the same way: each returned
tensor is checked for shape, dtype and device and copied into gatecheck's
output buffer.

A target is
  - a callable fn(res, gate, index, y) -> out, gradients by autograd;
  - a torch.autograd.Function subclass (its apply is the callable);
  - an object with forward(res, gate, index, y) -> out and optionally
    backward(grad_out, res, gate, index, y) -> (grad_res, grad_gate, grad_y)
    (None for a gradient means zeros); without backward, autograd.
It may carry gatecheck_claims (a contract in --claims syntax, or a dict of
them by device, "cpu"/"cuda") and gatecheck_setup(device), called once
before the first call; an exception there means it cannot run on that
device (gatecheck exits 3 with the message).

Every call returns None on success, else (head, traceback) where head is
what the implementation said ("ValueError: index[2] = 9 ...") and traceback
the last lines of where it said it; a result of the wrong kind comes back as
(head, "") naming what was expected. forward_backward (a case's forward and
backward in one call, as a training step makes them) adds whether the
forward was the half that failed.
"""
import importlib
import importlib.util
import linecache
import os
import sys
import traceback

import torch


class BadTarget(Exception):
    """The target text is malformed (gatecheck exits 2)."""


class Unavailable(Exception):
    """The target cannot run here (gatecheck exits 3)."""


class _WrongResult(Exception):
    """A result of the wrong type, shape, dtype or device."""


# Set when Ctrl-C reached Python inside a call: the engine stops after it.
interrupted = False

_TRACEBACK_FRAMES = 4


class Door:
    """A resolved target: what to call, what it declares, and how to name it."""

    def __init__(self, target, spec, device):
        self.name = spec  # python:SPEC names it
        if isinstance(target, type) and issubclass(target, torch.autograd.Function):
            self._fwd, self._bwd = target.apply, None
        elif callable(getattr(target, "forward", None)) and not isinstance(target, type):
            self._fwd = target.forward
            bwd = getattr(target, "backward", None)
            self._bwd = bwd if callable(bwd) else None
        elif callable(target) and not isinstance(target, type):
            self._fwd, self._bwd = target, None
        else:
            raise BadTarget(f"{self.name} is {type(target).__name__}: not a callable fn(res, gate, index, y), "
                            "a torch.autograd.Function, or an object with forward(res, gate, index, y)")
        self._claims = getattr(target, "gatecheck_claims", None)
        if self._claims is not None and not isinstance(self._claims, (str, dict)):
            raise BadTarget(f"{self.name}.gatecheck_claims is {type(self._claims).__name__}: "
                            "give a contract string, or a dict of them by device ('cpu', 'cuda')")
        setup = getattr(target, "gatecheck_setup", None)
        if device == "cuda" and not torch.cuda.is_available():
            raise Unavailable(f"{self.name} on cuda: this torch ({torch.__version__}) sees no CUDA device")
        if callable(setup):
            try:
                setup(device)
            except Exception as e:  # noqa: BLE001 (any reason is the reason)
                raise Unavailable(f"{self.name} cannot run on {device}: {type(e).__name__}: {e}") from e

    def claims(self, device):
        """The contract it declares on `device`, "" for none."""
        c = self._claims
        if isinstance(c, dict):
            c = c.get(device, c.get("*"))
        return c or ""


def _import_file(path):
    """A module from a file: its folder goes first on sys.path, as for a script."""
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise Unavailable(f"no such file: {path}")
    folder, base = os.path.split(path)
    name = os.path.splitext(base)[0]
    if folder not in sys.path:
        sys.path.insert(0, folder)
    loaded = sys.modules.get(name)
    if loaded is not None and os.path.abspath(getattr(loaded, "__file__", "") or "") == path:
        return loaded
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _attribute(module, attr, text):
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise Unavailable(f"{text}: {getattr(module, '__name__', module)} has no attribute '{attr}'")
        obj = getattr(obj, part)
    return obj


def resolve(text, device):
    """The Door of "MODULE:ATTR" or "path/to/file.py:ATTR" (ATTR may be dotted)."""
    where, sep, attr = text.rpartition(":")
    if not sep or not where or not attr:
        raise BadTarget(f"python:{text}: give MODULE:ATTR or FILE.py:ATTR (the part after the last ':' "
                        "names the callable or object)")
    try:
        if where.endswith(".py") or os.sep in where:
            module = _import_file(where)
        else:
            if os.getcwd() not in sys.path:  # as `python -m` does
                sys.path.insert(0, os.getcwd())
            module = importlib.import_module(where)
    except (BadTarget, Unavailable):
        raise
    except Exception as e:  # noqa: BLE001 (an import may raise anything)
        raise Unavailable(f"python:{text}: importing {where} failed: {type(e).__name__}: {e}"
                          f"{_frames(e)}") from e
    return Door(_attribute(module, attr, f"python:{text}"), text, device)


# ---- calls ---------------------------------------------------------------------


_HERE = os.path.abspath(__file__)


def _frames(e):
    """The last frames of e's traceback, as lines (empty if it has none): the
    file, line and function of each, with its source line. Read off the frames
    directly: traceback's own formatting parses each line to place its carets,
    which made a rejected probe cost ten times its call (error_inputs rejects
    a dozen a case)."""
    frames = []
    tb = e.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if os.path.abspath(code.co_filename) != _HERE:
            frames.append((code.co_filename, tb.tb_lineno, code.co_name))
        tb = tb.tb_next
    lines = []
    for file, line, name in frames[-_TRACEBACK_FRAMES:]:
        lines.append(f'  File "{file}", line {line}, in {name}')
        source = linecache.getline(file, line).strip()
        if source:
            lines.append(f"    {source}")
    return "\n".join(lines)


def _failure(e):
    global interrupted
    if isinstance(e, KeyboardInterrupt):
        interrupted = True
    if isinstance(e, _WrongResult):
        return (str(e), "")
    head = "".join(traceback.format_exception_only(type(e), e)).strip()
    return (head, _frames(e))


# torch's handle of each gatecheck stream (a worker keeps its stream for its
# life), made once rather than at every call.
_external_streams = {}


def _enter_stream(stream, device):
    """Makes the call's stream this thread's current one, so that what the call
    launches runs on it (0: CUDA's default stream, as gatecheck's scale cases
    pass). Set at every call and left set: the thread is one of gatecheck's
    workers, and torch's stream context, which also restores the stream
    before, cost a door call more than its views on an H200's host."""
    if device != "cuda":
        return
    s = _external_streams.get(stream)
    if s is None:
        s = _external_streams[stream] = torch.cuda.ExternalStream(stream) if stream else torch.cuda.default_stream()
    torch.cuda.set_stream(s)


def _store(op, name, got, dst, what):
    """Checks a result against the output buffer it must fill, and fills it."""
    if got is None:
        dst.zero_()  # autograd's convention: no gradient is a zero one
        return
    if not isinstance(got, torch.Tensor):
        raise _WrongResult(f"{op} returned {type(got).__name__} for {name}, expected {_wanted(dst, what)}")
    if got.shape != dst.shape or got.dtype != dst.dtype or got.device != dst.device:
        wrong = [f"{k} {v}" for k, v, w in (("shape", tuple(got.shape), tuple(dst.shape)),
                                             ("dtype", got.dtype, dst.dtype), ("device", got.device, dst.device))
                 if v != w]
        raise _WrongResult(f"{op} returned {name} with {', '.join(wrong)}; expected {_wanted(dst, what)}")
    dst.copy_(got.detach())  # detached: the buffer stays out of the result's graph


def _wanted(dst, what):
    return f"a tensor of shape {tuple(dst.shape)} {what}, dtype {dst.dtype}, on {dst.device}"


def _views(capsules):
    return [torch.from_dlpack(c) for c in capsules]


def forward(door, capsules, stream, device):
    """out = door(res, gate, index, y), into gatecheck's out buffer."""
    try:
        res, gate, index, y, out = _views(capsules)
        _enter_stream(stream, device)
        _store("forward", "out", door._fwd(res, gate, index, y), out, "[rows, dim]")
        return None
    except BaseException as e:  # noqa: BLE001 (every failure is reported)
        return _failure(e)


def _own_backward(door, grad_out, res, gate, index, y):
    """(grad_res, grad_gate, grad_y) by the target's backward."""
    got = door._bwd(grad_out, res, gate, index, y)
    if not isinstance(got, (tuple, list)) or len(got) != 3:
        raise _WrongResult(f"backward returned {type(got).__name__}, expected a tuple "
                           "(grad_res, grad_gate, grad_y)")
    return got


def _forward_with_grad(door, res, gate, index, y):
    """(out, leaves): the target's out from res, gate and y as leaves that require grad."""
    leaves = tuple(t.detach().requires_grad_(True) for t in (res, gate, y))
    with torch.enable_grad():
        out = door._fwd(leaves[0], leaves[1], index, leaves[2])
    return out, leaves


def _autograd(out, leaves, grad_out):
    """(grad_res, grad_gate, grad_y) of out by autograd."""
    if not isinstance(out, torch.Tensor):
        raise _WrongResult(f"forward returned {type(out).__name__} for out, expected a tensor")
    return torch.autograd.grad(out, leaves, grad_out, allow_unused=True)


def _store_gradients(got, grad_res, grad_gate, grad_y):
    _store("backward", "grad_res", got[0], grad_res, "[rows, dim]")
    _store("backward", "grad_gate", got[1], grad_gate, "[gates, dim]")
    _store("backward", "grad_y", got[2], grad_y, "[rows, dim]")


def backward(door, capsules, stream, device):
    """(grad_res, grad_gate, grad_y) by the target's backward, else by autograd
    (the forward run again on leaves that require grad)."""
    try:
        grad_out, res, gate, index, y, grad_res, grad_gate, grad_y = _views(capsules)
        _enter_stream(stream, device)
        if door._bwd is not None:
            got = _own_backward(door, grad_out, res, gate, index, y)
        else:
            got = _autograd(*_forward_with_grad(door, res, gate, index, y), grad_out)
        _store_gradients(got, grad_res, grad_gate, grad_y)
        return None
    except BaseException as e:  # noqa: BLE001 (every failure is reported)
        return _failure(e)


def forward_backward(door, capsules, stream, device):
    """A training step: out = door(res, gate, index, y), then the gradients of
    that same out (autograd) or the target's backward, in one call. Returns
    None, or (head, traceback, failed in the forward)."""
    in_forward = True
    try:
        res, gate, index, y, out, grad_out, grad_res, grad_gate, grad_y = _views(capsules)
        _enter_stream(stream, device)
        if door._bwd is not None:
            _store("forward", "out", door._fwd(res, gate, index, y), out, "[rows, dim]")
            in_forward = False
            got = _own_backward(door, grad_out, res, gate, index, y)
        else:
            made, leaves = _forward_with_grad(door, res, gate, index, y)
            _store("forward", "out", made, out, "[rows, dim]")
            in_forward = False
            got = _autograd(made, leaves, grad_out)
        _store_gradients(got, grad_res, grad_gate, grad_y)
        return None
    except BaseException as e:  # noqa: BLE001 (every failure is reported)
        return _failure(e) + (in_forward,)
