"""The CLI starts light: `trecpool --help` and `trecpool eval` import no web stack, database layer or plotting."""

from __future__ import annotations

import pytest

from tests.cli.startup_probe import heavy, modules_after


@pytest.mark.parametrize(
    "args",
    [
        ("--help",),
        ("--version",),
        ("eval", "--help"),
        ("sample_eval", "--help"),
        ("trec_eval", "--help"),
        ("analyse", "--help"),
    ],
)
def test_help_imports_nothingheavy(args):
    modules, output = modules_after(*args)
    assert "Usage:" in output or output.startswith("trecpool 0.")
    assert heavy(modules) == []


def test_eval_on_a_tiny_input_imports_nothingheavy(tmp_path):
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("1 0 d1 1\n1 0 d2 0\n")
    run.write_text("1 Q0 d2 1 0.9 r\n1 Q0 d1 2 0.5 r\n")
    modules, output = modules_after("eval", "-m", "AP", "-m", "P@1", str(qrels), str(run))
    assert output.split() == ["AP", "all", "0.5", "P@1", "all", "0.0"]
    assert heavy(modules) == []
    assert "numpy" in modules  # the numeric core is what it does import


def test_commands_that_need_the_service_import_it_only_when_run():
    modules, output = modules_after("serve", "--help")
    assert "--demo" in output
    assert heavy(modules) == []


def test_sample_eval_on_a_tiny_input_imports_nothingheavy(tmp_path):
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("1 0 d1 1 1\n1 0 d2 1 0\n")
    run.write_text("1 Q0 d2 1 0.9 r\n1 Q0 d1 2 0.5 r\n")
    modules, output = modules_after("sample_eval", str(qrels), str(run))
    assert output.splitlines()[0].startswith("infAP\t\tall\t\t0.5")
    assert heavy(modules) == []
