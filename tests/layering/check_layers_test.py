#!/usr/bin/env python3
"""check_layers.py can fail: in a small tree laid out like the project's, each
kind of forbidden include is reported, and the same tree without it passes."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(HERE, "check_layers.py")
LAYERS = "foreach(area kernels case oracles harness properties bench cli fuzz python examples)\n"
CLEAN = {
    "kernels/gatecheck_plugin.h": "",
    "kernels/gate_residual.h": '#include "gatecheck_plugin.h"\n',
    "kernels/gate_residual_math.h": '#include "gate_residual.h"\n',
    "case/case.h": '#include "../kernels/gate_residual.h"\n',
    "oracles/oracle.h": '#include "../case/case.h"\n#include "../kernels/gate_residual.h"\n',
    "harness/runner.h": '#include "../case/case.h"\n',
    "properties/properties.h": '#include "../harness/runner.h"\n#include "../oracles/oracle.h"\n',
    "properties/CMakeLists.txt": "gatecheck_rooms(catalog engine)\n",
    "properties/catalog/contract.h": '#include "../../harness/runner.h"\n',
    "properties/engine/check_engine.h": '#include "../catalog/contract.h"\n#include "../properties.h"\n',
    "cli/main.cpp": '#include "../properties/properties.h"\n',
    "fuzz/target.cpp": '#include "../properties/properties.h"\n',
    "examples/plugin.c": '#include "gatecheck_plugin.h"\n',
    "harness/python_impl.cpp": 'auto door = py::module_::import("gatecheck._door");\n',
    "python/gatecheck/__init__.py": "from . import _door\nfrom . import _where\n",
    "python/gatecheck/_door.py": "# gatecheck layer: harness\nimport os\n",
    "python/gatecheck/peers.py": "import torch\nimport gatecheck._door\n",
    "tests/any_test.cpp": '#include "cli/../properties/properties.h"\n#include "fuzz/target.cpp"\n',
}
# Each planted include, and the words its report must carry.
PLANTED = [
    ("kernels/gate_residual.h", '#include "../properties/properties.h"\n', "points up"),
    ("case/case.h", '#include "../harness/runner.h"\n', "points up"),
    ("oracles/oracle.h", '#include "../kernels/gate_residual_math.h"\n', "only the op contract"),
    ("properties/properties.h", '#include "../cli/main.cpp"\n', "points up"),
    ("cli/main.cpp", '#include "../fuzz/target.cpp"\n', "side by side"),
    ("properties/catalog/contract.h", '#include "../engine/check_engine.h"\n', "points up a room"),
    ("examples/plugin.c", '#include "../case/case.h"\n', "only the plugin ABI"),
    ("harness/runner.h", '#include "no_such_file.h"\n', "resolves to no file"),
    ("python/gatecheck/_door.py", "from . import peers\n", "points up"),
    ("python/gatecheck/_door.py", "from gatecheck import peers\n", "points up"),
    ("harness/python_impl.cpp", 'py::module_::import("gatecheck.peers");\n', "points up"),
    ("harness/python_impl.cpp", 'py::module_::import("gatecheck.nothing");\n', "no module"),
]


def tree(parent, extra=None):
    root = tempfile.mkdtemp(prefix="layers-", dir=parent)
    with open(os.path.join(root, "CMakeLists.txt"), "w") as f:
        f.write(LAYERS)
    for path, text in CLEAN.items():

        if extra and extra[0] == path:
            text += extra[1]
        os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
        with open(os.path.join(root, path), "w") as f:
            f.write(text)
    return root


def run(root):
    p = subprocess.run([sys.executable, CHECK, root], capture_output=True, text=True)
    return p.returncode, p.stdout


def main():
    failures = []
    # The trees go with the folder: a run leaves nothing behind in /tmp.
    with tempfile.TemporaryDirectory(prefix="layers-") as parent:
        rc, out = run(tree(parent))
        if rc != 0:
            failures.append(f"the clean tree fails:\n{out}")
        for path, line, words in PLANTED:
            rc, out = run(tree(parent, (path, line)))
            if rc != 1 or words not in out or path not in out:
                failures.append(f"{line.strip()} in {path}: exit {rc}, want 1 with '{words}':\n{out}")
    for f in failures:
        print("FAIL:", f)
    print(f"check_layers_test: {len(PLANTED) - len(failures) + 1} of {len(PLANTED) + 1} cases as expected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
