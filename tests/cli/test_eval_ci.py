"""`trecpool eval --ci`: each mean with its paired bootstrap interval over topics, checked against scipy.stats.bootstrap
and, on sampled qrels, widened by xinfAP's jackknife sampling variance."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pytest
import scipy.stats
from click.testing import CliRunner

from app.cli import cli
from app.evaluation.analyses.budget import jackknife_components, topic_samples
from app.evaluation.analyses.lines import index_lines
from app.evaluation.formats.trec_files import read_qrels, read_run
from app.evaluation.grading.prepared_runs import prepare_runs
from app.evaluation.measures.evaluate import evaluate
from app.evaluation.statistics.intervals import mean_intervals, topic_draws

runner = CliRunner()
TOPICS = [str(t) for t in range(1, 13)]


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    """TREC qrels on 12 topics and three random runs; run `c` answers only topics 1-8."""
    rng = np.random.default_rng(11)
    directory = tmp_path_factory.mktemp("ci")
    qrels = directory / "qrels"
    qrels.write_text("".join(f"{t} 0 d{d} {int(rng.integers(0, 3))}\n" for t in TOPICS for d in range(15)))
    runs = []
    for tag in ("a", "b", "c"):
        topics = TOPICS[:8] if tag == "c" else TOPICS
        lines = [
            f"{t} Q0 d{d} {k} {20 - k} {tag}\n" for t in topics for k, d in enumerate(rng.choice(20, 10, replace=False))
        ]
        path = directory / tag
        path.write_text("".join(lines))
        runs.append(path)
    return qrels, runs


@pytest.fixture(scope="module")
def sampled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    """sample_eval qrels on 8 topics: stratum 1 (40 docs) judged in full, stratum 2 (160 docs) a 25 % sample, the
    rest graded -1; two runs ranking 60 of the pooled docs, relevance falling with the pool order."""
    rng = np.random.default_rng(3)
    directory = tmp_path_factory.mktemp("sampled")
    lines = []
    for t in range(1, 9):
        for d in range(200):
            stratum = 1 if d < 40 else 2
            relevant = rng.random() < (0.6 if d < 40 else 0.25)
            judged = stratum == 1 or rng.random() < 0.25
            lines.append(f"{t} 0 d{d} {stratum} {int(relevant) if judged else -1}\n")
    qrels = directory / "qrels"
    qrels.write_text("".join(lines))
    runs = []
    for tag, noise in (("x", 30.0), ("y", 80.0)):
        run = []
        for t in range(1, 9):
            order = np.argsort(np.arange(200) + rng.normal(0, noise, 200))[:60]
            run += [f"{t} Q0 d{d} {k} {60 - k} {tag}\n" for k, d in enumerate(order.tolist())]
        path = directory / tag
        path.write_text("".join(run))
        runs.append(path)
    return qrels, runs


def invoke(*args: str | Path) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `trecpool eval ARGS`."""
    result = runner.invoke(cli, ["eval", *map(str, args)])
    return result.exit_code, result.stdout, result.stderr


def per_topic(qrels: Path, run: Path, measure: str, run_topics_only: bool = False) -> np.ndarray:
    """A run's per-topic values of one measure, over the topics its mean is taken over."""
    results = evaluate(read_qrels(qrels), [read_run(run)], [measure], run_topics_only=run_topics_only)
    values = results.values[0, 0]
    return values[~np.isnan(values)]


def scipy_interval(
    values: np.ndarray, seed: int, resamples: int, method: str, level: float = 0.95
) -> tuple[float, float]:
    """scipy.stats.bootstrap's interval of the mean, with the same seed."""
    found = scipy.stats.bootstrap(
        (values,),
        np.mean,
        n_resamples=resamples,
        rng=np.random.default_rng(seed),
        method="bca" if method == "BCa" else "percentile",
        confidence_level=level,
    ).confidence_interval
    return float(found.low), float(found.high)


def near_ties(values: np.ndarray, seed: int, resamples: int) -> int:
    """Replicates whose mean equals the estimate up to rounding: BCa counts an exact tie half below, and which side
    a replicate rounds to differs between any two ways of summing (scipy's and ours), so BCa is compared without."""
    replicates = values[topic_draws(len(values), resamples, seed)].mean(axis=1)
    return int(np.sum(np.abs(replicates - values.mean()) < 1e-12))


@pytest.mark.parametrize("method", ["percentile", "BCa"])
def test_json_intervals_equal_scipy_bootstrap(plain, method: str) -> None:
    qrels, runs = plain
    args = ["--ci", "--ci-method", method, "--ci-resamples", "3000", "--ci-seed", "5", "--ci-level", "0.9"]
    code, out, err = invoke("-m", "AP", "-m", "P@5", "-m", "num_ret", "--format", "json", *args, qrels, *runs)
    assert (code, err) == (0, "")
    document = json.loads(out)
    compared = 0
    for run in runs:
        for measure in ("AP", "P@5"):
            entry = document[run.name][measure]["all"]
            values = per_topic(qrels, run, measure)
            assert len(values) == 12  # every qrels topic: c's missing topics score 0
            assert entry["mean"] == pytest.approx(values.mean(), abs=1e-15)
            assert (entry["level"], entry["method"], entry["sampling"]) == (0.9, method, "none")
            low, high = scipy_interval(values, 5, 3000, method, 0.9)
            if method == "BCa" and near_ties(values, 5, 3000):
                assert entry["ci_low"] <= entry["mean"] <= entry["ci_high"]  # ties count half here, not in scipy
                continue
            assert entry["ci_low"] == pytest.approx(low, abs=1e-12)
            assert entry["ci_high"] == pytest.approx(high, abs=1e-12)
            compared += 1
        assert document[run.name]["num_ret"]["all"] == 10.0 * (8 if run.name == "c" else 12)  # a total, no interval
    assert compared == 6 if method == "percentile" else compared >= 2  # AP of a and b have no near tie


def test_run_topics_only_takes_the_interval_over_the_runs_topics(plain) -> None:
    qrels, runs = plain
    code, out, _ = invoke("-m", "AP", "--ci", "--run-topics-only", "--format", "json", qrels, runs[2])
    assert code == 0
    entry = json.loads(out)["c"]["AP"]["all"]
    values = per_topic(qrels, runs[2], "AP", run_topics_only=True)
    assert len(values) == 8
    low, high = scipy_interval(values, 0, 10_000, "percentile")
    assert (entry["ci_low"], entry["ci_high"]) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))
    assert entry["mean"] == pytest.approx(values.mean())


def test_geometric_mean_gets_the_interval_of_the_mean_log(plain) -> None:
    qrels, runs = plain
    code, out, _ = invoke("-m", "gm_map", "--ci", "--ci-resamples", "2000", "--format", "json", qrels, runs[0])
    assert code == 0
    entry = json.loads(out)["a"]["gm_map"]["all"]
    logs = np.log(np.maximum(per_topic(qrels, runs[0], "AP"), 1e-5))
    low, high = scipy_interval(logs, 0, 2000, "percentile")
    assert entry["ci_low"] == pytest.approx(np.exp(low), rel=1e-12)
    assert entry["ci_high"] == pytest.approx(np.exp(high), rel=1e-12)
    assert entry["ci_low"] <= entry["mean"] <= entry["ci_high"]


def test_csv_columns_and_per_topic_rows(plain) -> None:
    qrels, runs = plain
    code, out, _ = invoke("-q", "-m", "AP", "-m", "num_rel", "--ci", "--format", "csv", "--digits", "4", qrels, runs[0])
    assert code == 0
    table = list(csv.DictReader(io.StringIO(out)))
    assert list(table[0]) == ["run", "measure", "topic", "value", "mean", "ci_low", "ci_high", "level", "method",
                              "sampling"]  # fmt: skip
    per_topic_rows = [row for row in table if row["topic"] != "all"]
    assert len(per_topic_rows) == 2 * 12
    assert all(
        row["value"] and not any(row[c] for c in ("mean", "ci_low", "ci_high", "level")) for row in per_topic_rows
    )
    (ap,) = [row for row in table if row["topic"] == "all" and row["measure"] == "AP"]
    low, high = scipy_interval(per_topic(qrels, runs[0], "AP"), 0, 10_000, "percentile")
    assert (ap["mean"], ap["ci_low"], ap["ci_high"]) == (ap["value"], f"{low:.4f}", f"{high:.4f}")
    assert (ap["level"], ap["method"], ap["sampling"]) == ("0.95", "percentile", "none")
    (total,) = [row for row in table if row["topic"] == "all" and row["measure"] == "num_rel"]
    assert total["value"] and total["mean"] == total["ci_low"] == total["sampling"] == ""


def test_trec_format_adds_two_columns_to_the_means_all_lines_only(plain) -> None:
    qrels, runs = plain
    base = ["-q", "-m", "AP", "-m", "num_ret", "--digits", "4", qrels, *runs]
    _, without, _ = invoke(*base)
    code, with_ci, _ = invoke("--ci", *base)
    assert code == 0
    plain_lines, ci_lines = without.splitlines(), with_ci.splitlines()
    assert len(plain_lines) == len(ci_lines)
    for before, after in zip(plain_lines, ci_lines, strict=True):
        if "\tAP\tall\t" in before:
            assert after.startswith(before + "\t") and len(after.split("\t")) == len(before.split("\t")) + 2
        else:
            assert after == before  # per-topic lines and totals are as without --ci
    assert sum("\tAP\tall\t" in line for line in ci_lines) == 3


def test_without_ci_the_output_is_what_it_was(plain) -> None:
    qrels, runs = plain
    _, out, _ = invoke("-m", "AP", "-m", "num_ret", "--digits", "4", qrels, runs[2])
    assert out.splitlines() == ["AP\tall\t" + out.splitlines()[0].split("\t")[2], "num_ret\tall\t80"]
    _, out, _ = invoke("-m", "P@5", "--format", "csv", qrels, runs[2])
    assert out.splitlines()[0] == "run,measure,topic,value"


@pytest.mark.parametrize("fmt", ["trec", "json", "csv"])
def test_blocks_print_what_one_block_prints(plain, sampled, fmt: str) -> None:
    for qrels, runs, measure in ((*plain, "AP"), (*sampled, "xinfAP")):
        args = ["-m", measure, "-m", "P@5", "--ci", "--ci-resamples", "500", "--format", fmt, qrels, *runs]
        whole = invoke(*args)
        assert whole[0] == 0
        assert invoke("--block-rows", "1", *args)[1] == whole[1]


def test_ci_options_imply_ci(plain) -> None:
    qrels, runs = plain
    assert invoke("-m", "AP", "--ci-seed", "3", qrels, runs[0])[1] == invoke("-m", "AP", "--ci", "--ci-seed", "3",
                                                                            qrels, runs[0])[1]  # fmt: skip
    assert len(invoke("-m", "AP", "--ci-method", "bca", qrels, runs[0])[1].split("\t")) == 5


@pytest.mark.parametrize(
    ("value", "words"),
    [("1.5", "give a fraction between 0 and 1"), ("95", "did you mean 0.95?"), ("0", "not a confidence level"),
     ("-0.1", "not a confidence level"), ("nan", "not a confidence level"), ("high", "is not a valid float")],
)  # fmt: skip
def test_bad_ci_level_exits_2_with_a_clear_message(plain, value: str, words: str) -> None:
    qrels, runs = plain
    code, out, err = invoke("-m", "AP", "--ci", "--ci-level", value, qrels, runs[0])
    assert (code, out) == (2, "")
    assert "--ci-level" in err and words in err


def test_bad_ci_method_and_resamples_exit_2(plain) -> None:
    qrels, runs = plain
    assert invoke("--ci-method", "normal", qrels, runs[0])[0] == 2
    assert invoke("--ci-resamples", "0", qrels, runs[0])[0] == 2


def test_ci_with_moments_exits_2(plain) -> None:
    qrels, runs = plain
    code, _, err = invoke("--moments", "--ci", qrels, runs[0])
    assert code == 2 and "--ci is not available with --moments" in err


def jackknife_variance(qrels: Path, runs: list[Path]) -> np.ndarray:
    """xinfAP's jackknife sampling variance [run, topic], straight from app.evaluation.analyses.budget."""
    prepared = prepare_runs([read_run(run) for run in runs], 1000)
    _, samples = topic_samples(index_lines(prepared, read_qrels(qrels)))
    return np.stack([np.sum(jackknife_components(sample)[0] ** 2, axis=0) for sample in samples], axis=1)


def test_sampled_xinfap_interval_is_the_bootstrap_widened_by_the_jackknife(sampled) -> None:
    qrels, runs = sampled
    args = ["-m", "xinfAP", "-m", "iP@10", "--ci", "--ci-resamples", "4000", "--format", "json", qrels, *runs]
    code, out, err = invoke(*args)
    assert code == 0
    assert err.startswith("note: the qrels are sampled") and "iP@10" in err and "xinfAP" not in err
    document = json.loads(out)
    variance = jackknife_variance(qrels, runs)
    assert np.all(variance.sum(axis=1) > 0)
    z = NormalDist().inv_cdf(0.975)
    for r, run in enumerate(runs):
        entry = document[run.name]["xinfAP"]["all"]
        values = per_topic(qrels, run, "xinfAP")
        low, high = scipy_interval(values, 0, 4000, "percentile")
        mean, se = values.mean(), np.sqrt(variance[r].sum()) / len(values)
        assert entry["sampling"] == "included"
        assert entry["ci_low"] < low - 1e-6 and entry["ci_high"] > high + 1e-6  # wider than the plain bootstrap
        assert entry["ci_low"] == pytest.approx(mean - np.hypot(mean - low, z * se), abs=1e-12)
        assert entry["ci_high"] == pytest.approx(mean + np.hypot(high - mean, z * se), abs=1e-12)
        other = document[run.name]["iP@10"]["all"]
        low, high = scipy_interval(per_topic(qrels, run, "iP@10"), 0, 4000, "percentile")
        assert other["sampling"] == "not included"  # no estimator: the plain interval, marked
        assert (other["ci_low"], other["ci_high"]) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))


def test_unsampled_stratified_qrels_add_nothing(sampled, tmp_path: Path) -> None:
    qrels, runs = sampled
    judged = tmp_path / "judged"
    judged.write_text(
        "".join(line for line in qrels.read_text().splitlines(keepends=True) if not line.endswith("-1\n"))
    )
    code, out, err = invoke("-m", "xinfAP", "--ci", "--format", "json", judged, runs[0])
    assert (code, err) == (0, "")
    entry = json.loads(out)["x"]["xinfAP"]["all"]
    low, high = scipy_interval(per_topic(judged, runs[0], "xinfAP"), 0, 10_000, "percentile")
    assert entry["sampling"] == "none"
    assert (entry["ci_low"], entry["ci_high"]) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))


def test_avs_2021_run(shared_data: Path) -> None:
    avs = shared_data / "trecvid-avs-2021"
    code, out, _ = invoke("--run-topics-only", "-m", "xinfAP", "--ci", "--ci-resamples", "2000", "--format", "json",
                          avs / "avs.qrels.main.tv21", avs / "runs" / "syn7_0")  # fmt: skip
    assert code == 0
    entry = json.loads(out)["syn7_0"]["xinfAP"]["all"]
    assert entry["mean"] == pytest.approx(0.071820010184, abs=1e-9)  # sample_eval.pl's infAP all
    plain = mean_intervals(per_topic(avs / "avs.qrels.main.tv21", avs / "runs" / "syn7_0", "xinfAP", True),
                           n_resamples=2000)  # fmt: skip
    assert entry["sampling"] == "included"
    assert entry["ci_low"] < plain.low[0] < entry["mean"] < plain.high[0] < entry["ci_high"]


def test_mean_intervals_of_matches_the_core_for_several_runs() -> None:
    """The CLI's grouping by topic set gives each run what intervals.mean_intervals gives it on its own topics."""
    from app.cli.evaluate import CiOptions, mean_intervals_of
    from app.evaluation.results import Results

    rng = np.random.default_rng(2)
    values = rng.random((3, 1, 16))
    values[2, 0, [1, 4]] = np.nan  # run 2 lacks two topics (--run-topics-only)
    results = Results(
        ["p", "q", "r"], ["AP"], list("abcdefghijklmnop"), values, ["mean"], ~np.isnan(values[:, 0]), True
    )
    found = mean_intervals_of(results, CiOptions(0.9, "BCa", 999, 4), ["none"])
    for r, run in enumerate(results.runs):
        kept = values[r, 0][~np.isnan(values[r, 0])]
        alone = mean_intervals(kept, level=0.9, method="BCa", n_resamples=999, seed=4)
        assert found[run]["AP"].low == pytest.approx(alone.low[0], abs=1e-14)
        assert found[run]["AP"].high == pytest.approx(alone.high[0], abs=1e-14)
        assert found[run]["AP"].mean == pytest.approx(kept.mean())
