"""How far a model judge agrees with people: one human and one model qrels version compared (issue 25).

* **Judgements**, on the items both judged (grade >= 0 in both): the confusion matrix (human grade x model grade on
  the scale 0..k), Cohen's weighted kappa with linear and quadratic weights (Cohen 1968; `agreement.weighted_kappa`;
  with two grades all equal Cohen's kappa) and the base rates it must be read with (the share judged relevant,
  grade >= 1, by the people and by the model: kappa falls with a skewed base rate even at a fixed accuracy).
* **Rankings**: every run evaluated under each version (`evaluate_prepared`) on the topics both versions judge; the
  means compared by `qrels_comparison.compare_rankings` (tau_b, tau_AP with the human ranking as the truth), and
  tau_b among the top k runs of the human ranking (ties at the cut broken by run order), where model judges agree
  least (Clarke & Dietz; TREC RAG 2024).
* **Per run**, the shift model - human of the mean score, with the paired bootstrap interval over topics of
  `statistics.intervals` (one draw of topics for every run and every comparison below).
* **Warnings** (a code and a sentence each):
  - `low_top_agreement`: tau_b among the top k below `top_threshold`. Voorhees (SIGIR 1998, 2000) reads tau >= 0.9
    between whole rankings as equivalent; among the top k there are fewer pairs and the runs are closer in score, so
    even two human assessors agree less there, and 0.9 would fire on nearly every campaign. The default 0.7 is a
    convention, not a measured value: set it from a human-vs-human comparison (`qrels-versions` on two human
    versions) when the campaign has one.
  - `self_preference`: a run whose metadata (name, tag, description, team) names the judge's model family, the
    leading word of the model's name ("gpt-4o-mini" -> "gpt"), as a whole word, any case; models favour systems
    built on their own family (Balog et al., SIGIR 2025). It fires on the naming alone and reports those runs' mean
    shift against the other runs' with its interval.
  - `type_shift`: the mean shift of one run type (per grouping: system type, training type...) differs from the other
    runs' mean shift: a paired comparison over topics (per topic, the type's mean shift minus the others'; its
    paired bootstrap interval, Bonferroni-adjusted over every type compared) that excludes 0.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from app.evaluation.analyses.kendall import tau_b
from app.evaluation.analyses.pooled_lines import RunBlocks, as_blocks
from app.evaluation.analyses.qrels_comparison import RankingComparison, compare_rankings
from app.evaluation.grading.prepared_runs import PreparedRuns
from app.evaluation.measures.evaluate import evaluate_prepared
from app.evaluation.pools.keys import pair_keys
from app.evaluation.records import Qrels, RunTable
from app.evaluation.statistics.agreement import confusion_matrix, weighted_kappa
from app.evaluation.statistics.intervals import DEFAULT_RESAMPLES, mean_intervals, topic_draws

TOP_THRESHOLD = 0.7  # see the module docstring: a convention for the top k, below Voorhees' 0.9 for whole rankings
KAPPA_WEIGHTS = ("none", "linear", "quadratic")


def _num(value: float | None) -> float | None:
    """A JSON number (None for NaN or None)."""
    return None if value is None or not np.isfinite(value) else float(value)


def model_family(model: str) -> str:
    """The leading word of a model's name, lower case: 'gpt-4o-mini' -> 'gpt', 'meta-llama/Llama-3.1-70B' -> 'llama',
    'Qwen2.5-72B' -> 'qwen' (trailing digits dropped unless only one letter would remain: 'o1' stays)."""
    name = model.strip().rsplit("/", 1)[-1]
    words = [w for w in re.split(r"[^A-Za-z0-9]+", name) if w]
    if not words:
        return ""
    word = words[0].lower()
    letters = re.match(r"[a-z]+", word)
    return letters.group(0) if letters is not None and len(letters.group(0)) >= 2 else word


def names_family(text: str, family: str) -> bool:
    """Whether `text` names `family` as a word (any case; a digit may touch it: 'GPT4o', 'llama3-8b')."""
    if not family:
        return False
    return re.search(rf"(?<![A-Za-z]){re.escape(family)}(?![A-Za-z])", text, flags=re.IGNORECASE) is not None


@dataclass(frozen=True)
class AgreementWarning:
    """One warning of the report: a stable code, a sentence for people, and its numbers."""

    code: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return {"code": self.code, "message": self.message, "details": self.details}


@dataclass(frozen=True)
class JudgementComparison:
    """Human and model grades on the items both judged."""

    max_grade: int
    confusion: np.ndarray  # int64 [human grade, model grade], 0..max_grade
    human_judged: int  # items (grade >= 0) in the human version
    model_judged: int

    @property
    def common(self) -> int:
        """Items judged in both versions."""
        return int(self.confusion.sum())

    def kappa(self, weights: str) -> float:
        """Weighted kappa of the confusion matrix ('none', 'linear', 'quadratic')."""
        return weighted_kappa(self.confusion, weights)

    def binary_kappa(self) -> float:
        """Cohen's kappa of relevant (grade >= 1) or not."""
        relevant = np.array([[self.confusion[:1, :1].sum(), self.confusion[:1, 1:].sum()],
                             [self.confusion[1:, :1].sum(), self.confusion[1:, 1:].sum()]])  # fmt: skip
        return weighted_kappa(relevant, "none")

    def base_rates(self) -> tuple[float, float]:
        """The share judged relevant (grade >= 1) by the people and by the model, on the common items (NaN: none)."""
        n = self.common
        if n == 0:
            return float("nan"), float("nan")
        return float(self.confusion[1:, :].sum() / n), float(self.confusion[:, 1:].sum() / n)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        human, model = self.base_rates()
        return {
            "max_grade": self.max_grade,
            "grades": list(range(self.max_grade + 1)),
            "common": self.common,
            "human_judged": self.human_judged,
            "model_judged": self.model_judged,
            "confusion": self.confusion.tolist(),
            "kappa": {w: _num(self.kappa(w)) for w in KAPPA_WEIGHTS},
            "kappa_binary": _num(self.binary_kappa()),
            "base_rate": {"human": _num(human), "model": _num(model)},
        }


def _graded(qrels: Qrels) -> tuple[np.ndarray, np.ndarray]:
    """Sorted unique (topic, doc) keys of the judged lines (grade >= 0) and their grades (the first line of a key)."""
    grades = np.asarray(qrels.grades, dtype=np.int64)
    keep = grades >= 0
    keys, first = np.unique(pair_keys(qrels.topics[keep], qrels.docs[keep]), return_index=True)
    return keys, grades[keep][first]


def compare_judgements(human: Qrels, model: Qrels, max_grade: int | None = None) -> JudgementComparison:
    """The confusion matrix of human and model grades on the items both judged, on the scale 0..max_grade (default:
    the largest grade either gives, at least 1); a grade above max_grade is a ValueError."""
    human_keys, human_grades = _graded(human)
    model_keys, model_grades = _graded(model)
    _, at_h, at_m = np.intersect1d(human_keys, model_keys, assume_unique=True, return_indices=True)
    largest = int(max(human_grades.max(initial=0), model_grades.max(initial=0), 1))
    k = largest if max_grade is None else int(max_grade)
    if k < 1:
        raise ValueError(f"max_grade must be at least 1, got {k}")
    if largest > k:
        raise ValueError(f"a qrels version has grade {largest}, above max_grade {k}")
    table = confusion_matrix(human_grades[at_h], model_grades[at_m], k + 1)
    return JudgementComparison(k, table, len(human_keys), len(model_keys))


@dataclass(frozen=True)
class RunShift:
    """Each run's mean score under each version and the shift model - human with its interval."""

    runs: list[str]
    human: np.ndarray  # [run] mean over the common topics
    model: np.ndarray  # [run]
    shift: np.ndarray  # [run] model - human
    low: np.ndarray  # [run]
    high: np.ndarray  # [run]
    interval: dict[str, object]  # how the intervals were computed

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        rows = zip(self.runs, self.human, self.model, self.shift, self.low, self.high, strict=True)
        return {
            "interval": self.interval,
            "runs": [
                {
                    "run": r,
                    "human": _num(h),
                    "model": _num(m),
                    "shift": _num(s),
                    "ci_low": _num(lo),
                    "ci_high": _num(hi),
                }
                for r, h, m, s, lo, hi in rows
            ],  # fmt: skip
        }


@dataclass(frozen=True)
class MachineAgreementResult:
    """The agreement report of a model qrels version against a human one."""

    labels: tuple[str, str]  # (human, model)
    measure: str
    topics: list[str]  # the topics both versions judge, on which the runs are compared
    judgements: JudgementComparison
    rankings: RankingComparison  # labels (human, model)
    top_k: int
    top_runs: list[str]
    tau_b_top: float
    top_threshold: float
    shifts: RunShift
    warnings: list[AgreementWarning]

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return {
            "labels": {"human": self.labels[0], "model": self.labels[1]},
            "measure": self.measure,
            "topics": self.topics,
            "judgements": self.judgements.to_dict(),
            "rankings": {
                "runs": self.rankings.runs,
                "human": [_num(x) for x in self.rankings.scores[0].tolist()],
                "model": [_num(x) for x in self.rankings.scores[1].tolist()],
                "tau_b": _num(self.rankings.tau_b[0, 1]),
                "tau_ap": _num(self.rankings.tau_ap[0, 1]),  # the human ranking as the truth
                "tau_ap_model_truth": _num(self.rankings.tau_ap[1, 0]),
                "top_k": self.top_k,
                "top_runs": self.top_runs,
                "tau_b_top": _num(self.tau_b_top),
                "top_threshold": self.top_threshold,
            },
            "shifts": self.shifts.to_dict(),
            "warnings": [w.to_dict() for w in self.warnings],
        }


def default_top_k(n_runs: int) -> int:
    """The top k compared by default: a third of the runs, at least 3 and at most 10 (never more than the runs)."""
    return min(n_runs, max(3, min(10, n_runs // 3)))


def _fmt(value: float) -> str:
    """A signed score difference for a sentence."""
    return f"{value:+.4f}"


def _group_difference(
    diff: np.ndarray, mask: np.ndarray, draws: np.ndarray, level: float, n_resamples: int, seed: int
) -> tuple[float, float, float]:
    """Paired over topics: mean over topics of (the masked runs' mean shift - the other runs' mean shift), with its
    bootstrap interval at `level` on the shared draws."""
    per_topic = diff[mask].mean(axis=0) - diff[~mask].mean(axis=0)
    result = mean_intervals(per_topic[None, :], level=level, n_resamples=n_resamples, seed=seed, draws=draws)
    return float(result.mean[0]), float(result.low[0]), float(result.high[0])


def _version_scores(
    source: RunBlocks, versions: Sequence[Qrels], measure: str, progress: Callable[[float], None] | None
) -> tuple[str, list[str], list[np.ndarray]]:
    """(the measure's name, the topics both versions judge, each version's [n_run, n_topic] scores there, NaN as 0),
    a block of runs at a time (a run's scores are its own); `progress` goes to 0.8 over the evaluations."""
    total = max(len(source.names), 1)
    parts: list[list[np.ndarray]] = [[] for _ in versions]
    name, topics, start = measure, None, 0
    for block in source:
        n_run = len(block.names)
        results = []
        for k, qrels in enumerate(versions):
            results.append(evaluate_prepared(block, qrels, [measure]))
            if progress is not None:
                progress(0.8 * (start + n_run * (k + 1) / len(versions)) / total)
        name = results[0].measures[0]
        if topics is None:  # the qrels' topics (trec_eval -c), the same for every block
            topics = sorted(set.intersection(*(set(r.topics) for r in results)))
            if not topics:
                raise ValueError("the two qrels versions judge no topic in common")
        for k, result in enumerate(results):
            parts[k].append(np.nan_to_num(result.values[:, 0, [result.topics.index(t) for t in topics]]))
        start += n_run
        del block
    if topics is None:
        raise ValueError("compare at least two runs")
    return name, topics, [np.concatenate(part, axis=0) for part in parts]


def machine_agreement(
    human: Qrels,
    model: Qrels,
    runs: Sequence[RunTable] | PreparedRuns | RunBlocks,
    *,
    labels: tuple[str, str] = ("human", "model"),
    measure: str | None = None,
    max_grade: int | None = None,
    top_k: int | None = None,
    top_threshold: float = TOP_THRESHOLD,
    judge_families: Sequence[str] = (),
    run_metadata: Sequence[str] | None = None,
    run_types: Mapping[str, Sequence[str]] | None = None,
    level: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    max_results: int = 1000,
    progress: Callable[[float], None] | None = None,
) -> MachineAgreementResult:
    """Compare a model qrels version with a human one (module docstring): judgements, rankings, per-run shifts and
    warnings. `measure` defaults to AP (xinfAP when both versions are stratified); `run_metadata` is each run's text
    searched for the `judge_families` (default: the run names); `run_types` maps a grouping ("system_type") to each
    run's type."""
    source = as_blocks(runs, max_results)
    names = source.names
    if len(names) < 2:
        raise ValueError("compare at least two runs")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    judgements = compare_judgements(human, model, max_grade)
    chosen = measure or ("xinfAP" if human.stratified and model.stratified else "AP")
    name, topics, values = _version_scores(source, (human, model), chosen, progress)
    means = np.array([v.mean(axis=1) for v in values])
    rankings = compare_rankings(list(labels), names, means)
    k = default_top_k(len(names)) if top_k is None else min(int(top_k), len(names))
    if k < 2:
        raise ValueError(f"top_k must be at least 2, got {top_k}")
    top = np.argsort(-means[0], kind="stable")[:k]
    tau_top = tau_b(means[0][top], means[1][top])

    diff = values[1] - values[0]
    draws = topic_draws(len(topics), n_resamples, seed)
    intervals = mean_intervals(diff, level=level, n_resamples=n_resamples, seed=seed, draws=draws)
    shifts = RunShift(names, means[0], means[1], intervals.mean, intervals.low, intervals.high, intervals.describe())
    if progress is not None:
        progress(0.9)
    warnings: list[AgreementWarning] = []
    if np.isfinite(tau_top) and tau_top < top_threshold:
        warnings.append(
            AgreementWarning(
                "low_top_agreement",
                f"Among the top {k} runs of the human ranking the model's ranking agrees poorly: tau_b {tau_top:.3f} "
                f"< {top_threshold:g} ({name}; tau_b over all {len(names)} runs {rankings.tau_b[0, 1]:.3f}).",
                {
                    "top_k": k,
                    "tau_b_top": float(tau_top),
                    "threshold": top_threshold,
                    "top_runs": [names[i] for i in top],
                },  # fmt: skip
            )
        )
    context = (diff, draws, n_resamples, seed)
    warnings += _self_preference(names, judge_families, run_metadata, shifts, context, level, name)
    warnings += _type_shifts(names, run_types or {}, context, level, name)
    if progress is not None:
        progress(1.0)
    return MachineAgreementResult(
        labels=labels,
        measure=name,
        topics=topics,
        judgements=judgements,
        rankings=rankings,
        top_k=k,
        top_runs=[names[i] for i in top],
        tau_b_top=tau_top,
        top_threshold=top_threshold,
        shifts=shifts,
        warnings=warnings,
    )


Context = tuple[np.ndarray, np.ndarray, int, int]  # per run x topic shifts, topic draws, resamples, seed


def _self_preference(
    names: list[str],
    families: Sequence[str],
    metadata: Sequence[str] | None,
    shifts: RunShift,
    context: Context,
    level: float,
    measure: str,
) -> list[AgreementWarning]:
    """`self_preference`: the runs whose metadata names one of the judge's model families, with their shifts."""
    texts = list(metadata) if metadata is not None else names
    if len(texts) != len(names):
        raise ValueError("run_metadata must give one text per run")
    wanted = sorted({f.strip().lower() for f in families if f.strip()})
    named = np.array([any(names_family(t, f) for f in wanted) for t in texts], dtype=bool)
    if not named.any():
        return []
    diff, draws, n_resamples, seed = context
    flagged = [
        {"run": names[i], "shift": _num(shifts.shift[i]), "ci_low": _num(shifts.low[i]),
         "ci_high": _num(shifts.high[i])}
        for i in np.flatnonzero(named)
    ]  # fmt: skip
    details: dict[str, Any] = {"families": wanted, "runs": flagged}
    runs = ", ".join(names[i] for i in np.flatnonzero(named))
    message = f"Runs whose metadata names the judge's model family ({', '.join(wanted)}): {runs}."
    if named.all():
        message += " Every run names it: there are no other runs to compare their shift with."
        details.update(others_shift=None, difference=None, ci_low=None, ci_high=None)
    else:
        own = float(shifts.shift[named].mean())
        others = float(shifts.shift[~named].mean())
        difference, low, high = _group_difference(diff, named, draws, level, n_resamples, seed)
        verdict = (
            "more than the others'"
            if low > 0
            else "less than the others'"
            if high < 0
            else "not separably from the others'"
        )
        message += (
            f" The model shifts their mean {measure} by {_fmt(own)} against {_fmt(others)} for the other runs: "
            f"{verdict} (difference {_fmt(difference)}, {level:.0%} paired interval over topics "
            f"{_fmt(low)}..{_fmt(high)})."
        )
        details.update(own_shift=own, others_shift=others, difference=difference, ci_low=low, ci_high=high)
    return [AgreementWarning("self_preference", message, details)]


def _type_shifts(
    names: list[str], run_types: Mapping[str, Sequence[str]], context: Context, level: float, measure: str
) -> list[AgreementWarning]:
    """`type_shift`: each run type whose mean shift differs from the other runs' beyond its Bonferroni-adjusted
    paired interval (a grouping with two types is compared once)."""
    diff, draws, n_resamples, seed = context
    comparisons: list[tuple[str, str, np.ndarray]] = []
    for grouping, types in run_types.items():
        labels = np.array([str(t) for t in types])
        if len(labels) != len(names):
            raise ValueError(f"run_types[{grouping!r}] must give one type per run")
        kinds = sorted(set(labels.tolist()))
        compared = kinds[:1] if len(kinds) == 2 else kinds if len(kinds) > 2 else []  # two types: one comparison
        comparisons += [(grouping, kind, labels == kind) for kind in compared]
    if not comparisons:
        return []
    adjusted = 1.0 - (1.0 - level) / len(comparisons)
    out = []
    for grouping, kind, mask in comparisons:
        difference, low, high = _group_difference(diff, mask, draws, adjusted, n_resamples, seed)
        if low <= 0.0 <= high:
            continue
        own, others = float(diff[mask].mean()), float(diff[~mask].mean())
        types = [str(t) for t in run_types[grouping]]
        versus = "the other runs" if len(set(types)) > 2 else f"{grouping} {next(t for t in types if t != kind)} runs"
        out.append(
            AgreementWarning(
                "type_shift",
                f"The model shifts the mean {measure} of {grouping} {kind} runs by {_fmt(own)} against {_fmt(others)} "
                f"for {versus}: difference {_fmt(difference)}, {adjusted:.1%} paired bootstrap interval over topics "
                f"{_fmt(low)}..{_fmt(high)} (Bonferroni over {len(comparisons)} comparisons).",
                {
                    "grouping": grouping,
                    "type": kind,
                    "runs": [n for n, m in zip(names, mask, strict=True) if m],
                    "shift": own,
                    "others_shift": others,
                    "difference": difference,
                    "ci_low": low,
                    "ci_high": high,
                    "level": adjusted,
                    "comparisons": len(comparisons),
                },  # fmt: skip
            )
        )
    return out
