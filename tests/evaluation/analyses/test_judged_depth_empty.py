"""Judged fraction of qrels with no topic (a version cut before any verdict): nothing is judged, nothing fails."""

from __future__ import annotations

import numpy as np

from app.evaluation.analyses.judged_depth import judged_fraction
from app.evaluation.records import Qrels, RunTable


def test_qrels_without_a_topic_give_empty_shares_not_an_error():
    run = RunTable(
        tag="r",
        topics=np.array(["1", "1", "2"]),
        docs=np.array(["d1", "d2", "d3"]),
        ranks=np.array([1, 2, 1]),
        scores=np.array([2.0, 1.0, 1.0]),
        lines=np.array([1, 2, 3]),
    )
    empty = Qrels(np.array([], dtype=str), np.array([], dtype=str), np.array([], dtype=np.int64))
    result = judged_fraction(empty, [run], depths=[1, 5])  # was: zero-size array to reduction operation minimum
    assert result.judged.tolist() == [[0], [0]] and result.retrieved.tolist() == [[0], [0]]
    assert np.isnan(result.overall).all() and np.isnan(result.list_min).all() and np.isnan(result.share).all()
    assert [level["overall"] for level in result.to_dict()["depths"]] == [None, None]
