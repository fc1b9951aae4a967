#!/usr/bin/env python3
"""Renders gatecheck-bench JSON files as a Markdown table (docs/benchmarks.md).

Usage: render_table.py [--summary] RUN.json [LATER_RUN.json ...]
A shape measured in a later file replaces the earlier measurement; the last
column names the file each row comes from. --summary prints one line instead:
how many shapes reach 85% of the copy ceiling forward and 70% forward+backward,
how many beat torch eager, and how many pass the benchmark's bitwise checks."""
import json
import sys

args = sys.argv[1:]
summary = "--summary" in args
paths = [a for a in args if a != "--summary"]
if not paths:
    sys.exit(__doc__)

rows, order, devices = {}, [], []
for path in paths:
    d = json.load(open(path))
    devices.append(f"`{path}`: {d['device']}, copy ceiling {d['copy_TBps']:.3f} TB/s (read+write), "
                   f"median of {d['reps']} runs after {d['warmup']} warm-up runs"
                   + (f" (and at least {d['warmup_ms']:g} ms of warm-up)" if "warmup_ms" in d else "")
                   + ("; each batch of 10 runs queued behind a hold kernel (GPU time only)" if d.get("timing") == "held" else "")
                   + (f"; an empty kernel between two events {d['empty_kernel_8_blocks_an_sm_us']:.1f} us"
                      if "empty_kernel_8_blocks_an_sm_us" in d else ""))
    for r in d["results"]:
        key = (r["dtype"], r["dim"], r["rows"], r["gates"], r["index"])
        if key not in rows:
            order.append(key)
        rows[key] = (r, path)


def checks_ok(r):
    return r.get("out_bitwise_eq_eager", True) and r.get("grad_y_bitwise_eq_eager", True) and r["grad_gate_repeatable"]


if summary:
    rs = [rows[k][0] for k in order]
    eager = [r for r in rs if "speedup_fwd" in r]
    line = (f"{len(rs)} shapes: forward >= 85% of the copy ceiling on {sum(r['fwd_frac_of_copy'] >= 0.85 for r in rs)}, "
            f"forward+backward >= 70% on {sum(r['fwd_bwd_frac_of_copy'] >= 0.70 for r in rs)}")
    if eager:
        fwd = [r["speedup_fwd"] for r in eager]
        fb = [r["speedup_fwd_bwd"] for r in eager]
        line += (f"; faster than torch eager on {sum(a > 1 and b > 1 for a, b in zip(fwd, fb))} of {len(eager)} "
                 f"(forward {min(fwd):.2f}-{max(fwd):.2f}x, forward+backward {min(fb):.2f}-{max(fb):.2f}x)")
    line += f"; bitwise checks pass on {sum(map(checks_ok, rs))}"
    print(line)
    sys.exit(0)

print("\n".join(f"- {line}" for line in devices) + "\n")
print("| dtype | dim | rows | gates | index | fwd µs | fwd % copy | fwd+bwd µs | fwd+bwd % copy "
      "| eager fwd µs | eager fwd+bwd µs | × eager fwd | × eager fwd+bwd | out, grad_y == eager | grad_gate repeatable | file |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for key in order:
    r, path = rows[key]
    eq = "yes" if r.get("out_bitwise_eq_eager") and r.get("grad_y_bitwise_eq_eager") else "NO"
    print(f"| {r['dtype']} | {r['dim']} | {r['rows']} | {r['gates']} | {r['index']} | {r['fwd_us']:.1f} | "
          f"{100*r['fwd_frac_of_copy']:.1f}% | {r['fwd_bwd_us']:.1f} | {100*r['fwd_bwd_frac_of_copy']:.1f}% | "
          f"{r.get('eager_fwd_us', 0):.1f} | {r.get('eager_fwd_bwd_us', 0):.1f} | {r.get('speedup_fwd', 0):.2f} | "
          f"{r.get('speedup_fwd_bwd', 0):.2f} | {eq} | {'yes' if r['grad_gate_repeatable'] else 'NO'} | {path} |")
