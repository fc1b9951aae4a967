"""The gatecheck package from pytest: check() runs gatecheck's engine on a
Python implementation and reports what it found the way a test needs it."""
import os

import pytest

import gatecheck
import ops


def test_a_planted_bug_raises_with_its_evidence_and_repro(tmp_path):
    report = gatecheck.check(ops.tail_bug, seconds=0, cases=20, seed=1, properties=["accuracy"], corpus=tmp_path)
    assert not report.passed
    [failure] = report.failures
    assert failure.property == "accuracy" and failure.claimed
    assert "rows=1 dim=1" in failure.minimal_case  # shrunk
    assert "[out] 1 of 1 elements wrong" in failure.evidence
    assert os.path.isfile(failure.case_file) and failure.case_file.startswith(str(tmp_path))
    assert failure.repro == f"./gatecheck repro {failure.case_file} --impl {gatecheck.spec_of(ops.tail_bug)}"
    with pytest.raises(AssertionError) as raised:
        report.raise_on_failure()
    message = str(raised.value)
    assert "1 claimed property failed" in message
    assert "minimal case: " in message and "[out] 1 of 1 elements wrong" in message
    assert f"repro: {failure.repro}" in message
    assert "FAILURE:" in report.text  # the CLI's own report, as it printed it


def test_a_correct_op_passes_and_names_its_seed(tmp_path):
    report = gatecheck.check(ops.correct, seconds=0, cases=20, seed=7, corpus=tmp_path)
    report.raise_on_failure()
    assert report.seed == 7
    assert [r.property for r in report.rows] == ["accuracy", "row_invariance", "segment_invariance", "repeatable",
                                                 "inputs_untouched", "full_write", "no_oob_write", "error_inputs"]
    assert all(r.passed and r.cases > 0 for r in report.rows)


def test_properties_as_a_string_are_the_clis_list(tmp_path):
    report = gatecheck.check(ops.correct, seconds=0, cases=3, seed=2, properties="accuracy,repeatable", corpus=tmp_path)
    assert [r.property for r in report.rows] == ["accuracy", "repeatable"]
    report = gatecheck.check(ops.correct, seconds=0, cases=3, seed=2, properties="accuracy", corpus=tmp_path)
    assert [r.property for r in report.rows] == ["accuracy"]


def test_a_declared_narrowed_contract_is_kept_and_stated(tmp_path):
    report = gatecheck.check(ops.rejects_empty, seconds=0, cases=20, seed=1, properties=["accuracy"], corpus=tmp_path)
    report.raise_on_failure()
    assert list(report.contracts.values()) == ["default set; valid rows>=1,dim>=1"]


def test_what_cannot_be_named_is_refused():
    with pytest.raises(ValueError, match="cannot be named as MODULE:ATTR"):
        gatecheck.check(lambda res, gate, index, y: res)


def test_bad_arguments_are_a_check_error(tmp_path):
    with pytest.raises(gatecheck.CheckError, match="unknown property 'acuracy'") as raised:
        gatecheck.check(ops.correct, claims="acuracy", corpus=tmp_path)
    assert raised.value.exit_code == 2


def test_peer_set_up_errors_name_their_cause(monkeypatch, tmp_path):
    import torch
    from gatecheck import peers
    # compiled: past its device check, on a torch without torch.compile (1.13 here).
    if not hasattr(torch, "compile"):
        for compiled in (peers.compiled, peers.rmsnorm_modulate_compiled):
            with pytest.raises(RuntimeError, match="torch.compile needs PyTorch 2.0 or later"):
                compiled.gatecheck_setup("cuda")
    # gatecheck_op: the operator in checked mode, and a missing library named.
    monkeypatch.delenv("GATECHECK_OP_CHECKED", raising=False)
    monkeypatch.setenv("GATECHECK_TORCH_OP", str(tmp_path / "missing.so"))
    with pytest.raises(RuntimeError, match="missing.so"):
        peers.gatecheck_op.gatecheck_setup("cuda")
    assert os.environ["GATECHECK_OP_CHECKED"] == "1"


def test_a_forward_that_returns_none_fails_naming_what_was_expected(tmp_path):
    report = gatecheck.check(ops.forward_returns_none, seconds=0, cases=5, seed=1, properties="full_write",
                             corpus=tmp_path)
    assert not report.passed  # was: None stored as zeros, and full_write passed
    [failure] = report.failures
    assert "forward returned None for out, expected a tensor of shape" in failure.evidence


def test_arguments_check_misreads_are_refused_by_name(tmp_path):
    for kwargs, error, words in [
            (dict(extra_args="--jobs 1"), TypeError, "extra_args must be a list of arguments, not the string"),
            (dict(properties=[]), ValueError, "properties=[] names no property"),
            (dict(properties=" , "), ValueError, "names no property"),
            (dict(properties=5), TypeError, "properties must be a list of names"),
            (dict(cases=2.7), TypeError, "cases must be a whole number, not 2.7"),
            (dict(seconds="abc"), TypeError, "seconds must be a number, not 'abc'"),
            (dict(seconds=True), TypeError, "seconds must be a number, not True")]:
        with pytest.raises(error) as raised:
            gatecheck.check(ops.correct, corpus=tmp_path, **kwargs)
        assert words in str(raised.value), kwargs


def test_properties_with_spaces_after_commas_are_the_names(tmp_path):
    report = gatecheck.check(ops.correct, seconds=0, cases=3, seed=2, properties="accuracy, repeatable",
                             corpus=tmp_path)
    assert [r.property for r in report.rows] == ["accuracy", "repeatable"]


def test_check_at_a_scripts_top_level_is_refused_inside_gatecheck(tmp_path):
    script = os.path.join(os.path.dirname(__file__), "check_at_top_level.py")
    with pytest.raises(gatecheck.CheckError) as raised:  # the outer check: gatecheck could not load op
        gatecheck.check(f"python:{script}:op", seconds=0, cases=2, properties="accuracy", corpus=tmp_path,
                        timeout=60)
    assert "gatecheck.check() was called inside gatecheck's own process" in str(raised.value)
    assert raised.value.exit_code == 3


def test_an_exception_whose_text_is_not_utf8_keeps_its_message(tmp_path):
    report = gatecheck.check(ops.raises_a_lone_surrogate, seconds=0, cases=1, seed=1, properties="accuracy",
                             corpus=tmp_path)
    [failure] = report.failures
    assert "ValueError: bad \\udcff byte" in failure.evidence  # was pybind11's "Unable to cast Python instance"


def test_a_run_stopped_by_a_signal_is_a_keyboard_interrupt(monkeypatch, tmp_path):
    # gatecheck check stopped by SIGINT, SIGTERM or SIGHUP (a closed terminal) exits 130, 143 or
    # 129 with its report written: the caller is told it was interrupted, not that it could not run.
    import subprocess
    for code in (129, 130, 143):
        monkeypatch.setattr(subprocess, "run", lambda *a, code=code, **k: subprocess.CompletedProcess(
            a[0], code, "", f"interrupted (exit {code})"))
        with pytest.raises(KeyboardInterrupt):
            gatecheck.check(ops.correct, seconds=0, cases=1, corpus=tmp_path)
