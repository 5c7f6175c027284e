"""tau_b against scipy, tau_AP on hand-worked cases and the properties Yilmaz et al. (2008) state."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from app.evaluation.analyses.kendall import tau_ap, tau_ap_symmetric, tau_b, tau_b_batch

scores = st.lists(st.integers(0, 5), min_size=2, max_size=12)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_tau_b_and_the_batched_version_equal_scipy(data):
    x = data.draw(scores)
    y = data.draw(st.lists(st.integers(0, 5), min_size=len(x), max_size=len(x)))
    expected = stats.kendalltau(x, y, variant="b").statistic
    if np.isnan(expected):
        assert np.isnan(tau_b(x, y)) and np.isnan(tau_b_batch(np.array(x), np.array(y)))
    else:
        assert tau_b(x, y) == pytest.approx(expected, abs=1e-12)
        assert tau_b_batch(np.array([x, x]), np.array([y, y])) == pytest.approx([expected] * 2, abs=1e-12)


# Reference ranking A > B > C > D (scores 4, 3, 2, 1).
REFERENCE = np.array([4.0, 3.0, 2.0, 1.0])


def test_tau_ap_swap_at_the_top():
    # estimated order B, A, C, D
    # i=2 (A): above it B, truly below A -> C=0, 0/1
    # i=3 (C): above it B, A, both truly above C -> 2/2
    # i=4 (D): 3/3
    # tau_AP = 2/3 * (0 + 1 + 1) - 1 = 1/3 ; tau_b = (5 - 1)/6 = 2/3
    estimate = np.array([3.0, 4.0, 2.0, 1.0])
    assert tau_ap(REFERENCE, estimate) == pytest.approx(1 / 3)
    assert tau_b(REFERENCE, estimate) == pytest.approx(2 / 3)


def test_tau_ap_swap_at_the_bottom_costs_less():
    # estimated order A, B, D, C
    # i=2 (B): 1/1 ; i=3 (D): 2/2 ; i=4 (C): A, B above it are correct, D is not -> 2/3
    # tau_AP = 2/3 * (1 + 1 + 2/3) - 1 = 7/9 ; tau_b is still 2/3
    estimate = np.array([4.0, 3.0, 1.0, 2.0])
    assert tau_ap(REFERENCE, estimate) == pytest.approx(7 / 9)
    assert tau_b(REFERENCE, estimate) == pytest.approx(2 / 3)


def test_tau_ap_three_items_middle_swap():
    # reference A > B > C; estimate A, C, B: i=2 (C): A correct -> 1/1; i=3 (B): A correct, C not -> 1/2
    # tau_AP = 2/2 * (1 + 1/2) - 1 = 1/2
    assert tau_ap(np.array([3.0, 2.0, 1.0]), np.array([3.0, 1.0, 2.0])) == pytest.approx(0.5)


@settings(max_examples=100, deadline=None)
@given(st.permutations(list(range(9))))
def test_tau_ap_bounds_identity_and_reversal(order):
    x = np.array(order, dtype=float)
    assert tau_ap(x, x) == pytest.approx(1.0)
    assert tau_ap(x, -x) == pytest.approx(-1.0)
    y = np.arange(9.0)
    assert -1.0 - 1e-12 <= tau_ap(x, y) <= 1.0 + 1e-12
    # the symmetric variant is symmetric; the plain one is not in general (see the hand-worked cases)
    assert tau_ap_symmetric(x, y) == pytest.approx(tau_ap_symmetric(y, x))


def test_tau_ap_is_not_symmetric():
    # reference A>B>C>D, estimate B,A,C,D gives 1/3 (above). Swapping roles: reference B>A>C>D, estimated A,B,C,D:
    # i=2 (B): A above it is truly below B -> 0; i=3, i=4 -> 1 each; also 1/3. Use a rotation to break symmetry:
    x = np.array([4.0, 3.0, 2.0, 1.0])  # A B C D
    y = np.array([1.0, 4.0, 3.0, 2.0])  # estimate B, C, D, A
    # tau_AP(x, y): order B C D A; i=2 (C): B correct 1/1; i=3 (D): 2/2; i=4 (A): 0/3 -> 2/3*(2) - 1 = 1/3
    # tau_AP(y, x): order A B C D, reference B>C>D>A; i=2 (B): A wrong 0; i=3 (C): B right, A wrong 1/2;
    # i=4 (D): 2/3 -> 2/3*(0 + 1/2 + 2/3) - 1 = -2/9
    assert tau_ap(x, y) == pytest.approx(1 / 3)
    assert tau_ap(y, x) == pytest.approx(-2 / 9)


def test_tau_ap_with_tied_scores_is_one_for_identical_vectors():
    x = np.array([0.3, 0.3, 0.1, 0.5])
    assert tau_ap(x, x) == pytest.approx(1.0)
