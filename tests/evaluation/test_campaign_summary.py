"""Report statistics on small hand-worked campaigns."""

from __future__ import annotations

import numpy as np
import pytest

from app.evaluation.records import Qrels, RunTable
from app.evaluation.statistics.campaign_summary import (
    RetrievedTally,
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


@pytest.mark.parametrize("seed", range(5))
def test_a_tally_fed_in_blocks_counts_what_plain_python_counts(seed: int):
    """The report's counts of runs added a block at a time, against sets and counters over every (run, row)."""
    rng = np.random.default_rng(seed)
    qrels = Qrels(
        topics=np.array([str(t) for t in range(3) for _ in range(12)]),
        docs=np.array([f"d{d}" for _ in range(3) for d in range(12)]),
        grades=rng.integers(-1, 3, 36),
    )
    runs, teams = [], []
    for i in range(7):
        rows = [(str(rng.integers(3)), f"d{rng.integers(16)}") for _ in range(int(rng.integers(0, 25)))]
        runs.append(run(f"r{i}", rows))
        teams.append(["team-with-a-long-name", "B", "C"][i % 3])
    tally = RetrievedTally(qrels, max_results=8)
    for lo in range(0, 7, 3):
        tally.add(runs[lo : lo + 3], teams[lo : lo + 3])
    grade = {
        (t, d): g for t, d, g in zip(qrels.topics.tolist(), qrels.docs.tolist(), qrels.grades.tolist(), strict=True)
    }
    returned: dict[tuple[str, str], int] = {}
    found: dict[str, set[tuple[str, str]]] = {team: set() for team in teams}
    for table, team in zip(runs, teams, strict=True):
        per_topic: dict[str, int] = {}
        for t, d in zip(table.topics.tolist(), table.docs.tolist(), strict=True):  # ranked in file order
            per_topic[t] = per_topic.get(t, 0) + 1
            if per_topic[t] <= 8:
                returned[(t, d)] = returned.get((t, d), 0) + 1
                if grade.get((t, d), -1) >= 1:
                    found[team].add((t, d))
    hits = tally.hits_by_team()
    for team, mine in found.items():
        others = set().union(*(found[o] for o in found if o != team))
        assert hits["teams"][team] == {"hits": len(mine), "unique_hits": len(mine - others)}  # type: ignore[index]
    assert hits["found_hits"] == len(set().union(*found.values()))
    expected_false = sorted(
        ((-n, k) for k, n in returned.items() if grade.get(k) == 0), key=lambda x: (x[0], "\x1f".join(x[1]))
    )
    got_false = [((r["topic"], r["shot"]), r["runs"]) for r in tally.frequent_false_positives(n=100)]
    assert got_false == [(k, -n) for n, k in expected_false]
    true = {k: n for k, n in returned.items() if grade.get(k, -1) >= 1}
    got_true = [((r["topic"], r["shot"]), r["runs"]) for r in tally.hard_true_positives(n=100)]
    assert sorted(got_true) == sorted(true.items()) and [n for _, n in got_true] == sorted(true.values())


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
