"""`trecpool analyse agreement|stability|ties|power --moments GT`: moment runs read offline, values checked against
the moment evaluator's per-topic scores and plain scipy / brute-force computations; options share the REST schema."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats

from app.cli import cli
from app.evaluation.statistics.significance import discriminative_power, pairwise_randomization
from tests.cli.analyse_cases import MEASURES, moment_reference

runner = CliRunner()


def _args(*measures: str) -> list[str]:
    return [x for m in measures for x in ("-m", m)]


def test_agreement_and_ties_on_moment_runs(moment_files, tmp_path):
    truth, runs = moment_files
    names, topics, values = moment_reference(truth, runs, MEASURES)
    out = tmp_path / "agreement.json"
    args = ["analyse", "agreement", *map(str, runs), "--moments", str(truth), *_args(*MEASURES), "--output", str(out)]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    means = values.mean(axis=2)
    for i in range(len(MEASURES)):
        for j in range(len(MEASURES)):
            expected = stats.kendalltau(means[:, i], means[:, j]).statistic
            assert data["tau_b"][i][j] == pytest.approx(expected, nan_ok=True)
    out = tmp_path / "ties.json"
    result = runner.invoke(cli, ["analyse", "ties", *map(str, runs), "--moments", str(truth), "--output", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["n_topics"] == len(topics) == 12 and data["n_runs"] == 5
    every = ["AxIoU@1", "AxIoU@5", "AxIoU@10"] + [f"R@{k},{t}" for k in (1, 5, 10) for t in ("0.3", "0.5", "0.7")]
    assert list(data["ratios"]) == [*every, "mAP"]  # without -m: every moment measure `trecpool eval` reports
    _, _, all_values = moment_reference(truth, runs, list(data["ratios"]))
    for i, m in enumerate(data["ratios"]):
        tied = sum(len(set(all_values[:, i, t].tolist())) == 1 for t in range(12)) / 12
        assert data["ratios"][m] == pytest.approx(tied), m


def test_stability_on_moment_runs_with_sizes_matches_a_brute_force_loop(moment_files, tmp_path):
    truth, runs = moment_files
    _, _, values = moment_reference(truth, runs, ["AxIoU@5"])
    out = tmp_path / "stability.json"
    args = ["analyse", "stability", *map(str, runs), "--moments", str(truth), "-m", "AxIoU@5"]
    result = runner.invoke(cli, [*args, "--sizes", "2,4-6,12", "--trials", "30", "--seed", "9", "--output", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["sizes"] == [2, 4, 5, 6, 12] and data["trials"] == 30
    # brute force: each trial's seeded order of the topics (one per trial, for every size), its first s topics and
    # the next s, scipy's tau_b per trial
    orders = np.argsort(np.random.default_rng(9).random((30, 12)), axis=1)
    per_topic = values[:, 0, :]
    full = per_topic.mean(axis=1)
    for row in data["subset_vs_full"]["AxIoU@5"]:
        s = row["size"]
        taus = np.array([stats.kendalltau(per_topic[:, order[:s]].mean(axis=1), full).statistic for order in orders])
        assert row["mean"] == pytest.approx(np.nanmean(taus)) and row["var"] == pytest.approx(np.nanvar(taus))
        assert row["undefined"] == int(np.isnan(taus).sum())
        if 2 * s <= 12:
            halves = [
                stats.kendalltau(
                    per_topic[:, order[:s]].mean(axis=1), per_topic[:, order[s : 2 * s]].mean(axis=1)
                ).statistic
                for order in orders
            ]
            half = next(h for h in data["split_halves"]["AxIoU@5"] if h["size"] == s)
            assert half["mean"] == pytest.approx(np.nanmean(halves)) and half["var"] == pytest.approx(np.nanvar(halves))
        else:
            assert all(h["size"] != s for h in data["split_halves"]["AxIoU@5"])
    assert data["subset_vs_full"]["AxIoU@5"][-1]["mean"] == pytest.approx(1.0)  # all 12 topics: the full ranking


def test_power_on_moment_runs(moment_files, tmp_path):
    truth, runs = moment_files
    names, _, values = moment_reference(truth, runs, ["AxIoU@5", "R@1,0.5"])
    out = tmp_path / "power.json"
    args = ["analyse", "power", *map(str, runs), "--moments", str(truth), *_args("AxIoU@5", "R@1,0.5")]
    result = runner.invoke(cli, [*args, "--resamples", "500", "--seed", "2", "--output", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["runs"] == names
    for i, m in enumerate(["AxIoU@5", "R@1,0.5"]):
        expected = discriminative_power(pairwise_randomization(values[:, i, :], n_resamples=500, seed=2))
        assert data["power"][m] == pytest.approx(expected)


def test_options_are_checked_by_the_rest_schema_and_named_as_options(moment_files):
    truth, runs = moment_files
    base = ["analyse", "stability", str(runs[0]), str(runs[1]), "--moments", str(truth)]
    for extra, message in [
        (["--trials", "0"], "--trials: Input should be greater than or equal to 1"),
        (["--trials", "20000"], "--trials: Input should be less than or equal to 10000"),
        (["--sizes", "3,x"], "--sizes: 'x' is not a size"),
        (["--sizes", "0"], "--sizes: Input should be greater than or equal to 1"),
        (["--sizes", "13", "--trials", "5"], "subset sizes must be in 1..12"),
    ]:
        result = runner.invoke(cli, [*base, *extra])
        assert result.exit_code == 2, (extra, result.output)
        assert message in re.sub(r"\s+", " ", result.stderr), (extra, result.stderr)
    noise = ["analyse", "label-noise", str(runs[0]), "--moments", str(truth), "--length", "gamma"]
    result = runner.invoke(cli, noise)
    assert result.exit_code == 2 and "--length: Input should be 'shifted' or 'exponential'" in result.stderr
    result = runner.invoke(cli, ["analyse", "agreement", str(runs[0]), "--moments", str(truth), "-m", "AxIoU@1"])
    assert result.exit_code == 2 and "--measure: List should have at least 2 items" in result.stderr


@pytest.mark.parametrize(
    ("command", "extra", "option"),
    [
        ("power", ["--resamples", "0"], "--resamples:"),
        ("label-noise", ["--sigma", "-1"], "--sigma:"),
        ("swap-rate", ["--bin-width", "0"], "--bin-width:"),
        ("swap-rate", ["--min-comparisons", "0"], "--min-comparisons:"),
    ],
)
def test_an_error_quotes_the_option_as_typed(moment_files, command, extra, option):
    truth, runs = moment_files
    result = runner.invoke(cli, ["analyse", command, str(runs[0]), str(runs[1]), "--moments", str(truth), *extra])
    assert result.exit_code == 2, result.output
    assert option in result.stderr, result.stderr
