"""Leave-one-out analyses against brute force: filtered qrels text + pytrec_eval on TREC-COVID round 1."""

from __future__ import annotations

import csv
import gzip
from collections import defaultdict
from functools import cache
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval

from app.evaluation.analyses import leave_out, pool_depth, read_run_groups
from app.evaluation.formats.trec_files import read_qrels, read_run
from app.evaluation.prepared_runs import prepare_runs
from tests.evaluation.analyses.brute import mean_over_topics, random_collection, trec_order

COVID = "trec-covid-round1"  # under the shared data folder (the shared_data fixture)


@cache
def covid(folder: Path):
    """Runs parsed by the product, plus the brute force's own view: text rows, groups, qrels text lines."""
    run_paths = sorted((folder / "runs").glob("*.gz"))
    runs = [read_run(p) for p in run_paths]
    rows = {}
    for path in run_paths:
        per_topic: dict[str, list[tuple[float, str]]] = defaultdict(list)
        with gzip.open(path, "rt") as handle:
            for line in handle:
                topic, _, doc, _, score, _ = line.split()
                per_topic[topic].append((float(score), doc))
        rows[path.name[: -len(".gz")]] = per_topic
    with open(folder / "run_groups.tsv") as handle:
        table = list(csv.DictReader(handle, delimiter="\t"))
    lines = (folder / "qrels.txt").read_text().splitlines()
    return runs, rows, table, lines


def _ordered(per_topic: dict[str, list[tuple[float, str]]], k: int) -> dict[str, list[str]]:
    out = {}
    for topic, items in per_topic.items():
        items = sorted(items, key=lambda item: item[1], reverse=True)
        items.sort(key=lambda item: item[0], reverse=True)
        out[topic] = [doc for _, doc in items[:k]]
    return out


_RUN_DICTS: dict[int, dict] = {}


def _run_dicts(rows) -> dict[str, dict[str, dict[str, float]]]:
    """pytrec_eval's {topic: {doc: score}} view of every run, built once."""
    if id(rows) not in _RUN_DICTS:
        _RUN_DICTS[id(rows)] = {
            name: {t: {doc: score for score, doc in items} for t, items in per_topic.items()}
            for name, per_topic in rows.items()
        }
    return _RUN_DICTS[id(rows)]


def _pytrec_map(qrels_lines: list[str], rows, topics: list[str]) -> dict[str, float]:
    """trec_eval -c MAP of every run: pytrec_eval's per-topic map, mean over `topics`, 0 where missing."""
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    for line in qrels_lines:
        topic, _, doc, grade = line.split()
        qrels[topic][doc] = int(grade)
    evaluator = pytrec_eval.RelevanceEvaluator(dict(qrels), {"map"})
    out = {}
    for name, run in _run_dicts(rows).items():
        values = evaluator.evaluate(run)
        out[name] = sum(values[t]["map"] for t in topics if t in values) / len(topics)
    return out


@pytest.mark.parametrize("depth", [20, 1000])
def test_covid_leave_one_group_out_equals_filtered_qrels_and_pytrec_eval(depth, shared_data):
    folder = shared_data / COVID
    runs, rows, table, lines = covid(folder)
    team = {r["run"]: r["team"] for r in table}
    pooled = [r["run"] for r in table if r["contributed_judgments"] == "yes"]
    # brute force: which teams' pooled runs rank each (topic, doc) within `depth`
    contributors: dict[tuple[str, str], set[str]] = defaultdict(set)
    for name in pooled:
        for topic, docs in _ordered(rows[name], depth).items():
            for doc in docs:
                contributors[(topic, doc)].add(team[name])
    topics = sorted({line.split()[0] for line in lines})
    expected_full = _pytrec_map(lines, rows, topics)

    groups = read_run_groups(folder / "run_groups.tsv")
    names = [r.tag for r in runs]
    result = leave_out(
        read_qrels(folder / "qrels.txt"),
        runs,
        units=groups.units(names, "group"),
        by="group",
        pooled=groups.pooled_runs(names),
        depth=depth,
    )
    assert result.original == pytest.approx([expected_full[n] for n in names], abs=1e-9)
    assert len(result.units) == 10
    for u, unit in enumerate(result.units):
        kept = [line for line in lines if contributors.get((line.split()[0], line.split()[2]), set()) != {unit}]
        assert result.removed_lines[u] == len(lines) - len(kept) > 0
        expected = _pytrec_map(kept, rows, topics)
        assert result.unit_scores[u] == pytest.approx([expected[n] for n in names], abs=1e-9), unit
        for i, name in enumerate(names):
            if team[name] == unit:
                assert result.reduced[i] == pytest.approx(expected[name], abs=1e-9)
    assert result.max_drop > 0
    assert result.max_drop == pytest.approx(float(np.max(result.original - result.reduced)))
    assert 0.5 < result.tau_b <= 1.0


def test_covid_pool_depth_is_exact_at_full_depth_and_matches_pytrec_eval_at_shallow_depths(shared_data):
    folder = shared_data / COVID
    runs, rows, table, lines = covid(folder)
    pooled = [r["run"] for r in table if r["contributed_judgments"] == "yes"]
    qrels = read_qrels(folder / "qrels.txt")
    prepared = prepare_runs(runs)
    result = pool_depth(qrels, prepared, pooled=pooled, depths=[1, 5, 50, 1000])
    assert result.tau_b[-1] == pytest.approx(1.0)
    assert result.tau_ap[-1] == pytest.approx(1.0)
    assert result.lines[-1] == len(lines)
    assert result.tau_b[0] < 0.9  # a depth-1 pool does reorder the runs
    best: dict[tuple[str, str], int] = {}
    for name in pooled:
        for topic, docs in _ordered(rows[name], 1000).items():
            for rank, doc in enumerate(docs, start=1):
                best[(topic, doc)] = min(best.get((topic, doc), rank), rank)
    topics = sorted({line.split()[0] for line in lines})
    names = [r.tag for r in runs]
    for i, d in enumerate([1, 5, 50]):
        kept = []
        for line in lines:
            key = (line.split()[0], line.split()[2])
            if best.get(key, 0) <= d:  # lines no pooled run retrieved stay (outside="keep")
                kept.append(line)
        expected = _pytrec_map(kept, rows, topics)
        assert result.scores[i] == pytest.approx([expected[n] for n in names], abs=1e-9)
        assert result.lines[i] == len(kept)


@pytest.mark.parametrize("by", ["run", "group", "type"])
def test_leave_out_equals_brute_force_on_random_runs(by):
    runs, qrels = random_collection(11, n_run=8, n_topic=4)
    units = {
        "run": [r.tag for r in runs],
        "group": ["g0", "g0", "g1", "g1", "g2", "g2", "g3", "g3"],
        "type": ["auto", "manual", "auto", "auto", "manual", "auto", "auto", "auto"],
    }[by]
    pooled = ["run0", "run1", "run2", "run4", "run6"]
    depth = 8
    result = leave_out(qrels, runs, units=units, by=by, pooled=pooled, depth=depth)
    contributors: dict[tuple[str, str], set[str]] = defaultdict(set)
    for run, unit in zip(runs, units, strict=True):
        if run.tag in pooled:
            for topic, docs in trec_order(run).items():
                for doc in docs[:depth]:
                    contributors[(topic, doc)].add(unit)
    keys = list(zip(qrels.topics.tolist(), qrels.docs.tolist(), strict=True))
    full = mean_over_topics(qrels, runs, np.ones(len(qrels), dtype=bool), "AP")
    assert result.original == pytest.approx(full, abs=1e-12)
    for u, unit in enumerate(result.units):
        keep = np.array([contributors.get(k, set()) != {unit} for k in keys])
        assert result.removed_lines[u] == (~keep).sum()
        assert result.unit_scores[u] == pytest.approx(mean_over_topics(qrels, runs, keep, "AP"), abs=1e-12)
    for i in range(len(runs)):
        expected_rank = 1 + sum(full[j] > result.reduced[i] for j in range(len(runs)) if j != i)
        original_rank = 1 + sum(full[j] > full[i] for j in range(len(runs)))
        assert result.rank_change[i] == expected_rank - original_rank
    assert (result.delta <= 1e-12).any()
    if by == "run":  # a run that is not pooled contributed nothing
        assert result.removed_lines[result.units.index("run3")] == 0


def test_leave_out_with_another_measure_uses_the_evaluator():
    runs, qrels = random_collection(5, n_run=5)
    result = leave_out(qrels, runs, measure="nDCG@10", depth=5)
    contributors: dict[tuple[str, str], set[str]] = defaultdict(set)
    for run in runs:
        for topic, docs in trec_order(run).items():
            for doc in docs[:5]:
                contributors[(topic, doc)].add(run.tag)
    keys = list(zip(qrels.topics.tolist(), qrels.docs.tolist(), strict=True))
    for i, run in enumerate(runs):
        keep = np.array([contributors.get(k, set()) != {run.tag} for k in keys])
        assert result.reduced[i] == pytest.approx(mean_over_topics(qrels, runs, keep, "nDCG@10")[i], abs=1e-12)
