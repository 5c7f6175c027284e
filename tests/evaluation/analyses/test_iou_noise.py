"""The supplement's closed forms for AxIoU@1 and R@1,theta under Gaussian IoU noise (section C; the paper's Fig. 10),
against an independent evaluation with math.erfc, the values its text states, and a seeded Monte Carlo simulation.

Tolerance of the simulation check: each simulated statistic is a mean of n i.i.d. terms, so if the closed form is
right its error is about N(0, se^2), with se the standard error worked out from the closed form itself (`_se` below,
independently of the code's). The test allows 5 se: with the 4 x 50 x 3 + 4 x 3 = 612 cells compared, the chance
that any cell of a correct implementation lands outside is at most 612 x 5.7e-7 < 4e-4 (Bonferroni), while a closed
form off by a little (r moved by 0.02) is caught: see the last test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from app.evaluation.analyses.label_noise import (
    DEFAULT_GAMMAS,
    DEFAULT_THETAS,
    STATISTICS,
    iou_noise,
    iou_noise_errors,
    simulate_iou_noise,
)

Z = 5.0


def _p(r: float, gamma: float, theta: float) -> float:
    """P(r + N(0, gamma^2) >= theta) = erfc((theta - r) / (gamma sqrt 2)) / 2."""
    return 0.5 * math.erfc((theta - r) / (gamma * math.sqrt(2)))


def _recall(r: float, gamma: float, theta: float) -> dict[str, float]:
    """Bias, variance and MSE of R@1,theta by the supplement's formulas."""
    p = _p(r, gamma, theta)
    bias = p - (1.0 if r >= theta else 0.0)
    return {"bias": bias, "variance": p * (1 - p), "mse": bias**2 + p * (1 - p)}


def _se(r: float, gamma: float, theta: float, n: int) -> dict[str, float]:
    """Standard errors of the simulated R@1,theta statistics (at least 1/n, the resolution of a share of n draws)."""
    p = _p(r, gamma, theta)
    s2 = p * (1 - p) / n
    q = _recall(r, gamma, theta)["mse"]
    raw = {
        "bias": math.sqrt(s2),
        "variance": math.sqrt((1 - 2 * p) ** 2 * s2 + 2 * s2**2),
        "mse": math.sqrt(q * (1 - q) / n),
    }
    return {k: max(v, 1 / n) for k, v in raw.items()}


def test_closed_forms_are_the_supplements_formulas() -> None:
    for r in (0.0, 0.3, 0.5, 0.77, 1.0):
        errors = iou_noise_errors(r, DEFAULT_GAMMAS, DEFAULT_THETAS)
        assert errors.axiou_bias.tolist() == [0.0] * len(DEFAULT_GAMMAS)  # unbiased
        assert errors.axiou_variance.tolist() == pytest.approx([g**2 for g in DEFAULT_GAMMAS])
        for g, gamma in enumerate(DEFAULT_GAMMAS):
            for t, theta in enumerate(DEFAULT_THETAS):
                expected = _recall(r, gamma, theta)
                for stat in STATISTICS:
                    assert errors.part("R@1,theta", stat)[g, t] == pytest.approx(expected[stat], abs=1e-12)


def test_the_values_the_supplement_states_at_r_one_half() -> None:
    errors = iou_noise_errors(0.5, [0.1], [0.5, 0.98])
    # theta = r: the true R@1,theta is 1 but half the noisy IoUs fall below: bias -1/2, variance 1/4, MSE 1/2
    assert errors.recall_bias[0, 0] == -0.5 and errors.recall_variance[0, 0] == 0.25 and errors.recall_mse[0, 0] == 0.5
    # theta far above r: P(N(0.5, 0.01) >= 0.98) = 1 - Phi(4.8) = 7.93e-7
    assert errors.recall_bias[0, 1] == pytest.approx(7.933e-7, rel=1e-3)
    assert errors.axiou_mse[0] == pytest.approx(0.01)  # AxIoU@1: MSE = variance = gamma^2


@pytest.mark.parametrize(("r", "seed"), [(0.5, 0), (0.5, 1), (0.3, 2), (0.9, 3)])
def test_the_simulation_agrees_with_the_closed_forms_within_its_standard_error(r: float, seed: int) -> None:
    n = 20_000
    simulated = simulate_iou_noise(r, DEFAULT_GAMMAS, DEFAULT_THETAS, simulations=n, seed=seed)
    for g, gamma in enumerate(DEFAULT_GAMMAS):
        # AxIoU@1 = r_hat: bias 0 (se gamma/sqrt n), sample variance gamma^2 (se gamma^2 sqrt(2/(n-1))),
        # MSE gamma^2 (se gamma^2 sqrt(2/n))
        assert abs(simulated.axiou_bias[g]) <= Z * gamma / math.sqrt(n)
        assert abs(simulated.axiou_variance[g] - gamma**2) <= Z * gamma**2 * math.sqrt(2 / (n - 1))
        assert abs(simulated.axiou_mse[g] - gamma**2) <= Z * gamma**2 * math.sqrt(2 / n)
        for t, theta in enumerate(DEFAULT_THETAS):
            expected, se = _recall(r, gamma, theta), _se(r, gamma, theta, n)
            for stat in STATISTICS:
                got = simulated.part("R@1,theta", stat)[g, t]
                assert abs(got - expected[stat]) <= Z * se[stat], (gamma, theta, stat, got, expected[stat])


def test_the_simulation_is_seeded_and_the_result_reports_its_check() -> None:
    a, b = iou_noise(0.5, simulations=2000, seed=9), iou_noise(0.5, simulations=2000, seed=9)
    assert np.array_equal(a.simulated.recall_bias, b.simulated.recall_bias)
    assert 0 < a.largest_z < Z
    data = a.to_dict()
    level = data["levels"][1]
    assert data["gammas"][1] == 0.1 and level["axiou"]["variance"]["exact"] == pytest.approx(0.01)
    assert level["recall"]["bias"]["exact"][24] == -0.5 and data["thetas"][24] == 0.5
    assert level["recall"]["bias"]["se"][24] == pytest.approx(_se(0.5, 0.1, 0.5, 2000)["bias"])


def test_per_run_errors_at_each_topics_own_iou() -> None:
    top = np.array([[0.5, 0.9, 0.1], [0.3, 0.3, 0.3]])
    result = iou_noise(0.5, gammas=[0.1], thetas=[0.5], simulations=100, top_iou=top, runs=["a", "b"])
    p = [_p(r, 0.1, 0.5) for r in (0.5, 0.9, 0.1)]
    bias = ((p[0] - 1) + (p[1] - 1) + p[2]) / 3  # the mean of each topic's bias
    variance = sum(x * (1 - x) for x in p) / 9  # independent topics: sum of variances / n^2
    row = result.to_dict()["runs"][0]
    assert row["run"] == "a" and row["mean_iou"] == pytest.approx(0.5)
    assert row["levels"][0]["recall_bias"] == pytest.approx([bias])
    assert row["levels"][0]["recall_variance"] == pytest.approx([variance])
    assert row["levels"][0]["axiou_mse"] == pytest.approx(0.01 / 3)
    assert result.to_dict()["runs"][1]["levels"][0]["recall_bias"] == pytest.approx([_p(0.3, 0.1, 0.5)])


def test_the_check_catches_a_closed_form_slightly_off() -> None:
    """The tolerance is not so wide that it passes anything: closed forms taken at r = 0.52 instead of 0.5 fail."""
    n = 20_000
    simulated = simulate_iou_noise(0.5, [0.1], DEFAULT_THETAS, simulations=n, seed=0)
    worst = max(
        abs(simulated.recall_bias[0, t] - _recall(0.52, 0.1, theta)["bias"]) / _se(0.52, 0.1, theta, n)["bias"]
        for t, theta in enumerate(DEFAULT_THETAS)
        if theta != 0.5 and theta != 0.52
    )
    assert worst > Z


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"gammas": [0.0]}, "gamma must be > 0"), ({"thetas": [1.5]}, r"theta must be in \(0, 1\]")],
)
def test_bad_parameters_are_refused(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        iou_noise(0.5, simulations=10, **kwargs)
