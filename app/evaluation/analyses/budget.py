"""Judging budget: how sure the stratified estimates are, and how many more judgements in which stratum buy how much.

Per topic, a stratified pool has N_c pooled docs in stratum c, n_c of them judged (a simple random sample without
replacement, SPEC section 5), r_c relevant.

- **Estimated relevant** R_hat = sum_c N_c r_c / n_c (sample_eval's `inum_rel`), with the textbook variance of a
  stratified estimate of a total (Cochran, *Sampling Techniques*, 5.9 and 3.4):
  Var(R_hat) = sum_c N_c^2 (1 - n_c/N_c) S_c^2 / n_c, estimated with S_c^2 = n_c p_c (1 - p_c) / (n_c - 1),
  p_c = r_c / n_c (unbiased). A stratum with fewer than 2 judged docs and unjudged ones left has no variance estimate
  (infinite). The confidence interval is R_hat +- z sqrt(Var), clipped to what the judgements allow.
- **Allocation** (Neyman with bounds): the fewest further judgements to bring the interval's width to a target.
  With the same variance formula, stratum c at n'_c judged docs, the smallest total sum n'_c with Var <= V* has
  n'_c = clip(N_c S_c / sqrt(lambda), n_c, N_c) (the Lagrange condition with the bounds); lambda by bisection.
  For planning, S_c^2 uses a smoothed share (r_c + 1) / (n_c + 2) so that a stratum with nothing relevant yet
  still asks for judgements.
- **xinfAP sampling variance** per topic and run: the estimator's variance over the stratified samples the pool
  could have drawn, by the stratified delete-one jackknife with the finite-population correction (Wolter,
  *Introduction to Variance Estimation*, ch. 4; Rao & Wu 1985): drop each judged doc j of stratum c in turn,
  recompute xinfAP with sample_eval's formula (`xinf_ap_topic`, equal to `measures.inferred.xinf_ap`), and
  Var = sum_c (1 - n_c/N_c) (n_c - 1)/n_c sum_j (xinfAP_(j) - mean_c)^2. A stratum judged in full adds nothing
  (no sampling error), nor one with a single judged doc (no estimate); one with more than 400 judged docs deletes
  400 random groups instead (delete-a-group jackknife, Kott 2001), so the cost is bounded per stratum.
  Checked against the true sampling variance, simulated by resampling a fully judged pool
  (`scripts/bench/budget_check.py`: TREC-COVID round 1 pooled to depth 100, ranks 1-10 judged in full and 11-100 at
  a share q): the mean ratio estimated/true is 1.14, 1.11, 1.07, 1.02 at q = 0.05, 0.1, 0.25, 0.5 (per topic
  0.91-1.42 at q = 0.05); with 11-30 and 31-100 as two strata 1.09, 1.03 at q = 0.1, 0.25. The jackknife is
  conservative for a nonlinear statistic (Efron & Stein 1981), most where n_c is small. The pseudo-population
  bootstrap it replaces (kept in the script) was 0.57, 0.64, 0.81, 1.08 there: imputing the unjudged docs at
  random positions loses how relevance falls with rank within a stratum.
- **Ranking stability**: Gaussian multiplier replicates xinfAP* = xinfAP + sum_j g_j a_j (g_j standard normal, a_j
  the scaled jackknife deviations) have the jackknife's covariance between runs (they share one sample). The
  expected tau_b between the sample's ranking (mean xinfAP) and the ranking on the full judgements is the mean tau_b
  between the point P and P + e* (e* a replicate's error of the mean), corrected once for the bootstrap's bias
  (Efron & Tibshirani ch. 10; P is more spread than the truth, so tau(P, P + e*) is too high):
  2 tau(P, P + e*) - tau(P + e', P + e' + e*), e' another replicate. On TREC-COVID (30 runs, the setting above, 40
  samples) the predicted mean is +0.009, +0.003, +0.006, +0.003 (se 0.003-0.006) from the simulated mean tau_b
  0.859, 0.887, 0.920, 0.951 at q = 0.05, 0.1, 0.25, 0.5; one sample's tau_b itself varies with sd 0.02-0.03.
  Runs with near ties in MAP leave it more optimistic (tests: +0.01-0.03 with 8 close runs).
- **Tau advice**: the smallest share of every stratum's unjudged docs (on a 5 % grid) whose judging brings the
  expected tau_b to a target, each stratum's deviations shrinking as (1 - n_c/N_c)/n_c does. From a small sample
  that is optimistic: xinfAP's true variance falls slower (TREC-COVID, 10 % -> 41 % of ranks 11-100: to 0.19 of
  itself where the formula says 0.16; at low n_c much of xinfAP's precision above a rank is sample_eval's smoothed
  guess, not a random estimate). Simulated on TREC-COVID, the tau_b predicted for a further 30 % judged is +0.025,
  +0.007, +0.004, +0.004 above the one reached at q = 0.05, 0.1, 0.25, 0.5, and the advice for 0.9 / 0.95 reaches
  0.885 / 0.932 at q = 0.05, 0.904 / 0.942 at q = 0.1, 0.920 (nothing more asked) / 0.951 at q = 0.25 on average.
  Where runs are nearly tied it is unreliable (the script's `--synthetic`, 8 runs within 0.03 MAP, tau_b about
  0.4: the advice for 0.9 reaches 0.79, 0.86, 0.90 at q = 0.1, 0.25, 0.5), partly because xinfAP's own bias at
  small n_c differs between runs and no variance sees it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from app.evaluation.analyses.kendall import tau_b_batch
from app.evaluation.analyses.lines import LineIndex

EPSILON = 1e-5  # sample_eval's smoothing (measures.inferred.INFAP_EPSILON)
SAMPLED_EPSILON = 3e-5


def _as_2d(*arrays: np.ndarray) -> list[np.ndarray]:
    """Float arrays [topic, stratum] (a single topic's [stratum] becomes [1, stratum])."""
    return [np.atleast_2d(np.asarray(a, dtype=np.float64)) for a in arrays]


@dataclass(frozen=True)
class RelevantEstimate:
    """Estimated relevant docs per topic with variance and a confidence interval."""

    estimate: np.ndarray  # [topic]
    variance: np.ndarray  # [topic], inf when a stratum cannot be estimated yet
    low: np.ndarray  # [topic]
    high: np.ndarray  # [topic]
    level: float

    @property
    def width(self) -> np.ndarray:
        """high - low per topic."""
        width: np.ndarray = self.high - self.low
        return width


def relevant_estimate(
    pooled: np.ndarray, judged: np.ndarray, relevant: np.ndarray, *, z: float = 1.96, level: float = 0.95
) -> RelevantEstimate:
    """R_hat = sum_c N_c r_c / n_c per topic, its estimated variance and the interval R_hat +- z sqrt(Var)."""
    big_n, n, r = _as_2d(pooled, judged, relevant)
    p = np.divide(r, n, out=np.zeros_like(r), where=n > 0)
    estimate = np.sum(np.where(n > 0, big_n * p, np.where(big_n > 0, np.nan, 0.0)), axis=1)
    census = n >= big_n
    with np.errstate(divide="ignore", invalid="ignore"):
        cell = big_n**2 * (1.0 - n / big_n) * p * (1.0 - p) / (n - 1.0)
    cell = np.where(census, 0.0, np.where(n >= 2, cell, np.inf))
    variance = np.sum(cell, axis=1)
    half = z * np.sqrt(variance)
    floor = r.sum(axis=1)  # relevant already found
    ceiling = big_n.sum(axis=1) - (n - r).sum(axis=1)  # every unjudged doc relevant
    estimate = np.where(np.isnan(estimate), np.nan, estimate)
    low = np.clip(estimate - half, floor, ceiling)
    high = np.clip(estimate + half, floor, ceiling)
    low = np.where(np.isfinite(half), low, floor)
    high = np.where(np.isfinite(half), high, ceiling)
    return RelevantEstimate(estimate, variance, low, high, level)


def _planning_s2(judged: np.ndarray, relevant: np.ndarray) -> np.ndarray:
    """S_c^2 for planning: the smoothed share (r + 1) / (n + 2) times its complement."""
    share = (relevant + 1.0) / (judged + 2.0)
    return share * (1.0 - share)


def _variance_at(big_n: np.ndarray, n_new: np.ndarray, s2: np.ndarray) -> np.ndarray:
    """Var(R_hat) with n_new judged per stratum [topic, c] -> [topic]."""
    with np.errstate(divide="ignore", invalid="ignore"):
        cell = big_n**2 * (1.0 / n_new - 1.0 / big_n) * s2
    variance: np.ndarray = np.sum(np.where(n_new >= big_n, 0.0, np.where(n_new > 0, cell, np.inf)), axis=1)
    return variance


def allocation(
    pooled: np.ndarray, judged: np.ndarray, relevant: np.ndarray, *, target_width: float | np.ndarray, z: float = 1.96
) -> np.ndarray:
    """Further judgements per topic and stratum [topic, c] so the interval of R_hat is at most `target_width` wide.

    Neyman allocation with bounds (module docstring): the fewest in total; 0 where the target is met already.
    """
    big_n, n, r = _as_2d(pooled, judged, relevant)
    s = np.sqrt(_planning_s2(n, r))
    target_var = (np.broadcast_to(np.asarray(target_width, dtype=np.float64), big_n.shape[:1]) / (2.0 * z)) ** 2
    out = np.zeros_like(big_n)
    for t in range(big_n.shape[0]):
        current = np.maximum(n[t], np.minimum(1.0, big_n[t]))
        if _variance_at(big_n[t : t + 1], current[None], s[t : t + 1] ** 2)[0] <= target_var[t]:
            out[t] = np.maximum(current - n[t], 0.0)
            continue

        def plan(lam: float, t: int = t) -> np.ndarray:
            """n'_c at multiplier lambda."""
            ideal = big_n[t] * s[t] / np.sqrt(lam)
            planned: np.ndarray = np.clip(np.ceil(ideal), np.maximum(n[t], 1.0), big_n[t])
            return planned

        lo, hi = 1e-12, 1e12  # plan(lo) is a census, plan(hi) judges nothing more
        for _ in range(200):
            mid = np.sqrt(lo * hi)
            if _variance_at(big_n[t : t + 1], plan(mid)[None], s[t : t + 1] ** 2)[0] <= target_var[t]:
                lo = mid
            else:
                hi = mid
            if hi / lo < 1 + 1e-9:
                break
        out[t] = plan(lo) - n[t]
    return np.asarray(np.maximum(out, 0.0), dtype=np.int64)


def stopping_advice(
    pooled: np.ndarray, judged: np.ndarray, relevant: np.ndarray, *, relative_width: float = 0.2, z: float = 1.96
) -> list[dict[str, Any]]:
    """Per topic: stop when the interval of R_hat is within `relative_width` of the estimate, else what to judge."""
    big_n, n, r = _as_2d(pooled, judged, relevant)
    est = relevant_estimate(big_n, n, r, z=z)
    target = relative_width * np.maximum(np.nan_to_num(est.estimate), 1.0)
    extra = allocation(big_n, n, r, target_width=target, z=z)
    out = []
    for t in range(big_n.shape[0]):
        done = bool(np.isfinite(est.variance[t]) and est.width[t] <= target[t]) or bool(np.all(n[t] >= big_n[t]))
        out.append(
            {
                "advice": "stop" if done else "continue",
                "estimate": None if np.isnan(est.estimate[t]) else float(est.estimate[t]),
                "low": float(est.low[t]),
                "high": float(est.high[t]),
                "target_width": float(target[t]),
                "more_per_stratum": [] if done else extra[t].tolist(),
            }
        )
    return out


# --- xinfAP and its sampling variance -------------------------------------------------------------------------------


@dataclass(frozen=True)
class TopicSample:
    """One topic's stratified pool as seen by the runs: items are the topic's qrels lines."""

    ranked: np.ndarray  # int64 [n_run, depth]: item at each rank, -1 if not pooled or past the list's end
    stratum: np.ndarray  # int64 [n_item], 0-based
    judged: np.ndarray  # bool [n_item]
    relevant: np.ndarray  # bool [n_item]
    pooled_total: np.ndarray  # float [n_stratum] N_c


def topic_samples(index: LineIndex) -> tuple[list[str], list[TopicSample]]:
    """Each qrels topic's `TopicSample` from stratified qrels located in prepared runs (`lines.index_lines`)."""
    qrels, prepared = index.qrels, index.prepared
    grades = np.asarray(qrels.grades, dtype=np.int64)
    if qrels.strata is None:
        strata_codes = np.zeros(len(grades), dtype=np.int64)
        n_strata = 1
    else:
        labels, strata_codes = np.unique(np.asarray(qrels.strata, dtype=np.int64), return_inverse=True)
        strata_codes, n_strata = strata_codes.reshape(-1), len(labels)
    prepared_topic = {name: i for i, name in enumerate(prepared.topics)}
    samples = []
    for t, topic in enumerate(index.topics):
        lines = np.flatnonzero(index.line_topic == t)
        item_of_line = np.full(index.n_lines + 1, -1, dtype=np.int64)
        item_of_line[lines] = np.arange(len(lines))
        p = prepared_topic.get(topic)
        if p is None:
            ranked = np.full((len(prepared.names), 0), -1, dtype=np.int64)
        else:
            block = prepared.pairs[:, p, :]
            line = index.pair_line[np.where(block >= 0, block, len(index.pair_line) - 1)]
            ranked = item_of_line[np.where(line >= 0, line, index.n_lines)]
        stratum = strata_codes[lines]
        samples.append(
            TopicSample(
                ranked=ranked,
                stratum=stratum,
                judged=grades[lines] >= 0,
                relevant=grades[lines] >= 1,
                pooled_total=np.bincount(stratum, minlength=n_strata).astype(np.float64),
            )
        )
    return list(index.topics), samples


def xinf_ap_topic(sample: TopicSample, judged: np.ndarray, relevant: np.ndarray, max_results: int = 1000) -> np.ndarray:
    """sample_eval's xinfAP of every run on one topic, for B judgement sets at once: judged, relevant [B, item] ->
    [B, run] (see `measures.inferred.xinf_ap` for the formula)."""
    judged = np.atleast_2d(judged)
    relevant = np.atleast_2d(relevant) & judged
    n_b = judged.shape[0]
    ranked = sample.ranked
    n_run, depth = ranked.shape
    n_strata = len(sample.pooled_total)
    if depth == 0 or n_run == 0:
        return np.zeros((n_b, n_run))
    pooled = ranked >= 0
    item = np.where(pooled, ranked, 0)
    stratum = np.where(pooled, sample.stratum[item], -1)  # [run, depth]
    is_judged = judged[:, item] & pooled  # [B, run, depth]
    is_relevant = relevant[:, item] & pooled
    ranks = np.arange(1, depth + 1, dtype=np.float64)
    above = np.zeros((n_b, n_run, depth))
    for c in range(n_strata):
        own = stratum == c
        d = np.cumsum(own, axis=1) - own  # pooled docs of c above each rank
        s = np.cumsum(is_judged & own, axis=2) - (is_judged & own)
        rho = np.cumsum(is_relevant & own, axis=2) - (is_relevant & own)
        above += d * (rho + EPSILON) / (s + SAMPLED_EPSILON)
    precision = (1.0 + above) / ranks
    n_c = np.stack([np.sum(judged & (sample.stratum == c), axis=1) for c in range(n_strata)], axis=1)  # [B, c]
    r_c = np.stack([np.sum(relevant & (sample.stratum == c), axis=1) for c in range(n_strata)], axis=1)
    weight = np.divide(sample.pooled_total[None, :], n_c, out=np.zeros(n_c.shape), where=n_c > 0)  # N_c / n_c
    r_hat = np.sum(weight * r_c, axis=1)  # [B]
    value = np.zeros((n_b, n_run))
    for c in range(n_strata):
        sap = np.sum(np.where(is_relevant & (stratum == c), precision, 0.0), axis=2)
        value += weight[:, c, None] * sap
    value = np.divide(value, r_hat[:, None], out=np.zeros_like(value), where=r_hat[:, None] > 0)
    limit = float(max_results)
    capped: np.ndarray = np.where(r_hat[:, None] > limit, value * r_hat[:, None] / limit, value)
    return capped


def _resample(rng: np.random.Generator, sample: TopicSample, truth: np.ndarray, n_b: int) -> np.ndarray:
    """B fresh stratified samples (same n_c per stratum) of the items: bool [B, item] judged."""
    n_item = len(sample.stratum)
    out = np.zeros((n_b, n_item), dtype=bool)
    keys = rng.random((n_b, n_item))
    for c in range(len(sample.pooled_total)):
        members = np.flatnonzero(sample.stratum == c)
        take = int(np.sum(sample.judged[members]))
        if take == 0:
            continue
        if take >= len(members):
            out[:, members] = True
            continue
        picked = np.argpartition(keys[:, members], take - 1, axis=1)[:, :take]
        rows = np.repeat(np.arange(n_b), take)
        out[rows, members[picked.reshape(-1)]] = True
    return out


def simulate_samples(
    sample: TopicSample, truth: np.ndarray, replicates: int, seed: int = 0, max_results: int = 1000
) -> np.ndarray:
    """xinfAP of every run [B, run] over `replicates` fresh stratified samples of a population with known relevance
    `truth` [item] (same n_c per stratum as `sample`)."""
    rng = np.random.default_rng(seed)
    judged = _resample(rng, sample, truth, replicates)
    return xinf_ap_topic(sample, judged, judged & truth[None, :], max_results)


def jackknife_components(
    sample: TopicSample, max_results: int = 1000, chunk: int = 64, groups: int = 400
) -> tuple[np.ndarray, np.ndarray]:
    """The stratified delete-one jackknife of xinfAP: per judged doc j of stratum c, the scaled deviation
    a_j = sqrt((1 - n_c/N_c)(n_c - 1)/n_c) (xinfAP without j - mean over c's deletions) [unit, run], and c [unit];
    sum_j a_j^2 is the variance estimate, a_j a_j^T summed the covariance between runs. A stratum with more than
    `groups` judged docs deletes G = `groups` random groups instead (delete-a-group jackknife, Kott 2001: n_c -> G)."""
    n_run = sample.ranked.shape[0]
    units: list[np.ndarray] = []  # docs deleted together
    of: list[int] = []
    shuffle = np.random.default_rng(0)
    for c, big_n in enumerate(sample.pooled_total):
        docs = np.flatnonzero(sample.judged & (sample.stratum == c))
        if len(docs) < 2 or len(docs) >= big_n:
            continue  # a census has no sampling error; one judged doc gives no estimate (counted as none)
        parts = np.array_split(shuffle.permutation(docs), groups) if len(docs) > groups else docs[:, None]
        units.extend(parts)
        of.extend([c] * len(parts))
    stratum_of = np.array(of, dtype=np.int64)
    values = np.zeros((len(units), n_run))
    for start in range(0, len(units), chunk):
        part = units[start : start + chunk]
        judged = np.repeat(sample.judged[None, :], len(part), axis=0)
        for row, docs in enumerate(part):
            judged[row, docs] = False
        values[start : start + chunk] = xinf_ap_topic(sample, judged, judged & sample.relevant[None, :], max_results)
    out = np.zeros_like(values)
    for c, big_n in enumerate(sample.pooled_total):
        own = stratum_of == c
        if not own.any():
            continue
        g, n = int(own.sum()), float(np.sum(sample.judged & (sample.stratum == c)))
        factor = np.sqrt((1.0 - n / big_n) * (g - 1.0) / g)
        out[own] = factor * (values[own] - values[own].mean(axis=0))
    return out, stratum_of


@dataclass(frozen=True)
class XinfapVariance:
    """Point xinfAP, its sampling variance per run and topic, and replicates for the ranking's stability."""

    topics: list[str]
    runs: list[str]
    point: np.ndarray  # [run, topic]
    variance: np.ndarray  # [run, topic]
    replicates: np.ndarray  # [B, run, topic]
    by_stratum: np.ndarray | None = None  # [B, run, topic, stratum]: the replicates' deviations from each stratum

    @property
    def mean_variance(self) -> np.ndarray:
        """Variance of each run's mean over topics [run] (topics sampled independently)."""
        variance: np.ndarray = self.variance.sum(axis=1) / max(len(self.topics), 1) ** 2
        return variance

    def expected_tau(self, scale: np.ndarray | float = 1.0) -> float:
        """Expected tau_b between the ranking by mean xinfAP and the ranking on the full judgements, by the
        replicates with one bootstrap bias correction (module docstring); `scale` [topic] or [topic, stratum]
        multiplies the deviations (sqrt of a variance ratio, to predict more judgements)."""
        scale = np.asarray(scale, dtype=np.float64)
        point = self.point.mean(axis=1)[None, :]
        if self.by_stratum is None:
            deviation = (self.replicates - self.replicates.mean(axis=0, keepdims=True)) * (
                scale if scale.ndim < 2 else scale.mean(axis=1)
            )
            return float(np.nanmean(tau_b_batch(point, point + deviation.mean(axis=2))))
        if scale.ndim < 2:
            scale = np.broadcast_to(scale.reshape(-1, 1) if scale.ndim else scale, self.by_stratum.shape[2:])
        n_topic = max(self.by_stratum.shape[2], 1)
        later = np.einsum("brtc,tc->br", self.by_stratum, scale) / n_topic  # error of the mean after judging more
        plain = float(np.nanmean(tau_b_batch(point, point + later)))
        if self.by_stratum.shape[0] < 2:
            return plain
        now = np.roll(self.by_stratum.sum(axis=3).mean(axis=2), 1, axis=0)  # the point's own error, independent
        world = float(np.nanmean(tau_b_batch(point + now, point + now + later)))
        return float(np.clip(2.0 * plain - world, -1.0, 1.0))


def variance_of_samples(
    topics: list[str],
    runs: list[str],
    samples: list[TopicSample],
    replicates: int = 200,
    seed: int = 0,
    max_results: int = 1000,
) -> XinfapVariance:
    """xinfAP per run and topic, its jackknife variance, and Gaussian multiplier replicates with the jackknife's
    covariance between runs (module docstring)."""
    rng = np.random.default_rng(seed)
    n_run, n_strata = len(runs), max((len(s.pooled_total) for s in samples), default=0)
    point = np.zeros((n_run, len(topics)))
    variance = np.zeros((n_run, len(topics)))
    by_stratum = np.zeros((replicates, n_run, len(topics), n_strata))
    for t, sample in enumerate(samples):
        point[:, t] = xinf_ap_topic(sample, sample.judged, sample.relevant, max_results)[0]
        parts, of = jackknife_components(sample, max_results)
        variance[:, t] = np.sum(parts**2, axis=0)
        weights = rng.standard_normal((replicates, len(of)))
        for c in range(len(sample.pooled_total)):
            own = of == c
            by_stratum[:, :, t, c] = weights[:, own] @ parts[own]
    return XinfapVariance(topics, runs, point, variance, point[None] + by_stratum.sum(axis=3), by_stratum)


def xinfap_variance(index: LineIndex, replicates: int = 200, seed: int = 0) -> XinfapVariance:
    """xinfAP per run and topic with its sampling variance and replicates (module docstring)."""
    topics, samples = topic_samples(index)
    return variance_of_samples(
        topics, list(index.prepared.names), samples, replicates, seed, index.prepared.max_results
    )


def _stratum_scale(pooled: np.ndarray, judged: np.ndarray, more: np.ndarray) -> np.ndarray:
    """sqrt of the jackknife variance's ratio per topic and stratum [topic, c] when `more` docs are judged: the
    factor (1 - n/N) / n at n + more over the factor at n (1 where the stratum has no variance estimate)."""
    now = judged + more
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = ((1.0 - now / pooled) / now) / ((1.0 - judged / pooled) / judged)
    ratio = np.where((judged >= 2) & (judged < pooled), np.clip(ratio, 0.0, 1.0), 1.0)
    return np.sqrt(ratio)


def tau_advice(result: XinfapVariance, samples: list[TopicSample], target_tau: float = 0.9) -> dict[str, Any]:
    """The smallest share f of every stratum's unjudged docs to judge next for the expected tau_b to reach
    `target_tau`, predicting each stratum's jackknife deviations to shrink as its (1 - n/N) / n does."""
    n_strata = max(len(s.pooled_total) for s in samples)
    pooled = np.array([np.pad(s.pooled_total, (0, n_strata - len(s.pooled_total))) for s in samples])
    judged = np.array([[np.sum(s.judged & (s.stratum == c)) for c in range(n_strata)] for s in samples], float)
    now = result.expected_tau()
    for share in np.linspace(0.0, 1.0, 21):
        more = np.ceil(share * (pooled - judged))
        tau = result.expected_tau(_stratum_scale(pooled, judged, more))
        if tau >= target_tau:
            return {"target_tau": target_tau, "expected_tau": now, "share": float(share), "predicted_tau": tau,
                    "more_per_stratum": more.astype(np.int64).sum(axis=0).tolist(),
                    "more_total": int(more.sum())}  # fmt: skip
    return {"target_tau": target_tau, "expected_tau": now, "share": None, "predicted_tau": None,
            "more_per_stratum": None, "more_total": None}  # fmt: skip
