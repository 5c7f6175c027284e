"""The LARA-style judging order: the model's probabilities, calibrated on the verdicts so far, choose the most
uncertain doc; hand-worked on five docs, the calibration against scipy, ties, fallbacks and replay."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit, logit

from app.evaluation.pools.orders import ORDERS, LlmAssisted, judge_all, make_order, platt_fit, replay, tie_order

DOCS = ["d1", "d2", "d3", "d4", "d5"]
P = {"d1": 0.9, "d2": 0.6, "d3": 0.45, "d4": 0.2, "d5": 0.05}


def scipy_fit(x: np.ndarray, y: np.ndarray, strength: float) -> np.ndarray:
    """The same MAP calibration by a general optimiser: minus the log-likelihood plus the Gaussian prior's penalty."""

    def loss(theta: np.ndarray) -> float:
        p = expit(theta[0] + theta[1] * x)
        penalty = strength / 2 * (theta[0] ** 2 + (theta[1] - 1) ** 2)
        return float(-np.sum(y * np.log(p) + (1 - y) * np.log(1 - p)) + penalty)

    return np.asarray(minimize(loss, np.array([0.0, 1.0]), method="BFGS", options={"gtol": 1e-10}).x)


def test_without_verdicts_the_most_uncertain_model_probability_goes_first():
    # |p - 0.5|: d3 0.05, d2 0.1, d4 0.3, d1 0.4, d5 0.45 (the prior is the identity calibration)
    order = make_order("lara", [DOCS], probabilities=P)
    assert isinstance(order, LlmAssisted) and order.name == "lara" and "lara" in ORDERS
    assert order.plan(5) == ["d3", "d2", "d4", "d1", "d5"]
    assert order.calibrated() == pytest.approx([0.9, 0.6, 0.45, 0.2, 0.05])
    assert not order.random


def test_calibration_after_verdicts_moves_the_order():
    # the model said 0.45 and 0.6, people said not relevant twice: the intercept falls, d1's 0.9 is brought down to
    # ~0.78, nearer 0.5 than d4's ~0.13, so d1 goes before d4 (uncalibrated, d4 would: 0.3 < 0.4)
    order = make_order("lara", [DOCS], probabilities=P)
    assert order.next() == "d3"
    order.record("d3", False)
    assert order.next() == "d2"
    order.record("d2", False)
    expected = scipy_fit(logit(np.array([0.45, 0.6])), np.array([0.0, 0.0]), 1.0)
    assert order.calibration == pytest.approx(tuple(expected), abs=1e-6)
    a, b = expected
    calibrated = expit(a + b * logit(np.array([0.9, 0.2, 0.05])))
    assert calibrated == pytest.approx([0.7773, 0.1255, 0.0346], abs=1e-4)
    assert order.plan(3) == ["d1", "d4", "d5"]
    assert make_order("lara", [DOCS], probabilities=P).plan(5)[2:4] == ["d4", "d1"]


def test_platt_fit_is_the_map_of_the_same_objective_as_scipy_finds():
    rng = np.random.default_rng(4)
    x = rng.normal(0, 2, 60)
    y = (rng.random(60) < expit(0.7 * x - 1.0)).astype(float)
    for strength in (0.1, 1.0, 10.0):
        assert platt_fit(x, y, strength) == pytest.approx(tuple(scipy_fit(x, y, strength)), abs=1e-5)
    # many verdicts pull the fit to the generating calibration; a strong prior keeps it at the identity
    x = rng.normal(0, 2, 4000)
    y = (rng.random(4000) < expit(0.7 * x - 1.0)).astype(float)
    assert platt_fit(x, y, 1.0) == pytest.approx((-1.0, 0.7), abs=0.1)
    assert platt_fit(x[:5], y[:5], 1e6) == pytest.approx((0.0, 1.0), abs=1e-4)


def test_ties_go_to_the_seeded_doc_order_and_docs_without_a_probability_come_first():
    lists = [DOCS]
    place = tie_order(7, "t", 5)  # the seeded doc order (pool order d1..d5)
    by_seed = [DOCS[i] for i in np.argsort(place)]
    tied = make_order("lara", lists, seed=7, topic="t", probabilities=dict.fromkeys(DOCS, 0.3))
    assert tied.plan(5) == by_seed
    partial = make_order("lara", lists, seed=7, topic="t", probabilities={"d1": 0.5, "d2": 0.9, "d3": 0.1})
    missing = [d for d in by_seed if d in ("d4", "d5")]
    assert partial.plan(5)[:2] == missing and partial.plan(5)[2] == "d1"
    fallback = make_order("lara", lists, seed=7, topic="t")  # no probabilities: the seeded doc order
    assert judge_all(fallback, {}) == by_seed


def test_outside_verdicts_calibrate_and_refit_every_waits():
    order = LlmAssisted([DOCS], probabilities=P, refit_every=2)
    order.record("d1", False)  # not proposed: still a calibration point, but the refit waits for a second verdict
    assert order.calibration == (0.0, 1.0) and order.next() == "d3"
    order.record("d3", False)
    expected = scipy_fit(logit(np.array([0.9, 0.45])), np.array([0.0, 0.0]), 1.0)
    assert order.calibration == pytest.approx(tuple(expected), abs=1e-6)
    with pytest.raises(ValueError, match="refit_every"):
        LlmAssisted([DOCS], refit_every=0)


def test_replay_and_new_probabilities_reproduce_the_policy():
    oracle = {"d1": True, "d4": True}
    history = [("d5", False), ("d1", True), ("d3", False)]
    live = make_order("lara", [DOCS], seed=2, topic="9", probabilities=P)
    replay(live, history)
    again = make_order("lara", [DOCS], seed=2, topic="9", probabilities=P)
    assert again.next(dict(history)) == live.next()
    assert again.calibration == live.calibration and again.judged == 3
    # probabilities that arrive later: the live policy given them is the one built with them from the start
    later = {**P, "d2": 0.99, "d4": 0.51}
    live.set_probabilities(later)
    rebuilt = replay(make_order("lara", [DOCS], seed=2, topic="9", probabilities=later), history)
    assert live.calibration == pytest.approx(rebuilt.calibration)
    assert judge_all(live, oracle) == judge_all(rebuilt, oracle) == ["d4", "d2"]


def test_an_outside_verdict_recalibrates_the_pending_proposal():
    # d3 (0.45) is proposed; meanwhile someone judges d1 (the model said 0.9) not relevant: the calibration flattens
    # (d2 0.60 -> ~0.401, d3 0.45 -> ~0.392) and the proposal becomes d2, nearer 0.5
    order = make_order("lara", [DOCS], probabilities=P)
    assert order.next() == "d3"
    order.record("d1", False)
    assert order.calibrated()[1:3] == pytest.approx([0.401, 0.392], abs=1e-3)
    assert order.next() == "d2"
