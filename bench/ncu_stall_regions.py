#!/usr/bin/env python3
"""Where a kernel's warps wait, by region: reads the per-SASS-instruction CSV
of `ncu --import R.ncu-rep --page source --csv --print-source sass` (a report
taken with --set full, as the device stage `profile` takes it) and splits the kernel at
its barriers and exits. Per region: warp stall samples (all warps, so a
region's share of samples is its share of warp time), executed warp
instructions, and the top stall reasons.

Usage: ncu_stall_regions.py SOURCE.csv"""
import collections
import csv
import sys

rows = list(csv.reader(open(sys.argv[1])))
hdr, data = rows[1], rows[2:]
col = {h: i for i, h in enumerate(hdr)}
samples = col["Warp Stall Sampling (All Samples)"]
executed = col["Instructions Executed"]
source = col["Source"]
reasons = [i for i, h in enumerate(hdr) if h.startswith("stall_") and "Not Issued" not in h]


def number(text):
    return int(text) if text.isdigit() else 0


total = sum(number(r[samples]) for r in data)
print(f"{sys.argv[1]}: {len(data)} SASS instructions, {total} warp stall samples")
print(f"{'region (SASS index)':>22} {'samples':>8} {'share':>6} {'warp instr':>10}  top stall reasons; ends at")
start = 0
for k, r in enumerate(data):
    text = r[source].strip()
    if not ("BAR" in text or "EXIT" in text) and k != len(data) - 1:
        continue
    part = data[start:k + 1]
    got = sum(number(x[samples]) for x in part)
    why = collections.Counter()
    for x in part:
        for i in reasons:
            why[hdr[i][6:]] += number(x[i])
    top = ", ".join(f"{name} {n}" for name, n in why.most_common(3) if n)
    share = 100.0 * got / total if total else 0.0
    print(f"{start:>10}-{k:<11} {got:>8} {share:>5.1f}% {sum(number(x[executed]) for x in part):>10}  {top}; {text[:40]}")
    start = k + 1
