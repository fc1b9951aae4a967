#!/usr/bin/env python3
"""rmsnorm_modulate as users call it, beside its peers and the copy of its bytes (one run).

For each shape and dtype (bf16 unless --dtype), in one process:
  - a device-to-device copy of the bytes the forward moves (x -> out) and of
    the forward+backward's (x, g -> out, dx: 5 row tensors);
  - torch eager: the prior art's composition (F.rms_norm, then
    n * (1 + scale[index]) + shift[index]), gradients by autograd;
  - torch.compile of the same function (left out with --no-compile), compiled
    afresh for each dtype and dim (torch._dynamo.reset()), with the row count
    dynamic, as a varying batch makes it: one compilation serves a dtype and
    dim's rows and gate counts, so a whole grid fits in one run;
  - with --static-compile, also torch.compile specialised to each shape
    (dynamic=False, compiled afresh for it), as a fixed batch gets it;
  - torch.ops.gatecheck.rmsnorm_modulate, when --lib names its library.
Each figure: CUDA events around one call, an L2 flush (256 MiB written)
before each, the median of --reps. Forward+backward is
torch.autograd.grad(out, (x, w, shift, scale), g). Beside the times: the peak
device memory a forward+backward allocates beyond its inputs
(torch.cuda.max_memory_allocated), and whether dshift and dscale are bitwise
the same over three calls.

The shapes: --shapes ROWSxDIMxGATES,... or the grid --rows R,... --dims D,...
--gates G,... (as gatecheck-bench's; a gate count `rows` is one gate per row),
each for every dtype of --dtype (a comma list). Writes
OUT/rmsnorm_as_called.json (after each shape) and prints a table.
Usage: python3 bench/rmsnorm_as_called.py [--lib build/kernels/torch_op/libgatecheck_torch_op.so]
           [--shapes 4097x5376x9,32768x5376x9 | --rows 4097,32768 --dims 3072,5001 --gates 9,rows]
           [--reps 20] [--dtype bf16,f16] [--no-compile] [--static-compile] [--out DIR]
"""
import argparse
import json
import os
import statistics
import sys
import types

import torch


def usage_error(message):
    print(f"rmsnorm_as_called.py: {message}", file=sys.stderr)
    sys.exit(2)


def parse_shapes(text):
    shapes = []
    for item in text.split(","):
        parts = item.strip().split("x")
        if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
            usage_error(f"--shapes item '{item}' is not ROWSxDIMxGATES of positive numbers")
        shapes.append(tuple(int(p) for p in parts))
    return shapes


def positive_list(flag, text, allow_rows=False):
    out = []
    for item in text.split(","):
        item = item.strip()
        if allow_rows and item == "rows":
            out.append("rows")
        elif item.isdigit() and int(item) > 0:
            out.append(int(item))
        else:
            also = " or 'rows'" if allow_rows else ""
            usage_error(f"{flag} item '{item}' is not a positive number{also}")
    return out


def grid_shapes(a):
    """--shapes, or the product of --rows, --dims and --gates (all three or none)."""
    grid = [a.rows, a.dims, a.gates]
    if not any(grid):
        return parse_shapes(a.shapes)
    if not all(grid):
        usage_error("--rows, --dims and --gates go together (or give --shapes)")
    return [(r, d, r if g == "rows" else g) for r in positive_list("--rows", a.rows)
            for d in positive_list("--dims", a.dims) for g in positive_list("--gates", a.gates, allow_rows=True)]


def eager(x, w, shift, scale, index, eps=1e-6):
    """The prior art's composition (../shared/reference/rmsnorm_peers_h200_2026-12-02.md):
    F.rms_norm, then the modulation with the tables indexed. Their gradients come by index_put
    with accumulate, which sorts; index_select's index_add scatters with atomics, and took
    torch.compile's bf16 forward+backward at 32768 x 5376 x 9 to 3.7-4.2 ms against 1.1 ms
    (bench/results/rms_kernels/as_called_grid/)."""
    if hasattr(torch.nn.functional, "rms_norm"):
        n = torch.nn.functional.rms_norm(x, (x.shape[-1],), w, eps)
    else:
        var = x.float().pow(2).mean(-1, keepdim=True)
        n = (x.float() * torch.rsqrt(var + eps)).to(x.dtype) * w
    return n * (1 + scale[index]) + shift[index]


def eager_static(x, w, shift, scale, index):
    return eager(x, w, shift, scale, index)


def compiled_static():
    """torch.compile(dynamic=False) of eager under a fresh code object (a copy of
    eager_static's): Dynamo keeps compiled graphs and counts recompilations per code object, so
    each shape starts empty. It never reuses the dynamic compile's graphs, checks no earlier
    shape's guards, and a grid never reaches the recompile limit (past it Dynamo runs eager)."""
    fn = types.FunctionType(eager_static.__code__.replace(), eager_static.__globals__, "eager_static")
    return torch.compile(fn, dynamic=False)


class Timer:
    def __init__(self, reps):
        self.reps = reps
        self.flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")

    def median_us(self, fn):
        fn()
        times = []
        for _ in range(self.reps):
            self.flush.fill_(1)
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            torch.cuda.synchronize()
            times.append(a.elapsed_time(b) * 1000.0)
        return statistics.median(times)


def measure(name, fn, args, g, timer):
    x, w, shift, scale, index = args
    leaves = [t.detach().requires_grad_(True) for t in (x, w, shift, scale)]
    if name == "torch.compile":  # the row count dynamic: one compilation for every row count
        index, g = index.clone(), g.clone()  # marked copies: the static compile sees none
        for t in (leaves[0], index, g):
            torch._dynamo.maybe_mark_dynamic(t, 0)

    def fwd():
        with torch.no_grad():
            fn(*leaves, index)

    def fb():
        out = fn(*leaves, index)
        return torch.autograd.grad(out, leaves, g)

    row = {"impl": name}
    try:
        row["fwd_us"] = timer.median_us(fwd)
        row["fwd_bwd_us"] = timer.median_us(fb)
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        grads = [fb() for _ in range(3)]
        torch.cuda.synchronize()
        row["peak_extra_mib"] = (torch.cuda.max_memory_allocated() - base) / 2**20
        row["dshift_dscale_repeatable"] = all(
            torch.equal(grads[0][i].view(torch.int16 if grads[0][i].element_size() == 2 else torch.int32),
                        grads[k][i].view(torch.int16 if grads[k][i].element_size() == 2 else torch.int32))
            for k in (1, 2) for i in (2, 3))
    except Exception as e:  # a peer that cannot run here: say why, keep the others
        row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:200]
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", default="", help="libgatecheck_torch_op.so (torch.ops.gatecheck.rmsnorm_modulate)")
    ap.add_argument("--shapes", default="4097x5376x9,32768x5376x9,32768x3072x32,131072x5376x9")
    ap.add_argument("--rows", default="", help="a grid instead of --shapes: rows, comma-separated")
    ap.add_argument("--dims", default="", help="the grid's dims")
    ap.add_argument("--gates", default="", help="the grid's gate counts ('rows': one gate per row)")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--dtype", default="bf16", help="bf16, f16 or f32, or a comma list of them")
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--static-compile", action="store_true",
                    help="also torch.compile(dynamic=False), compiled afresh for each shape")
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/out"))
    a = ap.parse_args()
    if a.reps < 1:
        usage_error("--reps must be at least 1")
    dtypes = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
    for name in a.dtype.split(","):
        if name not in dtypes:
            usage_error(f"--dtype item '{name}' is not bf16, f16 or f32")
    shapes = grid_shapes(a)
    if not torch.cuda.is_available():
        sys.exit("rmsnorm_as_called.py: no CUDA device")
    impls = [("torch eager", eager)]
    compiled_for = None  # the (dtype, dim) torch.compile last compiled for
    if a.lib:
        torch.ops.load_library(a.lib)
        op = torch.ops.gatecheck.rmsnorm_modulate
        impls.insert(0, ("torch.ops.gatecheck.rmsnorm_modulate", lambda x, w, sh, sc, i: op(x, w, sh, sc, i, 1e-6)))
    timer = Timer(a.reps)
    os.makedirs(a.out, exist_ok=True)
    doc = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(), "dtype": a.dtype, "reps": a.reps,
           "command": " ".join(sys.argv), "shapes": []}
    print(f"| dtype | rows | dim | gates | impl | fwd us | fwd+bwd us | peak extra MiB | dshift, dscale repeatable |")
    print("|---|---|---|---|---|---|---|---|---|")
    # Grouped by dtype and dim, so that torch.compile compiles once a group.
    order = sorted(shapes, key=lambda sh: (sh[1], sh[0], sh[2]))
    for dname, (rows, dim, gates) in [(d, sh) for d in a.dtype.split(",") for sh in order]:
        dt = dtypes[dname]
        if not a.no_compile and compiled_for != (dname, dim):
            torch._dynamo.reset()
            impls = [i for i in impls if not i[0].startswith("torch.compile")]
            impls.append(("torch.compile", torch.compile(eager)))
            compiled_for = (dname, dim)
        if a.static_compile:  # after the dynamic one's group reset: each shape its own graphs
            impls = [i for i in impls if i[0] != "torch.compile, static shapes"]
            impls.append(("torch.compile, static shapes", compiled_static()))
        gen = torch.Generator(device="cuda").manual_seed(34)
        x = torch.randn(rows, dim, device="cuda", dtype=dt, generator=gen)
        w = torch.randn(dim, device="cuda", dtype=dt, generator=gen)
        shift = torch.randn(gates, dim, device="cuda", dtype=dt, generator=gen)
        scale = torch.randn(gates, dim, device="cuda", dtype=dt, generator=gen) * 0.1
        index = torch.randint(0, gates, (rows,), device="cuda", generator=gen)
        g = torch.randn(rows, dim, device="cuda", dtype=dt, generator=gen)
        sz = x.element_size() * rows * dim
        copy_f = torch.empty(sz, dtype=torch.uint8, device="cuda")
        copy_fb = torch.empty(5 * sz // 2, dtype=torch.uint8, device="cuda")
        src_f, src_fb = torch.empty_like(copy_f), torch.empty_like(copy_fb)
        shape = {"dtype": dname, "rows": rows, "dim": dim, "gates": gates,
                 "copy_fwd_us": timer.median_us(lambda: copy_f.copy_(src_f)),
                 "copy_fwd_bwd_us": timer.median_us(lambda: copy_fb.copy_(src_fb)), "impls": []}
        del copy_f, copy_fb, src_f, src_fb
        print(f"| {dname} | {rows} | {dim} | {gates} | copy of the bytes | {shape['copy_fwd_us']:.1f} | "
              f"{shape['copy_fwd_bwd_us']:.1f} | | |")
        for name, fn in impls:
            r = measure(name, fn, (x, w, shift, scale, index), g, timer)
            shape["impls"].append(r)
            if "error" in r:
                print(f"| {dname} | {rows} | {dim} | {gates} | {name} | could not run: {r['error']} | | | |")
            else:
                print(f"| {dname} | {rows} | {dim} | {gates} | {name} | {r['fwd_us']:.1f} | {r['fwd_bwd_us']:.1f} | "
                      f"{r['peak_extra_mib']:.0f} | {'yes' if r['dshift_dscale_repeatable'] else 'no'} |")
            sys.stdout.flush()
        doc["shapes"].append(shape)
        with open(os.path.join(a.out, "rmsnorm_as_called.json"), "w") as f:
            json.dump(doc, f, indent=1)
        del x, g
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
