"""gatecheck from Python: property-test an implementation of an op (gate_residual
by default; `gatecheck ops` lists them) written with PyTorch (an eager function,
an autograd.Function, a C++/CUDA extension, Triton, torch.compile output)
against gatecheck's float64 oracle.

    import gatecheck

    def test_my_op():
        gatecheck.check(my_op, seconds=5).raise_on_failure()

The implementation is a callable fn(res, gate, index, y) -> out (gradients by
autograd), a torch.autograd.Function subclass, or an object with
forward(res, gate, index, y) and optionally
backward(grad_out, res, gate, index, y) -> (grad_res, grad_gate, grad_y).
It may declare its contract in an attribute gatecheck_claims (the syntax of
`gatecheck check --claims`; the contract() decorator sets it).

check() runs `gatecheck check` itself: the same engine, generators, shrinker
and corpus files as the command line. The implementation runs in that
gatecheck process, in its embedded interpreter, which imports it again by
name (MODULE:ATTR or FILE.py:ATTR), so it must be defined at the top level of
a module or file, as a test's function is. docs/python.md has the rest.
"""
import dataclasses
import json
import os
import numbers
import subprocess
import sys

__all__ = ["check", "contract", "spec_of", "Report", "Row", "Failure", "CheckError"]


def contract(text):
    """Decorator: fn.gatecheck_claims = text, e.g. @gatecheck.contract("default; valid rows>=1,dim>=1")."""
    def declare(fn):
        fn.gatecheck_claims = text
        return fn
    return declare


class CheckError(RuntimeError):
    """gatecheck could not run the check: bad arguments (exit 2), or the implementation cannot run (3)."""

    def __init__(self, message, exit_code):
        super().__init__(message)
        self.exit_code = exit_code


@dataclasses.dataclass(frozen=True)
class Row:
    """One line of the table: an implementation x property."""
    impl: str
    device: str
    property: str
    claimed: bool
    cases: int
    passed: bool
    seconds: float


@dataclasses.dataclass(frozen=True)
class Failure:
    """A failing property, shrunk and saved as a corpus file."""
    impl: str
    device: str
    property: str
    claimed: bool       # breaks a claim (a failure) or not (a finding)
    minimal_case: str
    original_case: str
    evidence: str
    seconds_to_find: float
    shrink_steps: int
    case_file: str      # the corpus file ("" if it could not be written)
    repro: str          # the command that replays it
    rc_params: str      # RapidCheck's replay of the unshrunk case
    shrink_cut_short: bool = False  # the shrink ended at its budget: a smaller case may fail

    def __str__(self):
        kind = "FAILURE" if self.claimed else "FINDING (unclaimed property)"
        lines = [f"{kind}: {self.impl}@{self.device} {self.property}",
                 f"  found after {self.seconds_to_find:.2f} s; shrunk in {self.shrink_steps} steps "
                 f"from {self.original_case}",
                 (f"  smallest case found (the shrink stopped early: a smaller case may fail): {self.minimal_case}"
                  if self.shrink_cut_short else f"  minimal case: {self.minimal_case}")]
        lines += ["  " + line for line in self.evidence.rstrip("\n").split("\n")]
        if self.case_file:
            lines += [f"  saved: {self.case_file}", f"  repro: {self.repro}"]
        return "\n".join(lines)


class Report:
    """What check() found: the rows of the table, failures and findings, and the seed that replays it."""

    def __init__(self, result, text):
        self.json = result  # everything `gatecheck check --json` writes
        self.text = text    # the report gatecheck printed (table, evidence, coverage)
        self.seed = result["seed"]
        self.seconds = result["seconds"]
        self.interrupted = result["interrupted"]
        self.contracts = dict(result["contracts"])
        self.rows = [Row(r["impl"], r["device"], r["property"], r["claimed"], r["cases"], r["passed"],
                         r["seconds"]) for r in result["results"]]
        failures = [_failure(r) for r in result["results"] if "failure" in r]
        self.failures = [f for f in failures if f.claimed]
        self.findings = [f for f in failures if not f.claimed]
        # Claimed properties that held on fewer cases than the floor: not a pass (docs/cli.md).
        self.inconclusive = [(r["impl"], r["property"], r["cases"]) for r in result["results"]
                             if r.get("inconclusive")]

    @property
    def passed(self):
        """Every claimed property held on at least the floor of cases (findings on unclaimed ones
        do not count; an inconclusive property is not a pass)."""
        return not self.failures and not self.inconclusive

    def raise_on_failure(self):
        """Raises AssertionError with each claimed failure's evidence and repro command."""
        __tracebackhide__ = True  # pytest shows the test's line, not this one
        if self.failures:
            n = len(self.failures)
            raise AssertionError(f"gatecheck: {n} claimed propert{'y' if n == 1 else 'ies'} failed "
                                 f"(seed {self.seed}; contract: {'; '.join(self.contracts.values())})\n\n" +
                                 "\n\n".join(str(f) for f in self.failures))
        if self.inconclusive:
            raise AssertionError("gatecheck: inconclusive, too few cases ran to call it a pass (seed "
                                 f"{self.seed}): " + ", ".join(f"{i} {p} ({n} cases)" for i, p, n in self.inconclusive) +
                                 "; give it more seconds or fewer properties")

    def __str__(self):
        return self.text

    def __repr__(self):
        return (f"<gatecheck.Report seed={self.seed} failures={len(self.failures)} "
                f"findings={len(self.findings)}>")


def _failure(result):
    f = result["failure"]
    return Failure(result["impl"], result["device"], result["property"], f["claimed"], f["minimal_case"],
                   f["original_case"], f["evidence"], f["seconds_to_find"], f["shrink_steps"], f["case_file"],
                   f["repro"], f"reproduce={f['reproduce']}" if f["reproduce"] else "",
                   bool(f.get("shrink_cut_short", False)))


def spec_of(impl):
    """The --impl spec that names `impl` in another process: "python:MODULE:ATTR" for an installed
    module's attribute, "python:/abs/path/file.py:ATTR" for one of your own files."""
    module = sys.modules.get(getattr(impl, "__module__", None) or type(impl).__module__)
    name = getattr(impl, "__qualname__", None)
    if module is None:
        raise ValueError(f"gatecheck.check: {impl!r} belongs to no imported module; define it at the top "
                         "level of a module or file")
    if not (isinstance(name, str) and "<" not in name and _lookup(module, name) is impl):
        name = next((k for k, v in vars(module).items() if v is impl), None)
    if name is None:
        raise ValueError(f"gatecheck.check: {impl!r} cannot be named as MODULE:ATTR (a lambda, a closure, or an "
                         "object made inside a function?). gatecheck imports the implementation again in its "
                         "own process: define it at the top level of a module or file")
    path = getattr(module, "__file__", None)
    if module.__name__ != "__main__" and _installed(path):
        return f"python:{module.__name__}:{name}"
    if not path:
        raise ValueError(f"gatecheck.check: {impl!r} is in module {module.__name__}, which has no file")
    return f"python:{os.path.abspath(path)}:{name}"


def _lookup(module, qualname):
    obj = module
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _installed(path):
    """Is `path` part of an installation (stdlib, site- or dist-packages, this package)?"""
    if not path:
        return True
    path = os.path.abspath(path)
    here = os.path.dirname(os.path.abspath(__file__))
    return (path.startswith(here + os.sep) or "site-packages" in path.split(os.sep) or
            "dist-packages" in path.split(os.sep))


def _cli():
    cli = os.environ.get("GATECHECK_CLI")
    if cli:
        return cli
    from . import _where
    return _where.CLI


def _python_path():
    """PYTHONPATH for gatecheck's interpreter: this process's own search path beyond its installation
    (a test's folder, a repository root that pytest added), so that the implementation's imports work
    there as here."""
    base = {os.path.abspath(p) for p in (sys.prefix, sys.base_prefix)}
    extra = [p for p in sys.path if p and os.path.isdir(p) and
             not any(os.path.abspath(p).startswith(b + os.sep) for b in base) and not _installed(p + os.sep + "x")]
    old = os.environ.get("PYTHONPATH")
    return os.pathsep.join(extra + ([old] if old else []))


def _check_arguments(seconds, seed, cases, timeout, properties, extra_args):
    """Refuses, by name, arguments that the command line would misread or refuse in its own words."""
    def number(name, v, whole):  # numbers.Real: numpy's scalars too
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or (whole and not float(v).is_integer()):
            raise TypeError(f"check(): {name} must be {'a whole number' if whole else 'a number'}, not {v!r}")
    number("seconds", seconds, False)
    number("cases", cases, True)
    if seed is not None:
        number("seed", seed, True)
    if timeout is not None:
        number("timeout", timeout, False)
    if properties is not None and not isinstance(properties, str):
        if not isinstance(properties, (list, tuple)) or not all(isinstance(p, str) for p in properties):
            raise TypeError(f"check(): properties must be a list of names or a comma-separated string, not {properties!r}")
    if properties is not None and not "".join(properties).replace(",", "").strip():
        raise ValueError(f"check(): properties={properties!r} names no property (None runs the default set)")
    if isinstance(extra_args, str):
        raise TypeError(f"check(): extra_args must be a list of arguments, not the string {extra_args!r} "
                        f"(say {extra_args.split()!r})")


def check(impl, device="cpu", seconds=30, seed=None, properties=None, claims=None, valid=None,
          corpus="corpus/found", cases=0, isolate=False, timeout=None, extra_args=(), op="gate_residual"):
    """Runs gatecheck's property check on `impl` and returns a Report.

    impl: a callable, a torch.autograd.Function subclass or an object with forward (and
      backward), defined at the top level of a module or file; or a spec string as the CLI
      takes it ("host", "python:mod:fn", "plugin:path.so").
    device: "cpu" or "cuda". seconds: the time budget (0: `cases` per property, else 100).
    seed: replays a run (each Report says its seed). properties: a list, or a
      comma-separated string (default: the default set). claims: overrides the contract
      (--claims syntax). valid: narrows the valid inputs ("rows>=1,dim>=1"). corpus: where
      failures are saved. isolate, timeout: each call in a child process (--isolate).
      extra_args: more `gatecheck check` options.
    op: the op `impl` implements (`gatecheck ops` lists them, with the arguments in order).
    Raises CheckError when gatecheck cannot run the check (exit 2 or 3, with its message).
    """
    if os.environ.get("GATECHECK_EMBEDDED_PID"):  # set by gatecheck's process (harness/impls/python_impl.cpp)
        raise CheckError("gatecheck.check() was called inside gatecheck's own process (pid "
                         f"{os.environ['GATECHECK_EMBEDDED_PID']}), while it imported the implementation's "
                         "module: call check() under `if __name__ == \"__main__\":` or from a test function, "
                         "not at a module's top level (each gatecheck would start another)", 2)
    _check_arguments(seconds=seconds, seed=seed, cases=cases, timeout=timeout, properties=properties,
                     extra_args=extra_args)
    spec = impl if isinstance(impl, str) else spec_of(impl)
    cmd = [_cli(), "check", "--op", op, "--impl", spec, "--device", device, "--seconds", repr(float(seconds)),
           "--corpus", os.fspath(corpus), "--json", "-"]
    if seed is not None:
        cmd += ["--seed", str(int(seed))]
    if cases:
        cmd += ["--cases", str(int(cases))]
    if properties is not None:
        # a string is the CLI's comma-separated list (",".join would split it into letters)
        names = properties.split(",") if isinstance(properties, str) else properties
        cmd += ["--properties", ",".join(p.strip() for p in names)]  # "accuracy, full_write" as meant
    if claims:
        cmd += ["--claims", claims]
    if valid:
        cmd += ["--valid", valid]
    if isolate:
        cmd += ["--isolate"]
    if timeout is not None:
        cmd += ["--timeout", repr(float(timeout))]
    cmd += list(extra_args)
    env = dict(os.environ, PYTHONPATH=_python_path())
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if proc.returncode in (129, 130, 143):
        raise KeyboardInterrupt(proc.stderr)
    if proc.returncode not in (0, 1, 4):  # 4: nothing failed, some claimed property inconclusive
        raise CheckError(f"gatecheck check exited {proc.returncode}:\n{proc.stderr.strip()}\n"
                         f"(command: {' '.join(cmd)})", proc.returncode)
    return Report(json.loads(proc.stdout), proc.stderr)
