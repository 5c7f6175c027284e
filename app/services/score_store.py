"""Scores stored compactly: one array of values per evaluation, measure and run, over the evaluation's topic order.

`score_topics` holds an evaluation's topic order ('all' is a run's mean), only ever appended to, so a position
never changes meaning; `score_arrays.per_topic[i]` is a run's value of one measure at topics[i] (NULL where the run
has none, and beyond the end of an array written before the order grew). About 8 bytes a number instead of a row
per number; one board's values (evaluation, measure) are one range of the primary key. The view `scores` unnests
the arrays into the rows (evaluation_id, run_id, measure, topic, value) of before (migration 0016).

Blocks of an evaluation written at once in several sessions (`evaluations.run_block`) each add the topics they
lack under the order's row lock; a block whose topics are all there reads the order without locking it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
from sqlalchemy import Select, delete, select, tuple_, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from app.storage.bulk import copy_rows
from app.storage.models import ScoreArray, ScoreTopics

Nested = dict[str, dict[str, dict[str, float]]]  # {run id: {measure: {topic: value}}}, as evaluations compute them


@dataclass(frozen=True)
class StoredScores:
    """Score arrays as read: row k is run `run_ids[k]`'s `measures[k]`; `values[k, i]` its value at `topics[i]`
    (NaN where absent) and `present[k, i]` whether it has one (a stored NaN is present)."""

    topics: list[str]
    run_ids: np.ndarray
    measures: list[str]
    values: np.ndarray
    present: np.ndarray

    def found_topics(self) -> list[str]:
        """The topics with at least one value, in the stored order."""
        seen = np.flatnonzero(self.present.any(axis=0)).tolist()
        return [self.topics[i] for i in seen]


def topic_order(session: Session, evaluation_id: int) -> list[str]:
    """An evaluation's topic order (empty before its first scores)."""
    order = session.scalar(select(ScoreTopics.topics).where(ScoreTopics.evaluation_id == evaluation_id))
    return list(order or [])


def _with_topics(session: Session, evaluation_id: int, needed: Iterable[str]) -> list[str]:
    """The evaluation's topic order with `needed` appended where missing (under the order's row lock)."""
    wanted = set(needed)
    order = topic_order(session, evaluation_id)
    if wanted <= set(order):
        return order
    session.execute(insert(ScoreTopics).values(evaluation_id=evaluation_id, topics=[]).on_conflict_do_nothing())
    locked = select(ScoreTopics.topics).where(ScoreTopics.evaluation_id == evaluation_id).with_for_update()
    order = list(session.scalar(locked) or [])
    new = sorted(wanted - set(order), key=lambda t: (len(t), t))
    if new:
        order += new
        session.execute(update(ScoreTopics).where(ScoreTopics.evaluation_id == evaluation_id).values(topics=order))
    return order


def _cell(value: float | None) -> str:
    """One array element in PostgreSQL's text form (repr round-trips a float8 exactly; None is NULL)."""
    return "NULL" if value is None else repr(float(value))


def write_table(session: Session, evaluation_id: int, run_ids: Sequence[int], table: Nested) -> int:
    """COPY the runs' nested {run id: {measure: {topic: value}}} as one array per run and measure; the runs must
    have none stored (`delete_scores`). Returns the arrays written."""
    pairs = [
        (run_id, measure, per_topic) for run_id in run_ids for measure, per_topic in table.get(str(run_id), {}).items()
    ]
    if not pairs:
        return 0
    order = _with_topics(session, evaluation_id, chain.from_iterable(p for _, _, p in pairs))
    cells = ["{" + ",".join(_cell(per_topic.get(topic)) for topic in order) + "}" for _, _, per_topic in pairs]
    return copy_rows(
        session,
        "score_arrays",
        ("evaluation_id", "measure", "run_id", "per_topic"),
        [np.full(len(pairs), evaluation_id), [m for _, m, _ in pairs], [r for r, _, _ in pairs], cells],
    )


def write_rows(
    session: Session,
    evaluation_id: int,
    runs: Sequence[int],
    measures: Sequence[str],
    topics: Sequence[str],
    values: Sequence[float],
) -> int:
    """Score rows (run, measure, topic, value) added to what is stored: a run and measure already stored (an archive
    block that starts inside one) keeps its values and gains these. Returns the arrays written."""
    table: Nested = {}
    for run_id, measure, topic, value in zip(runs, measures, topics, values, strict=True):
        table.setdefault(str(run_id), {}).setdefault(measure, {})[topic] = float(value)
    keys = [(m, int(r)) for r, per_run in table.items() for m in per_run]
    order = topic_order(session, evaluation_id)
    where = (ScoreArray.evaluation_id == evaluation_id, tuple_(ScoreArray.measure, ScoreArray.run_id).in_(keys))
    for measure, run_id, stored in session.execute(
        select(ScoreArray.measure, ScoreArray.run_id, ScoreArray.per_topic).where(*where)
    ):
        known = {t: v for t, v in zip(order, stored, strict=False) if v is not None}
        table[str(run_id)][measure] = {**known, **table[str(run_id)][measure]}
    session.execute(delete(ScoreArray).where(*where))
    return write_table(session, evaluation_id, sorted({int(r) for r in table}), table)


def delete_scores(session: Session, evaluation_id: int, run_ids: Sequence[int] | None = None) -> None:
    """Remove the runs' stored scores (every run's, and the topic order, when `run_ids` is None)."""
    query = delete(ScoreArray).where(ScoreArray.evaluation_id == evaluation_id)
    if run_ids is None:
        session.execute(query)
        session.execute(delete(ScoreTopics).where(ScoreTopics.evaluation_id == evaluation_id))
    else:
        session.execute(query.where(ScoreArray.run_id.in_(list(run_ids))))


def stored_runs(session: Session, evaluation_id: int) -> list[int]:
    """The runs with scores stored in an evaluation, in id order."""
    query = select(ScoreArray.run_id).where(ScoreArray.evaluation_id == evaluation_id).distinct()
    return list(session.scalars(query.order_by(ScoreArray.run_id)))


def read_query(
    evaluation_id: int, *, measure: str | None = None, run_ids: Sequence[int] | None = None
) -> Select[int, str, list[float | None]]:
    """The SELECT of an evaluation's arrays (run id, measure, values): one measure's is one range of the key."""
    query = select(ScoreArray.run_id, ScoreArray.measure, ScoreArray.per_topic)
    query = query.where(ScoreArray.evaluation_id == evaluation_id)
    if measure is not None:
        query = query.where(ScoreArray.measure == measure)
    if run_ids is not None:
        query = query.where(ScoreArray.run_id.in_(list(run_ids)))
    return query


def read_scores(
    session: Session, evaluation_id: int, *, measure: str | None = None, run_ids: Sequence[int] | None = None
) -> StoredScores:
    """An evaluation's stored arrays (one measure's, a few runs', or all) as matrices over its topic order."""
    rows = session.execute(read_query(evaluation_id, measure=measure, run_ids=run_ids)).all()
    topics = topic_order(session, evaluation_id)  # read after the arrays: it covers them (it only grows)
    lengths = np.array([min(len(r[2]), len(topics)) for r in rows], dtype=np.int64)
    flat = list(chain.from_iterable(r[2][: len(topics)] for r in rows))
    row = np.repeat(np.arange(len(rows)), lengths)
    column = np.arange(len(flat)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    values = np.full((len(rows), len(topics)), np.nan)
    present = np.zeros((len(rows), len(topics)), dtype=bool)
    values[row, column] = np.array(flat, dtype=np.float64)  # None is NaN
    present[row, column] = [v is not None for v in flat]
    return StoredScores(topics, np.array([r[0] for r in rows], dtype=np.int64), [r[1] for r in rows], values, present)
