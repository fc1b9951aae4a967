#!/usr/bin/env python3
"""The include walls: every #include "..." in the source tree points down.

The layers, bottom up, are the folder list in the top-level CMakeLists.txt
(`foreach(area ...)`): a file may include its own folder and the folders
listed before it. A layer may have rooms, sub-folders listed bottom up in its
own CMakeLists.txt (`gatecheck_rooms(...)`): a file in a room may include its
room, the rooms before it and the layer's top-level files; a top-level file of
the layer may include any room (it is the layer's face). On top of that order,
three walls:
  - oracles/ includes nothing of kernels/ but the op contract
    (gate_residual.h, rmsnorm_modulate.h) and the dtype header
    (gate_residual_dtype.h), so the
    oracle never shares arithmetic with what it judges;
  - cli/ and fuzz/ are front ends side by side: neither includes the other;
  - examples/ includes only the plugin ABI header, as a user's plugin would.
tests/ sits above everything. An include that resolves to no file is an
error too, so that a wall cannot be slipped by a path the check cannot read.

Python imports keep the same walls. A module of the Python package
(python/gatecheck/) belongs to python/ unless its first lines say
`# gatecheck layer: NAME` (the door's Python half belongs to harness/, whose
C++ side imports it at run time). A C++ file's `import("gatecheck.X")` and a
module's own imports of the package (`from . import X`, `import gatecheck.X`)
must point down too, and must name a module that exists (or one the build
generates).

Usage: check_layers.py ROOT    (exit 0: no violation; 1: each one listed)
"""
import os
import re
import sys

SOURCE = re.compile(r"\.(h|hpp|c|cc|cpp|cu|cuh)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# Bare includes of the installed plugin ABI header (as a user's plugin writes it).
BARE = {"gatecheck_plugin.h": "kernels/gatecheck_plugin.h",
        "gatecheck_plugin_v2.h": "kernels/gatecheck_plugin_v2.h"}
ORACLE_MAY_USE = {"kernels/gate_residual.h", "kernels/rmsnorm_modulate.h", "kernels/gate_residual_dtype.h"}
SIDE_BY_SIDE = {("cli", "fuzz"), ("fuzz", "cli")}
PACKAGE = os.path.join("python", "gatecheck")
GENERATED = {"gatecheck._where"}  # written by python/CMakeLists.txt into the build tree
CXX_IMPORT = re.compile(r'import\(\s*"(gatecheck(?:\.\w+)*)"\s*\)')
PY_IMPORT = re.compile(r'^\s*(?:from\s+(\.+\w*|gatecheck(?:\.\w+)*)\s+import\s+([\w, ]+)|import\s+(gatecheck(?:\.\w+)*))',
                       re.M)
LAYER_MARK = re.compile(r"^# gatecheck layer: (\w+)", re.M)


def layers(root):
    text = open(os.path.join(root, "CMakeLists.txt")).read()
    m = re.search(r"foreach\(area ([^)]*)\)", text)
    if not m:
        sys.exit("check_layers: no `foreach(area ...)` layer list in CMakeLists.txt")
    return m.group(1).split()


def rooms(root, layer):
    """The layer's rooms, bottom up ([] when it declares none)."""
    path = os.path.join(root, layer, "CMakeLists.txt")
    if not os.path.isfile(path):
        return []
    m = re.search(r"gatecheck_rooms\(([^)]*)\)", open(path).read())
    return m.group(1).split() if m else []


def room_of(path, room_rank):
    """The room of a layer's file, or None for the layer's top-level files and undeclared folders."""
    parts = path.split(os.sep)
    return parts[1] if len(parts) > 2 and parts[1] in room_rank else None


def resolve(root, including, target):
    for base in (os.path.dirname(including), ""):
        path = os.path.normpath(os.path.join(base, target))
        if os.path.isfile(os.path.join(root, path)):
            return path
    return BARE.get(target)


def module_file(root, module):
    """python/gatecheck/X.py (or the package's __init__.py) of a dotted module name, or None."""
    parts = module.split(".")[1:]
    path = os.path.join(PACKAGE, *parts) + ".py" if parts else os.path.join(PACKAGE, "__init__.py")
    return path if os.path.isfile(os.path.join(root, path)) else None


def module_layer(root, path):
    """The layer a package module declares in its first lines (python/ when it declares none)."""
    m = LAYER_MARK.search("".join(open(os.path.join(root, path), errors="replace").readlines()[:5]))
    return m.group(1) if m else "python"


def python_imports(path, text):
    """The package modules a Python file imports, as dotted names."""
    here = ".".join(["gatecheck"] + os.path.relpath(path, PACKAGE).split(os.sep)[:-1])
    found = []
    for rel, names, plain in PY_IMPORT.findall(text):
        if plain:
            found.append(plain)
        elif rel.startswith("."):
            base = here + ("." + rel.lstrip(".") if rel.lstrip(".") else "")
            found += [base + "." + n.strip() for n in names.split(",")] if not rel.lstrip(".") else [base]
        else:
            found += [rel + "." + n.strip() for n in names.split(",")] if rel == "gatecheck" else [rel]
    return found


def import_violations(root, rank):
    """Run-time imports of the Python package, from C++ and from the package itself."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        if rel_dir == ".":
            dirnames[:] = [d for d in dirnames if d in rank]
            continue
        for name in filenames:
            f = os.path.normpath(os.path.join(rel_dir, name))
            text = open(os.path.join(root, f), errors="replace").read()
            if SOURCE.search(name):
                modules, layer = CXX_IMPORT.findall(text), f.split(os.sep)[0]
            elif name.endswith(".py") and f.startswith(PACKAGE + os.sep):
                modules, layer = python_imports(f, text), module_layer(root, f)
            else:
                continue
            for module in modules:
                if module in GENERATED:
                    continue
                to = module_file(root, module)
                if to is None:
                    found.append(f'{f}: imports {module}, which is no module of {PACKAGE}/')
                    continue
                dest = module_layer(root, to)
                if dest not in rank or layer not in rank:
                    found.append(f'{f}: imports {module}: layer {dest if dest not in rank else layer} is not in the list')
                elif rank[dest] > rank[layer]:
                    found.append(f'{f}: imports {module}, which points up ({layer}/ is below {dest}/)')
    return found


def violations(root):
    order = layers(root)
    rank = {area: i for i, area in enumerate(order)}
    rank["tests"] = len(order)
    room_ranks = {area: {r: i for i, r in enumerate(rooms(root, area))} for area in order}
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        top = rel_dir.split(os.sep)[0]
        if rel_dir == "." :
            dirnames[:] = [d for d in dirnames if d in rank]
            continue
        for name in filenames:
            if not SOURCE.search(name):
                continue
            f = os.path.normpath(os.path.join(rel_dir, name))
            for target in INCLUDE.findall(open(os.path.join(root, f), errors="replace").read()):
                to = resolve(root, f, target)
                if to is None:
                    found.append(f'{f}: #include "{target}" resolves to no file')
                    continue
                dest = to.split(os.sep)[0]
                if dest not in rank:
                    found.append(f'{f}: #include "{target}" reaches {to}, outside the layers')
                elif (top, dest) in SIDE_BY_SIDE:
                    found.append(f'{f}: #include "{target}": {top}/ and {dest}/ are front ends side by side')
                elif rank[dest] > rank[top]:
                    found.append(f'{f}: #include "{target}" points up ({top}/ is below {dest}/)')
                elif dest == top and top in room_ranks and room_of(f, room_ranks[top]) is not None and \
                        room_of(to, room_ranks[top]) is not None and \
                        room_ranks[top][room_of(to, room_ranks[top])] > room_ranks[top][room_of(f, room_ranks[top])]:
                    found.append(f'{f}: #include "{target}" points up a room ({top}/{room_of(f, room_ranks[top])}/ '
                                 f'is below {top}/{room_of(to, room_ranks[top])}/)')
                elif top == "oracles" and dest == "kernels" and to not in ORACLE_MAY_USE:
                    found.append(f'{f}: #include "{target}": the oracle may use only the op contract '
                                 f'and the dtype header of kernels/, not {to}')
                elif top == "examples" and to != BARE["gatecheck_plugin.h"] and dest != "examples":
                    found.append(f'{f}: #include "{target}": an example plugin includes only the plugin ABI')
    return order, found + import_violations(root, rank)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    order, found = violations(sys.argv[1])
    for v in found:
        print(v)
    if found:
        print(f"check_layers: {len(found)} include(s) break the layers ({' < '.join(order)} < tests)")
        return 1
    print(f"check_layers: every include points down ({' < '.join(order)} < tests)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
