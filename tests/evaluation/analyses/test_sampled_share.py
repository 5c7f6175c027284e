"""The overview's judged share (ranks of the sampled strata): a hand-worked case and its limits."""

from __future__ import annotations

import numpy as np
import pytest

from app.evaluation.analyses.judged_depth import sampled_share
from app.evaluation.records import Qrels, RunTable


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
    """Ranks 2..4 of each list. Judged: topic 1 b (0), c (1), d (-1: pooled, not sampled); topic 2 y (0).

    a: topic 1 = x a b c d -> ranks 2..4 = a b c -> b, c judged: 2/3; topic 2 = z y -> rank 2 = y: 1/1.
    b: topic 1 = d -> nothing at ranks 2..4, not a list here; topic 2 = y z w q -> z w q: 0/3.
    Lists: 2/3, 1, 0 -> min 0, max 1, mean (2/3 + 1 + 0) / 3 = 5/9.
    """
    qrels = Qrels(np.array(["1", "1", "1", "2"]), np.array(["b", "c", "d", "y"]), np.array([0, 1, -1, 0]))
    a = _run("a", [("1", "x"), ("1", "a"), ("1", "b"), ("1", "c"), ("1", "d"), ("2", "z"), ("2", "y")])
    b = _run("b", [("1", "d"), ("2", "y"), ("2", "z"), ("2", "w"), ("2", "q")])
    result = sampled_share(qrels, [a, b], first=2, last=4, max_results=10)
    assert result.topics == ["1", "2"]
    assert result.judged.tolist() == [[2, 1], [0, 0]] and result.retrieved.tolist() == [[3, 1], [0, 3]]
    data = result.to_dict()
    assert (data["first_rank"], data["last_rank"], data["lists"]) == (2, 4, 3)
    assert [data["min"], data["max"], data["mean"]] == pytest.approx([0.0, 1.0, 5 / 9])
    assert data["runs"] == [
        {"run": "a", "lists": 2, "min": pytest.approx(2 / 3), "max": 1.0, "mean": pytest.approx(5 / 6)},
        {"run": "b", "lists": 1, "min": 0.0, "max": 0.0, "mean": 0.0},
    ]
    whole = sampled_share(qrels, [a, b], max_results=10).to_dict()  # ranks 1..max_results
    assert (whole["first_rank"], whole["last_rank"]) == (1, 10)
    # every rank: a 2/5 and 1/2; b topic 1 = d, pooled but not sampled: 0/1; topic 2: y of 4 = 1/4
    assert [whole["min"], whole["max"], whole["mean"]] == pytest.approx([0.0, 0.5, (2 / 5 + 1 / 2 + 0 + 1 / 4) / 4])


def test_rejects_ranks_out_of_order():
    qrels = Qrels(np.array(["1"]), np.array(["a"]), np.array([1]))
    with pytest.raises(ValueError, match="ranks"):
        sampled_share(qrels, [_run("a", [("1", "a")])], first=5, last=4)
    with pytest.raises(ValueError, match="ranks"):
        sampled_share(qrels, [_run("a", [("1", "a")])], first=0)
