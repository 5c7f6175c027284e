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
from app.evaluation.grading.prepared_runs import prepare_runs
from app.evaluation.records import Qrels
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


def _strict_topic_depths(rows, pooled: list[str], judged: set[tuple[str, str]], topics: list[str]) -> dict[str, int]:
    """Brute force: per topic the largest d such that every pooled run's top d for it is judged."""
    depths = {}
    for topic in topics:
        lists = [_ordered(rows[name], 1000).get(topic, []) for name in pooled]
        d = 0
        while any(len(docs) > d for docs in lists) and all(
            (topic, docs[d]) in judged for docs in lists if len(docs) > d
        ):
            d += 1
        depths[topic] = d
    return depths


@pytest.mark.parametrize("depth", [None, 20, 1000])
def test_covid_leave_one_group_out_equals_filtered_qrels_and_pytrec_eval(depth, shared_data):
    """None: each topic's own pool depth, inferred from the qrels (7, but 6 for topic 20: one of these ten pooled runs'
    7th result for it is unjudged); the brute force then uses the same per-topic depths."""
    folder = shared_data / COVID
    runs, rows, table, lines = covid(folder)
    team = {r["run"]: r["team"] for r in table}
    pooled = [r["run"] for r in table if r["contributed_judgments"] == "yes"]
    topics = sorted({line.split()[0] for line in lines})
    judged = {(line.split()[0], line.split()[2]) for line in lines}
    if depth is None:
        topic_depth = _strict_topic_depths(rows, pooled, judged, topics)
        assert {t for t, d in topic_depth.items() if d != 7} == {"20"} and topic_depth["20"] == 6
    else:
        topic_depth = dict.fromkeys(topics, depth)
    # brute force: which teams' pooled runs rank each (topic, doc) within its topic's depth
    contributors: dict[tuple[str, str], set[str]] = defaultdict(set)
    for name in pooled:
        for topic, docs in _ordered(rows[name], 1000).items():
            for doc in docs[: topic_depth.get(topic, 0)]:
                contributors[(topic, doc)].add(team[name])
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
    assert result.depth_source == ("inferred" if depth is None else "given")
    assert result.depth == (None if depth is None else depth)
    assert dict(zip(result.pool.topics, result.pool.depths.tolist(), strict=True)) == topic_depth
    listed = result.to_dict()["pool_depths"]["topics"]
    assert [row["topic"] for row in listed] == sorted(topics, key=int)  # natural order: 1, 2, ..., 10, ...
    residual = [line for line in lines if (line.split()[0], line.split()[2]) not in contributors]
    assert result.residual_lines == len(residual) > 0
    assert result.residual_relevant == sum(int(line.split()[3]) > 0 for line in residual)
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
    if depth is None:  # at the pool's depth the bias shows (tau_b 0.908, AP down 0.050 for one run) ...
        assert result.tau_b == pytest.approx(0.9078, abs=1e-4) and result.max_drop == pytest.approx(0.0498, abs=1e-4)
    if depth == 1000:  # ... at max_results it hides (0.991, 0.0009)
        assert result.tau_b > 0.99 and result.max_drop < 0.001


def test_covid_pool_depth_is_inferred_from_the_judged_share_per_rank(shared_data):
    """Brute force: the share of the pooled runs' entries at each rank that the qrels judge; 7 is the last >= 99%."""
    from app.evaluation.analyses import index_lines, infer_pool_depth
    from app.evaluation.analyses.lines import run_mask

    folder = shared_data / COVID
    runs, rows, table, lines = covid(folder)
    pooled = [r["run"] for r in table if r["contributed_judgments"] == "yes"]
    judged = {(line.split()[0], line.split()[2]) for line in lines}
    topics = {line.split()[0] for line in lines}
    share = []
    for rank in range(1, 11):
        hits = total = 0
        for name in pooled:
            for topic, docs in _ordered(rows[name], rank).items():
                if topic in topics and len(docs) >= rank:
                    total += 1
                    hits += (topic, docs[rank - 1]) in judged
        share.append(hits / total)
    prepared = prepare_runs(runs)
    estimate = infer_pool_depth(
        index_lines(prepared, read_qrels(folder / "qrels.txt")), run_mask(prepared.names, pooled)
    )
    assert estimate.share[:10] == pytest.approx(share)
    assert share[:6] == [1.0] * 6 and share[6] >= 0.99 > share[7]
    assert estimate.depth == 7
    # every run taken as pooled (what the service did with imported qrels): no depth covers them, said so
    with pytest.raises(ValueError, match="cannot infer the pool depth"):
        infer_pool_depth(index_lines(prepared, read_qrels(folder / "qrels.txt")), run_mask(prepared.names, None))


def test_pool_depth_inference_on_a_constructed_pool():
    """Qrels = the pooled runs' top 3 plus a few deeper judgements: the inferred depth is 3, whatever the extras."""
    runs, _ = random_collection(13, n_run=6, n_topic=5)
    pooled = ["run0", "run1", "run3"]
    lines = set()
    for run in runs:
        if run.tag in pooled:
            for topic, docs in trec_order(run).items():
                lines.update((topic, doc) for doc in docs[:3])
    for run in runs[:2]:
        for topic, docs in trec_order(run).items():
            lines.add((topic, docs[5]))  # a judged doc below the pool, as by another route
    topics, docs = zip(*sorted(lines), strict=True)
    qrels = Qrels(topics=np.array(topics), docs=np.array(docs), grades=np.ones(len(docs), dtype=np.int64))
    result = leave_out(qrels, runs, pooled=pooled)
    assert result.depth == 3 and result.depth_source == "inferred"
    assert result.to_dict()["depth_inference"]["share_at_depth"] == 1.0
    assert leave_out(qrels, runs, pooled=pooled, depth=3).unit_scores.tolist() == result.unit_scores.tolist()


@pytest.mark.parametrize("outside", ["drop", "keep"])
def test_covid_pool_depth_matches_pytrec_eval_at_shallow_depths(outside, shared_data):
    folder = shared_data / COVID
    runs, rows, table, lines = covid(folder)
    pooled = [r["run"] for r in table if r["contributed_judgments"] == "yes"]
    qrels = read_qrels(folder / "qrels.txt")
    prepared = prepare_runs(runs)
    result = pool_depth(qrels, prepared, pooled=pooled, depths=[1, 5, 50, 1000], outside=outside)
    assert result.outside == outside
    if outside == "keep":  # every line kept at the deepest depth: the full qrels
        assert result.tau_b[-1] == pytest.approx(1.0) and result.tau_ap[-1] == pytest.approx(1.0)
        assert result.lines[-1] == len(lines)
    else:  # the lines no pooled run retrieved (judged from other runs) are gone at every depth
        assert result.lines[-1] < len(lines) and result.tau_b[-1] < 1.0
    assert result.tau_b[0] < 0.9  # a depth-1 pool does reorder the runs
    best: dict[tuple[str, str], int] = {}
    for name in pooled:
        for topic, docs in _ordered(rows[name], 1000).items():
            for rank, doc in enumerate(docs, start=1):
                best[(topic, doc)] = min(best.get((topic, doc), rank), rank)
    topics = sorted({line.split()[0] for line in lines})
    names = [r.tag for r in runs]
    unretrieved = 0 if outside == "keep" else 10**9  # the depth at which a line no pooled run retrieved enters
    for i, d in enumerate([1, 5, 50, 1000]):
        kept = [line for line in lines if best.get((line.split()[0], line.split()[2]), unretrieved) <= d]
        assert result.lines[i] == len(kept)
        if d < 1000:
            expected = _pytrec_map(kept, rows, topics)
            assert result.scores[i] == pytest.approx([expected[n] for n in names], abs=1e-9)


def test_covid_depth_one_pool_has_westervelds_line_count(shared_data):
    """Depth 1 by Westerveld's procedure: the judged docs some pooled run ranks first (243 lines, not 1,900)."""
    folder = shared_data / COVID
    runs, rows, table, lines = covid(folder)
    pooled = [r["run"] for r in table if r["contributed_judgments"] == "yes"]
    judged = {(line.split()[0], line.split()[2]) for line in lines}
    tops = set()
    for name in pooled:
        for topic, items in rows[name].items():
            best_score = max(score for score, _ in items)
            top_doc = max(doc for score, doc in items if score == best_score)  # trec_eval: ties by docno descending
            tops.add((topic, top_doc))
    expected = len(tops & judged)
    result = pool_depth(read_qrels(folder / "qrels.txt"), runs, pooled=pooled, depths=[1])
    assert result.outside == "drop"  # the default
    assert result.lines[0] == expected == 243
    kept_relevant = sum(1 for line in lines if (line.split()[0], line.split()[2]) in tops and int(line.split()[3]) > 0)
    assert result.relevant[0] == kept_relevant


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
