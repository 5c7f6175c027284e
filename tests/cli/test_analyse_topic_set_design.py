"""`trecpool analyse topic-set-design`: the sizes printed and in JSON are the core's on the evaluator's per-topic
scores, the figure is written, bad values are refused; and the numbers on TREC-COVID round 1 (AP, 30 runs)."""

from __future__ import annotations

import json

import numpy as np
from click.testing import CliRunner

from app.cli import cli
from app.evaluation.analyses.topic_set_design import residual_variance, topic_set_design
from app.evaluation.measures.evaluate import evaluate
from tests.cli.analyse_cases import table_row

runner = CliRunner()


def test_sizes_are_the_cores_on_the_evaluated_scores(files, tmp_path):
    runs, qrels, qrels_path, run_paths, _ = files
    args = ["analyse", "topic-set-design", qrels_path, *run_paths, "-m", "AP"]
    args += ["--min-difference", "0.1", "--min-difference", "0.2", "--ci-width", "0.3"]
    result = runner.invoke(cli, [*args, "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    scores = evaluate(qrels, runs, ["AP"])
    expected = topic_set_design(
        np.nan_to_num(scores.values[:, 0, :]), scores.runs, measure="AP", min_differences=[0.1, 0.2], ci_widths=[0.3]
    ).to_dict()
    assert data == json.loads(json.dumps(expected))
    assert data["sigma2"] == residual_variance(np.nan_to_num(scores.values[:, 0, :])) and data["systems"] == 5
    plot = tmp_path / "design.svg"
    table = runner.invoke(cli, [*args, "--plot", str(plot)])
    assert table.exit_code == 0, table.output
    first = data["designs"][0]
    assert table_row(table.output, "0.1")[1:] == [str(first["t_test"]), str(first["anova"])]
    assert table_row(table.output, "0.3")[1:] == [str(data["ci"][0]["n"])]
    assert "With this campaign's 4 topics" in " ".join(table.output.split())
    assert "Topic set size for AP" in plot.read_text()
    bad = runner.invoke(cli, [*args, "--min-difference", "0"])
    assert bad.exit_code == 2 and "--min-difference" in bad.stderr
    bad = runner.invoke(cli, [*args, "--systems", "1"])
    assert bad.exit_code == 2 and "--systems" in bad.stderr


def test_trec_covid_round_1_ap(shared_data, tmp_path):
    """The 30 round-1 runs of ../shared, AP: V_E 0.006983 (pooled within-run 0.02246); to find a 0.05 difference with
    power 0.8 a paired t-test needs 46 topics, a one-way ANOVA over 30 systems 137, and a 95 % CI of expected width
    0.05 needs 88; the 30 topics the round had find 0.0625 (t-test)."""
    folder = shared_data / "trec-covid-round1"
    out = tmp_path / "design.json"
    args = ["analyse", "topic-set-design", str(folder / "qrels.txt"), *map(str, sorted((folder / "runs").glob("*.gz")))]
    result = runner.invoke(cli, [*args, "-m", "AP", "--min-difference", "0.05", "--min-difference", "0.1"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(cli, [*args, "-m", "AP", "--output", str(out)])
    data = json.loads(out.read_text())
    assert (data["n_runs"], data["n_topics"], data["systems"]) == (30, 30, 30)
    assert round(data["sigma2"], 6) == 0.006983 and round(data["sigma2_one_way"], 5) == 0.02246
    assert data["designs"] == [{"min_difference": 0.05, "t_test": 46, "anova": 137}]
    assert data["ci"] == [{"ci_width": 0.05, "n": 88}]
    assert round(data["current"]["t_test_min_difference"], 4) == 0.0625
