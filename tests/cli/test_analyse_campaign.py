"""`trecpool analyse judged-fraction|qrels-versions|swap-rate|type-significance|novelty|run-vs-median|efficiency|
strata|moment-effectiveness` on TREC-COVID round 1 (six of its runs) and small moment files: each --json equals the
core function called directly on the same files, each --plot is written, bad options exit 2 naming them."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from app.cli import cli
from app.evaluation.analyses import read_run_groups
from app.evaluation.analyses.efficiency import score_vs_time
from app.evaluation.analyses.judged_depth import judged_fraction
from app.evaluation.analyses.moment_effectiveness import moment_effectiveness
from app.evaluation.analyses.novelty import unique_relevant
from app.evaluation.analyses.qrels_comparison import compare_qrels
from app.evaluation.analyses.strata import stratum_summary
from app.evaluation.analyses.swap_rate import swap_rates
from app.evaluation.analyses.topic_comparison import topic_comparison
from app.evaluation.analyses.type_significance import significance_by_type
from app.evaluation.formats.trec_files import read_qrels, read_run
from app.evaluation.grading.prepared_runs import prepare_runs
from app.evaluation.measures.evaluate import evaluate
from tests.cli.analyse_cases import MEASURES, moment_reference

runner = CliRunner()


@pytest.fixture()
def covid(shared_data):
    """TREC-COVID round 1: the qrels, six runs (from four teams, two run types) and the groups file."""
    folder = shared_data / "trec-covid-round1"
    runs = sorted((folder / "runs").glob("*.gz"))[:6]
    return folder / "qrels.txt", runs, folder / "run_groups.tsv"


def _invoke(*args: object) -> str:
    result = runner.invoke(cli, ["analyse", *map(str, args)])
    assert result.exit_code == 0, result.output
    return result.output


def _same(path, expected: dict) -> dict:
    """The --json file's data, asserted equal to `expected` (through JSON, as the file holds it)."""
    data = json.loads(path.read_text())
    assert data == json.loads(json.dumps(expected))
    return data


def test_qrels_analyses_equal_the_core(covid, tmp_path):
    qrels_path, run_paths, groups = covid
    qrels, tables = read_qrels(qrels_path), [read_run(p) for p in run_paths]
    prepared = prepare_runs(tables, 1000)
    out = tmp_path / "out.json"

    _invoke("judged-fraction", qrels_path, *run_paths, "--depth", 1, "--depth", 7, "--depth", 100, "--output", out)
    data = _same(out, judged_fraction(qrels, prepared, depths=[1, 7, 100]).to_dict())
    assert [d["depth"] for d in data["depths"]] == [1, 7, 100] and data["depths"][2]["overall"] < 0.6

    plot = tmp_path / "novelty.svg"
    _invoke("novelty", qrels_path, *run_paths, "--groups", groups, "--output", out, "--plot", plot)
    teams = read_run_groups(groups).units([t.tag for t in tables], "group")
    data = _same(out, unique_relevant(qrels, prepared, teams).to_dict())
    assert data["found"] > data["unique"] > 0 and "unique of" in plot.read_text()

    _invoke("strata", qrels_path, "--output", out, "--plot", tmp_path / "strata.png")
    data = _same(out, stratum_summary(qrels).to_dict())
    assert data["strata"][0]["judged"] == len(qrels) and (tmp_path / "strata.png").read_bytes()[:4] == b"\x89PNG"

    # a second version: the first topic's relevant documents judged not relevant
    strict = tmp_path / "strict.txt"
    lines = [line.split() for line in qrels_path.read_text().splitlines()]
    strict.write_text("".join(f"{t} 0 {d} {0 if t == '1' else g}\n" for t, _, d, g in lines))
    plot = tmp_path / "versions.svg"
    args = ["qrels-versions", *run_paths, "--qrels", qrels_path, "--qrels", strict, "-m", "AP", "--output", out]
    _invoke(*args, "--plot", plot)
    expected = compare_qrels(["qrels.txt", "strict.txt"], [qrels, read_qrels(strict)], prepared, measure="AP")
    data = _same(out, expected.to_dict())
    assert data["tau_b"][0][1] < 1 and data["judgements"]["pairs"][0]["kappa"] < 1
    assert "tau_b(qrels.txt, strict.txt)" in plot.read_text()


def test_score_analyses_equal_the_core(covid, tmp_path):
    qrels_path, run_paths, groups = covid
    qrels, tables = read_qrels(qrels_path), [read_run(p) for p in run_paths]
    reference = evaluate(qrels, tables, ["AP"])
    names, ap, means = reference.runs, reference.values[:, 0, :], reference.mean()[:, 0]
    out = tmp_path / "out.json"

    plot = tmp_path / "swap.svg"
    _invoke(
        "swap-rate", qrels_path, *run_paths, "--trials", 100, "--sizes", "3,5-15:5", "--output", out, "--plot", plot
    )
    expected = swap_rates(ap, names, measure="AP", trials=100, sizes=[3, 5, 10, 15])
    data = _same(out, expected.to_dict())
    assert data["min_comparisons"] == 10 and data["bin_width"] == 0.01 and "Swap rate (100 trials" in plot.read_text()

    args = ["type-significance", qrels_path, *run_paths, "--groups", groups, "--resamples", 500, "--seed", 3]
    _invoke(*args, "--output", out, "--plot", tmp_path / "types.svg")
    types = read_run_groups(groups).units(names, "type")
    expected = significance_by_type(names, types, ap, n_resamples=500, seed=3)
    data = _same(out, {"measure": "AP", "by": "runtype", **expected.to_dict()})
    assert {g["type"] for g in data["types"]} == set(types)

    plot = tmp_path / "median.svg"
    _invoke("run-vs-median", qrels_path, *run_paths, "--run", names[1], "--output", out, "--plot", plot)
    _same(out, topic_comparison(names, reference.topics, ap, measure="AP").to_dict())
    drawn = plot.read_text()
    assert names[1] in drawn and not any(name in drawn for name in names if name != names[1])

    times = tmp_path / "times.tsv"
    times.write_text("run\tseconds\n" + "".join(f"{n}\t{2.0**i}\n" for i, n in enumerate(names[:4])))
    _invoke("efficiency", qrels_path, *run_paths, "--times", times, "--output", out, "--plot", tmp_path / "eff.svg")
    seconds = np.array([2.0**i for i in range(4)] + [np.nan, np.nan])
    data = _same(out, score_vs_time(names, means, seconds, measure="AP").to_dict())
    assert data["n_timed"] == 4


def test_moment_effectiveness_command(moment_files, tmp_path):
    truth, runs = moment_files
    out, plot = tmp_path / "fig5.json", tmp_path / "fig5.png"
    args = [*runs, "--moments", truth, *[x for m in MEASURES for x in ("-m", m)], "--output", out, "--plot", plot]
    _invoke("moment-effectiveness", *args)
    names, _, values = moment_reference(truth, runs, MEASURES)
    data = json.loads(out.read_text())
    expected = moment_effectiveness(names, MEASURES, values.mean(axis=2)).to_dict()
    assert data["runs"] == expected["runs"] and data["sort_by"] == "mean R@K,theta"
    for got, want in zip(data["measures"], expected["measures"], strict=True):
        assert got["scores"] == pytest.approx(want["scores"])
    assert plot.read_bytes()[:4] == b"\x89PNG"
    _invoke("moment-effectiveness", *args[:-4], "--sort-by", "AxIoU@5", "--output", out)
    assert json.loads(out.read_text())["sort_by"] == "AxIoU@5"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["swap-rate", "{qrels}", "{run}", "{run2}", "--bin-width", "0"], "--bin-width"),
        (["type-significance", "{qrels}", "{run}", "{run2}", "--groups", "{groups}", "--method", "anova"], "--method"),
        (["qrels-versions", "{run}", "--qrels", "{qrels}"], "at least two"),
        (["efficiency", "{qrels}", "{run}", "--times", "{bad_times}"], "line 1"),
        (["run-vs-median", "{qrels}", "{run}", "--run", "nobody"], "--run"),
        (["judged-fraction", "{qrels}", "{run}", "--depth", "0"], "--depth"),
    ],
)
def test_bad_options_exit_2_naming_them(tmp_path, args, message):
    files = {
        "qrels": tmp_path / "qrels",
        "run": tmp_path / "run",
        "run2": tmp_path / "run2",
        "groups": tmp_path / "groups",
        "bad_times": tmp_path / "times",
    }
    files["qrels"].write_text("1 0 d1 1\n1 0 d2 0\n2 0 d1 1\n")
    files["run"].write_text("1 Q0 d2 1 0.9 r\n1 Q0 d1 2 0.5 r\n2 Q0 d1 1 0.5 r\n")
    files["run2"].write_text("1 Q0 d1 1 0.9 s\n2 Q0 d2 1 0.5 s\n")
    files["groups"].write_text("run\tteam\truntype\nr\tA\tauto\ns\tB\tauto\n")
    files["bad_times"].write_text("r 12\n")
    result = runner.invoke(cli, ["analyse", *[a.format(**files) for a in args]])
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.stderr.split())
