"""`trecpool analyse model-selection` and `trecpool analyse iou-noise` from files, and the job's path (stored scores
through the record's compute): values against the core, a plot, errors naming the option with exit code 2."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from click.testing import CliRunner

from app.cli import cli
from app.evaluation.analyses.label_noise import iou_noise
from app.evaluation.analyses.model_selection import model_selection
from app.evaluation.moments import (
    ground_truth_segments,
    moment_relevance,
    parse_moment_ground_truth,
    parse_moment_run,
    rank_moments,
)
from app.services.analyses import _scores
from app.services.analysis_registry import ANALYSES, AnalysisData, parse_params
from app.services.scores import ScoreTable

MOMENTS = Path(__file__).parents[1] / "data" / "moments"
runner = CliRunner()


def test_iou_noise_reads_moment_runs_and_reports_each_runs_own_top_iou(tmp_path: Path) -> None:
    gt, run = MOMENTS / "gt.tsv", MOMENTS / "run_tagged.tsv"
    plot, out = tmp_path / "noise.png", tmp_path / "noise.json"
    args = ["analyse", "iou-noise", str(run), "--moments", str(gt), "--gamma", "0.1", "--theta", "0.5"]
    result = runner.invoke(cli, [*args, "--simulations", "400", "--plot", str(plot), "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert plot.read_bytes()[:4] == b"\x89PNG" and "standard errors" in result.output
    data = json.loads(out.read_text())
    segments = ground_truth_segments(parse_moment_ground_truth(gt.read_bytes()))
    ranked = rank_moments(segments, [parse_moment_run(run.read_bytes())], 1)
    top = moment_relevance(ranked, segments).relevance[..., 0]
    expected = iou_noise(0.5, gammas=[0.1], thetas=[0.5], simulations=400, top_iou=top).to_dict()
    assert data["runs"][0]["levels"] == expected["runs"][0]["levels"]
    assert data["runs"][0]["mean_iou"] == float(top.mean()) and data["levels"] == expected["levels"]


def test_iou_noise_refuses_a_bad_noise_level_by_its_option() -> None:
    args = ["analyse", "iou-noise", str(MOMENTS / "run_tagged.tsv"), "--moments", str(MOMENTS / "gt.tsv")]
    result = runner.invoke(cli, [*args, "--gamma", "0"])
    assert result.exit_code == 2 and "--gamma" in result.output and "Traceback" not in result.output


def test_model_selection_from_stored_scores_is_the_cores() -> None:
    measures = ["AxIoU@1", "AxIoU@5", "R@1,0.5", "R@5,0.7", "mAP"]
    values = np.random.default_rng(3).random((6, len(measures), 10))
    runs = [SimpleNamespace(name=f"variant{i}", team_id=1) for i in range(6)]
    topics = [f"q{i}" for i in range(10)]
    table = ScoreTable(runs, {1: "t"}, measures, topics, values, values.mean(axis=2))  # type: ignore[arg-type]
    params = parse_params("model-selection", {"test_measures": ["R@1,0.5", "R@5,0.7"], "seed": 4})
    record = ANALYSES["model-selection"]
    scores = _scores(None, table, record, params)  # type: ignore[arg-type]
    computed = record.compute(AnalysisData(runs=scores.runs, scores=scores), params, lambda _: None)
    core = model_selection(
        [r.name for r in runs], measures, table.topics, values, test_measures=["R@1,0.5", "R@5,0.7"], seed=4
    )
    assert computed.data == core.to_dict()
    assert computed.data["validation_measures"] == measures  # every measure read when none is named


def test_model_selection_names_an_unknown_measure_by_its_option(tmp_path: Path) -> None:
    args = ["analyse", "model-selection", str(MOMENTS / "run_tagged.tsv"), "--moments", str(MOMENTS / "gt.tsv")]
    result = runner.invoke(cli, [*args, "--test-measure", "R@3,0.9"])
    assert result.exit_code == 2 and "test_measures: 'R@3,0.9' is not among" in result.output
