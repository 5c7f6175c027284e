"""trec_eval's evaluation of runs against qrels: every selected measure per run x topic, and its `all` summary.

The runs are graded once into one matrix (runs x qrels topics x ranks, trec_eval's ranking: score descending,
ties by docno descending, cut at -M); -J keeps only the judged docs of each list; the measure functions of
`app.evaluation.measures.trec` then compute every topic of every run at once. Topics follow trec_eval: the qrels'
topics in strcmp order that the run answers, or with -c every qrels topic (one the run lacks scores as trec_eval's
placeholder ranking does: 0, but num_rel and the logarithms of gm_map and gm_bpref). The summary adds the topics in
that order from 0.0 and divides by num_q, as trec_eval's accumulators do.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from app.evaluation.grading.fast_path import grade_runs
from app.evaluation.grading.grade_matrix import NOT_POOLED, PADDING, GradeMatrix, grade_matrix
from app.evaluation.grading.prepared_runs import prepare_runs
from app.evaluation.measures import trec
from app.evaluation.measures.trec import RankedLists
from app.evaluation.records import Qrels, RunTable
from app.evaluation.trec_eval.options import Options
from app.evaluation.trec_eval.table import COUNT, GEOMETRIC, LONG, RUNID, TEXT, Selected

MISSING_ZSCORE = -1000000.0  # trec_eval's value for a measure and topic the -Z file lacks
UNJUDGED = -2  # trec_eval's relevance value of a qrels doc with a grade below 0
NEGATIVE_NAN = math.copysign(math.nan, -1.0)  # 0.0 / 0.0 on x86-64: the default NaN, printed `-nan` by glibc


@dataclass(frozen=True)
class Output:
    """One printed value of one run: its name, how it prints, per topic and in `all`."""

    name: str
    prints: str  # a table.py print kind
    per_topic: np.ndarray | list[str]  # float [topic] (evaluated topics), or the relstrings
    summary: float | str | None  # the `all` value (None: not printed in the summary)


@dataclass(frozen=True)
class RunReport:
    """What trec_eval prints for one run."""

    runid: str
    topics: list[str]  # the evaluated topics, in order (a stand-in appears again in each place it stands in)
    outputs: list[Output]
    # (qrels topic the run lacks, the topic trec_eval 10.0 evaluates again in its place, or None when no topic before
    # it was found and 10.0 reads an unset pointer): without -c, when evaluated with stand_ins=True
    stand_ins: list[tuple[str, str | None]] = field(default_factory=list)


def trec_eval_qrels(qrels: Qrels) -> Qrels:
    """The qrels as trec_eval reads them: every grade below 0 is 'in the pool, not judged' (its -2)."""
    grades = np.asarray(qrels.grades, dtype=np.int64)
    if not (grades < 0).any():
        return qrels
    return replace(qrels, grades=np.where(grades < 0, UNJUDGED, grades))


def grade(runs: Sequence[RunTable], qrels: Qrels, options: Options) -> GradeMatrix:
    """The grade matrix of the runs against the qrels in trec_eval's order, cut at -M, judged docs only with -J."""
    longest = max((len(run) for run in runs), default=0)
    cut = longest if options.max_per_topic is None else options.max_per_topic
    cut = max(cut, 0)
    matrix = grade_runs(runs, qrels, cut)
    if matrix is None:  # two qrels keys share a hash: the vocabulary path sorts that out
        matrix = grade_matrix(prepare_runs(runs, cut), qrels)
    return judged_only(matrix) if options.judged_only else matrix


def judged_only(matrix: GradeMatrix) -> GradeMatrix:
    """trec_eval -J: each list keeps its judged docs (grade >= 0) in their order, the others removed."""
    grades = matrix.grades
    inside = np.arange(grades.shape[2])[None, None, :] < matrix.lengths[..., None]
    keep = inside & (grades >= 0)
    counts = keep.sum(axis=2).astype(np.int64)
    order = np.argsort(~keep, axis=2, kind="stable")
    depth = int(counts.max(initial=0))
    kept = np.take_along_axis(grades, order, axis=2)[:, :, :depth]
    kept = np.where(np.arange(depth)[None, None, :] < counts[..., None], kept, PADDING)
    return replace(matrix, grades=kept, strata=None, lengths=counts, judged_cells=None)


def answered(runs: Sequence[RunTable], topics: Sequence[str]) -> np.ndarray:
    """bool [run, topic]: the run has results for the qrels topic (even if -M or -J leave none)."""
    out = np.zeros((len(runs), len(topics)), dtype=bool)
    for r, run in enumerate(runs):
        present = set(np.unique(np.asarray(run.topics).astype(str)).tolist())
        out[r] = [topic in present for topic in topics]
    return out


def evaluate(
    runs: Sequence[RunTable],
    qrels: Qrels,
    selected: Sequence[Selected],
    options: Options,
    zscores: dict[tuple[str, str], tuple[float, float]] | None = None,
    *,
    stand_ins: bool = False,
) -> list[RunReport]:
    """trec_eval's report of every run (its topics, values and summary), each run evaluated on its own.

    `stand_ins`: without -c, evaluate a qrels topic the run lacks as trec_eval 10.0 does (the last topic found, again);
    else leave it out.
    """
    qrels = trec_eval_qrels(qrels)
    matrix = grade(runs, qrels, options)
    lists = RankedLists(matrix, options.relevance_level)
    topics = list(matrix.judged.topics)
    has = answered(runs, topics)
    placeholder = options.complete & ~has  # trec_eval's bogus ranking for a topic the run lacks
    # what trec_eval counts as retrieved: the list after -M and -J; the placeholder's one doc unless -J or -M0 drop it
    placeholder_ret = 0 if options.judged_only or options.max_per_topic == 0 else 1
    retrieved = np.where(placeholder, placeholder_ret, lists.lengths)
    complete_num_rel = float(np.count_nonzero(np.asarray(qrels.grades) > 0))  # -c: m_num_rel's calc_avg
    columns: list[tuple[Selected, list[np.ndarray] | list[list[str]]]] = []
    for chosen in selected:
        name = chosen.entry.name
        if name == "runid":
            columns.append((chosen, []))
            continue
        if name == "relstring":
            texts = _relstring(lists, chosen, options)
            blanked = [
                [text if not placeholder[r, t] else "" for t, text in enumerate(row)] for r, row in enumerate(texts)
            ]
            columns.append((chosen, blanked))
            continue
        values = _COMPUTE[name](lists, chosen, options)
        if name in _RESET_FOR_PLACEHOLDER:
            values = [np.where(placeholder, 0.0, v) for v in values]
        if name in _EMPTY_LIST_NAN:
            values = _empty_list_nan(name, values, chosen, retrieved, lists.num_rel)
        columns.append((chosen, values))
    reports = []
    for r, run in enumerate(runs):
        missing: list[tuple[int, int | None]] = []
        if options.complete:
            where = np.arange(len(topics))
        else:
            where, missing = _trec_eval_topics(has[r], stand_ins)
        run_topics = [topics[t] for t in where]
        outputs = []
        for chosen, column in columns:
            summary_override = complete_num_rel if options.complete and chosen.entry.name == "num_rel" else None
            outputs.extend(
                _outputs(chosen, column, r, where, run_topics, run.tag, zscores, summary_override=summary_override)
            )
        named = [(topics[lacking], None if stand_in is None else topics[stand_in]) for lacking, stand_in in missing]
        reports.append(RunReport(run.tag, run_topics, outputs, named))
    return reports


def _trec_eval_topics(has: np.ndarray, stand_ins: bool) -> tuple[np.ndarray, list[tuple[int, int | None]]]:
    """Without -c: the topic indices trec_eval evaluates for one run, and (lacking, stand-in or None) for each topic the
    run lacks; with `stand_ins` False the lacking topics are left out (and not listed)."""
    if not stand_ins:
        return np.flatnonzero(has), []
    where: list[int] = []
    missing: list[tuple[int, int | None]] = []
    last: int | None = None
    for t, found in enumerate(has.tolist()):
        if found:
            last = t
            where.append(t)
            continue
        missing.append((t, last))
        if last is not None:
            where.append(last)
    return np.asarray(where, dtype=np.int64), missing


def _lround(values: np.ndarray) -> np.ndarray:
    """C's lround: the nearest integer, halves away from zero (int64)."""
    magnitude = np.abs(values)
    low = np.floor(magnitude)
    return np.asarray(np.sign(values) * (low + (magnitude - low >= 0.5)), dtype=np.int64)


def _empty_list_nan(
    name: str, values: list[np.ndarray], chosen: Selected, retrieved: np.ndarray, num_rel: np.ndarray
) -> list[np.ndarray]:
    """iprec_at_recall and 11pt_avg where trec_eval sees no retrieved doc: its interpolation starts from
    num_rel_ret / num_ret = 0.0 / 0.0 (-nan) and hands that to every level whose cutoff lround(level x num_rel) is at
    most num_rel_ret = 0 (for iprec_at_recall those levels, for 11pt_avg its sum); the other levels stay 0."""
    empty = retrieved == 0
    if not empty.any():
        return values
    levels = np.asarray(chosen.values, dtype=np.float64)
    cutoffs = _lround(levels[:, None] * np.asarray(num_rel, dtype=np.float64).reshape(1, -1))  # [level, topic]
    if name == "11pt_avg":
        reached = np.asarray(np.any(cutoffs <= 0, axis=0)).reshape(1, -1)
        return [np.where(empty, np.where(reached, NEGATIVE_NAN, 0.0), value) for value in values]
    return [
        np.where(empty, np.where(cutoffs[i][None, :] <= 0, NEGATIVE_NAN, 0.0), value) for i, value in enumerate(values)
    ]


def _outputs(
    chosen: Selected,
    values: list[np.ndarray] | list[list[str]],
    r: int,
    where: np.ndarray,
    topics: list[str],
    tag: str,
    zscores: dict[tuple[str, str], tuple[float, float]] | None,
    *,
    summary_override: float | None = None,
) -> list[Output]:
    """The printed values of one measure for run r over its evaluated topics (`where`), with the summary
    (`summary_override` replaces it, as num_rel's calc_avg does under -c, after -Z too)."""
    prints = chosen.entry.prints
    if prints == RUNID:
        return [Output("runid", RUNID, np.zeros(0), tag)]
    if prints == TEXT:
        row = values[r]
        return [Output(chosen.names[0], TEXT, [row[t] for t in where.tolist()], None)]
    out = []
    for name, array in zip(chosen.names, values, strict=True):
        per_topic = np.asarray(array, dtype=np.float64)[r][where]
        if zscores is not None:
            per_topic = _zscore(per_topic, name, topics, zscores)
        n = len(topics)
        if prints == COUNT:
            summary: float = float(n)
        elif prints == GEOMETRIC:
            total = float(trec.sequential_sum(per_topic)) if n else 0.0
            summary = math.exp(total / n) if n else 0.0
        elif prints == LONG:
            summary = float(trec.sequential_sum(per_topic)) if n else 0.0
        else:
            total = float(trec.sequential_sum(per_topic)) if n else 0.0
            summary = total / n if n else total
        if summary_override is not None:
            summary = summary_override
        out.append(Output(name, prints, per_topic, summary))
    return out


def _zscore(
    values: np.ndarray, name: str, topics: list[str], zscores: dict[tuple[str, str], tuple[float, float]]
) -> np.ndarray:
    """trec_eval -Z: (value - mean) / stddev per topic and measure; -1000000 where the file lacks them."""
    out = values.copy()
    for i, topic in enumerate(topics):
        found = zscores.get((topic, name))
        if found is None:
            out[i] = MISSING_ZSCORE
            continue
        mean, stddev = found
        if stddev:
            out[i] = (values[i] - mean) / stddev
        else:
            out[i] = 0.0 if values[i] == mean else MISSING_ZSCORE
    return out


# ------------------------------------------------------------------------------------- measure dispatch

Compute = Callable[[RankedLists, Selected, Options], list[np.ndarray]]  # relstring's text is _relstring's
_RESET_FOR_PLACEHOLDER = {"utility", "iprec_at_recall", "11pt_avg"}  # values the placeholder ranking must not make
_EMPTY_LIST_NAN = {"iprec_at_recall", "11pt_avg"}  # 0 / 0 where trec_eval retrieves nothing


def _one(function: Callable[[RankedLists], np.ndarray]) -> Compute:
    """A measure with one value and no parameters."""
    return lambda lists, chosen, options: [function(lists)]


def _per_cutoff(function: Callable[[RankedLists, int], np.ndarray]) -> Compute:
    """A measure with one value per rank cutoff."""
    return lambda lists, chosen, options: [function(lists, int(k)) for k in chosen.values]


def _per_level(function: Callable[[RankedLists, float], np.ndarray]) -> Compute:
    """A measure with one value per numeric cutoff (recall level, R multiple)."""
    return lambda lists, chosen, options: [function(lists, float(x)) for x in chosen.values]


def _gains(chosen: Selected) -> dict[int, float]:
    """Level gains from name=value parameters whose name is an integer (trec_eval's valid_int), first one kept."""
    gains: dict[int, float] = {}
    for key, value in chosen.pairs:
        text = key[1:] if key[:1] in "+-" else key
        if text.isdigit() and text.isascii():
            gains.setdefault(int(key), value)
    return gains


def _with_gains(function: Callable[..., np.ndarray]) -> Compute:
    """A gain measure (ndcg, G, ...) with trec_eval's level=gain parameters."""
    return lambda lists, chosen, options: [function(lists, None, gains=_gains(chosen) or None)]


def _rbp(lists: RankedLists, chosen: Selected, options: Options) -> list[np.ndarray]:
    """trec_eval's rbp: p from the `p=` parameter (the last one), level gains from the others."""
    p = 0.9
    for key, value in chosen.pairs:
        if key == "p":
            p = value
    return [trec.rank_biased_precision(lists, p, gains=_gains(chosen) or None)]


def _geometric(function: Callable[[RankedLists], np.ndarray]) -> Compute:
    """gm_map / gm_bpref: the per-topic logarithm trec_eval adds up."""
    return lambda lists, chosen, options: [trec.geometric_log(function(lists))]


def _utility(lists: RankedLists, chosen: Selected, options: Options) -> list[np.ndarray]:
    """trec_eval's utility with its four coefficients and -N."""
    if len(chosen.values) != 4:
        raise ValueError("trec_eval.calc_utility: improper number of coefficients")
    return [trec.utility(lists, None, chosen.values, options.num_docs_in_coll)]


def _relstring(lists: RankedLists, chosen: Selected, options: Options) -> list[list[str]]:
    """trec_eval's relstring: one character per doc of the top N (digit, '>' above 9, '-' not pooled, '.' unjudged)."""
    length = max(int(chosen.values[0]) if chosen.values else 10, 0)
    grades = lists.matrix.grades[:, :, :length]
    codes = np.where(
        grades > 9,
        ord(">"),
        np.where(grades >= 0, ord("0") + grades, np.where(grades == NOT_POOLED, ord("-"), ord("."))),
    ).astype(np.uint8)
    shown = np.minimum(lists.lengths, length)
    return [
        [codes[r, t, : shown[r, t]].tobytes().decode("ascii") for t in range(codes.shape[1])]
        for r in range(codes.shape[0])
    ]


_COMPUTE: dict[str, Compute] = {
    "num_q": _one(trec.num_q),
    "num_ret": _one(trec.num_ret),
    "num_rel": _one(trec.num_rel),
    "num_rel_ret": _one(trec.num_rel_ret),
    "map": _one(trec.average_precision),
    "gm_map": _geometric(trec.average_precision),
    "Rprec": _one(trec.r_precision),
    "bpref": _one(trec.bpref),
    "recip_rank": _one(trec.reciprocal_rank),
    "iprec_at_recall": _per_level(trec.interpolated_precision),
    "P": _per_cutoff(trec.precision_at),
    "recall": _per_cutoff(trec.recall_at),
    "infAP": _one(trec.inf_ap),
    "gm_bpref": _geometric(trec.bpref),
    "Rprec_mult": _per_level(trec.r_precision_multiple),
    "utility": _utility,
    "11pt_avg": lambda lists, chosen, options: [trec.eleven_point_average(lists, None, chosen.values)],
    "binG": _one(trec.bin_g),
    "G": _with_gains(trec.g_measure),
    "dcg": _with_gains(trec.dcg),
    "ideal_dcg": _with_gains(trec.ideal_dcg),
    "ndcg": _with_gains(trec.ndcg),
    "ndcg_rel": _with_gains(trec.ndcg_rel),
    "Rndcg": _with_gains(trec.rndcg),
    "ndcg_cut": _per_cutoff(trec.ndcg),
    "map_cut": _per_cutoff(trec.average_precision),
    "relative_P": _per_cutoff(trec.relative_precision_at),
    "success": _per_cutoff(trec.success_at),
    "set_P": _one(trec.set_precision),
    "set_relative_P": _one(trec.set_relative_precision),
    "set_recall": _one(trec.set_recall),
    "set_map": _one(trec.set_map),
    "set_F": lambda lists, chosen, options: [trec.set_f(lists, None, chosen.values[0] if chosen.values else 1.0)],
    "num_nonrel_judged_ret": _one(trec.num_nonrel_judged_ret),
    "yaap": _one(trec.yaap),
    "rbp": _rbp,
    "rbp_resid": _one(trec.rbp_residual),
    "unj": _per_cutoff(trec.unjudged_at),
}
