"""Where a Python door call's time goes inside gatecheck's own process.

    DOOR_PROBE_OUT=probe.json gatecheck bench --harness --jobs 1 --device cuda \\
        --impl python:bench/python_door_probe.py:gatecheck_op --properties accuracy,row_invariance

A target that is a peer of gatecheck.peers (gatecheck_op or diffusers_eager)
with timers: each door call as gatecheck makes it (the glue's forward,
backward or forward_backward, then a wait for the call's stream), the
peer's forward inside it, and autograd's pass. Every 200 calls it writes
the median and mean of each, in microseconds, to $DOOR_PROBE_OUT (default
door_probe.json). bench/python_door_costs.py times the same pieces outside
gatecheck's process: the two side by side say what the process adds.
A benchmark that prints what it saw; it never fails on a number.
"""
import json
import os
import statistics
import time

import torch

from gatecheck import _door, peers

_times = {}
_out = os.environ.get("DOOR_PROBE_OUT", "door_probe.json")


def _note(name, seconds):
    _times.setdefault(name, []).append(seconds)
    if name.startswith("door.") and sum(len(v) for k, v in _times.items() if k.startswith("door.")) % 200 == 0:
        with open(_out, "w") as f:
            json.dump({k: {"calls": len(v), "median_us": statistics.median(v) * 1e6, "mean_us": sum(v) / len(v) * 1e6}
                       for k, v in _times.items()}, f, indent=1)


def _timed_glue(name):
    glue = getattr(_door, name)

    def timed(door, capsules, scalars, stream, device):
        t0 = time.perf_counter()
        r = glue(door, capsules, scalars, stream, device)
        if device == "cuda":  # the call's stream: the door left it the current one
            torch.cuda.current_stream().synchronize()
        _note("door." + name, time.perf_counter() - t0)
        return r
    setattr(_door, name, timed)


for _name in ("forward", "backward", "forward_backward"):
    _timed_glue(_name)

_grad = torch.autograd.grad


def _timed_grad(*args, **kwargs):
    t0 = time.perf_counter()
    r = _grad(*args, **kwargs)
    _note("autograd.grad", time.perf_counter() - t0)
    return r


_door.torch.autograd.grad = _timed_grad


class _Timed:
    """The peer, its forward timed (its declarations and set-up passed on)."""

    def __init__(self, peer):
        self._peer = peer
        self.gatecheck_claims = getattr(peer, "gatecheck_claims", None)
        setup = getattr(peer, "gatecheck_setup", None)
        if setup is not None:
            self.gatecheck_setup = setup

    def forward(self, res, gate, index, y):
        fwd = getattr(self._peer, "forward", self._peer)
        t0 = time.perf_counter()
        out = fwd(res, gate, index, y)
        _note("peer forward", time.perf_counter() - t0)
        return out


gatecheck_op = _Timed(peers.gatecheck_op)
diffusers_eager = _Timed(peers.diffusers_eager)
