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
- **Small-count floor**: the jackknife's variance is p^(1 - p^) in disguise (p^ = r_c/n_c): 0 when a stratum's
  sample holds no relevant doc, far too small when it holds a few, exactly where unseen relevant docs move AP most
  (TREC-COVID's ranks 11-100 are 1-7 % relevant: at q = 0.1, 0-9 found per topic). Each sampled stratum with unjudged
  docs adds (1 - n_c/N_c) (p~(1 - p~) - p^(1 - p^)) / n_c u_c^2, p~ = (r_c + a) / (n_c + 2a) (Agresti & Coull's
  pseudo counts), u_c = (n_c + 1) times the mean change of xinfAP [run] when one more judged doc, relevant, is put at
  a random unjudged doc of the stratum (FLOOR_DRAWS of them): the influence of one relevant sample unit, which the
  jackknife cannot see when none was drawn. a = 2 for each (topic, run), a = 1 for a run's mean (where the topics'
  errors average out), both chosen on TREC-COVID's odd topics (`FLOOR_PSEUDO`, `MEAN_FLOOR_PSEUDO`).
- **Bias**: xinfAP over-estimates AP at small n_c (its within-stratum ratios, and sample_eval's guess of 1/3
  relevant above a rank with no judged doc of the stratum above it). The interval is centred on the jackknife's
  bias-corrected value clip(xinfAP - b, 0, 1), b = sum_c (1 - n_c/N_c)(n_c - 1)(mean_c - xinfAP) (Quenouille; the
  delete-a-group form with G for n_c); measured below ("error in its standard errors"). The reported `xinfap` stays
  sample_eval's number; the interval's centre is `estimate` (`mean` in the offline command's runs).
- **Interval** per (topic, run): the centre +- z sqrt(jackknife + floor) on the logit scale (delta method), so it is
  longer above a small AP than below it, as AP's sampling distribution is; the plain interval clipped to [0, 1]
  where that reaches past 0 or 1 or there is no variance. Per run mean: the mean of the centres +- z sqrt(sum_t
  (jackknife_t + floor_t) / T^2), the same way (topics are sampled independently).
- **Topics without an estimate**: a topic with a stratum that has unjudged docs and fewer than MIN_JUDGED = 2
  judged ones (no judgement at all, or one) is not scored xinfAP 0 with variance 0, as it was: it gets the prior of
  the m >= 2 topics that have one, their centres x_j [run]: estimate mean_j x_j, variance S (1 + 1/m) per run (S
  the between-topic variance), interval as above; a run's mean then has variance (|U| S + |U|^2 S / m) / T^2 from
  its |U| such topics (the judged topics' mean is itself uncertain, shared by all of them). The ranking replicates
  draw each such topic's run-score vector from a judged topic's, plus one shared draw of the judged mean's error
  (Gaussian multipliers over the judged topics), which keeps the covariance between runs (an easy topic is easy for
  every run). With fewer than two judged topics there is no prior: no estimate, an interval [0, 1], no expected tau,
  and the advice is "continue" ("refuse to estimate").
- **Non-random judging orders** (move-to-front, MM-NS, Hedge, MTC: `random = False`): the judged docs are not a
  random sample, xinfAP's design assumption fails in ways no variance sees. Every variance (each interval, the
  ranking replicates, the prior) is multiplied by NON_RANDOM_WIDEN = 4 (the interval's half-width doubled), and the
  result keeps its `biased` mark.
- **Ranking stability**: Gaussian multiplier replicates xinfAP* = xinfAP + sum_j g_j a_j (g_j standard normal, a_j
  the scaled jackknife deviations) have the jackknife's covariance between runs (they share one sample). The
  expected tau_b between the sample's ranking (mean xinfAP) and the ranking on the full judgements is the mean tau_b
  between the point P and P + e* (e* a replicate's error of the mean), corrected once for the bootstrap's bias
  (Efron & Tibshirani ch. 10; P is more spread than the truth, so tau(P, P + e*) is too high):
  2 tau(P, P + e*) - tau(P + e', P + e' + e*), e' another replicate. Topics without an estimate enter P at the
  prior's mean and e* with the prior's draws; the small-count floor is left out of e* (with it the predicted tau_b
  fell 0.05 below the simulated one in the tests' campaign; without, it is calibrated as below). On TREC-COVID (30
  runs, the setting above, 40 samples) the predicted mean is +0.009, +0.003, +0.006, +0.003 (se 0.003-0.006) from
  the simulated mean tau_b 0.859, 0.887, 0.920, 0.951 at q = 0.05, 0.1, 0.25, 0.5; one sample's tau_b itself varies
  with sd 0.02-0.03. Runs with near ties in MAP leave it more optimistic (tests: +0.01-0.03 with 8 close runs). The
  issue's case (most topics unjudged) in the tests' campaign: the old advisor said 0.999 and nothing more to judge,
  the true tau_b was 0.786, the prior says 0.654 and "continue".
- **Tau advice**: the smallest share of every stratum's unjudged docs (on a 5 % grid; at least MIN_JUDGED judged in
  every stratum) whose judging brings the expected tau_b to a target, each stratum's deviations shrinking as
  (1 - n_c/N_c)/n_c does, and a topic without an estimate predicted as uncertain as a judged "donor" topic at that
  share (optimistic: the donor started with more judged). From a small sample that is optimistic: xinfAP's true
  variance falls slower (TREC-COVID, 10 % -> 41 % of ranks 11-100: to 0.19 of itself where the formula says 0.16;
  at low n_c much of xinfAP's precision above a rank is sample_eval's smoothed guess, not a random estimate).
  Simulated on TREC-COVID, the tau_b predicted for a further 30 % judged is +0.025, +0.007, +0.004, +0.004 above the
  one reached at q = 0.05, 0.1, 0.25, 0.5, and the advice for 0.9 / 0.95 reaches 0.885 / 0.932 at q = 0.05,
  0.904 / 0.942 at q = 0.1, 0.920 (nothing more asked) / 0.951 at q = 0.25 on average.
  Where runs are nearly tied it is unreliable (the script's `--synthetic`, 8 runs within 0.03 MAP, tau_b about
  0.4: the advice for 0.9 reaches 0.79, 0.86, 0.90 at q = 0.1, 0.25, 0.5), partly because xinfAP's own bias at
  small n_c differs between runs and no variance sees it.
- **One answer** (`judging_advice`, applied by the live view and the budget endpoint alike): a topic continues when
  it has no estimate, when its R_hat interval is wider than the target (random orders) or its last window of
  verdicts still finds relevant docs (non-random orders), or when the expected tau_b is below its target; it stops
  when all of it is judged. The pool stops when every topic does. `next` names the topics and strata to judge and
  how many (topics without an estimate first), with what the judging queue still holds.
- **Offline** (`sampled_budget`, `trecpool analyse budget QRELS RUN... --sampled A-B:share --seed S`): the runs
  pooled to the deepest stratum's depth, strata by best rank (ranks not named judged in full), the pool builder's
  seeded sample (`pools.builders.build_pool`), undrawn lines unjudged, pooled docs absent from QRELS not relevant;
  then all of the above. `scripts/bench/budget_coverage.py` loops seeds over that code path and counts coverage
  against the full judgements. Measured (nominal 95 %, TREC-COVID round 1, 30 runs, pool depth 100, ranks 1-10 in
  full, 11-100 at q; per (topic, run) / per run mean; tuned on the odd topics, reported on the even ones):
  q = 0.1 / 0.25 / 0.5, each "per (topic, run) / per run mean":
    odd (tuning, 20 seeds: `--topics odd --seeds 20`)     0.922 / 0.955, 0.913 / 0.960, 0.927 / 0.945
    even (report, 20 seeds: `--topics even --seeds 20`)   0.935 / 0.962, 0.930 / 0.943, 0.930 / 0.962
    the old interval on the even topics                   0.714 / 0.857, 0.872 / 0.925, 0.895 / 0.943
  Not tuned on (even topics): ranks 11-30 and 31-100 as two strata at q (`--sampled '11-30:{q},31-100:{q}'`, 10
  seeds) 0.944 / 0.973, 0.931 / 0.967, 0.947 / 0.980; pool depth 50 (`--sampled '11-50:{q}'`, 10 seeds) 0.919 /
  0.963, 0.924 / 0.967, 0.928 / 0.973; all 143 runs (`--runs runs --runs runs-more`, 5 seeds, q = 0.1, 0.25)
  0.968 / 0.989, 0.959 / 0.985 (old: 0.540 / 0.606, 0.686 / 0.915). The means' intervals are at most 1.9 points too
  wide there, never too narrow. A run's mean's error in its standard errors (mean over seeds and runs, even topics):
  +0.14, -0.25, +0.06 for the interval's centre, +0.67, -0.03, +0.18 for xinfAP. Non-random orders (even topics,
  half of each topic's sample at q = 0.25 judged in the order, 5 seeds, `--order O --judged 0.5`): widened 0.987 /
  1.000 (move-to-front), 0.990 / 1.000 (MM-NS), 0.995 / 1.000 (Hedge), 0.995 / 1.000 (MTC); without the widening
  0.915 / 0.833, 0.916 / 0.840, 0.946 / 0.953, 0.930 / 0.867 (chosen on the odd topics with MM-NS and
  move-to-front at 30 % and 70 % of the sample: 0.805-0.908 / 0.800-0.944 without, 0.960-0.989 / 0.956-1.000
  with).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from statistics import NormalDist
from typing import Any

import numpy as np

from app.evaluation.analyses.kendall import tau_b_batch
from app.evaluation.analyses.lines import LineIndex, index_lines
from app.evaluation.analyses.pooled_lines import RunBlocks, as_blocks
from app.evaluation.fast.distinct import distinct
from app.evaluation.grading.grade_matrix import summarise_qrels
from app.evaluation.grading.prepared_runs import PreparedRuns
from app.evaluation.pools.builders import (
    Stratum,
    merge_candidates,
    pool_candidates,
    pool_strata,
    sample_pool,
)
from app.evaluation.pools.seeding import topic_rng
from app.evaluation.records import Qrels

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
    prepared = index.prepared
    run, rank, line = line_entries(index)
    return entry_samples(index.qrels, len(prepared.names), prepared.depth, run, rank, line)


def line_entries(index: LineIndex) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(run, 1-based rank, qrels line) of every entry of the prepared runs at a qrels line, int32 each."""
    prepared = index.prepared
    flat = prepared.pairs.reshape(-1)
    at = np.flatnonzero(flat >= 0)
    line = index.pair_line[flat[at]]
    hit = line >= 0
    at, line = at[hit], line[hit]
    per_run = max(int(np.prod(prepared.pairs.shape[1:])), 1)
    run, rank = at // per_run, at % max(prepared.depth, 1) + 1
    return run.astype(np.int32), rank.astype(np.int32), line.astype(np.int32)


def entry_samples(
    qrels: Qrels, n_run: int, depth: int, run: np.ndarray, rank: np.ndarray, line: np.ndarray
) -> tuple[list[str], list[TopicSample]]:
    """Each qrels topic's `TopicSample` from the runs' entries at qrels lines, one (run, 1-based rank, line) each
    (a run ranks a line once), ranks up to `depth`: what a live board keeps of its runs is enough."""
    judged_topics, line_topic, _ = summarise_qrels(qrels)
    grades = np.asarray(qrels.grades, dtype=np.int64)
    if qrels.strata is None:
        strata_codes = np.zeros(len(grades), dtype=np.int64)
        n_strata = 1
    else:
        labels, strata_codes = np.unique(np.asarray(qrels.strata, dtype=np.int64), return_inverse=True)
        strata_codes, n_strata = strata_codes.reshape(-1), len(labels)
    line_topic = np.asarray(line_topic, dtype=np.int64)
    line = np.asarray(line, dtype=np.int64)
    n_topic = len(judged_topics.topics)
    by_topic = np.argsort(line_topic, kind="stable")  # each topic's lines, in qrels order: its items
    line_bounds = np.searchsorted(line_topic[by_topic], np.arange(n_topic + 1))
    item_of_line = np.empty(len(grades), dtype=np.int64)
    item_of_line[by_topic] = np.arange(len(grades)) - line_bounds[line_topic[by_topic]]
    entry_topic = line_topic[line]
    order = np.argsort(entry_topic, kind="stable")
    bounds = np.searchsorted(entry_topic[order], np.arange(n_topic + 1))
    samples = []
    for t in range(n_topic):
        lines = by_topic[line_bounds[t] : line_bounds[t + 1]]
        mine = order[bounds[t] : bounds[t + 1]]
        ranked = np.full((n_run, depth if len(mine) else 0), -1, dtype=np.int64)
        ranked[run[mine], rank[mine] - 1] = item_of_line[line[mine]]
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
    return list(judged_topics.topics), samples


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
    cells = precision.reshape(n_b * n_run, depth)
    for c in range(n_strata):
        # each (judgement set, run)'s sum of precision at its relevant docs of c, added in rank order: the same bits
        # however many runs share the arrays or however deep their lists (numpy's pairwise sum depends on both)
        cell, rank = np.nonzero((is_relevant & (stratum == c)).reshape(n_b * n_run, depth))
        sap = np.bincount(cell, weights=cells[cell, rank], minlength=n_b * n_run).reshape(n_b, n_run)
        value += weight[:, c, None] * sap
    return _per_relevant(value, r_hat, max_results)


def xinf_ap_deletions(sample: TopicSample, units: Sequence[np.ndarray], max_results: int = 1000) -> np.ndarray:
    """`xinf_ap_topic` of the judgement sets that leave one unit of judged docs out each (the jackknife's), [unit,
    run], bit for bit, computed at the relevant entries only: a deletion changes the judged and relevant counts above
    a rank by the deleted docs the run ranks higher, so each set's counts are the full judgements' less those (the
    same integers, then the same float operations in the same order as `xinf_ap_topic`). None of the [set, run,
    depth] arrays: its work is the relevant entries, not the ranks. A run ranking one item twice takes
    `xinf_ap_topic` itself."""
    return _changed_sets(sample, units, -1, max_results)


def xinf_ap_additions(sample: TopicSample, units: Sequence[np.ndarray], max_results: int = 1000) -> np.ndarray:
    """`xinf_ap_topic` of the judgement sets that add one unit of unjudged docs each, judged relevant (the floors'),
    [unit, run], bit for bit, as `xinf_ap_deletions` computes deletions: the full judgements' counts above a rank
    plus the added docs the run ranks higher, and the added docs' own entries among the relevant ones."""
    if any(np.any(sample.judged[np.asarray(u, dtype=np.int64)]) for u in units):
        raise ValueError("only unjudged docs can be added")
    return _changed_sets(sample, units, 1, max_results)


def _changed_sets(sample: TopicSample, units: Sequence[np.ndarray], sign: int, max_results: int) -> np.ndarray:
    """`xinf_ap_topic` of the full judgements with each unit's docs taken out (`sign` -1) or added as relevant
    (`sign` 1), at the relevant entries only (`xinf_ap_deletions`)."""
    ranked = sample.ranked
    n_run, depth = ranked.shape
    if len(units) == 0 or depth == 0 or n_run == 0:
        return np.zeros((len(units), n_run))
    entries = max(1, int(np.count_nonzero(sample.relevant[np.where(ranked >= 0, ranked, 0)] & (ranked >= 0))))
    step = max(1, JACKKNIFE_ELEMENTS // 4 // entries)  # sets a call: a dozen int64 arrays of their relevant entries
    if len(units) > step:
        return np.concatenate([_changed_sets(sample, units[i : i + step], sign, max_results)
                               for i in range(0, len(units), step)])  # fmt: skip
    n_b, n_strata, n_item = len(units), len(sample.pooled_total), len(sample.stratum)
    pooled = ranked >= 0
    item = np.where(pooled, ranked, 0)
    run_of, pos_of = np.nonzero(pooled)
    position = np.full((n_run, n_item), -1, dtype=np.int64)
    position[run_of, ranked[run_of, pos_of]] = pos_of
    if np.count_nonzero(position >= 0) != len(run_of):  # an item ranked twice by one run
        return _dense_sets(sample, units, sign, max_results)
    relevant = sample.relevant & sample.judged
    stratum = np.where(pooled, sample.stratum[item], -1)  # [run, depth]
    is_judged = sample.judged[item] & pooled
    is_relevant = relevant[item] & pooled
    # each unit's docs as events (set, run, position, stratum, relevant), in (set, run, position) order
    unit_of = np.repeat(np.arange(n_b), [len(u) for u in units])
    docs = np.concatenate([np.asarray(u, dtype=np.int64) for u in units])
    at = position[:, docs]  # [run, event doc]
    ev_run, ev_doc = np.nonzero(at >= 0)
    ev_pos = at[ev_run, ev_doc]
    ev_set, ev_item = unit_of[ev_doc], docs[ev_doc]
    width = depth + 1
    ev_key = (ev_set * n_run + ev_run) * width + ev_pos
    order = np.argsort(ev_key, kind="stable")
    ev_key, ev_item = ev_key[order], ev_item[order]
    ev_run, ev_pos, ev_set = ev_run[order], ev_pos[order], ev_set[order]
    ev_stratum = sample.stratum[ev_item]
    ev_relevant = relevant[ev_item] if sign < 0 else np.ones(len(ev_item), dtype=bool)  # added docs: relevant
    # the full judgements' relevant entries (row-major: run, then rank); a (set, run) cell whose run ranks none of the
    # set's docs keeps them as they are, so only the changed cells' entries are laid out, less the deleted ones or
    # with the added ones
    f_run, f_pos = np.nonzero(is_relevant)
    changed = distinct(ev_set * n_run + ev_run)  # the changed cells, ascending
    run_bounds = np.searchsorted(f_run, np.arange(n_run + 1))
    counts = run_bounds[changed % n_run + 1] - run_bounds[changed % n_run]
    first = np.repeat(run_bounds[changed % n_run] - (np.cumsum(counts) - counts), counts)
    taken = first + np.arange(int(counts.sum()))
    e_set, e_run, e_pos = np.repeat(changed // n_run, counts), f_run[taken], f_pos[taken]
    e_key = (e_set * n_run + e_run) * width + e_pos
    if sign < 0:
        deleted = np.zeros(len(e_key), dtype=bool)
        if len(ev_key):
            found = np.minimum(np.searchsorted(ev_key, e_key), len(ev_key) - 1)
            deleted = ev_key[found] == e_key
        keep = np.flatnonzero(~deleted)
        e_set, e_run, e_pos, e_key = e_set[keep], e_run[keep], e_pos[keep], e_key[keep]
    elif len(ev_key):  # an added doc was unjudged: its entry is new, and goes in (set, run, position) order
        slots = np.searchsorted(e_key, ev_key)
        e_set, e_run = np.insert(e_set, slots, ev_set), np.insert(e_run, slots, ev_run)
        e_pos, e_key = np.insert(e_pos, slots, ev_pos), np.insert(e_key, slots, ev_key)
    row_start = e_key - e_pos  # the key of the entry's (set, run) at rank 0
    ranks = np.arange(1, depth + 1, dtype=np.float64)
    above, full_above = np.zeros(len(e_key)), np.zeros(len(f_run))
    for c in range(n_strata):
        own = stratum == c
        d_c = np.cumsum(own, axis=1) - own
        s_c = np.cumsum(is_judged & own, axis=1) - (is_judged & own)
        rho_c = np.cumsum(is_relevant & own, axis=1) - (is_relevant & own)
        full_above += d_c[f_run, f_pos] * (rho_c[f_run, f_pos] + EPSILON) / (s_c[f_run, f_pos] + SAMPLED_EPSILON)
        d, s, rho = d_c[e_run, e_pos], s_c[e_run, e_pos], rho_c[e_run, e_pos]
        mine = ev_stratum == c
        keys, rel_keys = ev_key[mine], ev_key[mine & ev_relevant]
        s = s + sign * (np.searchsorted(keys, e_key) - np.searchsorted(keys, row_start))
        rho = rho + sign * (np.searchsorted(rel_keys, e_key) - np.searchsorted(rel_keys, row_start))
        above += d * (rho + EPSILON) / (s + SAMPLED_EPSILON)
    precision = (1.0 + above) / ranks[e_pos]
    full_precision = (1.0 + full_above) / ranks[f_pos]
    judged_c = np.array([np.sum(sample.judged & (sample.stratum == c)) for c in range(n_strata)], dtype=np.int64)
    relevant_c = np.array([np.sum(relevant & (sample.stratum == c)) for c in range(n_strata)], dtype=np.int64)
    unit_stratum = np.zeros((n_b, n_strata), dtype=np.int64)
    unit_relevant = np.zeros((n_b, n_strata), dtype=np.int64)
    doc_relevant = relevant[docs] if sign < 0 else np.ones(len(docs), dtype=bool)
    np.add.at(unit_stratum, (unit_of, sample.stratum[docs]), 1)
    np.add.at(unit_relevant, (unit_of, sample.stratum[docs]), doc_relevant.astype(np.int64))
    n_c, r_c = judged_c[None, :] + sign * unit_stratum, relevant_c[None, :] + sign * unit_relevant
    weight = np.divide(sample.pooled_total[None, :], n_c, out=np.zeros(n_c.shape), where=n_c > 0)  # N_c / n_c
    r_hat = np.sum(weight * r_c, axis=1)  # [B]
    value = np.zeros((n_b, n_run))
    cell = e_set * n_run + e_run
    entry_stratum, full_stratum = stratum[e_run, e_pos], stratum[f_run, f_pos]
    is_changed = np.zeros(n_b * n_run, dtype=bool)
    is_changed[changed] = True
    for c in range(n_strata):
        # a cell's sum adds its entries' precisions in rank order: an unchanged cell's is its run's full one
        mine, full_mine = entry_stratum == c, full_stratum == c
        sap = np.bincount(cell[mine], weights=precision[mine], minlength=n_b * n_run)
        full = np.bincount(f_run[full_mine], weights=full_precision[full_mine], minlength=n_run)
        value += weight[:, c, None] * np.where(is_changed, sap, np.tile(full, n_b)).reshape(n_b, n_run)
    return _per_relevant(value, r_hat, max_results)


def _per_relevant(value: np.ndarray, r_hat: np.ndarray, max_results: int) -> np.ndarray:
    """xinfAP from the weighted precision sums [B, run]: divided by the estimated relevant count r_hat [B] (0 where
    it is 0), by max_results instead where r_hat is larger."""
    value = np.divide(value, r_hat[:, None], out=np.zeros_like(value), where=r_hat[:, None] > 0)
    limit = float(max_results)
    capped: np.ndarray = np.where(r_hat[:, None] > limit, value * r_hat[:, None] / limit, value)
    return capped


def _dense_sets(sample: TopicSample, units: Sequence[np.ndarray], sign: int, max_results: int) -> np.ndarray:
    """`xinf_ap_topic` of the judgement sets leaving each unit out (`sign` -1) or adding it as relevant (`sign` 1), on
    [set, run, depth] arrays, 64 sets a call."""
    values = np.zeros((len(units), sample.ranked.shape[0]))
    for start in range(0, len(units), 64):
        part = units[start : start + 64]
        judged = np.repeat(sample.judged[None, :], len(part), axis=0)
        relevant = np.repeat((sample.relevant & sample.judged)[None, :], len(part), axis=0)
        for row, docs in enumerate(part):
            judged[row, docs] = sign > 0
            relevant[row, docs] = sign > 0
        values[start : start + 64] = xinf_ap_topic(sample, judged, relevant, max_results)
    return values


def by_run_sum(values: np.ndarray) -> np.ndarray:
    """The sum over axis 0 of [k, run] values, added row by row: each run's the same bits whatever the other runs
    (numpy's reduction adds a lone column pairwise, other columns row by row)."""
    if len(values) == 0:
        return np.zeros(values.shape[1:])
    total: np.ndarray = np.cumsum(values, axis=0)[-1]
    return total


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


def _jackknife(
    sample: TopicSample, max_results: int = 1000, groups: int = 400
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The stratified delete-one (or delete-a-group) jackknife of xinfAP: the scaled deviations [unit, run], the
    stratum of each unit, and the jackknife's bias estimate [run] (module docstring)."""
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
    values = xinf_ap_deletions(sample, units, max_results)
    out = np.zeros_like(values)
    bias = np.zeros(n_run)
    if len(units):
        point = xinf_ap_topic(sample, sample.judged, sample.relevant, max_results)[0]
    for c, big_n in enumerate(sample.pooled_total):
        own = stratum_of == c
        if not own.any():
            continue
        g, n = int(own.sum()), float(np.sum(sample.judged & (sample.stratum == c)))
        mean = by_run_sum(values[own]) / g
        factor = np.sqrt((1.0 - n / big_n) * (g - 1.0) / g)
        out[own] = factor * (values[own] - mean)
        bias += (1.0 - n / big_n) * (g - 1.0) * (mean - point)
    return out, stratum_of, bias


def jackknife_components(
    sample: TopicSample, max_results: int = 1000, groups: int = 400
) -> tuple[np.ndarray, np.ndarray]:
    """The stratified delete-one jackknife of xinfAP: per judged doc j of stratum c, the scaled deviation
    a_j = sqrt((1 - n_c/N_c)(n_c - 1)/n_c) (xinfAP without j - mean over c's deletions) [unit, run], and c [unit];
    sum_j a_j^2 is the variance estimate, a_j a_j^T summed the covariance between runs. A stratum with more than
    `groups` judged docs deletes G = `groups` random groups instead (delete-a-group jackknife, Kott 2001: n_c -> G)."""
    parts, of, _ = _jackknife(sample, max_results, groups)
    return parts, of


# --- xinfAP's interval: small-count floor, bias, topics without an estimate -------------------------------------------

FLOOR_PSEUDO = 2.0  # a: pseudo relevant and pseudo non-relevant docs per sampled stratum (tuned on odd topics)
MEAN_FLOOR_PSEUDO = 1.0  # a for the interval of a mean over topics (tuned on odd topics)
FLOOR_DRAWS = 30  # unjudged docs of a stratum tried for the effect of one more relevant doc
MIN_JUDGED = 2  # judged docs a stratum with unjudged ones needs for the topic to have an estimate
NON_RANDOM_WIDEN = 4.0  # variance factor for a non-random judging order (half-width x 2; module docstring)


def estimable(sample: TopicSample) -> bool:
    """Whether the topic has an estimate: every stratum with unjudged docs has at least MIN_JUDGED judged."""
    for c, big_n in enumerate(sample.pooled_total):
        n = int(np.sum(sample.judged & (sample.stratum == c)))
        if n < big_n and n < MIN_JUDGED:
            return False
    return True


def _floors(
    sample: TopicSample, rng: np.random.Generator, max_results: int, pseudos: Sequence[float], draws: int
) -> np.ndarray:
    """`floor_components` for several pseudo counts at once [pseudo, stratum, run] (one draw of unjudged docs)."""
    n_run, n_strata = sample.ranked.shape[0], len(sample.pooled_total)
    out = np.zeros((len(pseudos), n_strata, n_run))
    point: np.ndarray | None = None
    for c, big_n in enumerate(sample.pooled_total):
        members = sample.stratum == c
        n = float(np.sum(sample.judged & members))
        unjudged = np.flatnonzero(members & ~sample.judged)
        if n < MIN_JUDGED or len(unjudged) == 0:
            continue
        r = float(np.sum(sample.relevant & sample.judged & members))
        p_hat = r / n
        tilde = [(r + a) / (n + 2.0 * a) for a in pseudos]
        extra = np.array([max(0.0, p * (1.0 - p) - p_hat * (1.0 - p_hat)) for p in tilde])
        if not np.any(extra > 0):
            continue  # p^ = 1/2: the jackknife's variance is the floor's already
        if point is None:
            point = xinf_ap_topic(sample, sample.judged, sample.relevant, max_results)[0]
        pick = rng.choice(unjudged, size=min(draws, len(unjudged)), replace=False)
        added = xinf_ap_additions(sample, [pick[i : i + 1] for i in range(len(pick))], max_results)
        change = by_run_sum(added - point[None, :]) / len(pick)
        out[:, c] = np.sqrt((1.0 - n / big_n) * extra / n)[:, None] * (n + 1.0) * change[None, :]
    return out


def floor_components(
    sample: TopicSample,
    rng: np.random.Generator,
    max_results: int = 1000,
    pseudo: float = FLOOR_PSEUDO,
    draws: int = FLOOR_DRAWS,
) -> np.ndarray:
    """The small-count floor of each sampled stratum [stratum, run] (module docstring): sqrt of
    (1 - n/N) (p~(1 - p~) - p^(1 - p^)) / n, p~ = (r + a) / (n + 2a), times (n + 1) times the mean change of
    xinfAP when one more judged doc, relevant, is put at a random unjudged doc of the stratum."""
    floor: np.ndarray = _floors(sample, rng, max_results, (pseudo,), draws)[0]
    return floor


@dataclass(frozen=True)
class TopicError:
    """One topic's xinfAP and its error model: jackknife deviations, bias, the small-count floor."""

    point: np.ndarray  # [run] xinfAP (sample_eval's)
    bias: np.ndarray  # [run] the jackknife's bias estimate
    parts: np.ndarray  # [unit, run] the jackknife's scaled deviations
    of: np.ndarray  # [unit] their stratum
    floor: np.ndarray  # [stratum, run] the floor's deviation (FLOOR_PSEUDO: the interval of each topic)
    estimable: bool  # every stratum with unjudged docs has >= MIN_JUDGED judged
    floor_mean: np.ndarray | None = None  # [stratum, run] the floor at MEAN_FLOOR_PSEUDO (the interval of a mean)

    @property
    def variance(self) -> np.ndarray:
        """Sampling variance per run: the jackknife's plus the floor's."""
        variance: np.ndarray = by_run_sum(self.parts**2) + by_run_sum(self.floor**2)
        return variance

    @property
    def mean_variance(self) -> np.ndarray:
        """The topic's share of the variance of a mean over topics, per run: the jackknife's plus the mean's floor."""
        floor = self.floor if self.floor_mean is None else self.floor_mean
        variance: np.ndarray = by_run_sum(self.parts**2) + by_run_sum(floor**2)
        return variance


JACKKNIFE_ELEMENTS = 1 << 21  # judgement sets x runs x ranks one xinfAP call holds (a few float arrays of it)


def topic_error(sample: TopicSample, rng: np.random.Generator, max_results: int = 1000) -> TopicError:
    """The topic's `TopicError` (`rng` draws the floor's unjudged docs), a few runs at a time so that one call's
    arrays stay within `JACKKNIFE_ELEMENTS`: a run's error is its own and every chunk draws the same docs (the
    draws depend on the judgements alone), so the chunks give the numbers of all runs at once, bit for bit."""
    parts = run_chunks(sample)
    if len(parts) == 1:
        return _topic_error(sample, rng, max_results)
    state = rng.bit_generator.state
    chunks = []
    for part in parts:
        rng.bit_generator.state = state
        chunks.append(_topic_error(part, rng, max_results))
    first = chunks[0]
    return TopicError(
        point=np.concatenate([c.point for c in chunks]),
        bias=np.concatenate([c.bias for c in chunks]),
        parts=np.concatenate([c.parts for c in chunks], axis=1),
        of=first.of,
        floor=np.concatenate([c.floor for c in chunks], axis=1),
        estimable=first.estimable,
        floor_mean=None if first.floor_mean is None else np.concatenate([c.floor_mean for c in chunks], axis=1),
    )


def run_chunks(sample: TopicSample) -> list[TopicSample]:
    """The sample's runs a few at a time (in order), so that one xinfAP call's arrays stay within
    `JACKKNIFE_ELEMENTS` (a run ranking an item twice takes the dense path, 64 judgement sets a call)."""
    n_run, depth = sample.ranked.shape
    step = max(1, JACKKNIFE_ELEMENTS // (64 * max(depth, 1)))
    if n_run <= step:
        return [sample]
    return [replace(sample, ranked=sample.ranked[start : start + step]) for start in range(0, n_run, step)]


def _topic_error(sample: TopicSample, rng: np.random.Generator, max_results: int) -> TopicError:
    """`topic_error` of the sample's runs in one call."""
    point = xinf_ap_topic(sample, sample.judged, sample.relevant, max_results)[0]
    parts, of, bias = _jackknife(sample, max_results)
    floor, floor_mean = _floors(sample, rng, max_results, (FLOOR_PSEUDO, MEAN_FLOOR_PSEUDO), FLOOR_DRAWS)
    return TopicError(point, bias, parts, of, floor, estimable(sample), floor_mean)


def _logit_interval(estimate: np.ndarray, sd: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray]:
    """estimate +- z sd on the logit scale (delta method), for scores in [0, 1]; the plain interval clipped to
    [0, 1] where that reaches past 0 or 1, where sd is 0, and where the estimate is not finite."""
    est = np.asarray(estimate, dtype=np.float64)
    sd = np.asarray(sd, dtype=np.float64)
    low, high = est - z * sd, est + z * sd
    plain = ~np.isfinite(est) | ~np.isfinite(sd) | (sd <= 0) | (low <= 0) | (high >= 1)
    e = np.where(plain, 0.5, est)
    width = np.where(plain, 0.0, z * sd) / (e * (1.0 - e))
    centre = np.log(e / (1.0 - e))
    with np.errstate(over="ignore"):
        logit_low, logit_high = 1.0 / (1.0 + np.exp(width - centre)), 1.0 / (1.0 + np.exp(-centre - width))
    bounded_low = np.where(np.isfinite(sd), np.clip(low, 0.0, 1.0), 0.0)
    bounded_high = np.where(np.isfinite(sd), np.clip(high, 0.0, 1.0), 1.0)
    return np.where(plain, bounded_low, logit_low), np.where(plain, bounded_high, logit_high)


@dataclass(frozen=True)
class XinfapVariance:
    """Point xinfAP, its sampling variance per run and topic, and replicates for the ranking's stability; the
    interval's centre and variance per run and topic (bias-corrected; a prior from the judged topics where a topic
    has no estimate), and the replicates of those topics' prior error."""

    topics: list[str]
    runs: list[str]
    point: np.ndarray  # [run, topic]
    variance: np.ndarray  # [run, topic] jackknife + small-count floor
    replicates: np.ndarray  # [B, run, topic]
    by_stratum: np.ndarray | None = None  # [B, run, topic, stratum]: the replicates' deviations from each stratum
    estimate: np.ndarray | None = None  # [run, topic] the interval's centre (bias-corrected, or the prior's mean)
    estimate_variance: np.ndarray | None = None  # [run, topic] the interval's variance (x NON_RANDOM_WIDEN if so)
    prior: np.ndarray | None = None  # bool [topic]: no estimate, scored by the prior from the judged topics
    prior_error: np.ndarray | None = None  # [B, run, topic] the prior's replicate errors (0 for other topics)
    donor: np.ndarray | None = None  # int [topic]: the judged topic a prior topic is predicted like once judged
    mean_var: np.ndarray | None = None  # [run] variance of each run's mean of `estimate` over the topics
    random: bool = True  # the judged docs are a random sample of each stratum
    floor_variance: np.ndarray | None = None  # [run, topic] the small-count floor's part of `variance`

    @property
    def mean_variance(self) -> np.ndarray:
        """Variance of each run's mean over topics [run] (topics sampled independently)."""
        if self.mean_var is not None:
            return self.mean_var
        variance: np.ndarray = self.variance.sum(axis=1) / max(len(self.topics), 1) ** 2
        return variance

    def centre(self) -> np.ndarray:
        """The interval's centre per run and topic (the point where none was computed)."""
        return self.point if self.estimate is None else self.estimate

    def intervals(self, z: float = 1.96) -> tuple[np.ndarray, np.ndarray]:
        """(low, high) per run and topic [run, topic]: the centre +- z sd on the logit scale (module docstring)."""
        variance = self.variance if self.estimate_variance is None else self.estimate_variance
        return _logit_interval(self.centre(), np.sqrt(variance), z)

    def mean_intervals(self, z: float = 1.96) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(estimate, low, high) of each run's mean over topics [run], the same way."""
        mean = self.centre().mean(axis=1) if self.topics else np.full(len(self.runs), np.nan)
        low, high = _logit_interval(mean, np.sqrt(self.mean_variance), z)
        return mean, low, high

    def ranking_point(self) -> np.ndarray:
        """The mean per run the ranking is read from: xinfAP, the prior's mean on topics without an estimate."""
        values = self.point if self.prior is None or self.estimate is None else np.where(
            self.prior[None, :], self.estimate, self.point)  # fmt: skip
        point: np.ndarray = values.mean(axis=1)
        return point

    def _prior_later(self, scale: np.ndarray) -> np.ndarray:
        """[B, run] the prior topics' error of the mean once judged like their donors (deviations x the donor's
        scale)."""
        assert self.by_stratum is not None and self.prior is not None and self.donor is not None
        n_topic = max(self.by_stratum.shape[2], 1)
        later = np.zeros(self.by_stratum.shape[:2])
        for u in np.flatnonzero(self.prior):
            d = int(self.donor[u])
            if d >= 0:
                later += np.einsum("brc,c->br", self.by_stratum[:, :, d, :], scale[d]) / n_topic
        return later

    def expected_tau(self, scale: np.ndarray | float = 1.0, judged_prior: bool = False) -> float:
        """Expected tau_b between the ranking by mean xinfAP and the ranking on the full judgements, by the
        replicates with one bootstrap bias correction (module docstring); `scale` [topic] or [topic, stratum]
        multiplies the deviations (sqrt of a variance ratio, to predict more judgements); `judged_prior`: the topics
        scored by the prior are predicted judged, as uncertain as their donor topic (else the prior's error)."""
        scale = np.asarray(scale, dtype=np.float64)
        point = self.ranking_point()[None, :]
        if not np.all(np.isfinite(point)):
            return float("nan")
        if self.by_stratum is None:
            deviation = (self.replicates - self.replicates.mean(axis=0, keepdims=True)) * (
                scale if scale.ndim < 2 else scale.mean(axis=1)
            )
            return float(np.nanmean(tau_b_batch(point, point + deviation.mean(axis=2))))
        if scale.ndim < 2:
            scale = np.broadcast_to(scale.reshape(-1, 1) if scale.ndim else scale, self.by_stratum.shape[2:])
        n_topic = max(self.by_stratum.shape[2], 1)
        later = np.einsum("brtc,tc->br", self.by_stratum, scale) / n_topic  # error of the mean after judging more
        prior_now = np.zeros_like(later)
        if self.prior is not None and self.prior.any() and self.prior_error is not None:
            prior_now = self.prior_error.sum(axis=2) / n_topic
            later = later + (self._prior_later(scale) if judged_prior else prior_now)
        plain = float(np.nanmean(tau_b_batch(point, point + later)))
        if self.by_stratum.shape[0] < 2:
            return plain
        now = np.roll(self.by_stratum.sum(axis=3).mean(axis=2) + prior_now, 1, axis=0)  # the point's own error
        world = float(np.nanmean(tau_b_batch(point + now, point + now + later)))
        return float(np.clip(2.0 * plain - world, -1.0, 1.0))


def combine(
    topics: list[str],
    runs: list[str],
    errors: list[TopicError],
    replicates: int = 200,
    seed: int = 0,
    random: bool = True,
) -> XinfapVariance:
    """Per run and topic: xinfAP, its variance, the interval's centre and variance; Gaussian multiplier replicates
    with the jackknife's covariance between runs, and the prior's errors for topics without an estimate (module
    docstring). A non-random judging order multiplies the interval's variance and the replicates' errors' variance
    by NON_RANDOM_WIDEN."""
    rng = np.random.default_rng(seed)
    n_run, n_topic = len(runs), len(topics)
    n_strata = max((e.floor.shape[0] for e in errors), default=0)
    point = np.zeros((n_run, n_topic))
    variance = np.zeros((n_run, n_topic))
    for_mean = np.zeros((n_run, n_topic))  # each topic's share of the variance of a mean
    floor_variance = np.zeros((n_run, n_topic))
    bias = np.zeros((n_run, n_topic))
    by_stratum = np.zeros((replicates, n_run, n_topic, n_strata))
    for t, error in enumerate(errors):
        point[:, t], variance[:, t], bias[:, t] = error.point, error.variance, error.bias
        floor_variance[:, t] = by_run_sum(error.floor**2)
        for_mean[:, t] = error.mean_variance
        weights = rng.standard_normal((replicates, len(error.of)))
        for c in range(error.floor.shape[0]):
            own = error.of == c
            by_stratum[:, :, t, c] = weights[:, own] @ error.parts[own]
    widen = 1.0 if random else NON_RANDOM_WIDEN
    by_stratum *= np.sqrt(widen)
    prior = np.array([not e.estimable for e in errors], dtype=bool)
    judged = np.flatnonzero(~prior)
    estimate = np.clip(point - bias, 0.0, 1.0)
    estimate_variance = variance * widen
    prior_error = np.zeros((replicates, n_run, n_topic))
    donor = np.full(n_topic, -1, dtype=np.int64)
    m, unknown = len(judged), np.flatnonzero(prior)
    common = np.zeros(n_run)
    if len(unknown) and m >= 2:
        values = estimate[:, judged]  # [run, m]
        mean = values.mean(axis=1)
        deviation = values - mean[:, None]
        spread = deviation.var(axis=1, ddof=1)  # S, the between-topic variance per run
        estimate[:, unknown] = mean[:, None]
        estimate_variance[:, unknown] = widen * spread[:, None] * (1.0 + 1.0 / m)
        picks = rng.integers(0, m, (replicates, len(unknown)))
        shared = rng.standard_normal((replicates, m)) @ deviation.T / np.sqrt(m * (m - 1.0))  # [B, run]: var S / m
        prior_error[:, :, unknown] = np.sqrt(m / (m - 1.0)) * np.transpose(deviation[:, picks], (1, 0, 2))
        prior_error[:, :, unknown] += shared[:, :, None]
        prior_error *= np.sqrt(widen)
        donor[unknown] = judged[rng.integers(0, m, len(unknown))]
        common = spread * (len(unknown) + len(unknown) ** 2 / m)
    elif len(unknown):
        estimate[:, unknown] = np.nan
        estimate_variance[:, unknown] = np.inf
        common = np.full(n_run, np.inf)
    mean_var = widen * (for_mean[:, judged].sum(axis=1) + common) / max(n_topic, 1) ** 2
    return XinfapVariance(
        topics,
        runs,
        point,
        variance,
        point[None] + by_stratum.sum(axis=3) + prior_error,
        by_stratum,
        estimate=estimate,
        estimate_variance=estimate_variance,
        prior=prior,
        prior_error=prior_error,
        donor=donor,
        mean_var=mean_var,
        random=random,
        floor_variance=floor_variance,
    )


def topic_errors(
    topics: list[str], samples: list[TopicSample], seed: int = 0, max_results: int = 1000
) -> list[TopicError]:
    """Each topic's `TopicError`; the floor's draws from the topic's own seeded generator (`seeding.topic_rng`)."""
    return [topic_error(s, topic_rng(seed, t), max_results) for t, s in zip(topics, samples, strict=True)]


def variance_of_samples(
    topics: list[str],
    runs: list[str],
    samples: list[TopicSample],
    replicates: int = 200,
    seed: int = 0,
    max_results: int = 1000,
    random: bool = True,
) -> XinfapVariance:
    """xinfAP per run and topic, its variance and interval, and replicates of the ranking (module docstring)."""
    return combine(topics, runs, topic_errors(topics, samples, seed, max_results), replicates, seed, random)


def xinfap_variance(index: LineIndex, replicates: int = 200, seed: int = 0, random: bool = True) -> XinfapVariance:
    """xinfAP per run and topic with its sampling variance, interval and replicates (module docstring)."""
    topics, samples = topic_samples(index)
    return variance_of_samples(
        topics, list(index.prepared.names), samples, replicates, seed, index.prepared.max_results, random
    )


def _stratum_scale(pooled: np.ndarray, judged: np.ndarray, more: np.ndarray) -> np.ndarray:
    """sqrt of the jackknife variance's ratio per topic and stratum [topic, c] when `more` docs are judged: the
    factor (1 - n/N) / n at n + more over the factor at n (1 where the stratum has no variance estimate)."""
    now = judged + more
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = ((1.0 - now / pooled) / now) / ((1.0 - judged / pooled) / judged)
    ratio = np.where((judged >= 2) & (judged < pooled), np.clip(ratio, 0.0, 1.0), 1.0)
    return np.sqrt(ratio)


def stratum_counts(samples: list[TopicSample]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pooled, judged and relevant docs per topic and stratum [topic, stratum]."""
    n_strata = max((len(s.pooled_total) for s in samples), default=0)
    pooled = np.array([np.pad(s.pooled_total, (0, n_strata - len(s.pooled_total))) for s in samples])
    judged = np.array([[np.sum(s.judged & (s.stratum == c)) for c in range(n_strata)] for s in samples], float)
    relevant = np.array(
        [[np.sum(s.judged & s.relevant & (s.stratum == c)) for c in range(n_strata)] for s in samples], float
    )
    shape = (len(samples), n_strata)
    return pooled.reshape(shape), judged.reshape(shape), relevant.reshape(shape)


def _more_at(share: float, pooled: np.ndarray, judged: np.ndarray) -> np.ndarray:
    """Docs to judge per topic and stratum for a share of the unjudged ones: ceil(share x unjudged), and at least
    MIN_JUDGED judged in every stratum with unjudged docs (when share > 0)."""
    left = pooled - judged
    more: np.ndarray = np.ceil(share * left)
    if share > 0:
        more = np.maximum(more, np.minimum(np.maximum(MIN_JUDGED - judged, 0.0), left))
    return more


def tau_advice(result: XinfapVariance, samples: list[TopicSample], target_tau: float = 0.9) -> dict[str, Any]:
    """The smallest share f of every stratum's unjudged docs to judge next for the expected tau_b to reach
    `target_tau`, predicting each stratum's jackknife deviations to shrink as its (1 - n/N) / n does, and a topic
    scored by the prior to be as uncertain as its donor topic once judged (`more` per topic and stratum)."""
    pooled, judged, _ = stratum_counts(samples)
    now = result.expected_tau()
    has_prior = result.prior is not None and bool(result.prior.any())
    for share in np.linspace(0.0, 1.0, 21):
        more = _more_at(float(share), pooled, judged)
        scale = _stratum_scale(pooled, judged, more)
        tau = now if share == 0 else result.expected_tau(scale, judged_prior=has_prior)
        if tau >= target_tau:
            return {"target_tau": target_tau, "expected_tau": now, "share": float(share), "predicted_tau": tau,
                    "more_per_stratum": more.astype(np.int64).sum(axis=0).tolist(),
                    "more_total": int(more.sum()), "more": more.astype(np.int64)}  # fmt: skip
    return {"target_tau": target_tau, "expected_tau": now, "share": None, "predicted_tau": None,
            "more_per_stratum": None, "more_total": None,
            "more": (pooled - judged).astype(np.int64)}  # fmt: skip


# --- One answer: stop or continue, and what to judge next -------------------------------------------------------------

REASONS = {
    "census": "every pooled doc is judged",
    "unestimated": f"a sampled stratum has fewer than {MIN_JUDGED} judged docs: the topic has no estimate yet",
    "relevant_width": "the interval of the estimated relevant docs is wider than the target",
    "not_saturated": "the last window of verdicts still finds relevant docs (non-random order)",
    "tau": "the expected tau_b of the run ranking is below the target",
}


def judging_advice(
    topics: list[str],
    strata: list[int],
    pooled: np.ndarray,
    judged: np.ndarray,
    relevant: np.ndarray,
    *,
    random: bool = True,
    saturated: np.ndarray | None = None,
    tau: dict[str, Any] | None = None,
    queued: np.ndarray | None = None,
    target_width: float | None = None,
    relative_width: float = 0.2,
    z: float = 1.96,
) -> dict[str, Any]:
    """Stop or continue, per topic and for the pool, and what to judge next: the one rule the live view and the
    budget advisor both apply (module docstring, "One answer").

    A topic continues when a sampled stratum has fewer than MIN_JUDGED judged docs ("unestimated"), when its R_hat
    interval is wider than the target (random orders) or its last window still finds relevant docs (`saturated`
    False, non-random orders), or when `tau` (from `tau_advice`) is below its target; it stops when every pooled
    doc is judged. The pool stops when every topic does. Each continuing topic's `more_per_stratum` is the largest
    of what each reason asks (at least MIN_JUDGED judged per sampled stratum; the Neyman allocation for the R_hat
    target; the tau advice's share of the unjudged docs, all of them when no share reaches the target), and `next`
    lists them: unestimated topics first, then by docs asked, with what each stratum has queued when `queued` is
    given (sampled and not yet judged: more than that means growing the sample)."""
    big_n, n, r = _as_2d(pooled, judged, relevant)
    big_n, n, r = (a.reshape(len(topics), len(strata)) for a in (big_n, n, r))
    left = big_n - n
    est = relevant_estimate(big_n, n, r, z=z)
    target = (
        np.full(len(topics), float(target_width))
        if target_width is not None
        else relative_width * np.maximum(np.nan_to_num(est.estimate), 1.0)
    )
    allocated = allocation(big_n, n, r, target_width=target, z=z).reshape(big_n.shape).astype(np.float64)
    tau_short = tau is not None and not (tau.get("expected_tau") is not None and np.isfinite(tau["expected_tau"])
                                         and tau["expected_tau"] >= tau["target_tau"])  # fmt: skip
    tau_more = np.zeros_like(big_n) if tau is None else np.asarray(tau.get("more", left), dtype=np.float64)
    rows: list[dict[str, Any]] = []
    for t, topic in enumerate(topics):
        reasons: list[str] = []
        more = np.zeros(len(strata))
        if np.all(n[t] >= big_n[t]):
            rows.append({"topic": topic, "advice": "stop", "reasons": ["census"], "more": more})
            continue
        unestimated = (left[t] > 0) & (n[t] < MIN_JUDGED)
        if unestimated.any():
            reasons.append("unestimated")
            more = np.maximum(more, np.where(unestimated, np.minimum(MIN_JUDGED - n[t], left[t]), 0.0))
        if random:
            if not (np.isfinite(est.variance[t]) and est.width[t] <= target[t]):
                reasons.append("relevant_width")
                more = np.maximum(more, allocated[t])
        elif saturated is None or not bool(saturated[t]):
            reasons.append("not_saturated")
            more = np.maximum(more, allocated[t])
        if tau_short and np.any(left[t] > 0):
            reasons.append("tau")
            more = np.maximum(more, tau_more[t])
        more = np.minimum(more, left[t])
        rows.append({"topic": topic, "advice": "continue" if reasons else "stop", "reasons": reasons, "more": more})
    unestimated_topics: list[str] = [row["topic"] for row in rows if "unestimated" in row["reasons"]]
    upcoming: list[tuple[tuple[bool, float, int, int], dict[str, Any]]] = []
    for t, row in enumerate(rows):
        for c, stratum in enumerate(strata):
            if row["advice"] == "continue" and row["more"][c] > 0:
                item: dict[str, Any] = {"topic": row["topic"], "stratum": int(stratum), "more": int(row["more"][c])}
                if queued is not None:
                    item["queued"] = int(queued[t, c])
                upcoming.append((("unestimated" not in row["reasons"], -row["more"][c], t, c), item))
    upcoming.sort(key=lambda pair: pair[0])
    stop = all(row["advice"] == "stop" for row in rows) and not tau_short
    said: list[str] = sorted({reason for row in rows for reason in row["reasons"] if row["advice"] == "continue"})
    summary = [f"{REASONS[reason]} ({sum(reason in row['reasons'] for row in rows)} topics)" for reason in said]
    if unestimated_topics:
        summary.insert(0, f"{len(unestimated_topics)} of {len(topics)} topics have no estimate yet: "
                          + ", ".join(unestimated_topics))  # fmt: skip
    return {
        "advice": "stop" if stop else "continue",
        "reasons": summary,
        "unestimated_topics": unestimated_topics,
        "expected_tau": None if tau is None else tau.get("expected_tau"),
        "target_tau": None if tau is None else tau.get("target_tau"),
        "more_total": int(sum(item["more"] for _, item in upcoming)),
        "next": [item for _, item in upcoming],
        "topics": [
            {
                "topic": row["topic"],
                "advice": row["advice"],
                "reasons": row["reasons"],
                "more_per_stratum": {str(s): int(row["more"][c]) for c, s in enumerate(strata)},
            }
            for row in rows
        ],  # fmt: skip
    }


# --- Offline: the advisor on a seeded stratified sample of full judgements (`trecpool analyse budget`) ---------------

_SAMPLED = re.compile(r"^\s*(\d+)\s*-\s*(\d+)\s*:\s*([0-9.]+)(%?)\s*$")


def sampled_strata(specs: Sequence[str]) -> tuple[Stratum, ...]:
    """Strata from `A-B:share` texts (several per text, comma-separated; share in (0, 1] or a percentage): the
    ranks 1 to the deepest named, each range not named judged in full (ValueError if ranges overlap or are bad)."""
    named: list[Stratum] = []
    for part in (p for spec in specs for p in str(spec).split(",") if p.strip()):
        match = _SAMPLED.match(part)
        if match is None:
            raise ValueError(f"sampled stratum {part.strip()!r} is not A-B:share (e.g. 11-100:0.25)")
        first, last, share = int(match.group(1)), int(match.group(2)), float(match.group(3))
        share = share / 100.0 if match.group(4) else share
        if not 1 <= first <= last or not 0.0 < share <= 1.0:
            raise ValueError(f"sampled stratum {part.strip()!r}: ranks 1 <= A <= B and a share in (0, 1] are needed")
        named.append(Stratum(first, last, share))
    if not named:
        raise ValueError("name at least one sampled stratum A-B:share")
    named.sort(key=lambda s: s.first)
    strata: list[Stratum] = []
    for stratum in named:
        next_first = strata[-1].last + 1 if strata else 1
        if stratum.first < next_first:
            raise ValueError(f"sampled strata overlap at rank {stratum.first}")
        if stratum.first > next_first:
            strata.append(Stratum(next_first, stratum.first - 1, 1.0))  # ranks not named: judged in full
        strata.append(stratum)
    return tuple(strata)


@dataclass(frozen=True)
class _RankedLists:
    """One prepared run's top-`depth` lists as pooling rows (score = minus the rank, so the order is kept)."""

    topics: np.ndarray
    docs: np.ndarray
    scores: np.ndarray


def _ranked_lists(prepared: PreparedRuns, depth: int) -> list[_RankedLists]:
    """Each prepared run's ranked lists cut at `depth`, as rows `build_pool` ranks in the same order."""
    out = []
    docs = np.asarray(prepared.docs, dtype=object)
    topic_names = np.asarray(prepared.topics, dtype=object)
    for r in range(len(prepared.names)):
        block = prepared.pairs[r, :, :depth]
        topic, rank = np.nonzero(block >= 0)
        pairs = block[topic, rank]
        out.append(_RankedLists(topic_names[topic].astype(str), docs[prepared.pair_doc[pairs]].astype(str),
                                -rank.astype(np.float64)))  # fmt: skip
    return out


def stratified_sample(runs: PreparedRuns | RunBlocks, qrels: Qrels, strata: Sequence[Stratum], seed: int = 0) -> Qrels:
    """The runs pooled to the deepest stratum's depth, strata by best rank, and the seeded stratified sample the pool
    builder draws (`pools.builders.build_pool`, one generator per topic from `seeding.topic_rng`): the drawn lines
    graded from `qrels` (a pooled doc absent from them, or graded -1 there, is not relevant), the others -1. The
    runs may come in blocks: each block's candidate pairs are merged, the pool of every run at once."""
    checked = pool_strata(strata=strata)
    source = as_blocks(runs, 1000)
    parts = [pool_candidates(_ranked_lists(block, checked[-1].last), checked) for block in source]
    pool = sample_pool(merge_candidates(parts), checked, seed=seed)
    keys = zip(qrels.topics.astype(str).tolist(), qrels.docs.astype(str).tolist(), strict=True)
    grade = dict(zip(keys, np.asarray(qrels.grades, dtype=np.int64).tolist(), strict=True))
    pairs = zip(pool.topics.tolist(), pool.docs.tolist(), strict=True)
    grades = np.array([max(grade.get(key, 0), 0) for key in pairs], dtype=np.int64)
    return Qrels(pool.topics, pool.docs, np.where(pool.sampled, grades, -1), strata=pool.strata.astype(np.int64))


@dataclass(frozen=True)
class SampledBudget:
    """The advisor on one seeded sample: the sampled qrels, xinfAP's error model, the tau advice and the advice."""

    strata: tuple[Stratum, ...]
    qrels: Qrels  # the pooled lines, the drawn ones graded, the others -1
    variance: XinfapVariance
    tau: dict[str, Any] | None
    advice: dict[str, Any]
    level: float
    seed: int

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: per run the estimated mean with its interval, the expected tau and the advice."""
        z = NormalDist().inv_cdf(0.5 + self.level / 2.0)
        v = self.variance
        means, low, high = v.mean_intervals(z)
        topic_low, topic_high = v.intervals(z)
        centre = v.centre()
        prior = v.prior if v.prior is not None else np.zeros(len(v.topics), dtype=bool)
        tau = None if self.tau is None else {k: val for k, val in self.tau.items() if k != "more"}
        return {
            "strata": [
                {"stratum": i + 1, "first": s.first, "last": s.last, "share": s.rate} for i, s in enumerate(self.strata)
            ],  # fmt: skip
            "seed": self.seed,
            "pool_depth": self.strata[-1].last,
            "pooled": len(self.qrels),
            "judged": int(np.sum(self.qrels.grades >= 0)),
            "level": self.level,
            "expected_tau": None if tau is None else tau["expected_tau"],
            "target_tau": None if tau is None else tau["target_tau"],
            "advice": {k: val for k, val in self.advice.items() if k != "topics"},
            "runs": [
                {
                    "run": run,
                    "mean": float(means[i]),
                    "ci_low": float(low[i]),
                    "ci_high": float(high[i]),
                    "level": self.level,
                    "xinfap": float(v.point[i].mean()) if v.topics else None,
                    "biased": not v.random,
                    "per_topic": [
                        {
                            "topic": topic,
                            "xinfap": float(v.point[i, t]),
                            "estimate": float(centre[i, t]),
                            "ci_low": float(topic_low[i, t]),
                            "ci_high": float(topic_high[i, t]),
                            "prior": bool(prior[t]),
                        }
                        for t, topic in enumerate(v.topics)
                    ],  # fmt: skip
                }
                for i, run in enumerate(v.runs)
            ],
            "topics": self.advice["topics"],
            "tau": tau,
        }


def sampled_budget(
    qrels: Qrels,
    runs: PreparedRuns | RunBlocks,
    sampled: Sequence[str],
    *,
    seed: int = 0,
    target_tau: float = 0.9,
    relative_width: float = 0.2,
    level: float = 0.95,
    replicates: int = 200,
    max_results: int = 1000,
) -> SampledBudget:
    """The budget advisor on the seeded stratified sample of full judgements `qrels` (`stratified_sample`; the
    lines not drawn are unjudged): per run the estimated mean xinfAP with its interval, the expected tau_b and the
    advice, exactly as the budget endpoint computes them for a pool judged that far in a random order.

    `runs` may be blocks of prepared runs (`pooled_lines.RunBlocks`, cut at `max_results`), read twice: for the
    pool's candidates, then for each run's entries at the pooled lines (12 bytes each), all that is kept of them."""
    strata = sampled_strata(sampled)
    limit = runs.max_results if isinstance(runs, PreparedRuns) else max_results
    source = as_blocks(runs, limit)
    sample = stratified_sample(source, qrels, strata, seed)
    entries: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    start, depth = 0, 0
    for block in source:
        run, rank, line = line_entries(index_lines(block, sample))
        entries.append((run + np.int32(start), rank, line))
        start, depth = start + len(block.names), max(depth, block.depth)
        del block
    run, rank, line = (np.concatenate([e[i] for e in entries] or [np.zeros(0, np.int32)]) for i in range(3))
    topics, samples = entry_samples(sample, start, depth, run, rank, line)
    del run, rank, line, entries
    variance = variance_of_samples(topics, list(source.names), samples, replicates, seed, limit)
    tau = tau_advice(variance, samples, target_tau) if len(variance.runs) > 1 and samples else None
    pooled, judged, relevant = stratum_counts(samples)
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    advice = judging_advice(topics, list(range(1, len(strata) + 1)), pooled, judged, relevant, tau=tau,
                            relative_width=relative_width, z=z)  # fmt: skip
    return SampledBudget(strata, sample, variance, tau, advice, level, seed)
