"""A Python implementation whose module takes seconds to import, as a large model's or
torch's own import can on a busy machine (tests/python/interrupt_while_loading.sh).

It imports `signal` first, as torch does: CPython then puts its own SIGINT handler, which
raises KeyboardInterrupt, wherever the process still has the default one. Then it writes a line to
$GATECHECK_TEST_IMPORT_MARK, to say the import is under way, sleeps
$GATECHECK_TEST_IMPORT_SECONDS (default 3), and offers ops.py's `correct`.
"""
import os
import signal  # noqa: F401  (imported for its side effect, as above)
import time

mark = os.environ.get("GATECHECK_TEST_IMPORT_MARK")
if mark:
    with open(mark, "w") as f:
        f.write("importing\n")
time.sleep(float(os.environ.get("GATECHECK_TEST_IMPORT_SECONDS", "3")))

from ops import correct  # noqa: E402,F401  (this folder is first on sys.path)
