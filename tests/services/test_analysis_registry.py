"""The analysis registry is the one place an analysis is written: its record gives the `trecpool analyse` command, the
REST schema, the `trecpool analyses` listing and the README table, and agrees with the core it points at."""

from __future__ import annotations

import importlib
import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from pydantic import ValidationError
from sqlalchemy.orm import sessionmaker

from app.cli import cli
from app.config import Settings
from app.server import create_app
from app.services.analysis_registry import (
    ANALYSES,
    Analysis,
    figure_data,
    markdown_table,
    parameters,
)

README = Path(__file__).parents[2] / "README.md"
runner = CliRunner()


def _core(record: Analysis) -> object:
    """The record's core function, imported."""
    module, _, name = record.core.rpartition(".")
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize("kind", list(ANALYSES))
def test_each_record_names_a_core_function_and_a_figure_that_exist(kind: str) -> None:
    from app.figures.analyses import LOOKUP

    record = ANALYSES[kind]
    assert callable(_core(record)), record.core
    assert record.figure in LOOKUP, record.figure
    assert record.description.endswith(".") and "\n" not in record.description and record.reproduces
    assert set(record.task_kinds) <= {"shots", "moments"} and record.task_kinds


# Where the product's default is not the core function's, and why.
OWN_DEFAULTS = {
    ("leave-out", "by"): "the core leaves each run out by default; the product each team (Westerveld Fig. 4)"
}


@pytest.mark.parametrize("kind", list(ANALYSES))
def test_every_parameter_is_described_and_its_default_is_the_cores(kind: str) -> None:
    record = ANALYSES[kind]
    core = inspect.signature(_core(record)).parameters  # type: ignore[arg-type]
    for p in parameters(record):
        assert p.description and p.default_words, (kind, p.name)
        if (kind, p.name) in OWN_DEFAULTS or p.default is None:
            continue
        if p.name in core and core[p.name].default not in (inspect.Parameter.empty, None):
            expected = core[p.name].default
            assert p.default == (list(expected) if isinstance(expected, tuple) else expected), (kind, p.name)


def test_label_noise_defaults_are_the_cores_constants() -> None:
    label_noise = importlib.import_module("app.evaluation.analyses.label_noise")
    params = ANALYSES["label-noise"].params()
    assert params.measures == list(label_noise.DEFAULT_MEASURES)  # type: ignore[attr-defined]
    assert params.sigmas == list(label_noise.DEFAULT_SIGMAS) == [1.0, 2.0, 3.0, 4.0]  # type: ignore[attr-defined]
    assert (params.trials, params.raters) == (label_noise.DEFAULT_TRIALS, label_noise.DEFAULT_RATERS)  # type: ignore[attr-defined]
    lengths = ANALYSES["label-noise"].params.model_json_schema()["properties"]["length"]["enum"]
    assert tuple(lengths) == label_noise.LENGTHS


def test_the_readme_table_is_the_registrys() -> None:
    text = README.read_text(encoding="utf-8")
    start = text.index("| kind | reproduces | reads |")  # the table of section "Analyses (SPEC §6)"
    end = text.index("\n\n", start)
    assert text[start : end + 1] == markdown_table(), (
        "the README's table of analyses differs from the registry: paste `trecpool analyses --format markdown`"
    )


def test_markdown_table_has_a_row_per_kind_with_its_paper_and_defaults() -> None:
    rows = markdown_table().splitlines()[2:]
    assert [row.split(" | ")[0].removeprefix("| ").split()[0] for row in rows] == [f"`{k}`" for k in ANALYSES]
    swap = next(row for row in rows if row.startswith("| `swap-rate`"))
    assert "Voorhees & Buckley 2002" in swap and "`trials` 1000" in swap and "`min_comparisons` 10" in swap
    assert "| `label-noise` (moments) |" in markdown_table() and "`sigmas` (`--sigma`) 1, 2, 3, 4" in markdown_table()
    assert "`n_resamples` (`--resamples`) 10000" in markdown_table() and "`pooled_runs` (REST only)" in rows[0]


def test_the_listing_says_what_the_registry_holds() -> None:
    result = runner.invoke(cli, ["analyses", "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert list(rows) == list(ANALYSES)
    swap = rows["swap-rate"]
    assert swap["task_kinds"] == ["shots", "moments"] and swap["core"].endswith("swap_rates")
    trials = next(p for p in swap["parameters"] if p["name"] == "trials")
    assert trials == {
        "name": "trials",
        "type": "integer",
        "default": 1000,
        "default_words": "1000",
        "description": "pairs of disjoint topic sets per size",
        "cli": "--trials",
    }
    resamples = next(p for p in rows["power"]["parameters"] if p["name"] == "n_resamples")
    assert resamples["cli"] == "--resamples" and resamples["default"] == 10_000
    pooled = next(p for p in rows["leave-out"]["parameters"] if p["name"] == "pooled_runs")
    assert pooled["cli"] is None and rows["leave-out"]["task_kinds"] == ["shots"]
    table = runner.invoke(cli, ["analyses"])
    assert table.exit_code == 0 and "label-noise (moments)" in table.stdout
    assert "n_resamples [--resamples] integer, default 10000" in table.stdout
    markdown = runner.invoke(cli, ["analyses", "--format", "markdown"])
    assert markdown.stdout == markdown_table()


def test_commands_take_the_models_options_and_the_rest_only_fields_are_not_options() -> None:
    from app.cli.analyse import analyse

    context = analyse.make_context("analyse", ["-h"], resilient_parsing=True)
    for kind, record in ANALYSES.items():
        command = analyse.get_command(context, kind)
        assert command is not None
        options = {name for p in command.params for name in p.opts}
        for p in parameters(record):
            assert set(p.options) <= options, (kind, p.name)
        assert ("--pool-depth" in options) == ("pool" in record.needs)
        assert ("--groups" in options) == ("pool" in record.needs or "units" in record.needs)
    leave_out = {p.name: p.options for p in parameters(ANALYSES["leave-out"])}
    assert leave_out["pooled_runs"] == () and leave_out["depth"] == () and leave_out["by"] == ("--by",)


def test_the_rest_schema_documents_each_kinds_parameters() -> None:
    schema = create_app(Settings(), sessionmaker()).openapi()
    body = schema["paths"]["/api/campaigns/{campaign_id}/analyses"]["post"]["requestBody"]["content"]
    ref = body["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    union = schema["components"]["schemas"][ref]
    assert union["discriminator"]["propertyName"] == "kind"
    assert set(union["discriminator"]["mapping"]) == set(ANALYSES)
    swap = schema["components"]["schemas"]["SwapRateParams"]["properties"]
    assert swap["trials"]["default"] == 1000 and swap["trials"]["maximum"] == 10_000
    assert swap["measure"]["description"].startswith("the measure (default: the leaderboard's")
    assert set(swap) == {p.name for p in parameters(ANALYSES["swap-rate"])}


@pytest.fixture()
def collection(tmp_path: Path) -> list[str]:
    """A qrels file and three runs whose AP means are 1, 1/2 and 0 on one topic."""
    (tmp_path / "qrels").write_text("1 0 d1 1\n1 0 d2 0\n")
    for name, ranked in (("a", "d1 d2"), ("b", "d2 d1"), ("c", "d2")):
        lines = [f"1 Q0 {doc} {i + 1} {9 - i} {name}" for i, doc in enumerate(ranked.split())]
        (tmp_path / name).write_text("\n".join(lines) + "\n")
    return [str(tmp_path / n) for n in ("qrels", "a", "b", "c")]


def test_an_analysis_added_as_a_record_alone_is_a_command(toy: Analysis, collection: list[str], tmp_path) -> None:
    assert "toy-spread" in runner.invoke(cli, ["analyse", "-h"]).stdout
    help_text = runner.invoke(cli, ["analyse", "toy-spread", "-h"]).stdout
    assert "--scale FLOAT" in help_text and "what the spread is multiplied by (default: 1)" in help_text
    result = runner.invoke(cli, ["analyse", "toy-spread", *collection, "--scale", "2", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"measure": "AP", "spread": 2.0, "ratios": {"AP": 2.0}}
    plot = tmp_path / "toy.svg"
    table = runner.invoke(cli, ["analyse", "toy-spread", *collection, "--plot", str(plot)])
    assert table.exit_code == 0 and "spread" in table.stdout and "1.0000" in table.stdout  # the generic table
    assert b"<svg" in plot.read_bytes()[:400]
    bad = runner.invoke(cli, ["analyse", "toy-spread", *collection, "--scale", "0"])
    assert bad.exit_code == 2 and "--scale: Input should be greater than 0" in bad.stderr


def test_an_analysis_added_as_a_record_alone_is_in_the_rest_schema_and_the_listing(toy: Analysis) -> None:
    from app.api.analyses import AnalysisIn

    schema = create_app(Settings(), sessionmaker()).openapi()["components"]["schemas"]
    assert schema["ToySpreadAnalysis"]["properties"]["params"]["$ref"].endswith("/SpreadParams")
    assert schema["SpreadParams"]["properties"]["scale"]["default"] == 1.0
    assert AnalysisIn.model_validate({"kind": "toy-spread", "params": {"scale": 3}}).params == {"scale": 3.0}
    with pytest.raises(ValidationError) as refused:
        AnalysisIn.model_validate({"kind": "toy-spread", "params": {"scale": 0}})
    assert [e["loc"] for e in refused.value.errors()] == [("params", "scale")]
    with pytest.raises(ValidationError) as unknown:
        AnalysisIn.model_validate({"kind": "toy-sprad"})
    assert unknown.value.errors()[0]["loc"] == ("kind",) and "toy-spread" in unknown.value.errors()[0]["msg"]
    listed = json.loads(runner.invoke(cli, ["analyses", "--format", "json"]).stdout)
    assert listed[-1]["name"] == "toy-spread" and listed[-1]["parameters"][0]["default"] == 1.0
    assert "| `toy-spread` | no paper: a test's toy | scores | `scale` 1 |" in markdown_table()


def test_a_per_run_figure_draws_the_run_asked_for() -> None:
    data = {"runs": [{"run": "a", "scores": [1]}, {"run": "b", "scores": [2]}]}
    assert figure_data("run-vs-median", data, "b") == {"run": "b", "scores": [2]}
    assert figure_data("ties", {"ratios": {}}) == {"ratios": {}}
    for run, message in ((None, "name the run"), ("z", "no run 'z'")):
        with pytest.raises(ValueError, match=message):
            figure_data("run-vs-median", data, run)


PROBE = """
import json, sys
from app.cli import cli
try:
    cli(args=sys.argv[1:], prog_name="trecpool")
except SystemExit:
    pass
print("\\n@@MODULES@@" + json.dumps(sorted(sys.modules)))
"""


def _modules_after(*args: str) -> set[str]:
    """The modules a fresh interpreter imported to run the CLI with `args`."""
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=60)
    return set(json.loads(done.stdout.rpartition("@@MODULES@@")[2]))


def test_the_registry_is_imported_by_the_analyse_commands_only_and_imports_no_analysis() -> None:
    assert "app.services.analysis_registry" not in _modules_after("--help")
    modules = _modules_after("analyse", "--help")
    assert "app.services.analysis_registry" in modules
    assert not any(m.startswith(("app.evaluation.analyses", "scipy", "matplotlib", "sqlalchemy")) for m in modules)
