"""Hand-worked values at the boundaries where a plausible slip would change a result (stratum sample sizes, RR@k).

Each case is chosen so that the obvious wrong variant gives a different number: ceil or banker's rounding instead
of floor(r * n + 0.5), RR@k looking past rank k.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from app.evaluation.formats.trec_files import parse_trec_qrels, parse_trec_run
from app.evaluation.measures.evaluate import evaluate
from app.evaluation.pools.builders import Stratum, build_pool


@dataclass(frozen=True)
class OneRun:
    topics: np.ndarray
    docs: np.ndarray
    scores: np.ndarray


def _run(n_docs: int) -> OneRun:
    """One topic, `n_docs` docs with distinct scores (doc i at rank i + 1)."""
    return OneRun(
        np.full(n_docs, "t1"), np.array([f"d{i:03d}" for i in range(n_docs)]), -np.arange(n_docs, dtype=float)
    )


@pytest.mark.parametrize(
    ("n", "rate", "sampled"),
    [
        (9, 0.25, 2),  # 2.25: floor(2.75) = 2, ceil would take 3
        (10, 0.25, 3),  # 2.5: floor(3.0) = 3, banker's round() and int() would take 2
        (5, 0.5, 3),  # 2.5 again, with another rate
        (7, 0.1, 1),  # 0.7: floor(1.2) = 1, int() would take 0
        (4, 0.1, 0),  # 0.4: floor(0.9) = 0, ceil would take 1
    ],
)
def test_stratum_sample_size_is_floor_of_rate_times_n_plus_a_half(n, rate, sampled):
    pool = build_pool([_run(n)], strata=[Stratum(1, n, rate)], seed=3)
    assert len(pool.docs) == n
    assert int(pool.sampled.sum()) == sampled


def test_second_stratum_is_sized_on_its_own_members():
    pool = build_pool([_run(19)], strata=[Stratum(1, 10, 1.0), Stratum(11, 19, 0.25)], seed=0)
    second = pool.strata == 2
    assert int(second.sum()) == 9 and int(pool.sampled[second].sum()) == 2
    assert bool(pool.sampled[~second].all())


QRELS = "t1 0 d002 1\nt1 0 d000 0\nt2 0 e000 1\n"
RUN = "t1 Q0 d000 1 9 r\nt1 Q0 d001 2 8 r\nt1 Q0 d002 3 7 r\nt2 Q0 e000 1 9 r\n"


@pytest.mark.parametrize(
    ("measure", "t1", "t2"),
    [("RR", 1 / 3, 1.0), ("RR@1", 0.0, 1.0), ("RR@2", 0.0, 1.0), ("RR@3", 1 / 3, 1.0), ("RR@10", 1 / 3, 1.0)],
)
def test_rr_at_k_ignores_relevant_docs_below_rank_k(measure, t1, t2):
    results = evaluate(parse_trec_qrels(QRELS), [parse_trec_run(RUN)], [measure]).to_dict()
    (per_topic,) = results.values()
    assert per_topic[measure]["t1"] == pytest.approx(t1)
    assert per_topic[measure]["t2"] == pytest.approx(t2)
    assert per_topic[measure]["all"] == pytest.approx((t1 + t2) / 2)
