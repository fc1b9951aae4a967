# gatecheck layer: harness (its C++ side, harness/impls/python_impl.cpp, imports it at run time)
"""The Python door's glue: how gatecheck calls a Python implementation.

gatecheck (harness/python_impl.cpp) resolves a target once, then for every
call hands over DLPack capsules that view its own guarded buffers, so that
its poison, canary and untouched-input checks see every write the
implementation makes. The results come back the same way: each returned
tensor is checked for shape, dtype and device and copied into gatecheck's
output buffer.

A target implements one op (gatecheck ops lists them, with their tensors in
order). For gate_residual, whose inputs are res, gate, index, y, it is
  - a callable fn(res, gate, index, y) -> out, gradients by autograd;
  - a torch.autograd.Function subclass (its apply is the callable; apply
    takes no keywords, so the op's scalars follow the tensors in order:
    forward(ctx, x, w, shift, scale, index, eps) for rmsnorm_modulate);
  - an object with forward(res, gate, index, y) -> out and optionally
    backward(grad_out, res, gate, index, y) -> (grad_res, grad_gate, grad_y)
    (None for a gradient means zeros); without backward, autograd.
For any op the same: the forward takes the op's forward inputs in its order
and its scalars by name (rmsnorm_modulate: fn(x, w, shift, scale, index,
eps=...)) and returns its forward output (a tuple if it has several); the
backward takes the incoming gradients, then the forward inputs, then the
scalars by name, and returns the gradients in the order of the inputs they
belong to (rmsnorm_modulate: dx, dweight, dshift, dscale).
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

    def __init__(self, target, spec, device, op):
        self.name = spec  # python:SPEC names it
        self.op = _Op(op)
        if isinstance(target, type) and issubclass(target, torch.autograd.Function):
            # apply takes no keywords: the scalars follow the tensors, in the op's order.
            names = list(self.op.scalars)
            self._fwd = lambda *ins, **scalars: target.apply(*ins, *[scalars[n] for n in names])
            self._bwd = None
        elif callable(getattr(target, "forward", None)) and not isinstance(target, type):
            self._fwd = target.forward
            bwd = getattr(target, "backward", None)
            self._bwd = bwd if callable(bwd) else None
        elif callable(target) and not isinstance(target, type):
            self._fwd, self._bwd = target, None
        elif isinstance(target, type) and callable(getattr(target, "forward", None)):
            # (its forward would be called unbound, with res in self's place)
            args = self.op.forward_signature()
            raise BadTarget(f"{self.name} is a class, not an object: name an instance of it "
                            f"(in the module: obj = {target.__name__}()), whose forward({args}) is then called")
        else:
            args = self.op.forward_signature()
            raise BadTarget(f"{self.name} is {type(target).__name__}: not a callable fn({args}), "
                            f"a torch.autograd.Function, or an object with forward({args})")
        self._claims = getattr(target, "gatecheck_claims", None)
        if self._claims is not None and not isinstance(self._claims, (str, dict)):
            raise BadTarget(f"{self.name}.gatecheck_claims is {type(self._claims).__name__}: "
                            "give a contract string, or a dict of them by device ('cpu', 'cuda')")
        # A split exchange: an object with partial, combine and finalize
        # (exchange_partial below says how each is called).
        self.exchange = getattr(target, "gatecheck_split_exchange", None)
        self.exchange_state = None
        if self.exchange is not None:
            missing = [f for f in ("partial", "combine", "finalize") if not callable(getattr(self.exchange, f, None))]
            if missing:
                raise BadTarget(f"{self.name}.gatecheck_split_exchange has no callable {', '.join(missing)}")
            self.exchange_state = str(getattr(self.exchange, "state", "declared by the Python implementation"))
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


class _Op:
    """The op as gatecheck describes it (harness/impls/python_impl.cpp): its
    inputs and outputs in order, with each one's role, pass, and what a
    gradient is the gradient of; its scalars."""

    _SHAPES = {"row": "[rows, dim]", "table": "[gates, dim]", "column": "[dim]", "index": "[rows]"}

    def __init__(self, d):
        self.name = d["name"]
        self.inputs, self.outputs, self.scalars = d["inputs"], d["outputs"], list(d["scalars"])
        self.fwd_inputs = [i for i, e in enumerate(self.inputs) if e["pass"] == "forward"]
        self.upstream = [i for i, e in enumerate(self.inputs) if e["pass"] == "backward"]
        self.fwd_outputs = [i for i, e in enumerate(self.outputs) if e["pass"] == "forward"]
        by_name = {e["name"]: i for i, e in enumerate(self.inputs)}
        # The gradients, in the order of the inputs they are the gradients of
        # (gate_residual: grad_res, grad_gate, grad_y), and those inputs.
        grads = [i for i, e in enumerate(self.outputs) if e["pass"] == "backward"]
        self.bwd_outputs = sorted(grads, key=lambda i: by_name[self.outputs[i]["grad_of"]])
        self.leaves = [by_name[self.outputs[i]["grad_of"]] for i in self.bwd_outputs]
        out_by_name = {e["name"]: k for k, e in enumerate(self.fwd_outputs_names())}
        # The forward output each incoming gradient belongs to.
        self.upstream_of = [out_by_name[self.inputs[i]["grad_of"]] for i in self.upstream]

    def fwd_outputs_names(self):
        return [self.outputs[i] for i in self.fwd_outputs]

    def shape(self, entry):
        return self._SHAPES[entry["role"]]

    def forward_signature(self):
        names = [self.inputs[i]["name"] for i in self.fwd_inputs] + [f"{s}=..." for s in self.scalars]
        return ", ".join(names)

    def gradient_names(self):
        return ", ".join(self.outputs[i]["name"] for i in self.bwd_outputs)


def resolve(text, device, op):
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
    return Door(_attribute(module, attr, f"python:{text}"), text, device, op)


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
        return (_utf8(str(e)), "")
    head = "".join(traceback.format_exception_only(type(e), e)).strip()
    return (_utf8(head), _utf8(_frames(e)))


def _utf8(text):
    """A lone surrogate ("\\udcff") cannot become the C++ side's UTF-8 string: written as an escape."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


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
        if op != "backward":  # a forward that returns None has written nothing: not a zero output
            raise _WrongResult(f"{op} returned None for {name}, expected {_wanted(dst, what)}")
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


def _results(op, what, got, count):
    """The list of `count` results a call returned (a tensor alone when one)."""
    if count == 1:
        return [got]
    if not isinstance(got, (tuple, list)) or len(got) != count:
        raise _WrongResult(f"{op} returned {type(got).__name__}, expected a tuple ({what})")
    return list(got)


def _store_all(kind, door, indices, got, dsts):
    """Stores got[k] into the buffer of output indices[k]; dsts maps an output's index to its buffer."""
    op = door.op
    for k, i in enumerate(indices):
        _store(kind, op.outputs[i]["name"], got[k], dsts[i], op.shape(op.outputs[i]))


def _buffers(op, views, passes):
    """Output index -> its buffer, for the outputs of `passes` given in the op's order."""
    made = [i for i, e in enumerate(op.outputs) if e["pass"] in passes]
    return dict(zip(made, views))


def forward(door, capsules, scalars, stream, device):
    """The op's forward outputs = door(*forward inputs, **scalars), into gatecheck's buffers."""
    op = door.op
    try:
        views = _views(capsules)
        ins = views[:len(op.fwd_inputs)]
        outs = _buffers(op, views[len(op.fwd_inputs):], ("forward",))
        _enter_stream(stream, device)
        names = ", ".join(e["name"] for e in op.fwd_outputs_names())
        _store_all("forward", door, op.fwd_outputs, _results("forward", names, door._fwd(*ins, **scalars),
                                                             len(op.fwd_outputs)), outs)
        return None
    except BaseException as e:  # noqa: BLE001 (every failure is reported)
        return _failure(e)


def _own_backward(door, inputs, scalars):
    """The op's gradients by the target's backward(*incoming, *forward inputs, **scalars)."""
    op = door.op
    upstream = [inputs[i] for i in op.upstream]
    fwd = [inputs[i] for i in op.fwd_inputs]
    got = door._bwd(*upstream, *fwd, **scalars)
    want = len(op.bwd_outputs)
    if want == 1 and isinstance(got, torch.Tensor):
        return [got]
    if not isinstance(got, (tuple, list)) or len(got) != want:
        raise _WrongResult(f"backward returned {type(got).__name__}, expected a tuple ({op.gradient_names()})")
    return list(got)


def _forward_with_grad(door, inputs, scalars):
    """(outputs, leaves): the target's forward outputs from its inputs, those
    it has gradients for as leaves that require grad."""
    op = door.op
    args = list(inputs)
    leaves = []
    for i in op.leaves:
        args[i] = args[i].detach().requires_grad_(True)
        leaves.append(args[i])
    with torch.enable_grad():
        got = door._fwd(*[args[i] for i in op.fwd_inputs], **scalars)
    names = ", ".join(e["name"] for e in op.fwd_outputs_names())
    return _results("forward", names, got, len(op.fwd_outputs)), leaves


def _autograd(door, outputs, leaves, inputs):
    """The op's gradients of its forward outputs by autograd."""
    op = door.op
    for k, out in enumerate(outputs):
        if not isinstance(out, torch.Tensor):
            raise _WrongResult(f"forward returned {type(out).__name__} for "
                               f"{op.outputs[op.fwd_outputs[k]]['name']}, expected a tensor")
    grads = [None] * len(outputs)
    for j, i in enumerate(op.upstream):
        grads[op.upstream_of[j]] = inputs[i]
    return list(torch.autograd.grad(outputs, leaves, grads, allow_unused=True))


def backward(door, capsules, scalars, stream, device):
    """The op's gradients by the target's backward, else by autograd (the
    forward run again on leaves that require grad)."""
    op = door.op
    try:
        views = _views(capsules)
        inputs, outs = views[:len(op.inputs)], _buffers(op, views[len(op.inputs):], ("backward",))
        _enter_stream(stream, device)
        if door._bwd is not None:
            got = _own_backward(door, inputs, scalars)
        else:
            made, leaves = _forward_with_grad(door, inputs, scalars)
            got = _autograd(door, made, leaves, inputs)
        _store_all("backward", door, op.bwd_outputs, got, outs)
        return None
    except BaseException as e:  # noqa: BLE001 (every failure is reported)
        return _failure(e)


def _state_bytes(fn, got):
    if not isinstance(got, torch.Tensor) or got.dtype != torch.int64 or got.dim() != 1:
        raise _WrongResult(f"gatecheck_split_exchange.{fn} returned "
                           f"{type(got).__name__ if not isinstance(got, torch.Tensor) else f'a {got.dtype} tensor of {got.dim()} dimensions'}"
                           ", expected a 1-dimensional torch.int64 tensor (the state's words)")
    return got.detach().cpu().contiguous().numpy().tobytes()


def _state_tensor(b):
    return torch.frombuffer(bytearray(b), dtype=torch.int64) if b else torch.zeros(0, dtype=torch.int64)


def _backward_args(op, inputs):
    """The incoming gradients, then the forward inputs: the order a backward takes them."""
    return [inputs[i] for i in op.upstream] + [inputs[i] for i in op.fwd_inputs]


def exchange_partial(door, capsules, scalars, stream, device):
    """The state of a part's rows: exchange.partial(*incoming, *forward inputs, **scalars) -> int64 words."""
    try:
        inputs = _views(capsules)
        _enter_stream(stream, device)
        return None, _state_bytes("partial", door.exchange.partial(*_backward_args(door.op, inputs), **scalars))
    except BaseException as e:  # noqa: BLE001 (every failure is reported)
        return _failure(e), None


def exchange_combine(door, states, scalars, stream, device):
    """exchange.combine([state of rank 0, rank 1, ...]) -> the combined state."""
    try:
        return None, _state_bytes("combine", door.exchange.combine([_state_tensor(b) for b in states]))
    except BaseException as e:  # noqa: BLE001
        return _failure(e), None


def exchange_finalize(door, args, scalars, stream, device):
    """exchange.finalize(state, *incoming, *forward inputs, **scalars) -> the row
    reductions (the outputs that reduce over rows, in the op's order), into gatecheck's buffers."""
    op = door.op
    try:
        state, capsules = args
        views = _views(capsules)
        n_in = len(op.upstream) + len(op.fwd_inputs)
        inputs = [None] * len(op.inputs)
        for k, i in enumerate(sorted(op.upstream + op.fwd_inputs)):
            inputs[i] = views[k]
        reductions = [i for i, e in enumerate(op.outputs) if e.get("reduces")]
        _enter_stream(stream, device)
        got = door.exchange.finalize(_state_tensor(state), *_backward_args(op, inputs), **scalars)
        names = ", ".join(op.outputs[i]["name"] for i in reductions)
        _store_all("gatecheck_split_exchange.finalize", door, reductions,
                   _results("gatecheck_split_exchange.finalize", names, got, len(reductions)),
                   dict(zip(reductions, views[n_in:])))
        return None, None
    except BaseException as e:  # noqa: BLE001
        return _failure(e), None


def forward_backward(door, capsules, scalars, stream, device):
    """A training step: the forward, then the gradients of that same forward
    (autograd) or the target's backward, in one call. Returns None, or
    (head, traceback, failed in the forward)."""
    op = door.op
    in_forward = True
    try:
        views = _views(capsules)
        inputs, outs = views[:len(op.inputs)], _buffers(op, views[len(op.inputs):], ("forward", "backward"))
        _enter_stream(stream, device)
        names = ", ".join(e["name"] for e in op.fwd_outputs_names())
        if door._bwd is not None:
            made = _results("forward", names, door._fwd(*[inputs[i] for i in op.fwd_inputs], **scalars),
                            len(op.fwd_outputs))
            _store_all("forward", door, op.fwd_outputs, made, outs)
            in_forward = False
            got = _own_backward(door, inputs, scalars)
        else:
            made, leaves = _forward_with_grad(door, inputs, scalars)
            _store_all("forward", door, op.fwd_outputs, made, outs)
            in_forward = False
            got = _autograd(door, made, leaves, inputs)
        _store_all("backward", door, op.bwd_outputs, got, outs)
        return None
    except BaseException as e:  # noqa: BLE001 (every failure is reported)
        return _failure(e) + (in_forward,)
