#!/usr/bin/env python3
"""Renders a gatecheck-bench JSON file as the Markdown table of bench/results/README.md."""
import json
import sys

d = json.load(open(sys.argv[1]))
print(f"Device: {d['device']}, copy ceiling {d['copy_TBps']:.3f} TB/s (read+write), "
      f"median of {d['reps']} runs after {d['warmup']} warm-up runs.\n")
print("| dtype | dim | rows | gates | index | fwd µs | fwd % copy | fwd+bwd µs | fwd+bwd % copy "
      "| eager fwd µs | eager fwd+bwd µs | × eager fwd | × eager fwd+bwd | out, grad_y == eager | grad_gate repeatable |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for r in d["results"]:
    eq = "yes" if r.get("out_bitwise_eq_eager") and r.get("grad_y_bitwise_eq_eager") else "NO"
    print(f"| {r['dtype']} | {r['dim']} | {r['rows']} | {r['gates']} | {r['index']} | {r['fwd_us']:.1f} | "
          f"{100*r['fwd_frac_of_copy']:.0f}% | {r['fwd_bwd_us']:.1f} | {100*r['fwd_bwd_frac_of_copy']:.0f}% | "
          f"{r.get('eager_fwd_us', 0):.1f} | {r.get('eager_fwd_bwd_us', 0):.1f} | {r.get('speedup_fwd', 0):.2f} | "
          f"{r.get('speedup_fwd_bwd', 0):.2f} | {eq} | {'yes' if r['grad_gate_repeatable'] else 'NO'} |")
