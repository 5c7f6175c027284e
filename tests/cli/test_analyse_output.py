"""`trecpool analyse` as its users expect: `-h` everywhere, one JSON convention (`--format json` on stdout, `--output
FILE` for a file, never one named `-`; `--json -` and `--json FILE` the same two), progress on a terminal only,
`--pool-depth` as a number or a file of topic depths, and readable defaults on TREC-COVID round 1."""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner

import app.cli.analyse as analyse_module
from app.cli import cli
from tests.evaluation.analyses.brute import trec_order

runner = CliRunner()
COMMANDS = analyse_module.analyse.list_commands(None)  # type: ignore[arg-type] - the group lists the registry


def _args(command: str, files, moment_files, tmp_path: Path) -> list[str]:
    """Small valid arguments for each command."""
    _, _, qrels, runs, groups = files
    truth, moment_runs = moment_files
    moment = [*map(str, moment_runs), "--moments", str(truth)]
    times = tmp_path / "times.tsv"
    times.write_text("run0\t1.5\nrun1\t3\n")
    return {
        "pool-depth": [qrels, *runs, "--groups", groups, "--pool-depth", "5", "--max-depth", "3"],
        "leave-out": [qrels, *runs, "--groups", groups, "--pool-depth", "5"],
        "agreement": [qrels, *runs],
        "stability": [qrels, *runs, "--trials", "20"],
        "label-noise": [*moment, "--trials", "2", "-m", "AxIoU@5"],
        "ties": [qrels, *runs],
        "power": [qrels, *runs, "--resamples", "200"],
        "judged-fraction": [qrels, *runs],
        "qrels-versions": [*runs, "--qrels", qrels, "--qrels", qrels],
        "swap-rate": [qrels, *runs, "--trials", "20"],
        "topic-set-design": [qrels, *runs],
        "type-significance": [qrels, *runs, "--groups", groups, "--resamples", "200"],
        "novelty": [qrels, *runs, "--groups", groups],
        "run-vs-median": [qrels, *runs],
        "efficiency": [qrels, *runs, "--times", str(times)],
        "strata": [qrels],
        "moment-effectiveness": [*moment, "-m", "AxIoU@5", "-m", "R@1,0.5"],
        "budget": [qrels, *runs, "--sampled", "6-20:0.5", "--replicates", "20"],
        "machine-agreement": [*runs, "--qrels", qrels, "--qrels", qrels, "--groups", groups, "--resamples", "200"],
        "model-selection": [qrels, *runs],
        "iou-noise": [*moment, "--simulations", "200", "--theta", "0.5"],
    }[command]


def test_there_are_twenty_one_commands():
    assert len(COMMANDS) == 21 and COMMANDS[:2] == ["pool-depth", "leave-out"]


@pytest.mark.parametrize("args", [["analyse", "-h"], *[["analyse", c, "-h"] for c in COMMANDS]])
def test_dash_h_is_help_on_the_group_and_every_command(args):
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output and "--help" in result.output


@pytest.mark.parametrize("command", COMMANDS)
def test_format_json_prints_the_result_on_stdout_and_output_writes_it(command, files, moment_files, tmp_path):
    args = ["analyse", command, *_args(command, files, moment_files, tmp_path)]
    result = runner.invoke(cli, [*args, "--format", "json"])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)  # nothing but the JSON on stdout: notes go to stderr
    assert isinstance(printed, dict) and printed
    saved = tmp_path / "result.json"
    result = runner.invoke(cli, [*args, "--output", str(saved)])
    assert result.exit_code == 0, result.output
    assert json.loads(saved.read_text()) == printed
    assert "NaN" not in saved.read_text()  # valid JSON: NaN is null, as the REST API stores it
    table = result.stdout.lstrip()
    assert not table.startswith("{")  # the default format is tables


@pytest.mark.parametrize("columns", ["24", "1000"])
def test_output_dash_is_refused_and_json_is_a_synonym(columns, files, tmp_path, monkeypatch):
    """The messages are matched with their whitespace normalised: a narrow terminal wraps them (COLUMNS=24 splits
    'use --format json' across lines), and how a long temporary path wraps depends on its length."""
    _, _, qrels, runs, _ = files
    monkeypatch.chdir(tmp_path)
    env = {"COLUMNS": columns}

    def said(text: str) -> str:
        return " ".join(text.split())

    result = runner.invoke(cli, ["analyse", "ties", qrels, *runs, "--output", "-"], env=env)
    assert result.exit_code == 2 and "use --format json" in said(result.stderr), result.stderr
    printed = runner.invoke(cli, ["analyse", "ties", qrels, *runs, "--format", "json"], env=env).stdout
    result = runner.invoke(cli, ["analyse", "ties", qrels, *runs, "--json", "-"], env=env)
    assert result.exit_code == 0 and json.loads(result.stdout) == json.loads(printed), result.output
    result = runner.invoke(cli, ["analyse", "ties", qrels, *runs, "--json", "a.json", "--output", "b.json"], env=env)
    assert result.exit_code == 2 and "give one" in said(result.stderr), result.stderr
    result = runner.invoke(cli, ["analyse", "ties", qrels, *runs, "--output", str(tmp_path)], env=env)
    assert result.exit_code == 2 and "is a directory" in said(result.stderr), result.stderr
    result = runner.invoke(cli, ["analyse", "ties", qrels, *runs, "--format", "yaml"], env=env)
    assert result.exit_code == 2 and "--format" in said(result.output), result.output
    assert not (tmp_path / "-").exists()


def test_json_notes_go_to_stderr(files):
    _, _, qrels, runs, groups = files
    result = runner.invoke(cli, ["analyse", "leave-out", qrels, *runs, "--groups", groups, "--pool-depth", "5"])
    assert result.stdout.startswith("pool depth 5 (given)") and result.stderr == ""
    result = runner.invoke(
        cli, ["analyse", "leave-out", qrels, *runs, "--groups", groups, "--pool-depth", "5", "--format", "json"]
    )
    assert "pool depth 5 (given)" in result.stderr and json.loads(result.stdout)["depth"] == 5


class Recorder(analyse_module.Steps):
    """Steps that keep every share reported, per step."""

    def __init__(self) -> None:
        super().__init__(None)
        self.seen: dict[str, list[float]] = {}

    def step(self, description: str):  # type: ignore[no-untyped-def]
        self.seen[description] = []
        return self.seen[description].append


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_reports_its_steps(command, files, moment_files, tmp_path, monkeypatch):
    recorders: list[Recorder] = []

    @contextmanager
    def recording():  # type: ignore[no-untyped-def]
        recorders.append(Recorder())
        yield recorders[-1]

    monkeypatch.setattr(analyse_module, "_progress", recording)
    result = runner.invoke(cli, ["analyse", command, *_args(command, files, moment_files, tmp_path)])
    assert result.exit_code == 0, result.output
    seen = recorders[0].seen
    assert len(seen) >= 2, seen  # at least reading, then working
    for shares in seen.values():
        assert shares == sorted(shares) and all(0 <= s <= 1 for s in shares)
    if command != "strata":  # strata reads one qrels file and counts: two steps with no share to report
        assert any(shares and shares[-1] == pytest.approx(1.0) for shares in seen.values())


def test_progress_only_on_a_terminal(files, monkeypatch):
    _, _, qrels, runs, _ = files
    args = ["analyse", "stability", qrels, *runs, "--trials", "200"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0 and result.stderr == ""  # not a terminal: nothing
    monkeypatch.setattr(analyse_module, "_stderr_is_terminal", lambda: True)
    result = runner.invoke(cli, args)
    assert result.exit_code == 0
    assert "random topic subsets" in result.stderr and "100%" in result.stderr  # a bar, erased at the end
    assert "\x1b[2K" in result.stderr and "random topic subsets" not in result.stdout


def test_pool_depth_file_errors_name_the_line(files, tmp_path):
    _, _, qrels, runs, groups = files
    base = ["analyse", "leave-out", qrels, *runs, "--groups", groups, "--pool-depth"]
    bad = tmp_path / "depths.txt"
    for text, message in [
        ("t0 5\nt1 five\n", "line 2: 'five' is not a depth"),
        ("t0 5 extra\n", "line 1: expected 'topic depth'"),
        ("t0 5\nt0 6\n", "line 2: topic t0 is given twice"),
        ("# nothing\n", "no 'topic depth' lines"),
    ]:
        bad.write_text(text)
        result = runner.invoke(cli, [*base, str(bad)])
        assert result.exit_code == 2 and message in " ".join(result.stderr.split()), (text, result.stderr)
    result = runner.invoke(cli, [*base, str(tmp_path / "missing.txt")])
    assert result.exit_code == 2 and "neither a depth" in " ".join(result.stderr.split())
    result = runner.invoke(cli, [*base, "0"])
    assert result.exit_code == 2 and "not a depth" in result.stderr


def test_pool_depth_file_with_different_depths_per_topic(files, tmp_path):
    runs, qrels_table, qrels, run_paths, groups = files
    depths = tmp_path / "depths.txt"
    depths.write_text("t0 2\nt1 9  # deeper\nt2 3\nt3 3\n")
    out = tmp_path / "out.json"
    args = ["analyse", "pool-depth", qrels, *run_paths, "--groups", groups, "--pool-depth", str(depths)]
    result = runner.invoke(cli, [*args, "--output", str(out)])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "pool depth per topic: 3 for topics t2, t3 (given); 9 for topic t1 (given); 2 for topic t0 (given)" in said
    data = json.loads(out.read_text())
    assert [d["depth"] for d in data["depths"]] == list(range(1, 10))  # 1..the deepest topic's depth
    assert data["pool_depths"]["topics"][1] == {"topic": "t1", "depth": 9, "source": "given"}
    cap = {"t0": 2, "t1": 9, "t2": 3, "t3": 3}
    best: dict[tuple[str, str], int] = {}
    for run in runs:
        if run.tag in ("run0", "run2", "run3"):  # the pooled runs of the groups file
            for topic, docs in trec_order(run).items():
                for rank, doc in enumerate(docs[: cap[topic]], start=1):
                    best[(topic, doc)] = min(best.get((topic, doc), rank), rank)
    keys = list(zip(qrels_table.topics.tolist(), qrels_table.docs.tolist(), strict=True))
    for level in data["depths"]:  # a pool cut at d holds what the pooled runs rank within min(d, the topic's)
        assert level["lines"] == sum(best.get(k, 10**9) <= level["depth"] for k in keys)
    assert data["residual_lines"] == sum(k not in best for k in keys)


def test_trec_covid_defaults_read_well(shared_data, tmp_path):
    folder = shared_data / "trec-covid-round1"
    base = [str(folder / "qrels.txt"), *map(str, sorted((folder / "runs").glob("*.gz"))[:6])]
    result = runner.invoke(cli, ["analyse", "agreement", *base, "--format", "json"])
    data = json.loads(result.stdout)
    assert len(data["measures"]) == 28 and not any(m.startswith("num_") for m in data["measures"])
    assert None not in [v for row in data["tau_b"] for v in row]  # no NaN row (num_rel ranked nothing)
    result = runner.invoke(cli, ["analyse", "ties", *base, "--format", "json"])
    assert "num_rel" not in json.loads(result.stdout)["ratios"]
    result = runner.invoke(cli, ["analyse", "ties", *base, "-m", "num_rel", "-m", "AP", "--format", "json"])
    assert json.loads(result.stdout)["ratios"]["num_rel"] == 1.0  # asked for by name: there, and always tied
    result = runner.invoke(cli, ["analyse", "run-vs-median", *base, "--format", "json"])
    assert json.loads(result.stdout)["topics"] == [str(t) for t in range(1, 31)]


def test_label_noise_defaults_to_sigma_1_to_4(moment_files):
    truth, runs = moment_files
    args = ["analyse", "label-noise", *map(str, runs), "--moments", str(truth), "--trials", "2", "-m", "AxIoU@1"]
    result = runner.invoke(cli, [*args, "--format", "json"])
    assert [level["sigma"] for level in json.loads(result.stdout)["levels"]] == [1.0, 2.0, 3.0, 4.0]
