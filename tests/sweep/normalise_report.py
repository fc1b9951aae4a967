#!/usr/bin/env python3
"""normalise_report.py REPORT: a sweep report without what differs from run to
run (the machine, the commit, paths, timings, seconds), as sorted JSON on
stdout, so that two runs of the same grid and implementations compare with
diff. Every verdict, count, error and bit pattern stays."""
import json
import sys

DROP_TOP = ("environment", "commit", "tracked_tree_dirty", "command", "seconds", "gatecheck_version")
TIMED = ("fwd_us", "fwd_bwd_us")


def main(path):
    r = json.load(open(path))
    for k in DROP_TOP:
        r.pop(k, None)
    for e in r.get("results", {}).get("plain", {}).values():
        for a in e.get("accuracy_latency", {}).values():
            for k in TIMED:
                a.pop(k, None)
        g = e.get("gatecheck", {})
        g.pop("latency", None)
        for f in g.get("failures", []):
            for k in ("case_file", "repro"):
                f.pop(k, None)
        for p in e.get("operator_report", {}).get("perf", []):
            for k in list(p):
                if k.endswith("_us") or k.endswith("_gbps"):
                    p.pop(k)
    json.dump(r, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
