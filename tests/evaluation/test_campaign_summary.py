"""Report statistics on small hand-worked campaigns."""

from __future__ import annotations

import numpy as np
import pytest

from app.evaluation.records import Qrels, RunTable
from app.evaluation.statistics.campaign_summary import (
    easy_and_hard,
    frequent_false_positives,
    hard_true_positives,
    hits_by_team,
    judgement_summary,
    top_runs_per_topic,
    topic_box_stats,
)


def run(tag: str, rows: list[tuple[str, str]]) -> RunTable:
    """A run ranking rows in order (scores descending)."""
    n = len(rows)
    return RunTable(
        tag=tag,
        topics=np.array([t for t, _ in rows], dtype=object),
        docs=np.array([d for _, d in rows], dtype=object),
        ranks=np.arange(1, n + 1),
        scores=np.arange(n, 0, -1.0),
        lines=np.arange(1, n + 1),
    )


QRELS = Qrels(
    topics=np.array(["1", "1", "1", "2", "2"], dtype=object),
    docs=np.array(["a", "b", "c", "a", "x"], dtype=object),
    grades=np.array([1, 0, 1, 0, -1]),
)
RUNS = [
    run("r1", [("1", "a"), ("1", "b"), ("2", "a")]),
    run("r2", [("1", "b"), ("1", "c"), ("2", "a")]),
    run("r3", [("1", "b"), ("1", "z")]),
]


def test_judgement_summary():
    assert judgement_summary(QRELS) == [
        {"topic": "1", "judged": 3, "hits": 2, "relevant_share": 2 / 3},
        {"topic": "2", "judged": 1, "hits": 0, "relevant_share": 0.0},
    ]


def test_hits_by_team():
    # hits: (1,a) found by r1 (team A); (1,c) found by r2 (team B) -> both unique, 2 of 2
    result = hits_by_team(QRELS, RUNS, ["A", "B", "B"], max_results=1000)
    assert result["teams"] == {"A": {"hits": 1, "unique_hits": 1}, "B": {"hits": 1, "unique_hits": 1}}
    assert (result["found_hits"], result["unique_hits"], result["unique_share"]) == (2, 2, 1.0)
    # cut at depth 1: r1 finds (1,a) (its top doc); r2's top is b -> one hit
    assert hits_by_team(QRELS, RUNS, ["A", "B", "B"], max_results=1)["found_hits"] == 1


def test_false_positives_and_hard_true_positives():
    # (1,b) not relevant, returned by 3 runs; (2,a) not relevant, by 2
    assert frequent_false_positives(QRELS, RUNS, 1000) == [
        {"topic": "1", "shot": "b", "runs": 3},
        {"topic": "2", "shot": "a", "runs": 2},
    ]
    # relevant: (1,a) by 1 run, (1,c) by 1 run: ordered by count, then key
    assert hard_true_positives(QRELS, RUNS, 1000) == [
        {"topic": "1", "shot": "a", "runs": 1},
        {"topic": "1", "shot": "c", "runs": 1},
    ]


def test_easy_and_hard_threshold_is_the_midpoint_of_all_scores():
    scores = np.array([[0.9, 0.1, 0.5], [0.8, 0.2, 0.3], [0.7, 0.0, 0.6]])  # [run, topic]
    result = easy_and_hard(scores, ["t1", "t2", "t3"], n=1)
    assert result["threshold"] == 0.45  # (0.0 + 0.9) / 2
    assert result["easy"][0]["topic"] == "t1" and result["easy"][0]["runs_above"] == 3
    assert result["easy"][0]["mean_of_runs_above"] == np.mean([0.9, 0.8, 0.7])
    assert result["hard"][0]["topic"] == "t2" and result["hard"][0]["runs_below"] == 3
    assert [t["runs_above"] for t in result["topics"]] == [3, 0, 2]


def test_box_stats_and_top_runs():
    scores = np.array([[0.1, np.nan], [0.3, 0.5], [0.2, 0.4], [0.4, 0.6]])
    box = topic_box_stats(scores, ["1", "2"])
    assert box[0]["median"] == 0.25 and box[0]["q1"] == pytest.approx(0.175) and box[0]["n"] == 4
    assert box[1]["n"] == 3 and box[1]["median"] == 0.5
    assert top_runs_per_topic(scores, ["1", "2"], ["a", "b", "c", "d"], n=2) == {
        "1": [{"run": "d", "score": 0.4}, {"run": "b", "score": 0.3}],
        "2": [{"run": "d", "score": 0.6}, {"run": "b", "score": 0.5}],
    }
