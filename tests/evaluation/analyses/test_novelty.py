"""Unique relevant shots: a hand-worked case, plain-Python sets, and the report's own per-team count on TREC-COVID."""

from __future__ import annotations

import numpy as np
import pytest

from app.evaluation.analyses.groups import read_run_groups
from app.evaluation.analyses.novelty import unique_relevant
from app.evaluation.formats.trec_files import read_qrels, read_run
from app.evaluation.records import Qrels, RunTable
from app.evaluation.statistics.campaign_summary import hits_by_team
from tests.evaluation.analyses.brute import random_collection, trec_order


def _run(tag: str, rows: list[tuple[str, str]]) -> RunTable:
    n = len(rows)
    return RunTable(
        tag=tag,
        topics=np.array([t for t, _ in rows]),
        docs=np.array([d for _, d in rows]),
        ranks=np.arange(1, n + 1),
        scores=np.arange(n, 0, -1, dtype=np.float64),  # in file order
        lines=np.arange(1, n + 1),
    )


def test_hand_worked():
    # relevant: topic 1 d1 d2 d3 d4, topic 2 e1; x is judged not relevant.
    # team T1 = runs a, b; team T2 = run c. a finds d1 d2 (x is not relevant), b finds d2 d3 and e1,
    # c finds d3 and e1; its d4 is at rank 3, past max_results = 2.
    qrels = Qrels(
        np.array(["1", "1", "1", "1", "1", "2"]),
        np.array(["d1", "d2", "d3", "d4", "x", "e1"]),
        np.array([1, 2, 1, 1, 0, 1]),
    )
    a = _run("a", [("1", "d1"), ("1", "d2"), ("1", "x")])
    b = _run("b", [("1", "d2"), ("1", "d3"), ("2", "e1")])
    c = _run("c", [("1", "d3"), ("1", "x"), ("1", "d4"), ("2", "e1")])
    result = unique_relevant(qrels, [a, b, c], ["T1", "T1", "T2"], max_results=2)
    assert result.topics == ["1", "2"] and result.teams == ["T1", "T2"]
    assert result.run_hits.tolist() == [[2, 0], [2, 1], [1, 1]]
    assert result.run_unique.tolist() == [[2, 0], [1, 0], [0, 0]]  # d1, d2 only T1 found
    assert result.team_hits.tolist() == [[3, 1], [1, 1]]
    assert result.team_unique.tolist() == [[2, 0], [0, 0]]
    assert result.found.tolist() == [3, 1] and result.unique.tolist() == [2, 0] and result.relevant.tolist() == [4, 1]
    data = result.to_dict()
    assert data["teams"] == [{"team": "T1", "unique": 2, "hits": 4}, {"team": "T2", "unique": 0, "hits": 2}]
    assert [r["run"] for r in data["runs"]] == ["a", "b", "c"]
    assert data["unique_share"] == pytest.approx(2 / 4)


@pytest.mark.parametrize("seed", [0, 5])
def test_equals_plain_python_sets(seed):
    runs, qrels = random_collection(seed, n_run=6, n_topic=4)
    teams = ["A", "A", "B", "C", "C", "C"]
    relevant = {
        (t, d)
        for t, d, g in zip(qrels.topics.tolist(), qrels.docs.tolist(), qrels.grades.tolist(), strict=True)
        if g >= 1
    }
    found = [{(t, d) for t, docs in trec_order(run, 15).items() for d in docs if (t, d) in relevant} for run in runs]
    by_team = {team: set().union(*(f for f, t in zip(found, teams, strict=True) if t == team)) for team in "ABC"}
    result = unique_relevant(qrels, runs, teams, max_results=15)
    for r, run_found in enumerate(found):
        others = set().union(*(by_team[t] for t in "ABC" if t != teams[r]))
        assert result.run_hits[r].sum() == len(run_found)
        assert result.run_unique[r].sum() == len(run_found - others)
    for k, team in enumerate("ABC"):
        others = set().union(*(by_team[t] for t in "ABC" if t != team))
        assert result.team_hits[k].sum() == len(by_team[team])
        assert result.team_unique[k].sum() == len(by_team[team] - others)
    everything = set().union(*found)
    assert result.found.sum() == len(everything)
    assert result.unique.sum() == sum(
        len(by_team[t] - set().union(*(by_team[o] for o in "ABC" if o != t))) for t in "ABC"
    )


def test_trec_covid_agrees_with_the_reports_team_count(shared_data):
    base = shared_data / "trec-covid-round1"
    qrels = read_qrels(base / "qrels.txt")
    runs = [read_run(p) for p in sorted((base / "runs").glob("*.gz"))]
    groups = read_run_groups(base / "run_groups.tsv")
    teams = [groups.team[run.tag] for run in runs]
    result = unique_relevant(qrels, runs, teams)
    summary = hits_by_team(qrels, runs, teams, 1000)  # string keys and np.unique: another path to the same sets
    assert result.found.sum() == summary["found_hits"] and result.unique.sum() == summary["unique_hits"]
    for k, team in enumerate(result.teams):
        assert result.team_hits[k].sum() == summary["teams"][team]["hits"]
        assert result.team_unique[k].sum() == summary["teams"][team]["unique_hits"]
    sorted_unique = [row["unique"] for row in result.to_dict()["teams"]]
    assert sorted_unique == sorted(sorted_unique, reverse=True) and sum(sorted_unique) == summary["unique_hits"]
