"""tau_AP beside tau_b in measure agreement and stability, checked on hand-worked cases and the one-pair tau_ap."""

from __future__ import annotations

import numpy as np
import pytest

from app.evaluation.analyses.kendall import tau_ap, tau_ap_batch, tau_ap_symmetric, tau_ap_symmetric_batch
from app.evaluation.analyses.measure_agreement import agreement_result
from app.evaluation.analyses.stability import stability


def test_batched_tau_ap_equals_the_one_pair_function_ties_included():
    rng = np.random.default_rng(7)
    x = rng.integers(0, 4, size=(200, 6)).astype(float)  # many ties
    y = rng.integers(0, 4, size=(200, 6)).astype(float)
    assert np.array_equal(tau_ap_batch(x, y), [tau_ap(a, b) for a, b in zip(x, y, strict=True)])
    assert np.allclose(tau_ap_symmetric_batch(x, y), [tau_ap_symmetric(a, b) for a, b in zip(x, y, strict=True)])


def test_agreement_tau_ap_by_hand():
    # runs A, B, C; measure m1 ranks A > B > C, m2 ranks B > C > A
    means = np.array([[3.0, 1.0], [2.0, 3.0], [1.0, 2.0]])
    result = agreement_result(["m1", "m2"], means)
    # m2's ranking against m1's: B (above nothing), C (B above, truly better: 1/1), A (B, C above, both truly worse:
    # 0/2): 2/(3-1) * (1 + 0) - 1 = 0. m1's against m2's: B under A (A truly worse: 0/1), C under A, B (B truly
    # better, A not: 1/2): 1 * (0 + 1/2) - 1 = -1/2
    assert np.allclose(result["tau_ap"], [[1.0, 0.0], [-0.5, 1.0]])
    assert np.allclose(result["tau_b"], [[1.0, -1 / 3], [-1 / 3, 1.0]])  # one concordant pair of three


def test_stability_tau_ap_by_hand():
    # topic 1 ranks A > B > C, topic 2 ranks B > C > A; full means A 2, B 2.5, C 1.5: B > A > C
    values = np.array([[3.0, 1.0], [2.0, 3.0], [1.0, 2.0]])[:, None, :]  # [run, measure, topic]
    result = stability(values, ["m"], trials=400, seed=2, sizes=[1, 2])
    data = result.to_dict()
    # split halves of one topic each are topic 1 against topic 2 (in either order): tau_AP(t2 | t1) = 0 and
    # tau_AP(t1 | t2) = -1/2 (see the agreement case), symmetric -1/4 in every trial; tau_b -1/3
    (halves,) = data["split_halves"]["m"]
    assert halves["tau_ap_mean"] == pytest.approx(-0.25) and halves["tau_ap_var"] == pytest.approx(0.0)
    assert halves["mean"] == pytest.approx(-1 / 3)
    # subset of one topic against the full ranking B > A > C: topic 1 (A, B, C) gives 2/2 * (0/1 + 2/2) - 1 = 0,
    # topic 2 (B, C, A) gives 1 * (1/1 + 1/2) - 1 = 1/2; the trials draw each about half the time
    one, both = data["subset_vs_full"]["m"]
    share = one["tau_ap_mean"] / 0.5  # trials that drew topic 2
    assert 0.4 < share < 0.6
    assert one["tau_ap_var"] == pytest.approx(0.25 * share * (1 - share))  # values 0 and 1/2 only
    assert both["tau_ap_mean"] == pytest.approx(1.0) and both["tau_ap_var"] == pytest.approx(0.0)
