"""What every command of the CLI does alike: `-h` as `--help` on every command and subcommand, `--version`, and
`--format json` writing one JSON document to stdout."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version

import click
import pytest
import typer
from click.testing import CliRunner

from app.cli import COMMANDS, TyperCommand, cli

runner = CliRunner()


def command_lines() -> list[tuple[str, ...]]:
    """Every command of COMMANDS, and every subcommand of those that are groups (token create, db upgrade, ...)."""
    lines: list[tuple[str, ...]] = []
    context = click.Context(cli)
    for name in COMMANDS:
        lines.append((name,))
        command = cli.get_command(context, name)
        if isinstance(command, TyperCommand):
            command = typer.main.get_command(command.app)  # type: ignore[arg-type]  # typer's own click
        if hasattr(command, "list_commands"):
            lines += [(name, sub) for sub in command.list_commands(context)]
    return lines


LINES = command_lines()


def test_the_groups_subcommands_are_found() -> None:
    assert {("token", "create"), ("token", "list"), ("db", "upgrade"), ("analyse", "pool-depth")} <= set(LINES)
    assert {line[0] for line in LINES} == set(COMMANDS)


@pytest.mark.parametrize("line", LINES, ids=" ".join)
def test_dash_h_prints_the_help_on_every_command(line: tuple[str, ...]) -> None:
    short = runner.invoke(cli, [*line, "-h"])
    assert short.exit_code == 0, short.output
    assert "Usage:" in short.stdout
    assert f"trecpool {' '.join(line)}" in short.stdout
    long = runner.invoke(cli, [*line, "--help"])
    assert long.exit_code == 0, long.output
    assert short.stdout == long.stdout


def test_dash_h_as_an_options_value_is_a_value(monkeypatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://nobody@127.0.0.1:9/none")  # never reached
    result = runner.invoke(cli, ["token", "create", "--role", "team", "--label", "-h"])
    assert result.exit_code == 2
    assert result.stderr.strip() == "error: --role team needs --team ID (the team's id)"


def test_version_is_the_installed_packages() -> None:
    result = runner.invoke(cli, ["--version"])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"trecpool {version('trecpool')}\n"


def test_version_from_the_console_script() -> None:
    done = subprocess.run([sys.executable, "-m", "app.cli", "--version"], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, f"trecpool {version('trecpool')}\n", "")


def test_measures_format_json_is_a_list_on_stdout() -> None:
    result = runner.invoke(cli, ["measures", "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert rows[0]["name"] == "AP" and set(rows[0]) == {
        "name",
        "kind",
        "parameters",
        "description",
        "reference",
        "aliases",
    }
    assert runner.invoke(cli, ["measures", "--json"]).stdout == result.stdout  # the older spelling still works
    assert runner.invoke(cli, ["measures", "--format", "xml"]).exit_code == 2


def test_eval_format_json_is_one_object_on_stdout(tmp_path) -> None:
    (tmp_path / "qrels").write_text("1 0 d1 1\n1 0 d2 0\n")
    (tmp_path / "run").write_text("1 Q0 d2 1 0.9 r\n1 Q0 d1 2 0.5 r\n")
    files = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    result = runner.invoke(cli, ["eval", "-m", "AP", "--format", "json", *files])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"r": {"AP": {"all": 0.5}}}
    assert result.stderr == ""
    per_topic = runner.invoke(cli, ["eval", "-q", "-m", "AP", "--format", "json", *files])
    assert json.loads(per_topic.stdout) == {"r": {"AP": {"1": 0.5, "all": 0.5}}}
