"""`trecpool analyse budget`: the seeded stratified sample is the pool builder's, the JSON is the core's on it, a
census is exact (interval of width 0 at the full-judgement AP, advice stop), and `--json FILE|-` writes it."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from app.cli import cli
from app.evaluation.analyses.budget import sampled_budget, sampled_strata
from app.evaluation.formats.trec_files import read_qrels, read_run
from app.evaluation.grading.prepared_runs import prepare_runs
from app.evaluation.measures.evaluate import evaluate
from app.evaluation.pools.builders import build_pool
from app.services.analysis_registry import json_safe

runner = CliRunner()


def test_budget_json_is_the_core_on_the_pool_builders_sample(files, tmp_path):
    _, _, qrels_path, run_paths, _ = files
    args = ["analyse", "budget", qrels_path, *run_paths, "--sampled", "6-20:0.5", "--seed", "7", "--replicates", "50"]
    result = runner.invoke(cli, [*args, "--json", "-"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    runs = [read_run(p) for p in run_paths]
    core = sampled_budget(read_qrels(qrels_path), prepare_runs(runs), ["6-20:0.5"], seed=7, replicates=50)
    assert data == json.loads(json.dumps(json_safe(core.to_dict())))
    # the sample drawn is the one the pool builder draws with that seed from the same runs
    pool = build_pool(runs, strata=sampled_strata(["6-20:0.5"]), seed=7)
    assert (data["pooled"], data["judged"]) == (len(pool), int(pool.sampled.sum()))
    assert [(s["first"], s["last"], s["share"]) for s in data["strata"]] == [(1, 5, 1.0), (6, 20, 0.5)]
    drawn = {(t, d) for t, d, g in zip(core.qrels.topics, core.qrels.docs, core.qrels.grades, strict=True) if g >= 0}
    assert drawn == {(t, d) for t, d, s in zip(pool.topics, pool.docs, pool.sampled, strict=True) if s}
    for run in data["runs"]:
        assert run["ci_low"] <= run["mean"] <= run["ci_high"] and run["level"] == 0.95 and not run["biased"]
    assert data["advice"]["advice"] in ("stop", "continue") and data["expected_tau"] is not None
    # --json FILE: the same JSON in the file, the tables on stdout
    saved = tmp_path / "budget.json"
    result = runner.invoke(cli, [*args, "--json", str(saved)])
    assert result.exit_code == 0, result.output
    assert json.loads(saved.read_text()) == data
    assert "expected tau_b" in result.stdout and "ci_high" in result.stdout


def test_a_census_is_exact(files):
    _, _, qrels_path, run_paths, _ = files
    result = runner.invoke(cli, ["analyse", "budget", qrels_path, *run_paths, "--sampled", "1-20:1", "--json", "-"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["judged"] == data["pooled"] and data["advice"]["advice"] == "stop" and data["expected_tau"] == 1.0
    assert data["advice"]["next"] == [] and all(t["reasons"] == ["census"] for t in data["topics"])
    # every pooled doc judged: xinfAP is AP against the qrels restricted to the pool (docs outside it not relevant)
    runs = [read_run(p) for p in run_paths]
    qrels = read_qrels(qrels_path)
    pool = build_pool(runs, depth=20)
    pooled = {(t, d) for t, d in zip(pool.topics, pool.docs, strict=True)}
    inside = np.array([(t, d) in pooled for t, d in zip(qrels.topics, qrels.docs, strict=True)])
    reference = evaluate(qrels.subset(inside), runs, ["AP"])
    means = dict(zip(reference.runs, reference.mean()[:, 0].tolist(), strict=True))
    for run in data["runs"]:
        assert run["mean"] == pytest.approx(means[run["run"]], abs=1e-4)
        assert run["ci_low"] == run["ci_high"] == run["mean"] == run["xinfap"]


def test_bad_strata_are_errors(files):
    _, _, qrels_path, run_paths, _ = files
    for bad, said in (("6-20", "A-B:share"), ("6-20:2", "share in (0, 1]"), ("1-10:0.5,5-20:0.5", "overlap")):
        result = runner.invoke(cli, ["analyse", "budget", qrels_path, *run_paths, "--sampled", bad])
        assert result.exit_code == 2 and said in " ".join(result.stderr.split()), result.stderr
    result = runner.invoke(cli, ["analyse", "budget", qrels_path, *run_paths])
    assert result.exit_code == 2 and "--sampled" in result.stderr
