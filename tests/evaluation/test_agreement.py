"""Cohen's kappa against hand-worked values; the neighbour rule against brute force."""

from __future__ import annotations

import numpy as np
import pytest

from app.evaluation.statistics.agreement import cohen_kappa, neighbour_disagreements


def test_kappa_hand_worked():
    # 10 items: both yes 4, both no 3, A yes/B no 2, A no/B yes 1 -> po = 0.7;
    # pA(yes) = 0.6, pB(yes) = 0.5 -> pe = 0.6*0.5 + 0.4*0.5 = 0.5 -> kappa = (0.7-0.5)/0.5 = 0.4
    a = np.array([1, 1, 1, 1, 0, 0, 0, 1, 1, 0])
    b = np.array([1, 1, 1, 1, 0, 0, 0, 0, 0, 1])
    assert cohen_kappa(a, b) == pytest.approx(0.4, abs=1e-12)


def test_kappa_edges():
    assert cohen_kappa(np.array(["r", "r"]), np.array(["r", "r"])) == 1.0
    assert cohen_kappa(np.array([1, 0, 1, 0]), np.array([0, 1, 0, 1])) == pytest.approx(-1.0)
    assert np.isnan(cohen_kappa(np.array([]), np.array([])))


def test_kappa_matches_definition_on_random_three_way_labels():
    rng = np.random.default_rng(3)
    for _ in range(50):
        a, b = rng.integers(0, 3, 40), rng.integers(0, 3, 40)
        po = np.mean(a == b)
        pe = sum(np.mean(a == c) * np.mean(b == c) for c in range(3))
        assert cohen_kappa(a, b) == pytest.approx((po - pe) / (1 - pe), abs=1e-12)


def test_neighbour_rule_against_brute_force():
    rng = np.random.default_rng(11)
    n = 300
    groups = rng.integers(0, 6, n)
    positions = np.array([i for i in range(n)])
    rng.shuffle(positions)
    labels = rng.integers(0, 2, n)
    got = neighbour_disagreements(groups, positions, labels, window=5)
    for i in range(n):
        expected = any(
            groups[j] == groups[i] and abs(positions[j] - positions[i]) <= 5 and labels[j] != labels[i]
            for j in range(n)
            if j != i
        )
        assert got[i] == expected


def test_far_neighbours_do_not_count():
    mask = neighbour_disagreements(np.array([0, 0, 1]), np.array([1, 7, 2]), np.array([1, 0, 0]))
    assert mask.tolist() == [False, False, False]
