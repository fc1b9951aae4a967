#!/usr/bin/env python3
"""no_tensor_names.py ROOT: the sweep (sweep/ and cli/cmd_sweep.cpp) never
spells an op's tensor: no string literal in it is the name of an input, an
output or a scalar of any op in the catalog (the names are read from the
schemas, kernels/*_schema.cpp and tests/ops/*_schema.cpp). Only the op
catalog and the property catalog know them. A planted literal in a copy of
one file must be found first, so that the check can fail."""
import glob
import os
import re
import sys
import tempfile

root = sys.argv[1]
schemas = glob.glob(os.path.join(root, "kernels", "*_schema.cpp")) + glob.glob(
    os.path.join(root, "tests", "ops", "*_schema.cpp"))
names = set()
for f in schemas:
    text = open(f).read()
    names |= set(re.findall(r'\{"(\w+)",\s*Role::', text))      # inputs and outputs
    names |= set(re.findall(r'\{\{?"(\w+)",\s*[-0-9.e]+,', text))  # scalars
if len(names) < 10:
    sys.exit("found only %d tensor names in %d schemas: %s" % (len(names), len(schemas), sorted(names)))
sources = sorted(glob.glob(os.path.join(root, "sweep", "*.cpp")) + glob.glob(os.path.join(root, "sweep", "*.h")) +
                 [os.path.join(root, "cli", "cmd_sweep.cpp")])
literal = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def spelled(path):
    hits = []
    for n, line in enumerate(open(path), 1):
        code = line.split("//")[0]
        for m in literal.finditer(code):
            if m.group(1) in names:
                hits.append("%s:%d: \"%s\"" % (os.path.relpath(path, root), n, m.group(1)))
    return hits


# The check finds a planted name.
with tempfile.NamedTemporaryFile("w", suffix=".cpp", delete=False) as t:
    t.write(open(sources[0]).read() + '\nconst char* planted = "grad_gate";\n')
planted = spelled(t.name)
os.unlink(t.name)
if not any('"grad_gate"' in h for h in planted):
    sys.exit("the check misses a planted \"grad_gate\"")
hits = [h for s in sources for h in spelled(s)]
if hits:
    print("the sweep spells tensor names (read them from the op schema instead):")
    print("\n".join("  " + h for h in hits))
    sys.exit(1)
print("ok: %d sweep sources spell none of the %d tensor and scalar names of %d schemas" %
      (len(sources), len(names), len(schemas)))
