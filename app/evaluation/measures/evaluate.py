"""Evaluating many runs over all their topics at once, against one qrels or many (runs prepared once)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from app.evaluation.grading.fast_path import grade_runs
from app.evaluation.grading.grade_matrix import GradeMatrix, grade_matrix
from app.evaluation.grading.prepared_runs import PreparedRuns, prepare_runs
from app.evaluation.measures.registry import resolve
from app.evaluation.measures.trec import RankedLists
from app.evaluation.records import Qrels, RunTable
from app.evaluation.results import Results


def evaluate(
    qrels: Qrels,
    runs: Sequence[RunTable] | PreparedRuns,
    measures: Sequence[str],
    *,
    max_results: int = 1000,
    run_topics_only: bool = False,
    names: Sequence[str] | None = None,
) -> Results:
    """Evaluate every run on every qrels topic for the named measures (trec_eval -c means unless run_topics_only).

    Parsed tables are graded straight against the qrels (`grade_runs`); runs named by `names`, else by their tags.
    Prepared runs keep their own names and cut.
    """
    if isinstance(runs, PreparedRuns):
        return evaluate_prepared(runs, qrels, measures, run_topics_only=run_topics_only)
    labels = list(names) if names is not None else [run.tag for run in runs]
    matrix = grade_runs(runs, qrels, max_results)
    if matrix is None:  # two qrels keys share a hash: the vocabulary path sorts that out
        matrix = grade_matrix(prepare_runs(runs, max_results), qrels)
    return evaluate_graded(matrix, labels, measures, run_topics_only=run_topics_only)


def evaluate_prepared(
    prepared: PreparedRuns, qrels: Qrels, measures: Sequence[str], *, run_topics_only: bool = False
) -> Results:
    """Evaluate runs prepared once by `prepare_runs` against a qrels (cheap to repeat with other qrels)."""
    return evaluate_graded(grade_matrix(prepared, qrels), prepared.names, measures, run_topics_only=run_topics_only)


def evaluate_graded(
    matrix: GradeMatrix, names: Sequence[str], measures: Sequence[str], *, run_topics_only: bool = False
) -> Results:
    """The named measures over a grade matrix, per run x topic: the numeric core once the runs are graded."""
    specs = [resolve(name) for name in measures]
    lists = RankedLists(matrix)
    n_run, n_topic = matrix.lengths.shape
    values = np.empty((n_run, len(specs), n_topic), dtype=np.float64)
    for index, spec in enumerate(specs):
        values[:, index, :] = spec.function(lists, spec.cutoff)
    # the parts the measures shared refer back to the lists: a cycle the garbage collector frees only when it next
    # runs, so a caller evaluating many qrels in a row (the imputations) would hold every call's arrays until then
    lists.cache.clear()
    if run_topics_only:
        keep = np.array([spec.aggregate == "sum_all" for spec in specs], dtype=bool)[None, :, None]
        values = np.where(matrix.answered[:, None, :] | keep, values, np.nan)
    return Results(
        runs=list(names),
        measures=[spec.name for spec in specs],
        topics=list(matrix.judged.topics),
        values=values,
        aggregates=[spec.aggregate for spec in specs],
        answered=matrix.answered,
        run_topics_only=run_topics_only,
    )
