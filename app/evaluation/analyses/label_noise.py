"""Stability of moment-retrieval measures under ground-truth label noise (AxIoU paper, section 6.4, Fig. 7).

Noise model, per ground-truth segment [s, e] and trial: each of `raters` (5) simulated annotators draws a start
s' ~ N(s, sigma^2) and a length l' = (e - s) + Exp(1) (an exponential with scale 1 shifted by the true length, as
the authors' notebook and SPEC section 6: `length="shifted"`, the default); the noisy segment is
[median(s'), median(s') + median(l')]. `length="exponential"` draws l' ~ Exp(mean e - s) instead, our first reading
of the paper's text ("an exponential distribution with mean ..."; its symbols are lost in our copy), which issue 13
found 0.10-0.29 off the paper's Fig. 7 where the shifted model is within 0.004. The noise levels default to
sigma = 1, 2, 3 and 4 s, those of the authors' label-noise experiment on Charades-STA (the notebook
notebooks/ExperimentsOnCharadesSTA.ipynb of github.com/riktor/vmr-axiou, which accompanies Togashi et al., CVPR
2022; our copy of the paper lost its sigma values); give others with `sigmas`. Every run's mean score over the
ground-truth topics is recomputed per trial (relevance only: the ranked moments are fixed), and per run and noise
level we report the mean absolute change of that mean score against the noise-free one (what the paper's Fig. 7
plots, averaged over systems) and its RMSE.

`iou_noise` is the supplement's section C (the paper's appendix Fig. 10, the supplement's Fig. 2): the top moment's
IoU r is observed as r_hat = r + eps, eps ~ N(0, gamma^2). AxIoU@1 = r_hat is unbiased with variance gamma^2;
R@1,theta = 1{r_hat >= theta} has bias P(r_hat >= theta) - 1{r >= theta} and variance p(1 - p), p = P(r_hat >= theta);
MSE = bias^2 + variance. The closed forms are checked by a seeded simulation scored with the moment measures
themselves (`axiou`, `recall_at`), and applied per run at each topic's own top-1 IoU. The model is the paper's: r_hat
is not clipped to [0, 1].
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.evaluation.moments import (
    GroundTruthSegments,
    RankedMoments,
    axiou,
    moment_relevance,
    moment_scores,
    parse_moment_measure,
    recall_at,
)

DEFAULT_SIGMAS = (1.0, 2.0, 3.0, 4.0)  # seconds: the authors' notebook (see above)
DEFAULT_MEASURES = ("AxIoU@1", "AxIoU@5", "AxIoU@10", "R@1,0.5", "R@1,0.7", "R@5,0.5", "R@5,0.7")
DEFAULT_TRIALS = 100  # the paper's noisy datasets per noise level
DEFAULT_RATERS = 5
LENGTHS = ("shifted", "exponential")
Progress = Callable[[float], None]


@dataclass(frozen=True)
class LabelNoiseResult:
    """Errors of every run's mean score per noise level and measure."""

    measures: list[str]
    runs: list[str]
    sigmas: np.ndarray  # [n_sigma]
    trials: int
    raters: int
    seed: int
    length: str
    clean: np.ndarray  # [n_measure, n_run] noise-free mean scores
    mean_abs_change: np.ndarray  # [n_sigma, n_measure, n_run]
    rmse: np.ndarray  # [n_sigma, n_measure, n_run]
    noisy_iou: np.ndarray  # [n_sigma] mean IoU between original and noisy segments (the paper quotes it)

    @property
    def mean_change(self) -> np.ndarray:
        """[n_sigma, n_measure] mean absolute change averaged over runs (Fig. 7's y axis)."""
        change: np.ndarray = self.mean_abs_change.mean(axis=2)
        return change

    @property
    def mean_rmse(self) -> np.ndarray:
        """[n_sigma, n_measure] RMSE averaged over runs."""
        rmse: np.ndarray = self.rmse.mean(axis=2)
        return rmse

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return {
            "measures": self.measures,
            "runs": self.runs,
            "trials": self.trials,
            "raters": self.raters,
            "seed": self.seed,
            "length": self.length,
            "levels": [
                {
                    "sigma": float(sigma),
                    "noisy_iou": float(self.noisy_iou[i]),
                    "mean_abs_change": dict(zip(self.measures, self.mean_change[i].tolist(), strict=True)),
                    "mean_rmse": dict(zip(self.measures, self.mean_rmse[i].tolist(), strict=True)),
                    "runs": {
                        run: {
                            m: {
                                "clean": float(self.clean[k, r]),
                                "mean_abs_change": float(self.mean_abs_change[i, k, r]),
                                "rmse": float(self.rmse[i, k, r]),
                            }
                            for k, m in enumerate(self.measures)
                        }
                        for r, run in enumerate(self.runs)
                    },
                }
                for i, sigma in enumerate(self.sigmas.tolist())
            ],
        }


def perturb(
    segments: GroundTruthSegments,
    sigma: float,
    rng: np.random.Generator,
    *,
    raters: int = DEFAULT_RATERS,
    length: str = "shifted",
) -> GroundTruthSegments:
    """One noisy copy of the ground truth: per segment, the medians of `raters` noisy starts and lengths."""
    start, end = segments.start, segments.end
    shape = (raters,) + start.shape
    starts = rng.normal(start, sigma, size=shape) if sigma > 0 else np.broadcast_to(start, shape)
    original = np.maximum(end - start, 0.0)
    if length == "shifted":
        lengths = original + rng.exponential(1.0, size=shape)
    elif length == "exponential":
        lengths = rng.exponential(1.0, size=shape) * original
    else:
        raise ValueError("length must be 'shifted' or 'exponential'")
    new_start = np.median(starts, axis=0)
    new_end = new_start + np.median(lengths, axis=0)
    mask = segments.mask
    return dataclasses.replace(segments, start=np.where(mask, new_start, start), end=np.where(mask, new_end, end))


def _segment_iou(a: GroundTruthSegments, b: GroundTruthSegments) -> float:
    mask = a.mask
    if not mask.any():
        return float("nan")
    inter = np.clip(np.minimum(a.end, b.end) - np.maximum(a.start, b.start), 0.0, None)
    union = np.maximum(a.end, b.end) - np.minimum(a.start, b.start)
    iou = np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
    return float(iou[mask].mean())


def _means(ranked: RankedMoments, segments: GroundTruthSegments, measures: Sequence[str]) -> np.ndarray:
    scores = moment_scores(moment_relevance(ranked, segments), measures)
    return np.stack([scores[m].mean(axis=1) if scores[m].shape[1] else np.zeros(scores[m].shape[0]) for m in measures])


def label_noise(
    segments: GroundTruthSegments,
    ranked: RankedMoments,
    measures: Sequence[str],
    *,
    runs: Sequence[str] | None = None,
    sigmas: Sequence[float] = DEFAULT_SIGMAS,
    trials: int = DEFAULT_TRIALS,
    raters: int = DEFAULT_RATERS,
    seed: int = 0,
    length: str = "shifted",
    progress: Progress | None = None,
) -> LabelNoiseResult:
    """Per noise level, perturb the ground truth `trials` times and measure how far each run's mean score moves.

    `ranked` comes from `rank_moments(segments, runs, depth)` with depth >= every measure's cut-off. `progress` is
    called with the share of the trials done.
    """
    names = [parse_moment_measure(m).name for m in measures]
    if trials < 1 or raters < 1:
        raise ValueError("trials and raters must be at least 1")
    if any(s < 0 for s in sigmas):
        raise ValueError("noise levels must be >= 0")
    if length not in LENGTHS:
        raise ValueError("length must be 'shifted' or 'exponential'")
    n_run = ranked.video.shape[0]
    run_names = [f"run{i + 1}" for i in range(n_run)] if runs is None else list(runs)
    clean = _means(ranked, segments, names)  # [n_measure, n_run]
    rng = np.random.default_rng(seed)
    sig = np.asarray(list(sigmas), dtype=np.float64)
    abs_change = np.empty((len(sig), len(names), n_run))
    rmse = np.empty_like(abs_change)
    noisy_iou = np.empty(len(sig))
    for i, sigma in enumerate(sig.tolist()):
        diffs = np.empty((trials, len(names), n_run))
        ious = np.empty(trials)
        for t in range(trials):
            noisy = perturb(segments, sigma, rng, raters=raters, length=length)
            diffs[t] = _means(ranked, noisy, names) - clean
            ious[t] = _segment_iou(segments, noisy)
            if progress is not None:
                progress((i * trials + t + 1) / (len(sig) * trials))
        abs_change[i] = np.abs(diffs).mean(axis=0)
        rmse[i] = np.sqrt((diffs**2).mean(axis=0))
        noisy_iou[i] = float(np.nanmean(ious)) if not np.all(np.isnan(ious)) else float("nan")
    return LabelNoiseResult(
        measures=names,
        runs=run_names,
        sigmas=sig,
        trials=trials,
        raters=raters,
        seed=seed,
        length=length,
        clean=clean,
        mean_abs_change=abs_change,
        rmse=rmse,
        noisy_iou=noisy_iou,
    )


# ---------------------------------------------------------------------------------------------------------------------
# Gaussian noise on the top moment's IoU: closed forms (supplement, section C) and their simulation check

DEFAULT_IOU = 0.5  # the supplement's r
DEFAULT_GAMMAS = (0.05, 0.1, 0.2, 0.3)  # noise levels gamma (our copy lost the paper's values)
DEFAULT_THETAS = tuple(round(0.02 * i, 2) for i in range(1, 51))  # 0.02, 0.04, ..., 1.0
DEFAULT_SIMULATIONS = 20_000  # draws of r_hat per noise level
STATISTICS = ("bias", "variance", "mse")


@dataclass(frozen=True)
class NoiseErrors:
    """Bias, variance and MSE of AxIoU@1 [n_gamma] and of R@1,theta [n_gamma, n_theta]."""

    axiou_bias: np.ndarray
    axiou_variance: np.ndarray
    recall_bias: np.ndarray
    recall_variance: np.ndarray

    @property
    def axiou_mse(self) -> np.ndarray:
        """MSE = bias^2 + variance of AxIoU@1."""
        mse: np.ndarray = self.axiou_bias**2 + self.axiou_variance
        return mse

    @property
    def recall_mse(self) -> np.ndarray:
        """MSE = bias^2 + variance of R@1,theta."""
        mse: np.ndarray = self.recall_bias**2 + self.recall_variance
        return mse

    def part(self, family: str, statistic: str) -> np.ndarray:
        """One statistic ("bias", "variance", "mse") of "AxIoU@1" or "R@1,theta"."""
        prefix = "axiou" if family == "AxIoU@1" else "recall"
        value: np.ndarray = getattr(self, f"{prefix}_{statistic}")
        return value


def _check_noise(
    gammas: Sequence[float] | np.ndarray, thetas: Sequence[float] | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The noise levels (> 0) and thresholds (in (0, 1]) as arrays, or ValueError."""
    gam, thr = np.asarray(list(gammas), np.float64), np.asarray(list(thetas), np.float64)
    if gam.size == 0 or thr.size == 0:
        raise ValueError("give at least one noise level and one threshold")
    if np.any(~np.isfinite(gam)) or np.any(gam <= 0):
        raise ValueError("noise levels gamma must be > 0")
    if np.any(~np.isfinite(thr)) or np.any(thr <= 0) or np.any(thr > 1):
        raise ValueError("thresholds theta must be in (0, 1]")
    return gam, thr


def iou_noise_errors(
    r: float | np.ndarray, gammas: Sequence[float] | np.ndarray, thetas: Sequence[float] | np.ndarray
) -> NoiseErrors:
    """The closed forms at true IoU r (a number, or an array [...] of them: the results gain its shape in front)."""
    from scipy.special import ndtr

    gam, thr = _check_noise(gammas, thetas)
    true = np.asarray(r, dtype=np.float64)[..., None, None]  # [..., 1, 1]
    p = ndtr((true - thr[None, :]) / gam[:, None])  # P(r_hat >= theta) [..., n_gamma, n_theta]
    zero = np.zeros(true.shape[:-2] + gam.shape)
    return NoiseErrors(
        axiou_bias=zero,
        axiou_variance=zero + gam**2,
        recall_bias=p - (true >= thr).astype(np.float64),
        recall_variance=p * (1.0 - p),
    )


def _estimates(x: np.ndarray, truth: np.ndarray) -> list[np.ndarray]:
    """Bias, variance (unbiased, n - 1) and MSE of draws x [n, ...] of a score whose noise-free value is truth."""
    n = x.shape[0]
    return [(x - truth).mean(axis=0), x.var(axis=0) * n / (n - 1), ((x - truth) ** 2).mean(axis=0)]


def simulate_iou_noise(
    r: float,
    gammas: Sequence[float] | np.ndarray,
    thetas: Sequence[float] | np.ndarray,
    *,
    simulations: int = DEFAULT_SIMULATIONS,
    seed: int = 0,
) -> NoiseErrors:
    """Monte Carlo estimates of the statistics: draw r_hat ~ N(r, gamma^2) `simulations` times per noise level and
    score each draw with AxIoU@1 and R@1,theta of the moment measures; the same draws serve every theta."""
    gam, thr = _check_noise(gammas, thetas)
    if simulations < 2:
        raise ValueError("simulations must be at least 2")
    rng = np.random.default_rng(seed)
    true_axiou = axiou(np.array([[r]]), 1)
    true_recall = np.array([recall_at(np.array([[r]]), 1, theta)[0] for theta in thr.tolist()])
    ax_rows, rc_rows = [], []
    for gamma in gam.tolist():
        r_hat = rng.normal(r, gamma, size=(simulations, 1))  # one ranked list of depth 1 per draw
        recall = np.stack([recall_at(r_hat, 1, theta) for theta in thr.tolist()], axis=1)  # [n, n_theta]
        ax_rows.append(_estimates(axiou(r_hat, 1)[:, None], true_axiou)[:2])
        rc_rows.append(_estimates(recall, true_recall)[:2])
    return NoiseErrors(
        axiou_bias=np.array([row[0][0] for row in ax_rows]),
        axiou_variance=np.array([row[1][0] for row in ax_rows]),
        recall_bias=np.stack([row[0] for row in rc_rows]),
        recall_variance=np.stack([row[1] for row in rc_rows]),
    )


def simulation_errors(exact: NoiseErrors, gammas: np.ndarray, n: int) -> dict[str, dict[str, np.ndarray]]:
    """The standard error of each simulated statistic if the closed forms hold, {family: {statistic: array}}.

    AxIoU@1 (normal draws): bias gamma/sqrt(n), sample variance gamma^2 sqrt(2/(n-1)), MSE gamma^2 sqrt(2/n).
    R@1,theta (Bernoulli(p) draws, s^2 = p(1-p)/n): bias s, sample variance sqrt((1-2p)^2 s^2 + 2 s^4) (the delta
    method with its second-order term, which carries the error at p = 1/2), MSE sqrt(q(1-q)/n) with q the MSE (a
    squared error of 0/1 scores is itself 0/1); each at least 1/n, the resolution of a share of n draws, so that a
    rare event seen once in n draws (p << 1/n) is not a many-sigma deviation."""
    g2 = gammas**2
    p = exact.recall_bias + (exact.recall_bias < 0)  # P(r_hat >= theta): bias + 1{r >= theta}
    s2 = p * (1 - p) / n
    q = exact.recall_mse
    floor = 1.0 / n
    return {
        "AxIoU@1": {"bias": gammas / np.sqrt(n), "variance": g2 * np.sqrt(2 / (n - 1)), "mse": g2 * np.sqrt(2 / n)},
        "R@1,theta": {
            "bias": np.maximum(np.sqrt(s2), floor),
            "variance": np.maximum(np.sqrt((1 - 2 * p) ** 2 * s2 + 2 * s2**2), floor),
            "mse": np.maximum(np.sqrt(q * (1 - q) / n), floor),
        },
    }


@dataclass(frozen=True)
class IoUNoiseResult:
    """The closed forms at one IoU with their simulation check, and per run at its topics' own top-1 IoUs."""

    iou: float
    gammas: np.ndarray
    thetas: np.ndarray
    exact: NoiseErrors
    simulated: NoiseErrors
    simulations: int
    seed: int
    runs: list[str]
    n_topics: int
    run_iou: np.ndarray  # [n_run] mean top-1 IoU over the topics
    run_bias: np.ndarray  # [n_run, n_gamma, n_theta] bias of the run's mean R@1,theta
    run_variance: np.ndarray  # [n_run, n_gamma, n_theta] its variance (independent noise per topic)

    @property
    def standard_errors(self) -> dict[str, dict[str, np.ndarray]]:
        """The simulation's standard error of each statistic if the closed forms hold (`simulation_errors`)."""
        return simulation_errors(self.exact, self.gammas, self.simulations)

    @property
    def largest_z(self) -> float:
        """The largest |simulated - exact| / standard error over every statistic, level and threshold."""
        ses = self.standard_errors
        return float(
            max(
                float((np.abs(self.simulated.part(f, s) - self.exact.part(f, s)) / ses[f][s]).max(initial=0.0))
                for f in ("AxIoU@1", "R@1,theta")
                for s in STATISTICS
            )
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON: per noise level the curves over theta, exact and simulated, and per run its errors."""
        ex, sim, ses = self.exact, self.simulated, self.standard_errors
        levels = []
        for g, gamma in enumerate(self.gammas.tolist()):
            axiou_part = {
                stat: {
                    "exact": float(ex.part("AxIoU@1", stat)[g]),
                    "simulated": float(sim.part("AxIoU@1", stat)[g]),
                    "se": float(ses["AxIoU@1"][stat][g]),
                }
                for stat in STATISTICS
            }
            recall_part = {
                stat: {
                    "exact": ex.part("R@1,theta", stat)[g].tolist(),
                    "simulated": sim.part("R@1,theta", stat)[g].tolist(),
                    "se": ses["R@1,theta"][stat][g].tolist(),
                }
                for stat in STATISTICS
            }
            levels.append({"gamma": gamma, "axiou": axiou_part, "recall": recall_part})
        n = max(self.n_topics, 1)
        runs = [
            {
                "run": run,
                "mean_iou": float(self.run_iou[i]),
                "levels": [
                    {
                        "gamma": gamma,
                        "axiou_mse": gamma**2 / n,
                        "recall_bias": self.run_bias[i, g].tolist(),
                        "recall_variance": self.run_variance[i, g].tolist(),
                        "recall_mse": (self.run_bias[i, g] ** 2 + self.run_variance[i, g]).tolist(),
                    }
                    for g, gamma in enumerate(self.gammas.tolist())
                ],
            }
            for i, run in enumerate(self.runs)
        ]
        return {
            "iou": self.iou,
            "gammas": self.gammas.tolist(),
            "thetas": self.thetas.tolist(),
            "simulations": self.simulations,
            "seed": self.seed,
            "largest_z": self.largest_z,
            "levels": levels,
            "n_topics": self.n_topics,
            "runs": runs,
        }


def iou_noise(
    iou: float = DEFAULT_IOU,
    *,
    gammas: Sequence[float] = DEFAULT_GAMMAS,
    thetas: Sequence[float] = DEFAULT_THETAS,
    simulations: int = DEFAULT_SIMULATIONS,
    seed: int = 0,
    top_iou: np.ndarray | None = None,
    runs: Sequence[str] | None = None,
) -> IoUNoiseResult:
    """The supplement's Fig. 2 (the paper's Fig. 10) at true IoU `iou`, checked by simulation; with `top_iou`
    [n_run, n_topic] (each run's top-1 IoU per topic) also the bias and variance of each run's mean R@1,theta when
    every topic's IoU is observed with independent noise (its mean AxIoU@1 has bias 0 and variance gamma^2 / n)."""
    if not 0 <= iou <= 1:
        raise ValueError("iou must be in [0, 1]")
    gam, thr = _check_noise(gammas, thetas)
    exact = iou_noise_errors(iou, gam, thr)
    simulated = simulate_iou_noise(iou, gam, thr, simulations=simulations, seed=seed)
    top = np.zeros((0, 0)) if top_iou is None else np.asarray(top_iou, np.float64)
    n_run, n_topic = top.shape
    names = [f"run{i + 1}" for i in range(n_run)] if runs is None else list(runs)
    if len(names) != n_run:
        raise ValueError("one run name per row of top_iou")
    if n_topic:
        per_topic = iou_noise_errors(top, gam, thr)  # [n_run, n_topic, n_gamma, n_theta]
        run_bias = per_topic.recall_bias.mean(axis=1)
        run_variance = per_topic.recall_variance.sum(axis=1) / n_topic**2
        run_iou = top.mean(axis=1)
    else:
        run_bias = run_variance = np.zeros((n_run, gam.size, thr.size))
        run_iou = np.full(n_run, np.nan)
    return IoUNoiseResult(
        iou=float(iou),
        gammas=gam,
        thetas=thr,
        exact=exact,
        simulated=simulated,
        simulations=simulations,
        seed=seed,
        runs=names,
        n_topics=n_topic,
        run_iou=run_iou,
        run_bias=run_bias,
        run_variance=run_variance,
    )
