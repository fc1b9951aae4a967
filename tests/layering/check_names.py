#!/usr/bin/env python3
"""Only the two catalogs know a property's or an output's name (issue: ops as data).

Scans the engine's C++ (every layer but the op catalog kernels/*_schema.cpp and
the implementations in kernels/, the oracles, the property catalog and tests/)
for a property or tensor name compared as a string or assigned as one:
`x == "accuracy"`, `find("grad_gate")`, `property = "repeatable"`. Prints each
hit as FILE:LINE and exits 1 if there is one.

Usage: check_names.py ROOT
"""
import os
import re
import sys

PROPERTIES = ("accuracy eager_exact error_inputs full_write inputs_untouched no_oob_write repeatable "
              "row_invariance segment_invariance split_invariance").split()
TENSORS = "out res gate index y grad_out grad_res grad_y grad_gate x w shift scale eps dx dweight dshift dscale".split()
NAME = "(" + "|".join(PROPERTIES + TENSORS) + ")"
PATTERN = re.compile(r'(==|!=) *"%s"|"%s" *(==|!=)|\b(count|find|rfind|compare|equal|strcmp)\( *"%s"|'
                     r'\b(property|check|tensor)\b *= *"%s"' % (NAME, NAME, NAME, NAME))
LAYERS = ("case", "harness", "properties", "findings", "bench", "sweep", "cli", "fuzz")
SKIP = ("properties/catalog/",)
# A JSON key that happens to share a tensor's name ("scale": a scale case's spec).
ALLOWED = {("case/case_json.cpp", 'j.contains("scale")')}


def hits(root):
    for layer in LAYERS:
        for d, _, files in os.walk(os.path.join(root, layer)):
            for f in sorted(files):
                if not f.endswith((".cpp", ".h", ".cu", ".cuh")):
                    continue
                path = os.path.join(d, f)
                rel = os.path.relpath(path, root)
                if rel.startswith(SKIP):
                    continue
                with open(path, errors="replace") as fh:
                    for n, line in enumerate(fh, 1):
                        if PATTERN.search(line) and not any(rel == a and s in line for a, s in ALLOWED):
                            yield f"{rel}:{n}: {line.strip()}"


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        sys.exit("usage: check_names.py ROOT")
    found = list(hits(sys.argv[1]))
    for h in found:
        print(h)
    print(f"check_names: {len(found)} property or tensor name(s) spelled outside the catalogs")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
