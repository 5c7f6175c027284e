"""Judgements per stratum and inferred relevant per topic: sample_eval.pl's inum_rel, the data manifest's counts,
and a hand-worked case."""

from __future__ import annotations

import numpy as np
import pytest

from app.evaluation.analyses.strata import inferred_relevant, stratum_summary
from app.evaluation.formats.trec_files import read_qrels
from app.evaluation.records import Qrels


def test_hand_worked():
    # topic 1: stratum 1 has 2 judged (1 relevant); stratum 2 has 4 pooled, 2 judged (1 relevant), 2 unjudged.
    # R_hat = 1 * 2/2 + 1 * 4/2 = 3. Topic 2: stratum 1 only, 1 judged relevant: R_hat = 1.
    qrels = Qrels(
        topics=np.array(["1"] * 6 + ["2"]),
        docs=np.array(["a", "b", "c", "d", "e", "f", "a"]),
        grades=np.array([1, 0, 1, 0, -1, -1, 1]),
        strata=np.array([1, 1, 2, 2, 2, 2, 1]),
    )
    summary = stratum_summary(qrels)
    assert summary.topics == ["1", "2"] and summary.strata == [1, 2]
    assert summary.pooled.tolist() == [[2, 4], [1, 0]]
    assert summary.judged.tolist() == [[2, 2], [1, 0]]
    assert summary.relevant.tolist() == [[1, 1], [1, 0]]
    assert summary.inferred.tolist() == pytest.approx([3.0, 1.0])
    assert summary.judged_share.tolist() == pytest.approx([1.0, 0.5])
    assert summary.relevant_share.tolist() == pytest.approx([2 / 3, 0.5])
    data = summary.to_dict()
    assert data["strata"][1]["topic_share_min"] == 0.5 and data["inferred_relevant"] == pytest.approx(4.0)


def test_plain_qrels_are_one_stratum_with_their_relevant_count():
    qrels = Qrels(np.array(["1", "1", "1", "2"]), np.array(["a", "b", "c", "a"]), np.array([2, 0, 1, 0]))
    summary = stratum_summary(qrels)
    assert summary.stratified is False and summary.strata == [0]
    assert summary.inferred.tolist() == [2.0, 0.0] and summary.judged.tolist() == [[3], [1]]
    assert inferred_relevant(qrels)[1].tolist() == [2.0, 0.0]


def test_tv21_equals_sample_eval_and_the_manifest(shared_data):
    base = shared_data / "trecvid-avs-2021"
    summary = stratum_summary(read_qrels(base / "avs.qrels.main.tv21"))
    data = summary.to_dict()
    # MANIFEST.md: stratum 1 15,822 lines all judged (7,021 relevant); stratum 2 19,727 (5,174);
    # stratum 3 88,882 in the pool, 22,869 sampled (3,454 relevant)
    assert [(s["pooled"], s["judged"], s["relevant"]) for s in data["strata"]] == [
        (15822, 15822, 7021),
        (19727, 19727, 5174),
        (88882, 22869, 3454),
    ]
    # sample_eval.pl's inum_rel per topic, printed with 12 decimals, is our R_hat to the last printed digit
    expected = {}
    for line in (base / "expected" / "syn7_0.sample_eval.txt").read_text().splitlines():
        name, topic, value = line.split("\t")[:3]
        if name == "inum_rel":
            expected[topic] = value
    for topic, value in zip(summary.topics, summary.inferred.tolist(), strict=True):
        if topic in expected:
            assert f"{value:.12f}" == expected[topic]
    assert summary.inferred.sum() == pytest.approx(float(expected["all"]), rel=1e-14)
    topic = summary.topics.index("1661")  # the manifest's example: strata of 922, 991 and 3,892 lines
    assert summary.pooled[topic].tolist() == [922, 991, 3892] and summary.relevant[topic].tolist() == [631, 451, 326]
