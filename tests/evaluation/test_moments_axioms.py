"""The AxIoU paper's axioms (supplementary A.1) and its identity AxIoU@K = (1/K) sum_k integral_0^1 R@k,theta.

INV-k: sigma' differs from sigma only at rank k (k > 1), r(sigma_k) < r(sigma'_k) (A.1) and
r(sigma'_k) <= max_{j<k} r(sigma'_j) (A.2)  =>  mean measure unchanged.
MON-k: sigma' differs from sigma only at rank k, A.1 and r(sigma'_k) > max_{j<k} r(sigma'_j) (A.3)
=>  mean measure strictly larger for sigma'.
Systems are given by their relevance matrices [n_topic, list length]; the "Mean" is over topics.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from app.evaluation.moments import ap_at, axiou, dcg_at, recall_at

SCALE = 1000  # relevance values on a 1/1000 grid, so strict increases survive float summation


def satisfies_inv(sigma: np.ndarray, sigma_p: np.ndarray, q: int, k: int) -> bool:
    """True if (sigma, sigma') differ only at topic q, rank k (1-based) and meet A.1 and A.2."""
    diff = np.argwhere(sigma != sigma_p)
    prior = sigma_p[q, : k - 1]
    return (
        diff.tolist() == [[q, k - 1]]
        and k > 1
        and sigma[q, k - 1] < sigma_p[q, k - 1]
        and sigma_p[q, k - 1] <= prior.max()
    )


def satisfies_mon(sigma: np.ndarray, sigma_p: np.ndarray, q: int, k: int) -> bool:
    """True if (sigma, sigma') differ only at topic q, rank k (1-based) and meet A.1 and A.3."""
    diff = np.argwhere(sigma != sigma_p)
    prior = sigma_p[q, : k - 1]
    return (
        diff.tolist() == [[q, k - 1]]
        and sigma[q, k - 1] < sigma_p[q, k - 1]
        and (k == 1 or sigma_p[q, k - 1] > prior.max())
    )


@st.composite
def base_lists(draw, min_len: int = 1):
    """A relevance matrix [n_topic, L] on the 1/1000 grid, a cut-off K and a topic q."""
    n_topic = draw(st.integers(1, 4))
    length = draw(st.integers(min_len, 12))
    cells = st.lists(st.integers(0, SCALE), min_size=length, max_size=length)
    base = np.array(draw(st.lists(cells, min_size=n_topic, max_size=n_topic)), dtype=np.float64) / SCALE
    return base, draw(st.integers(1, 12)), draw(st.integers(0, n_topic - 1))


@st.composite
def inv_pairs(draw):
    """(K, sigma, sigma') meeting INV-k's conditions at some rank k > 1 (possibly beyond K)."""
    base, cutoff, q = draw(base_lists(min_len=2))
    k = draw(st.integers(2, base.shape[1]))
    best = int(round(base[q, : k - 1].max() * SCALE))
    assume(best > 0)
    new = draw(st.integers(1, best))  # r(sigma'_k) <= max_{j<k} r(sigma'_j)   (A.2)
    old = draw(st.integers(0, new - 1))  # r(sigma_k) < r(sigma'_k)             (A.1)
    sigma, sigma_p = base.copy(), base.copy()
    sigma[q, k - 1], sigma_p[q, k - 1] = old / SCALE, new / SCALE
    assert satisfies_inv(sigma, sigma_p, q, k)
    return cutoff, sigma, sigma_p


@st.composite
def mon_pairs(draw):
    """(K, sigma, sigma') meeting MON-k's conditions at some rank k <= K."""
    base, cutoff, q = draw(base_lists())
    k = draw(st.integers(1, min(cutoff, base.shape[1])))
    best = int(round(base[q, : k - 1].max() * SCALE)) if k > 1 else 0
    assume(best < SCALE)
    new = draw(st.integers(best + 1, SCALE))  # r(sigma'_k) > max_{j<k} r(sigma'_j)   (A.3)
    old = draw(st.integers(0, new - 1))  # r(sigma_k) < r(sigma'_k)                (A.1)
    sigma, sigma_p = base.copy(), base.copy()
    sigma[q, k - 1], sigma_p[q, k - 1] = old / SCALE, new / SCALE
    assert satisfies_mon(sigma, sigma_p, q, k)
    return cutoff, sigma, sigma_p


THETAS = (0.1, 0.3, 0.5, 0.7, 0.9)


@settings(max_examples=300, deadline=None)
@given(inv_pairs())
def test_axiou_satisfies_inv_k(case):
    cutoff, sigma, sigma_p = case
    assert axiou(sigma, cutoff).mean() == axiou(sigma_p, cutoff).mean()


@settings(max_examples=300, deadline=None)
@given(mon_pairs())
def test_axiou_satisfies_mon_k(case):
    cutoff, sigma, sigma_p = case
    assert axiou(sigma, cutoff).mean() < axiou(sigma_p, cutoff).mean()


@settings(max_examples=200, deadline=None)
@given(inv_pairs())
def test_recall_satisfies_inv_k(case):
    cutoff, sigma, sigma_p = case
    for theta in THETAS:
        for strict in (False, True):
            assert recall_at(sigma, cutoff, theta, strict).mean() == recall_at(sigma_p, cutoff, theta, strict).mean()


@settings(max_examples=200, deadline=None)
@given(mon_pairs())
def test_dcg_satisfies_mon_k(case):
    cutoff, sigma, sigma_p = case
    assert dcg_at(sigma, cutoff).mean() < dcg_at(sigma_p, cutoff).mean()


def test_recall_violates_mon_k():
    # rank 1 improves from IoU .3 to .4 (A.1; A.3 holds trivially at k = 1), but both are below theta = .5
    sigma, sigma_p = np.array([[0.3, 0.1]]), np.array([[0.4, 0.1]])
    assert satisfies_mon(sigma, sigma_p, 0, 1)
    assert recall_at(sigma, 2, 0.5).mean() == recall_at(sigma_p, 2, 0.5).mean() == 0.0
    # and above the threshold: a second hit at rank 2 (.6 -> .9, the new best) changes nothing either
    sigma, sigma_p = np.array([[0.55, 0.6]]), np.array([[0.55, 0.9]])
    assert satisfies_mon(sigma, sigma_p, 0, 2)
    assert recall_at(sigma, 2, 0.5).mean() == recall_at(sigma_p, 2, 0.5).mean() == 1.0
    # AxIoU tells both pairs apart: (.3 + .3)/2 < (.4 + .4)/2 and (.55 + .6)/2 < (.55 + .9)/2
    assert axiou(np.array([0.3, 0.1]), 2) < axiou(np.array([0.4, 0.1]), 2)
    assert axiou(np.array([0.55, 0.6]), 2) < axiou(np.array([0.55, 0.9]), 2)


def test_ap_violates_inv_k_and_mon_k():
    # INV-k at k = 2: .2 -> .6 is below the best (.8) above it, yet AP@2,.5 goes from (1 + 1/2)/2 to (1 + 1)/2
    sigma, sigma_p = np.array([[0.8, 0.2]]), np.array([[0.8, 0.6]])
    assert satisfies_inv(sigma, sigma_p, 0, 2)
    assert ap_at(sigma, 2, 0.5)[0] == pytest.approx(0.75)
    assert ap_at(sigma_p, 2, 0.5)[0] == pytest.approx(1.0)
    # MON-k at k = 1: .3 -> .4 stays below theta: AP@2,.5 is 0 for both
    sigma, sigma_p = np.array([[0.3, 0.0]]), np.array([[0.4, 0.0]])
    assert satisfies_mon(sigma, sigma_p, 0, 1)
    assert ap_at(sigma, 2, 0.5)[0] == ap_at(sigma_p, 2, 0.5)[0] == 0.0


def test_dcg_violates_inv_k():
    # same pair as for AP: DCG@2 rises by (.6 - .2) / log2(3) although rank 2 is not the best
    sigma, sigma_p = np.array([[0.8, 0.2]]), np.array([[0.8, 0.6]])
    assert satisfies_inv(sigma, sigma_p, 0, 2)
    assert dcg_at(sigma_p, 2)[0] - dcg_at(sigma, 2)[0] == pytest.approx(0.4 / np.log2(3))
    assert axiou(sigma, 2)[0] == axiou(sigma_p, 2)[0] == pytest.approx(0.8)


def integral_of_recall(r: np.ndarray, k: int, strict: bool) -> float:
    """Exact integral over theta in [0, 1] of R@k,theta: a step function, constant between the r values."""
    cuts = np.unique(np.concatenate([[0.0, 1.0], r[(r > 0) & (r < 1)]]))
    mids, widths = (cuts[:-1] + cuts[1:]) / 2, np.diff(cuts)
    values = np.array([recall_at(r, k, theta, strict) for theta in mids])
    return float((values * widths).sum())


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=0, max_size=12), st.integers(1, 12), st.booleans())
def test_axiou_is_recall_integrated_over_theta_and_averaged_over_k(values, cutoff, strict):
    r = np.array(values, dtype=np.float64)
    marginal = sum(integral_of_recall(r, k, strict) for k in range(1, cutoff + 1)) / cutoff
    assert abs(axiou(r, cutoff) - marginal) <= 1e-9


def test_identity_on_a_fine_theta_grid():
    # the same identity by a plain midpoint rule over 20,000 thresholds, for one list
    r = np.array([0.12, 0.61, 0.33, 0.87])
    grid = (np.arange(20_000) + 0.5) / 20_000
    lists = np.broadcast_to(r, (len(grid), len(r)))  # one row per threshold, thresholds as a column
    riemann = np.mean([recall_at(lists, k, grid[:, None]) for k in (1, 2, 3, 4, 5)])
    # AxIoU@5 = (.12 + .61 + .61 + .87 + .87) / 5
    assert axiou(r, 5) == pytest.approx(3.08 / 5)
    assert riemann == pytest.approx(3.08 / 5, abs=1e-4)
