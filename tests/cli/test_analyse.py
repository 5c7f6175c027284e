"""`trecpool analyse ...` on small fixture files: printed values, plot files, errors on stderr with exit code 2."""

from __future__ import annotations

import json

import numpy as np
from click.testing import CliRunner
from scipy import stats

from app.cli import cli
from app.evaluation.measures.evaluate import evaluate
from tests.cli.analyse_cases import table_row
from tests.evaluation.analyses.brute import mean_over_topics, pooled_ranks


def best_ranks(runs) -> dict:
    """{(topic, doc): best rank} over the fixture's pooled runs (run0, run2, run3)."""
    return pooled_ranks(runs, ["run0", "run2", "run3"])


runner = CliRunner()


def test_pool_depth_prints_brute_force_values_and_writes_a_png(files, tmp_path):
    runs, qrels, qrels_path, run_paths, groups = files
    plot = tmp_path / "depth.png"
    args = ["analyse", "pool-depth", qrels_path, *run_paths, "--groups", groups, "--max-depth", "5"]
    result = runner.invoke(cli, [*args, "--plot", str(plot)])
    assert result.exit_code == 0, result.output
    assert "3 of 5 runs pooled" in result.output
    # random qrels: no depth to infer, so any rank counts; the lines no pooled run retrieved are said and dropped
    assert "cannot infer the pool depth" in result.output and "Depths 1..100 are cut from" in result.output
    unretrieved = sum(
        1 for k in zip(qrels.topics.tolist(), qrels.docs.tolist(), strict=True) if k not in best_ranks(runs)
    )
    assert f"qrels lines no pooled run retrieved: {unretrieved} of {len(qrels)}" in result.output
    assert "dropped at every depth" in result.output
    best = pooled_ranks(runs, ["run0", "run2", "run3"])
    keys = list(zip(qrels.topics.tolist(), qrels.docs.tolist(), strict=True))
    keep = np.array([best.get(k, 10**9) <= 1 for k in keys])  # lines no pooled run retrieved are dropped
    assert table_row(result.output, "1")[1] == str(keep.sum())
    expected = mean_over_topics(qrels, runs, keep, "AP")
    full = mean_over_topics(qrels, runs, np.ones(len(qrels), dtype=bool), "AP")
    for i, run in enumerate(runs):
        row = table_row(result.output, run.tag)
        assert row[1] == f"{full[i]:.4f}" and row[2] == f"{expected[i]:.4f}"
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_leave_out_by_group_and_svg_plot(files, tmp_path):
    runs, qrels, qrels_path, run_paths, groups = files
    plot = tmp_path / "loo.svg"
    args = ["analyse", "leave-out", qrels_path, *run_paths, "--groups", groups, "--by", "group", "--pool-depth", "10"]
    result = runner.invoke(cli, [*args, "--plot", str(plot)])
    assert result.exit_code == 0, result.output
    assert {table_row(result.output, g)[0] for g in "ABC"} == {"A", "B", "C"}
    assert "tau_b =" in result.output and "max drop =" in result.output
    assert b"<svg" in plot.read_bytes()[:400]


def test_agreement_ties_and_stability_commands(files, tmp_path):
    runs, qrels, qrels_path, run_paths, _ = files
    agreement_plot, ties_plot = tmp_path / "agree.svg", tmp_path / "ties.svg"
    args = ["analyse", "agreement", qrels_path, *run_paths, "-m", "AP", "-m", "P@5", "--plot", str(agreement_plot)]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "Measure agreement" in agreement_plot.read_text()
    means = evaluate(qrels, runs, ["AP", "P@5"]).mean()
    assert table_row(result.output, "AP")[1:] == [
        "1.0000",
        f"{stats.kendalltau(means[:, 0], means[:, 1]).statistic:.4f}",
    ]
    result = runner.invoke(cli, ["analyse", "ties", qrels_path, *run_paths, "-m", "P@5", "--plot", str(ties_plot)])
    assert result.exit_code == 0, result.output
    assert "share of topics where all runs tie" in ties_plot.read_text()
    plot = tmp_path / "stab.png"
    args = ["analyse", "stability", qrels_path, *run_paths, "-m", "AP", "--trials", "20", "--plot", str(plot)]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert table_row(result.output, "4")[1].startswith("1.0000")  # all 4 topics: the full ranking
    assert plot.read_bytes()[:4] == b"\x89PNG"


def test_label_noise_command(tmp_path):
    from pathlib import Path

    data = Path(__file__).parents[1] / "data" / "moments"
    plot = tmp_path / "noise.png"
    args = ["analyse", "label-noise", str(data / "run_tagged.tsv"), "--moments", str(data / "gt.tsv")]
    result = runner.invoke(cli, [*args, "-m", "AxIoU@5", "--sigma", "0", "--sigma", "2", "--trials", "10"])
    assert result.exit_code == 0, result.output
    assert "AxIoU@5" in result.output
    result = runner.invoke(cli, [*args, "--trials", "5", "--plot", str(plot)])
    assert result.exit_code == 0 and plot.read_bytes()[:4] == b"\x89PNG"


def test_errors_go_to_stderr_with_exit_code_2(files, tmp_path):
    _, _, qrels_path, run_paths, groups = files
    result = runner.invoke(cli, ["analyse", "pool-depth", str(tmp_path / "missing"), *run_paths])
    assert result.exit_code == 2 and "error" in result.stderr
    result = runner.invoke(cli, ["analyse", "pool-depth", qrels_path, *run_paths, "-m", "nonsense"])
    assert result.exit_code == 2 and "unknown measure" in result.stderr
    result = runner.invoke(cli, ["analyse", "pool-depth", qrels_path, *run_paths, "--plot", "x.gif"])
    assert result.exit_code == 2 and ".png or .svg" in result.stderr
    result = runner.invoke(cli, ["analyse", "leave-out", qrels_path, *run_paths, "--groups", groups, "--by", "x"])
    assert result.exit_code == 2


def test_leave_out_uses_the_pools_depth_inferred_and_printed(shared_data, tmp_path):
    """TREC-COVID round 1 was pooled at depth 7: without --pool-depth the command reads each topic's depth from the
    qrels and says so (7, but 6 for topic 20, whose 7th result of one of these ten pooled runs is unjudged), and the
    qrels lines outside every pooled run's top 7 (judged from the other 46 pooled runs); the result equals the one
    with the same depths given in a file, and shows the bias a depth of 1000 hides."""
    folder = shared_data / "trec-covid-round1"
    base = ["analyse", "leave-out", str(folder / "qrels.txt"), *map(str, sorted((folder / "runs").glob("*.gz")))]
    base += ["--groups", str(folder / "run_groups.tsv")]
    inferred, given, deep = tmp_path / "inferred.json", tmp_path / "given.json", tmp_path / "deep.json"
    result = runner.invoke(cli, [*base, "--output", str(inferred)])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "pool depth per topic: 7 for 29 topics (inferred); 6 for topic 20 (inferred) (100.0% of the pooled" in said
    assert (
        "qrels lines outside every pooled run's top (its topic's pool depth): 7,284 of 8,691 (1,662 relevant)" in said
    )
    assert "Leave one team out: AP, pool depth 6-7 per topic (inferred)" in said
    depths = tmp_path / "depths.txt"
    depths.write_text("# topic depth\n" + "".join(f"{t} {6 if t == 20 else 7}\n" for t in range(1, 31)) + "99 5\n")
    result = runner.invoke(cli, [*base, "--pool-depth", str(depths), "--output", str(given)])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "7 for 29 topics (given); 6 for topic 20 (given)" in said and "topic 99 without qrels lines" in said
    assert runner.invoke(cli, [*base, "--pool-depth", "1000", "--output", str(deep)]).exit_code == 0
    at_7, at_given, at_1000 = (json.loads(p.read_text()) for p in (inferred, given, deep))
    assert at_7["depth"] is None and at_7["depth_source"] == "inferred" and at_given["depth_source"] == "given"
    assert at_7["pool_depths"]["min"] == 6 and at_7["pool_depths"]["max"] == 7 and at_1000["depth"] == 1000
    assert [t["topic"] for t in at_7["pool_depths"]["topics"]] == [str(t) for t in range(1, 31)]
    assert at_7["runs"] == at_given["runs"] and at_7["units"] == at_given["units"] and at_7["by"] == "team"
    assert at_7["residual_lines"] == at_given["residual_lines"] == 7284 and at_7["residual_relevant"] == 1662
    assert at_7["tau_b"] < 0.95 and at_7["max_drop"] > 0.04  # the pool bias shows at the pool's depth ...
    assert at_1000["tau_b"] > 0.99 and at_1000["max_drop"] < 0.001  # ... and hides at max_results


def test_leave_out_runs_on_all_of_trec_covid_round_1(shared_data, tmp_path):
    """All 143 runs, the 56 that contributed to the pool: every topic's depth reads 7 (six unjudged results within the
    pools taken as judging slips), 1,738 qrels lines came from outside the pooled runs' top 7."""
    folder = shared_data / "trec-covid-round1"
    runs = sorted((folder / "runs").glob("*.gz")) + sorted((folder / "runs-more").glob("*.gz"))
    out = tmp_path / "all.json"
    args = ["analyse", "leave-out", str(folder / "qrels.txt"), *map(str, runs)]
    result = runner.invoke(cli, [*args, "--groups", str(folder / "run_groups_all.tsv"), "--output", str(out)])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert (
        "pool depth 7 (inferred from the qrels for each topic; 99.7% of the pooled runs' results judged at the" in said
    )
    assert "6 unjudged results within it taken as judging slips" in said
    data = json.loads(out.read_text())
    assert data["depth"] == 7 and len(data["pooled"]) == 56 and data["residual_lines"] == 1738
    assert data["depth_inference"]["gaps"] == 6 and data["depth_inference"]["unpooled"] == []


def test_leave_out_says_when_the_depth_cannot_be_inferred(files):
    _, _, qrels_path, run_paths, groups = files  # random qrels: no depth covers the pooled runs' results
    result = runner.invoke(cli, ["analyse", "leave-out", qrels_path, *run_paths, "--groups", groups])
    assert result.exit_code == 2 and "cannot infer the pool depth" in result.stderr
