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
    (gate_residual.h) and the dtype header (gate_residual_dtype.h), so the
    oracle never shares arithmetic with what it judges;
  - cli/ and fuzz/ are front ends side by side: neither includes the other;
  - examples/ includes only the plugin ABI header, as a user's plugin would.
tests/ sits above everything. An include that resolves to no file is an
error too, so that a wall cannot be slipped by a path the check cannot read.

Usage: check_layers.py ROOT    (exit 0: no violation; 1: each one listed)
"""
import os
import re
import sys

SOURCE = re.compile(r"\.(h|hpp|c|cc|cpp|cu|cuh)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# Bare includes of the installed plugin ABI header (as a user's plugin writes it).
BARE = {"gatecheck_plugin.h": "kernels/gatecheck_plugin.h"}
ORACLE_MAY_USE = {"kernels/gate_residual.h", "kernels/gate_residual_dtype.h"}
SIDE_BY_SIDE = {("cli", "fuzz"), ("fuzz", "cli")}


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
    return order, found


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
