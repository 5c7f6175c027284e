"""Each run's confidence interval per measure, computed once by the evaluation job and stored with its mean.

The interval (SPEC section 6; `evaluation.statistics.intervals`): the paired bootstrap over topics, percentile, 95 %,
10,000 resamples, seed 0, of the mean of the per-topic values (a topic a run lacks scores 0, as in the means); for a
geometric mean (gm_map) on the log scale of the floored values, mapped back; counts (num_ret, num_rel, inum_rel...)
get none. The bootstrap sees topic-to-topic variation only; where the judgements themselves are a sample, or
incomplete, the variance that adds is passed in per run and topic (`sampling_variance`), widening the interval:

- **Sampled qrels** (lines graded -1: stratified 5-column or 4-column with -1): the measures that estimate from the
  sample (xinfAP, infAP, infNDCG, iP@k, iprec@rec: the sample_eval family and infAP) get the larger, per run and
  topic, of (a) xinfAP's stratified jackknife (`analyses.budget.xinfap_variance`, xinfAP only) and (b) Rubin's
  between-imputation variance from `analyses.imputation` (20 imputations of the unjudged lines, each topic and
  stratum from its judged relevance rate under a Beta(1, 1) prior). The imputation is what covers the cells the
  jackknife cannot see (a stratum with fewer than 2 judged items, a topic with none); for the estimators other than
  xinfAP it is scaled up per topic by xinfAP's jackknife / imputation ratio where that exceeds 1 (imputation at
  random positions misses the fall of relevance with rank, for every estimator of the same sample). Measures that
  are defined over the judged items (AP, P@k, nDCG... on sampled qrels: unjudged counts as not relevant) get nothing.
- **Marked numbers** (the judging-order mark says biased, i.e. an adaptive order cut with sampled items unjudged; a
  topic without any judgement; a depth pool cut with pooled items unjudged, whose qrels leave them out): the point
  value may be biased, not only noisy. On every topic concerned, the squared distance between the stored value and
  the imputations' mean is added as well (mean squared error = variance + bias^2), so the interval widens towards
  what full judgements would plausibly give. For depth cuts the pool's unjudged items are imputed (every measure but
  counts). A topic of a depth cut without any judgement is not in the qrels, so not in the means (the board's warning
  says so): it adds nothing here.

- **Combined versions** (a model's verdicts corrected by a human verification sample, `qrels.verified_items`): the
  measures the prediction-powered estimator supports (P@k, AP, nDCG, nDCG@k) are stored as its per-topic estimates
  and means (run_means.estimator = `prediction_powered`), and their interval is the topic bootstrap of the estimates
  widened in quadrature by the estimate's labelling standard error (spread evenly over the topics as a per-topic
  variance, so the widening path above gives exactly that se). Other measures are plain scores of the combined
  grades, widened as any cut version's.

The numbers are stored in run_means (ci_low, ci_high, sampling_se: the standard error the judgements add to the
run's mean, on the interval's scale) and the evaluation's `measures["interval"]` says how they were made.

A run's parts are its own (`SamplingParts`: the seeded imputations depend on the qrels alone, and every sum over a
run's values is added in the same order whatever runs share the arrays, `budget.by_run_sum`), so the job computes
them a block of runs at a time; only the ratio that scales the other estimators is over every run
(`sampling_variances`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import text
from sqlalchemy.orm import Session

from app.evaluation.analyses.budget import xinfap_variance
from app.evaluation.analyses.imputation import DEFAULT_IMPUTATIONS, imputed_values
from app.evaluation.analyses.lines import GM_FLOOR, index_lines
from app.evaluation.errors import MeasureError
from app.evaluation.grading.prepared_runs import prepare_runs
from app.evaluation.measures.registry import aggregate_of, resolve
from app.evaluation.records import Qrels, RunTable
from app.evaluation.statistics import intervals
from app.evaluation.statistics.prediction_powered import prediction_powered, supports
from app.services import judging_orders
from app.services.qrels import Verified, topic_order
from app.storage.models import QrelsVersion

LEVEL = 0.95
METHOD = "percentile"
N_RESAMPLES = intervals.DEFAULT_RESAMPLES
SEED = 0
IMPUTATIONS = DEFAULT_IMPUTATIONS
ALL = "all"

JACKKNIFE = "jackknife"  # the variance added: xinfAP's stratified jackknife (and the imputation where larger)
IMPUTATION = "imputation"  # Rubin's between-imputation variance
BIAS = "imputation+bias"  # ... plus the squared distance to the imputations' mean (marked numbers)
PREDICTION_POWERED = "prediction_powered"  # the labelling variance of a prediction-powered estimate
WIDENING_TEXT = {
    JACKKNIFE: "widened by the judged sample's sampling variance (stratified jackknife, or multiple imputation of "
    "the unjudged items where larger)",
    IMPUTATION: "widened by the variance of multiple imputation of the unjudged items (Beta(1, 1) prior per topic "
    "and stratum, Rubin's rules)",
    BIAS: "widened by multiple imputation of the unjudged items and by the distance to the imputed value, as "
    "the judging order or incomplete judgements may bias it",
    PREDICTION_POWERED: "of prediction-powered estimates (a model's verdicts corrected by a random human sample, "
    "Angelopoulos et al. 2023), widened by their labelling standard error",
}


def is_count(measure: str) -> bool:
    """Whether the measure is a count (its `all` is a total): counts get no interval."""
    return aggregate_of(measure) in ("sum", "sum_all")


def is_estimator(measure: str) -> bool:
    """Whether the measure estimates from a judged sample (sample_eval's family and trec_eval's infAP)."""
    try:
        spec = resolve(measure)
    except MeasureError:
        return False
    return spec.stratified or spec.family == "infAP"


def to_scale(values: np.ndarray, measure: str) -> np.ndarray:
    """Per-topic values on the scale the interval is computed on: logs of the floored values for a geometric mean."""
    if aggregate_of(measure) == "gm":
        logs: np.ndarray = np.log(np.maximum(values, GM_FLOOR))
        return logs
    return values


def from_scale(values: np.ndarray, measure: str) -> np.ndarray:
    """Back from `to_scale`'s scale."""
    if aggregate_of(measure) == "gm":
        back: np.ndarray = np.exp(values)
        return back
    return values


def score_arrays(
    table: dict[str, dict[str, dict[str, float]]], runs: Sequence[str], measures: Sequence[str], topics: Sequence[str]
) -> np.ndarray:
    """Per-topic values [run, measure, topic] of the job's nested {run: {measure: {topic: value}}}; 0 where absent."""
    out = np.zeros((len(runs), len(measures), len(topics)))
    for r, run in enumerate(runs):
        for m, measure in enumerate(measures):
            per_topic = table.get(run, {}).get(measure, {})
            row = [per_topic.get(t) for t in topics]
            out[r, m] = [0.0 if v is None or v != v else v for v in row]
    return out


def topics_of(table: dict[str, dict[str, dict[str, float]]]) -> list[str]:
    """Every topic of the job's nested table (not `all`), in board order (as `scores.score_table` reads them)."""
    found = {t for per_measure in table.values() for per_topic in per_measure.values() for t in per_topic}
    return topic_order(found - {ALL})


@dataclass(frozen=True)
class RunIntervals:
    """Every run's interval per measure [run, measure] (NaN: none, as for counts), the standard error judgement
    sampling adds to its mean (on the interval's scale; NaN: none added), and how they were made (`compute`'s info,
    kept as the evaluation's measures["interval"])."""

    low: np.ndarray
    high: np.ndarray
    sampling_se: np.ndarray
    info: dict[str, Any]


def compute(values: np.ndarray, measures: Sequence[str], variances: dict[str, tuple[np.ndarray, str]]) -> RunIntervals:
    """Intervals of every run and measure from per-topic values [run, measure, topic] and, per measure, the added
    sampling variance [run, topic] on the interval's scale and how it was made."""
    n_run, n_measure, _ = values.shape
    low = np.full((n_run, n_measure), np.nan)
    high = np.full((n_run, n_measure), np.nan)
    se = np.full((n_run, n_measure), np.nan)
    widened: dict[str, str] = {}
    draws = intervals.topic_draws(values.shape[2], N_RESAMPLES, SEED) if values.shape[2] else None
    for m, measure in enumerate(measures):
        if is_count(measure) or n_run == 0:
            continue
        variance, how = variances.get(measure, (None, ""))
        found = intervals.mean_intervals(
            to_scale(values[:, m, :], measure),
            level=LEVEL,
            method=METHOD,
            n_resamples=N_RESAMPLES,
            seed=SEED,
            sampling_variance=variance,
            draws=draws,
        )
        low[:, m], high[:, m] = from_scale(found.low, measure), from_scale(found.high, measure)
        if supports(measure) or is_estimator(measure):
            # a widened interval may pass the measure's range, which its true value never leaves: cut it there
            low[:, m], high[:, m] = np.clip(low[:, m], 0.0, 1.0), np.clip(high[:, m], 0.0, 1.0)
        if found.sampling_se is not None:
            se[:, m] = found.sampling_se
            widened[measure] = how
    info = {
        **intervals.describe(LEVEL, METHOD, N_RESAMPLES, SEED, bool(widened)),
        "imputations": IMPUTATIONS,
        "widened": widened,
    }
    return RunIntervals(low, high, se, info)


def describe_measure(info: dict[str, Any] | None, measure: str) -> dict[str, object] | None:
    """The `interval` a board or report of one measure shows (None when the evaluation has no intervals)."""
    if not info:
        return None
    how = (info.get("widened") or {}).get(measure)
    head = intervals.describe(info["level"], info["method"], info["n_resamples"], info["seed"], how is not None)
    if how is not None:
        head["text"] = f"{str(head['text']).split(', widened')[0]}, {WIDENING_TEXT.get(how, how)}"
    return {**head, "widening": how, "counts": "no interval" if is_count(measure) else None}


# --- the job's sampling variances -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Design:
    """What the job knows of how the qrels were judged: the lines to impute, and which topics' values may be biased."""

    qrels: Qrels  # with every pooled-but-unjudged item as a -1 line (depth cuts: the pool's unjudged items added)
    sampled: bool  # the qrels themselves have -1 lines (a sampling design)
    depth_incomplete: bool  # a depth cut whose qrels leave pooled items out
    biased_topics: set[str]  # topics whose stored values may be biased: the imputed mean's distance is added


_UNJUDGED_POOL_ITEMS = text(
    "SELECT t.number, p.docno FROM pool_items p JOIN topics t ON t.id = p.topic_id WHERE p.pool_id = :pool "
    "AND NOT EXISTS (SELECT 1 FROM qrels_entries e WHERE e.qrels_version_id = :version "
    "AND e.topic_id = p.topic_id AND e.docno = p.docno)"
)


def design(session: Session, version: QrelsVersion, qrels: Qrels) -> Design:
    """The qrels to impute and the topics whose values carry a mark (module docstring)."""
    grades = np.asarray(qrels.grades, dtype=np.int64)
    topics = np.asarray(qrels.topics).astype(str)
    sampled = bool(np.any(grades < 0))
    depth_incomplete = False
    if version.source == "cut" and version.pool_id is not None and qrels.strata is None:
        missing = session.execute(_UNJUDGED_POOL_ITEMS, {"pool": version.pool_id, "version": version.id}).all()
        if missing:
            depth_incomplete = True
            extra_topics = np.array([m[0] for m in missing], dtype=str)
            qrels = Qrels(
                topics=np.concatenate([topics, extra_topics]),
                docs=np.concatenate([np.asarray(qrels.docs).astype(str), np.array([m[1] for m in missing], str)]),
                grades=np.concatenate([grades, np.full(len(missing), -1, dtype=np.int64)]),
            )
            grades, topics = np.asarray(qrels.grades), np.asarray(qrels.topics).astype(str)
    unjudged_lines = set(topics[grades < 0].tolist())
    judged = set(topics[grades >= 0].tolist())
    biased = {t for t in unjudged_lines if t not in judged}  # a topic without any judgement
    random_order = version.judging_order is None or judging_orders.is_random(version.judging_order)
    if depth_incomplete or (not random_order and (version.unjudged_sampled is None or version.unjudged_sampled > 0)):
        biased = unjudged_lines
    return Design(qrels, sampled, depth_incomplete, biased)


def on_topics(values: np.ndarray, topics: Sequence[str], wanted: Sequence[str]) -> np.ndarray:
    """Values per topic (the last axis, over `topics`) put over `wanted`: 0 (False) where a topic is absent, as
    `score_arrays` reads a topic a run has no value for."""
    at = {t: i for i, t in enumerate(topics)}
    columns = np.array([at.get(t, -1) for t in wanted], dtype=np.int64)
    present = columns >= 0
    out = np.zeros((*values.shape[:-1], len(wanted)), dtype=values.dtype)
    out[..., present] = values[..., columns[present]]
    return out


@dataclass(frozen=True)
class SamplingParts:
    """What a set of runs brings to the sampling variances, each run's own (so blocks of runs give them bit for bit):
    per measure the imputations' between-variance and mean [run, topic], xinfAP's stratified jackknife variance
    [run, topic] (None unless the qrels are sampled and xinfAP is asked), and where the imputations gave values
    (bool [run, topic]), over `topics`."""

    topics: list[str]
    between: dict[str, np.ndarray]
    mean: dict[str, np.ndarray]
    jackknife: np.ndarray | None
    imputed: np.ndarray

    def on(self, topics: Sequence[str]) -> SamplingParts:
        """The same parts over `topics` (0 on a topic these runs have no value for, as for a topic none of them has)."""

        def spread(values: np.ndarray) -> np.ndarray:
            return on_topics(values, self.topics, topics)

        return SamplingParts(
            list(topics),
            {m: spread(v) for m, v in self.between.items()},
            {m: spread(v) for m, v in self.mean.items()},
            None if self.jackknife is None else spread(self.jackknife),
            spread(self.imputed),
        )

    @staticmethod
    def joined(blocks: Sequence[SamplingParts], topics: Sequence[str]) -> SamplingParts:
        """The parts of blocks of runs, over `topics`, their runs end to end (blocks' order)."""
        placed = [block.on(topics) for block in blocks]
        first = placed[0]
        jackknife = None if first.jackknife is None else np.concatenate([p.jackknife for p in placed])
        return SamplingParts(
            list(topics),
            {m: np.concatenate([p.between[m] for p in placed]) for m in first.between},
            {m: np.concatenate([p.mean[m] for p in placed]) for m in first.mean},
            jackknife,
            np.concatenate([p.imputed for p in placed]),
        )


def varied_measures(plan: Design, measures: Sequence[str]) -> list[str]:
    """The measures judgement sampling adds variance to: every non-count of a depth cut with unjudged pool items,
    else the estimators of sampled qrels (module docstring); none for complete judgements."""
    if not plan.sampled and not plan.depth_incomplete:
        return []
    return [m for m in measures if not is_count(m) and (plan.depth_incomplete or is_estimator(m))]


def sampling_parts(
    plan: Design,
    run_tables: Sequence[RunTable],
    run_names: Sequence[str],
    max_results: int,
    measures: Sequence[str],
    topics: Sequence[str],
) -> SamplingParts:
    """The runs' `SamplingParts` over `topics`: the measures of `varied_measures` on the seeded imputations of the
    unjudged lines (which depend on the qrels alone, so every run sees the same imputations whatever its block)."""
    chosen = varied_measures(plan, measures)
    if not chosen:
        return SamplingParts(list(topics), {}, {}, None, np.zeros((len(run_names), len(topics)), dtype=bool))
    prepared = prepare_runs(list(run_tables), max_results, names=list(run_names))
    imputed = imputed_values(prepared, plan.qrels, chosen, imputations=IMPUTATIONS, seed=SEED)
    topic_at = {t: i for i, t in enumerate(imputed.topics)}
    columns = np.array([topic_at.get(t, -1) for t in topics], dtype=np.int64)
    present = columns >= 0
    jackknife = None
    if plan.sampled and "xinfAP" in chosen:
        found = xinfap_variance(index_lines(prepared, plan.qrels), replicates=1, seed=SEED)
        at = {t: i for i, t in enumerate(found.topics)}
        jackknife = np.zeros((len(run_names), len(topics)))
        for k, topic in enumerate(topics):
            if topic in at:
                jackknife[:, k] = found.variance[:, at[topic]]
    between: dict[str, np.ndarray] = {}
    mean: dict[str, np.ndarray] = {}
    for measure in chosen:
        c = imputed.measures.index(measure)
        draws = to_scale(imputed.values[:, :, c, :], measure)[:, :, columns[present]]  # [imputation, run, topic]
        between[measure] = np.zeros((len(run_names), len(topics)))
        mean[measure] = np.zeros((len(run_names), len(topics)))
        if draws.shape[0] > 1:
            between[measure][:, present] = (1.0 + 1.0 / draws.shape[0]) * _imputation_var(draws)
        mean[measure][:, present] = _imputation_sum(draws) / draws.shape[0]
    covered = np.repeat(present[None, :], len(run_names), axis=0)
    return SamplingParts(list(topics), between, mean, jackknife, covered)


def _imputation_sum(draws: np.ndarray) -> np.ndarray:
    """The sum over imputations [run, topic] of draws [imputation, run, topic], added in imputation order for every
    cell alike (numpy's reduction would sum pairwise when a block holds a single cell: other bits than the rest)."""
    total = draws[0].copy()
    for draw in draws[1:]:
        total += draw
    return total


def _imputation_var(draws: np.ndarray) -> np.ndarray:
    """The variance over imputations (ddof 1) [run, topic], each cell on its own (`_imputation_sum`)."""
    deviation = draws - _imputation_sum(draws) / draws.shape[0]
    return _imputation_sum(deviation * deviation) / (draws.shape[0] - 1)


def sampling_variances(
    plan: Design,
    parts: SamplingParts,
    measures: Sequence[str],
    point: np.ndarray,
) -> dict[str, tuple[np.ndarray, str]]:
    """Per measure, the variance judgement sampling adds [run, topic] on the interval's scale, and how it was made
    (module docstring), from every run's `parts` and stored values `point` [run, measure, topic] over parts.topics.
    The one step over all runs: the other estimators' scaling by xinfAP's jackknife / imputation ratio per topic."""
    chosen = [m for m in varied_measures(plan, measures) if m in parts.between]
    topics = parts.topics
    biased = np.array([t in plan.biased_topics for t in topics], dtype=bool)
    out: dict[str, tuple[np.ndarray, str]] = {}
    ratio = np.ones(len(topics))
    ordered = sorted(chosen, key=lambda m: m != "xinfAP")  # xinfAP first: its ratio scales the other estimators
    for measure in ordered:
        m = list(measures).index(measure)
        between, mean = parts.between[measure], parts.mean[measure]
        how = IMPUTATION
        variance = between.copy()
        if plan.sampled and is_estimator(measure):
            if measure == "xinfAP" and parts.jackknife is not None:
                total = between.sum(axis=0)
                ratio = np.where(total > 0, np.maximum(parts.jackknife.sum(axis=0) / np.where(total > 0, total, 1.0),
                                                       1.0), 1.0)  # fmt: skip
                variance = np.maximum(parts.jackknife, between)
                how = JACKKNIFE
            else:
                variance = between * ratio[None, :]
        bias = (mean - to_scale(point[:, m, :], measure)) ** 2
        if biased.any():
            variance = variance + np.where(biased[None, :] & parts.imputed, bias, 0.0)
            how = BIAS
        out[measure] = (variance, how)
    return out


# --- prediction-powered estimates of a combined version ---------------------------------------------------------------


@dataclass(frozen=True)
class PredictionPowered:
    """A combined version's estimates, written into the job's table: each estimated measure's labelling standard
    error per run [run] (by the job's measure name), the estimator per stored measure name, and what they rest on."""

    se: dict[str, np.ndarray]
    estimators: dict[str, str]
    info: dict[str, Any]

    def variances(self, n_topic: int) -> dict[str, tuple[np.ndarray, str]]:
        """Per measure, the per-topic variance [run, topic] whose widening is the labelling se: se^2 n on each topic
        (`intervals` takes sqrt(sum) / n)."""
        return {
            measure: (np.repeat((se**2 * n_topic)[:, None], n_topic, axis=1), PREDICTION_POWERED)
            for measure, se in self.se.items()
        }


def prediction_powered_scores(
    verified: Verified,
    run_tables: Sequence[RunTable],
    run_names: Sequence[str],
    max_results: int,
    measures: Sequence[str],
    table: dict[str, dict[str, dict[str, float]]],
) -> PredictionPowered | None:
    """Replace in the job's nested table the values of every measure the estimator takes by its per-topic estimates
    and means; None when no measure is one it takes."""
    chosen = [m for m in measures if supports(m)]
    if not chosen:
        return None
    found = prediction_powered(
        run_tables, verified.items, chosen, level=LEVEL, max_results=max_results, names=run_names
    )
    for r, run in enumerate(found.runs):
        for m, measure in enumerate(found.measures):
            per_topic = dict(zip(found.topics, found.values[r, m].tolist(), strict=True))
            table.setdefault(run, {})[measure] = {**per_topic, ALL: float(found.mean[r, m])}
    info = {
        "measures": list(found.measures),
        "text": WIDENING_TEXT[PREDICTION_POWERED],
        "n_items": found.n_items,
        "n_model": found.n_model,
        "n_human": found.n_human,
        "topics_without_sample": verified.topics_without_sample,
        "drawn_unjudged": verified.drawn_unjudged,
    }
    return PredictionPowered(
        se={name: found.se[:, m] for m, name in enumerate(chosen)},
        estimators=dict.fromkeys(found.measures, PREDICTION_POWERED),
        info=info,
    )
