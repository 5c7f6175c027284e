"""The TRECVID novelty score: a hand-worked campaign, and plain-Python sets on seeded random runs."""

from __future__ import annotations

import numpy as np
import pytest

from app.evaluation.analyses.novelty import novelty_scores
from app.evaluation.records import Qrels, RunTable
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
    """Teams T1 = runs a, b and T2 = run c; max_results = 3; qrels: topic 1 s1 s2 s3 relevant (s2 grade 2), f1 f2 not;
    topic 2 s4 relevant, f3 not; u is unjudged.

    a: 1 -> s1 f1 s2, 2 -> s4 f3.  b: 1 -> s2 f2 u.  c: 1 -> s3 f1 f2 (s1 at rank 4, past the cut), 2 -> s4 f3.
    Teams returning each shot in their top 3, topic 1: s1 {T1}, s2 {T1}, u {T1}, s3 {T2}, f1 {T1, T2}, f2 {T1, T2};
    topic 2: s4 {T1, T2}, f3 {T1, T2}.

    The reading (no penalty): a run's unique hits per topic, summed.
      a: topic 1 = s1, s2 (b returned s2 too, but b is a's own team) = 2; topic 2 = 0 (s4: c of T2 returned it);
         total 2.
      b: topic 1 = s2 = 1 (u is unjudged: no hit); topic 2 = 0 (no answer); total 1.
      c: topic 1 = s3 = 1 (s1 is past c's cut, so c neither earns it nor makes it common); topic 2 = 0; total 1.
    Common false shots (judged 0, another team returned them): a: f1 | f3 = [1, 1]; b: f2 = [1, 0]; c: f1, f2 | f3
    = [2, 1].
    The optional penalty, per common false shot:
      1:   a: (2 - 1) + (0 - 1) = 0;  b: (1 - 1) + 0 = 0;  c: (1 - 2) + (0 - 1) = -2.
      0.5: a: (2 - 0.5) + (0 - 0.5) = 1.0;  b: 1 - 0.5 = 0.5;  c: (1 - 1.0) + (0 - 0.5) = -0.5.
    """
    qrels = Qrels(
        np.array(["1", "1", "1", "1", "1", "2", "2"]),
        np.array(["s1", "s2", "s3", "f1", "f2", "s4", "f3"]),
        np.array([1, 2, 1, 0, 0, 1, 0]),
    )
    a = _run("a", [("1", "s1"), ("1", "f1"), ("1", "s2"), ("2", "s4"), ("2", "f3")])
    b = _run("b", [("1", "s2"), ("1", "f2"), ("1", "u")])
    c = _run("c", [("1", "s3"), ("1", "f1"), ("1", "f2"), ("1", "s1"), ("2", "s4"), ("2", "f3")])
    result = novelty_scores(qrels, [a, b, c], ["T1", "T1", "T2"], max_results=3)
    assert result.topics == ["1", "2"]
    assert result.penalty == 0.0
    assert result.unique_true.tolist() == [[2, 0], [1, 0], [1, 0]]
    assert result.common_false.tolist() == [[1, 1], [1, 0], [2, 1]]
    assert result.per_topic.tolist() == [[2.0, 0.0], [1.0, 0.0], [1.0, 0.0]]
    assert result.total.tolist() == [2.0, 1.0, 1.0]
    assert result.to_dict()["runs"] == [
        {"run": "a", "team": "T1", "score": 2.0, "unique_true": 2, "common_false": 2},
        {"run": "b", "team": "T1", "score": 1.0, "unique_true": 1, "common_false": 1},
        {"run": "c", "team": "T2", "score": 1.0, "unique_true": 1, "common_false": 3},
    ]
    # uniqueness is by team: were b of a third team, s2 would be common to T1 and T3, a unique hit of nobody
    apart = novelty_scores(qrels, [a, b, c], ["T1", "T3", "T2"], max_results=3)
    assert apart.unique_true.tolist() == [[1, 0], [0, 0], [1, 0]]
    assert apart.total.tolist() == [1.0, 0.0, 1.0]
    # every run counts: without c, s4 is a's alone (topic 2 = 1) and s3 nobody's
    assert novelty_scores(qrels, [a, b], ["T1", "T1"], max_results=3).unique_true.tolist() == [[2, 1], [1, 0]]
    one = novelty_scores(qrels, [a, b, c], ["T1", "T1", "T2"], max_results=3, penalty=1.0)
    assert one.per_topic.tolist() == [[1.0, -1.0], [0.0, 0.0], [-1.0, -1.0]]
    assert one.total.tolist() == [0.0, 0.0, -2.0]
    half = novelty_scores(qrels, [a, b, c], ["T1", "T1", "T2"], max_results=3, penalty=0.5)
    assert half.total.tolist() == [1.0, 0.5, -0.5]
    assert half.to_dict() == {
        "penalty": 0.5,
        "topics": 2,
        "runs": [
            {"run": "a", "team": "T1", "score": 1.0, "unique_true": 2, "common_false": 2},
            {"run": "b", "team": "T1", "score": 0.5, "unique_true": 1, "common_false": 1},
            {"run": "c", "team": "T2", "score": -0.5, "unique_true": 1, "common_false": 3},
        ],
    }


def test_rejects_a_negative_penalty_and_a_team_list_of_the_wrong_length():
    runs, qrels = random_collection(1, n_run=2, n_topic=2)
    with pytest.raises(ValueError, match="penalty"):
        novelty_scores(qrels, runs, ["A", "B"], penalty=-1)
    with pytest.raises(ValueError, match="one team per run"):
        novelty_scores(qrels, runs, ["A"])


@pytest.mark.parametrize(("seed", "penalty"), [(0, 0.0), (3, 0.25), (11, 2.0)])
def test_equals_plain_python_sets(seed, penalty):
    runs, qrels = random_collection(seed, n_run=7, n_topic=4)
    rng = np.random.default_rng(seed)
    grades = np.where(rng.random(len(qrels.grades)) < 0.2, -1, qrels.grades)  # stratified: pooled, not sampled
    qrels = Qrels(  # and a topic no run answers
        np.append(qrels.topics, ["t9", "t9"]), np.append(qrels.docs, ["d000", "d001"]), np.append(grades, [1, 0])
    )
    teams = ["A", "A", "B", "C", "C", "C", "D"]
    grade = dict(zip(zip(qrels.topics.tolist(), qrels.docs.tolist(), strict=True), qrels.grades.tolist(), strict=True))
    returned = [{(t, d) for t, docs in trec_order(run, 15).items() for d in docs} for run in runs]
    topics = sorted(set(qrels.topics.tolist()))
    result = novelty_scores(qrels, runs, teams, max_results=15, penalty=penalty)
    assert result.topics == topics
    for r in range(len(runs)):
        others = set().union(*(returned[j] for j in range(len(runs)) if teams[j] != teams[r]))
        for k, topic in enumerate(topics):
            mine = {p for p in returned[r] if p[0] == topic}
            unique_true = sum(1 for p in mine if p not in others and grade.get(p, -1) >= 1)
            common_false = sum(1 for p in mine if p in others and grade.get(p, -1) == 0)
            assert (result.unique_true[r, k], result.common_false[r, k]) == (unique_true, common_false)
            assert result.per_topic[r, k] == pytest.approx(unique_true - penalty * common_false)
    assert result.unique_true.sum() > 0 and result.common_false.sum() > 0
    assert result.total.tolist() == pytest.approx(result.per_topic.sum(axis=1).tolist())
