#!/usr/bin/env python3
"""torch.ops.gatecheck.gate_residual timed as users call it (bf16, one run).

For each shape, in one process and one run:
  - the op's forward, and its forward+backward through torch.autograd.grad,
    as called: wall time per call with the CPU running ahead (CUDA events
    around many back-to-back calls, no sync between them), and the host's own
    time per call (how long the CPU takes to queue one call: when it exceeds
    the GPU's time, the host sets the pace);
  - the same step captured in a CUDA graph and replayed (its kernels with no
    host work between them: the op's kernels-only figure as the op calls
    them, without grad_res, and what a captured training step gets);
  - torch eager (res + gate.index_select(0, index) * y), deterministic eager
    (torch.use_deterministic_algorithms(True)) and torch.compile of that
    formula, called the same way;
  - a device-to-device copy of the bytes each step must move;
  - beside them, the kernel benchmark's figures (gatecheck-bench --json,
    GPU time of the raw kernels, which write grad_res) when given.
Every forward is timed as in training (inputs that require grad), every
forward+backward as torch.autograd.grad(out, (res, gate, y), grad_out).
Then the floor at small sizes: the op, eager and one torch add through
autograd on 8 x 64 (host-bound), and the 4097-row step captured in a graph.

Writes OUT/op_as_called.json (after each shape: nothing is lost) and
OUT/op_as_called.md.

Usage: python3 bench/op_as_called.py --lib build/kernels/torch_op/libgatecheck_torch_op.so
           [--kernels-json bench1.json,bench2.json] [--out DIR] [--shapes 4097x3072x9,...]
           [--calls 30] [--reps 5] [--no-compile]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import torch

DEFAULT_SHAPES = "4097x3072x9,4097x3072x32,4097x3072xrows/3,32768x3072x32,32768x3072xrows/3,32768x5376x9"


def parse_shapes(text):
    shapes = []
    for item in text.split(","):
        parts = item.strip().split("x")
        if len(parts) != 3:
            sys.exit(f"op_as_called.py: --shapes item '{item}' is not ROWSxDIMxGATES")
        rows, dim = int(parts[0]), int(parts[1])
        g = parts[2]
        gates = rows // int(g.split("/")[1]) if g.startswith("rows/") else int(g)
        if rows <= 0 or dim <= 0 or gates <= 0:
            sys.exit(f"op_as_called.py: --shapes item '{item}': rows, dim and gates must be positive")
        shapes.append((rows, dim, gates, g))
    return shapes


def timed(fn, calls, reps, warm=3):
    """Median over reps of (wall us per call, host us per call) for `calls`
    back-to-back calls: CUDA events around the batch, perf_counter around the
    host's queueing of it (no sync inside the batch)."""
    for i in range(warm):
        fn(i)
    torch.cuda.synchronize()
    wall, host = [], []
    for r in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        t0 = time.perf_counter()
        for i in range(calls):
            fn(r * calls + i)
        t1 = time.perf_counter()
        b.record()
        b.synchronize()
        wall.append(a.elapsed_time(b) * 1e3 / calls)
        host.append((t1 - t0) * 1e6 / calls)
    return statistics.median(wall), statistics.median(host)


def graph_timed(fn, calls, reps):
    """The same calls captured in one CUDA graph (after a warm-up on the
    capture stream) and replayed: us per call with no host work between them."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for i in range(3):
            fn(i)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s):
        for i in range(calls):
            fn(i)
    g.replay()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) * 1e3 / calls)
    del g
    return statistics.median(ts)


def eager(res, gate, index, y):
    return res + gate.index_select(0, index) * y


def kernels_only_rows(paths):
    out = {}
    for p in [p for p in (paths or "").split(",") if p]:
        try:
            d = json.load(open(p))
        except (OSError, ValueError) as e:
            print(f"op_as_called.py: --kernels-json {p}: {e}", file=sys.stderr)
            continue
        for r in d.get("results", []):
            if r.get("dtype") == "bf16" and r.get("index") == "random":
                out[(r["rows"], r["dim"], r["gates"])] = r
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", required=True, help="libgatecheck_torch_op.so")
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/out"))
    ap.add_argument("--shapes", default=DEFAULT_SHAPES, help="ROWSxDIMxGATES items; GATES may be rows/K")
    ap.add_argument("--kernels-json", default="", help="gatecheck-bench --json files, comma list")
    ap.add_argument("--calls", type=int, default=30, help="back-to-back calls per timed batch")
    ap.add_argument("--reps", type=int, default=5, help="timed batches (median)")
    ap.add_argument("--sets", type=int, default=3, help="input sets the calls rotate over (against L2 residency)")
    ap.add_argument("--no-compile", action="store_true", help="leave torch.compile out (it compiles per shape)")
    a = ap.parse_args()
    if a.calls < 1 or a.reps < 1 or a.sets < 1:
        sys.exit("op_as_called.py: --calls, --reps and --sets must be at least 1")
    if not torch.cuda.is_available():
        print("op_as_called.py: no CUDA device: nothing timed", file=sys.stderr)
        return 3
    if not os.path.isfile(a.lib):
        sys.exit(f"op_as_called.py: --lib {a.lib}: no such file")
    shapes = parse_shapes(a.shapes)
    torch.ops.load_library(a.lib)
    op = torch.ops.gatecheck.gate_residual
    os.makedirs(a.out, exist_ok=True)
    kernels = kernels_only_rows(a.kernels_json)
    commit = os.environ.get("GATECHECK_COMMIT") or subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    doc = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cuda": torch.version.cuda,
           "commit": commit, "dtype": "bf16", "calls": a.calls, "reps": a.reps, "sets": a.sets,
           "op_checked_mode": os.environ.get("GATECHECK_OP_CHECKED", ""), "results": [], "floor": {}}
    json_path = os.path.join(a.out, "op_as_called.json")

    def save():
        with open(json_path, "w") as f:
            json.dump(doc, f, indent=1)

    dt = torch.bfloat16
    for rows, dim, gates, rule in shapes:
        torch.manual_seed(rows + dim + gates)
        sets = []
        for _ in range(a.sets):
            res = torch.randn(rows, dim, device="cuda", dtype=dt, requires_grad=True)
            y = torch.randn(rows, dim, device="cuda", dtype=dt, requires_grad=True)
            gate = torch.randn(gates, dim, device="cuda", dtype=dt, requires_grad=True)
            idx = torch.randint(gates, (rows,), device="cuda")
            go = torch.randn(rows, dim, device="cuda", dtype=dt)
            sets.append((res, gate, idx, y, go))
        nd, gd = rows * dim, gates * dim
        fwd_bytes = 2 * (3 * nd + gd) + 8 * rows
        bwd_bytes = 2 * (3 * nd + 2 * gd) + 8 * rows  # grad_res is grad_out itself: not written
        row = {"rows": rows, "dim": dim, "gates": gates, "gates_rule": rule, "index": "random",
               "fwd_bytes": fwd_bytes, "fwd_bwd_bytes": fwd_bytes + bwd_bytes}

        def fwd_of(f):
            return lambda i: f(*sets[i % a.sets][:4])

        def fb_of(f):
            def step(i):
                res, gate, idx, y, go = sets[i % a.sets]
                torch.autograd.grad(f(res, gate, idx, y), (res, gate, y), go)
            return step

        variants = [("op", op), ("eager", eager)]
        for name, f in variants:
            row[f"{name}_fwd_us"], row[f"{name}_fwd_host_us"] = timed(fwd_of(f), a.calls, a.reps)
            row[f"{name}_fwd_bwd_us"], row[f"{name}_fwd_bwd_host_us"] = timed(fb_of(f), a.calls, a.reps)
        torch.use_deterministic_algorithms(True)
        try:
            row["eager_det_fwd_bwd_us"], row["eager_det_fwd_bwd_host_us"] = timed(fb_of(eager), a.calls, a.reps)
        finally:
            torch.use_deterministic_algorithms(False)
        if not a.no_compile:
            torch._dynamo.reset()
            compiled = torch.compile(eager, dynamic=False)
            t0 = time.perf_counter()
            fb_of(compiled)(0)
            torch.cuda.synchronize()
            row["compile_seconds"] = time.perf_counter() - t0
            row["compile_fwd_us"], row["compile_fwd_host_us"] = timed(fwd_of(compiled), a.calls, a.reps)
            row["compile_fwd_bwd_us"], row["compile_fwd_bwd_host_us"] = timed(fb_of(compiled), a.calls, a.reps)
        graph_calls = max(2, min(a.calls, 10))
        row["op_graph_fwd_us"] = graph_timed(fwd_of(op), graph_calls, a.reps)
        row["op_graph_fwd_bwd_us"] = graph_timed(fb_of(op), graph_calls, a.reps)
        for key, nbytes in (("copy_fwd_bytes_us", fwd_bytes), ("copy_fwd_bwd_bytes_us", fwd_bytes + bwd_bytes)):
            src = torch.empty(nbytes // 2, dtype=torch.uint8, device="cuda")  # a copy reads and writes: half each
            dst = torch.empty_like(src)
            row[key], _ = timed(lambda i: dst.copy_(src), a.calls, a.reps)
            del src, dst
        k = kernels.get((rows, dim, gates))
        if k:
            row["kernels_fwd_us"], row["kernels_fwd_bwd_us"] = k.get("fwd_us"), k.get("fwd_bwd_us")
        torch.cuda.synchronize()
        torch.ops.gatecheck.check_errors()
        doc["results"].append(row)
        save()
        print(json.dumps(row), flush=True)
        del sets
        torch.cuda.empty_cache()

    # The floor: host-bound sizes through autograd, and a captured step.
    tiny = [(torch.randn(8, 64, device="cuda", dtype=dt, requires_grad=True),
             torch.randn(1, 64, device="cuda", dtype=dt, requires_grad=True),
             torch.zeros(8, dtype=torch.long, device="cuda"),
             torch.randn(8, 64, device="cuda", dtype=dt, requires_grad=True),
             torch.randn(8, 64, device="cuda", dtype=dt))]

    def tiny_fb(f, wrt=(0, 1, 3)):
        def step(i):
            t = tiny[0]
            torch.autograd.grad(f(*t[:4]), tuple(t[k] for k in wrt), t[4])
        return step

    floor = doc["floor"]
    floor["op_8x64_fwd_bwd_us"], floor["op_8x64_fwd_bwd_host_us"] = timed(tiny_fb(op), a.calls, a.reps)
    floor["eager_8x64_fwd_bwd_us"], floor["eager_8x64_fwd_bwd_host_us"] = timed(tiny_fb(eager), a.calls, a.reps)
    floor["add_8x64_fwd_bwd_us"], floor["add_8x64_fwd_bwd_host_us"] = timed(
        tiny_fb(lambda res, gate, idx, y: res + y, wrt=(0, 3)), a.calls, a.reps)
    floor["op_8x64_graph_fwd_bwd_us"] = graph_timed(tiny_fb(op), 10, a.reps)
    save()
    print(json.dumps(floor), flush=True)
    with open(os.path.join(a.out, "op_as_called.md"), "w") as f:
        f.write(markdown(doc))
    print(markdown(doc))
    return 0


def fmt(x):
    return "-" if x is None else f"{x:.1f}"


def markdown(doc):
    lines = [f"# gatecheck::gate_residual as called, {doc['device']}, torch {doc['torch']}, bf16, commit {doc['commit']}",
             "",
             f"µs per call: CUDA events around {doc['calls']} back-to-back calls with the CPU running ahead "
             f"(median of {doc['reps']} batches, {doc['sets']} input sets in turn); forward+backward is "
             "torch.autograd.grad(out, (res, gate, y), grad_out). *host*: the CPU's own time to queue one call. "
             "*graph*: the same calls captured in one CUDA graph and replayed (the op's kernels, no host work). "
             "*kernels*: gatecheck-bench's GPU time for the raw kernels (the ABI path, which also writes grad_res), "
             "where given. *copy*: a device-to-device copy of the bytes the step moves (grad_res not counted).",
             "",
             "| rows x dim, gates | op fwd / fwd+bwd | host | graph | kernels | eager | det. eager fwd+bwd "
             "| compile | copy | op fwd+bwd ÷ graph | ÷ kernels |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in doc["results"]:
        g = r.get
        ratio_g = g("op_fwd_bwd_us") / g("op_graph_fwd_bwd_us") if g("op_graph_fwd_bwd_us") else None
        ratio_k = g("op_fwd_bwd_us") / g("kernels_fwd_bwd_us") if g("kernels_fwd_bwd_us") else None
        lines.append(
            f"| {r['rows']} x {r['dim']}, {r['gates']} | {fmt(g('op_fwd_us'))} / {fmt(g('op_fwd_bwd_us'))} "
            f"| {fmt(g('op_fwd_host_us'))} / {fmt(g('op_fwd_bwd_host_us'))} "
            f"| {fmt(g('op_graph_fwd_us'))} / {fmt(g('op_graph_fwd_bwd_us'))} "
            f"| {fmt(g('kernels_fwd_us'))} / {fmt(g('kernels_fwd_bwd_us'))} "
            f"| {fmt(g('eager_fwd_us'))} / {fmt(g('eager_fwd_bwd_us'))} | {fmt(g('eager_det_fwd_bwd_us'))} "
            f"| {fmt(g('compile_fwd_us'))} / {fmt(g('compile_fwd_bwd_us'))} "
            f"| {fmt(g('copy_fwd_bytes_us'))} / {fmt(g('copy_fwd_bwd_bytes_us'))} "
            f"| {'-' if ratio_g is None else f'{ratio_g:.2f}'} | {'-' if ratio_k is None else f'{ratio_k:.2f}'} |")
    fl = doc.get("floor", {})
    if fl:
        lines += ["", "The floor through autograd at 8 x 64 (1 gate), forward+backward, µs per call (host µs per call):",
                  "",
                  f"- the op: {fmt(fl.get('op_8x64_fwd_bwd_us'))} ({fmt(fl.get('op_8x64_fwd_bwd_host_us'))}); "
                  f"captured in a CUDA graph: {fmt(fl.get('op_8x64_graph_fwd_bwd_us'))}",
                  f"- torch eager: {fmt(fl.get('eager_8x64_fwd_bwd_us'))} ({fmt(fl.get('eager_8x64_fwd_bwd_host_us'))})",
                  f"- one torch add (res + y): {fmt(fl.get('add_8x64_fwd_bwd_us'))} "
                  f"({fmt(fl.get('add_8x64_fwd_bwd_host_us'))})"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
