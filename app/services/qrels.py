"""Qrels versions: cut from a pool's judgements, imported from files, exported as TREC or sample_eval qrels."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence

import numpy as np
from psycopg import sql
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from app.evaluation.errors import FormatError
from app.evaluation.formats.trec_files import parse_qrels
from app.evaluation.records import Qrels
from app.services import judging_orders
from app.services.auth import Principal
from app.services.campaigns import get_organised
from app.services.errors import Conflict, InvalidInput, NotFound
from app.services.pools import get_pool
from app.services.quality import verdicts_by_round
from app.services.run_files import topic_id_column
from app.services.topics import topic_ids_by_number
from app.services.validation import from_format_error, invalid_file
from app.storage.bulk import copy_out, copy_rows
from app.storage.models import Evaluation, Judgement, PoolItem, QrelsVersion, Topic, Verdict

UNJUDGED = -1


def final_grade(rounds: Mapping[int, Judgement]) -> int:
    """The grade an item's judgements settle on: adjudication, else agreeing rounds, else the first round.

    The settled judgement's grade: a relevant one's own grade (1 when it has none, as binary verdicts), 0 for
    not_relevant, and `unsure` left unadjudicated counts as not relevant. Rounds agree by their verdicts.
    """
    for round_ in (3, 2, 1):
        judgement = rounds.get(round_)
        if judgement is None:
            continue
        if round_ == 2 and 1 in rounds and rounds[1].verdict is not judgement.verdict:
            continue  # unresolved disagreement: the first judgement stands until adjudicated
        if judgement.verdict is not Verdict.relevant:
            return 0
        return judgement.grade if judgement.grade is not None and judgement.grade >= 1 else 1
    return UNJUDGED


def _check_label(session: Session, campaign_id: int, label: str) -> None:
    """Conflict if the label is used in the campaign."""
    taken = session.scalar(
        select(QrelsVersion.id).where(QrelsVersion.campaign_id == campaign_id, QrelsVersion.label == label)
    )
    if taken is not None:
        raise Conflict(f"qrels version {label!r} exists already; versions are immutable")


MAX_NAMED = 20  # topics named in a message


def topic_order(numbers: Iterable[str]) -> list[str]:
    """Topic numbers in board order: numeric ones by value, then the others."""
    return sorted(numbers, key=lambda t: (0, int(t), "") if t.isdigit() else (1, 0, t))


def named(topics: Sequence[str]) -> str:
    """Topic numbers for a message: the first MAX_NAMED, and how many more."""
    more = f" and {len(topics) - MAX_NAMED} more" if len(topics) > MAX_NAMED else ""
    return ", ".join(topics[:MAX_NAMED]) + more


def topics_without(session: Session, campaign_id: int, judged: Iterable[str]) -> list[str]:
    """The campaign's topics not in `judged`, in board order."""
    return topic_order(set(topic_ids_by_number(session, campaign_id)) - set(judged))


def refuse_incomplete(what: str, unjudged: int, total: int, items: str, topics: list[str], verb: str) -> Conflict:
    """The Conflict of a cut that would leave topics without any judgement, saying how much is unjudged (raised
    unless the request says allow_incomplete)."""
    return Conflict(
        f"{what} is not judged enough to cut: {unjudged} of {total} {items} {verb}; {len(topics)} topic(s) "
        f"without any judgement ({named(topics)}); pass allow_incomplete: true to cut it anyway"
    )


def unjudged_note(version: QrelsVersion | None, n_topics: int | None = None) -> str | None:
    """What a board says about topics without any judgement in its qrels version (None when every topic has one
    or nobody knows)."""
    if version is None or not version.unjudged_topics:
        return None
    topics = version.unjudged_topics
    of = f" of {n_topics}" if n_topics else ""
    return (
        f"{len(topics)}{of} topic(s) have no judgement in qrels version {version.label!r} ({named(topics)}): "
        "scores on them say nothing about the runs, and the means are not those of the whole topic set"
    )


def cut_qrels(
    session: Session, principal: Principal, pool_id: int, label: str, *, allow_incomplete: bool = False
) -> QrelsVersion:
    """Freeze the pool's current judgements as a new, immutable qrels version.

    Stratified pools give sample_eval qrels (unsampled and not yet judged items graded -1); depth pools give TREC
    qrels of the judged items. Conflict, saying how much is unjudged, when nothing is judged yet, unless
    `allow_incomplete` (a cut before the last topic is judged is usual and allowed); the version records the topics
    without any judgement (`unjudged_topics`), and boards scored on it name them.
    """
    pool = get_pool(session, principal, pool_id)
    if pool.kind == "moments":
        raise Conflict(
            f"pool {pool.id} is a moment pool: cut its ground truth with POST /api/moment-pools/{pool.id}/truth"
        )
    _check_label(session, pool.campaign_id, label)
    by_item = verdicts_by_round(session, pool)
    items = session.execute(
        select(PoolItem.id, Topic.number, PoolItem.docno, PoolItem.stratum, PoolItem.sampled)
        .join(Topic, Topic.id == PoolItem.topic_id)
        .where(PoolItem.pool_id == pool.id)
    ).all()
    stratified = pool.kind == "stratified"
    columns = list(zip(*items, strict=True)) if items else [()] * 5
    grades = np.array([final_grade(by_item.get(i, {})) for i in columns[0]], dtype=np.int64)
    sampled = np.array(columns[4], dtype=bool)
    unjudged_sampled = int(((grades == UNJUDGED) & sampled).sum())
    judged_topics = set(np.array(columns[1], dtype=str)[grades != UNJUDGED].tolist())
    unjudged_topics = topics_without(session, pool.campaign_id, judged_topics)
    if not judged_topics and not allow_incomplete:
        what = f"pool {pool.id}"
        raise refuse_incomplete(
            what, unjudged_sampled, int(sampled.sum()), "sampled items", unjudged_topics, "unjudged"
        )
    keep = np.ones(len(items), dtype=bool) if stratified else grades != UNJUDGED
    qrels = Qrels(
        topics=np.array(columns[1], dtype=str)[keep],
        docs=np.array(columns[2], dtype=str)[keep],
        grades=grades[keep],
        strata=np.array(columns[3], dtype=np.int64)[keep] if stratified else None,
    )
    version = _store(
        session, pool.campaign_id, label, qrels, topic_ids_by_number(session, pool.campaign_id), source="cut"
    )
    version.pool_id = pool.id
    version.judging_order = judging_orders.order_of(pool)
    version.unjudged_sampled = unjudged_sampled
    version.unjudged_topics = unjudged_topics
    session.flush()
    return version


def evaluation_qrels(session: Session, evaluation: Evaluation) -> tuple[QrelsVersion, Qrels]:
    """The qrels version a (shots) evaluation scored against, and its qrels."""
    version = session.get(QrelsVersion, evaluation.qrels_version_id)
    assert version is not None
    return version, load_qrels(session, version)


def order_mark(version: QrelsVersion | None) -> dict[str, object] | None:
    """How a cut version's judgements were ordered, marked `biased` when the order is not random and the cut left
    sampled items unjudged (every score from it must say so); None for imported versions and moment truth."""
    if version is None or version.judging_order is None:
        return None
    random = judging_orders.is_random(version.judging_order)
    left = version.unjudged_sampled
    biased = not random and (left is None or left > 0)
    return {
        "order": version.judging_order,
        "random": random,
        "unjudged_sampled": left,
        "biased": biased,
        "note": (
            f"judged in the non-random order {version.judging_order} and cut with "
            f"{'an unknown number of' if left is None else left} sampled items unjudged: "
            "scores and estimates from these qrels are biased"
        )
        if biased
        else None,
    }


def order_mark_of(session: Session, version_id: int | None) -> dict[str, object] | None:
    """`order_mark` of a version given by id (None for none)."""
    return order_mark(session.get(QrelsVersion, version_id)) if version_id is not None else None


def import_qrels(
    session: Session, principal: Principal, campaign_id: int, data: bytes, label: str, *, max_errors: int
) -> QrelsVersion:
    """Store an uploaded TREC or sample_eval qrels file as a new version (topics must be registered)."""
    get_organised(session, principal, campaign_id)
    _check_label(session, campaign_id, label)
    try:
        qrels = parse_qrels(data, max_errors=max_errors, source="qrels file")
    except FormatError as exc:
        raise from_format_error("qrels file", exc, max_errors) from None
    topic_ids = topic_ids_by_number(session, campaign_id)
    known = np.isin(qrels.topics.astype(str), np.array(list(topic_ids), dtype=str))
    if not known.all():
        lines = qrels.lines if qrels.lines is not None else np.arange(1, len(qrels.topics) + 1)
        first: dict[str, int] = {}
        for index in np.flatnonzero(~known).tolist():
            first.setdefault(str(qrels.topics[index]), int(lines[index]))
        raise invalid_file(
            "qrels file",
            [(line, f"unknown topic {t!r}") for t, line in sorted(first.items(), key=lambda x: x[1])],
            max_errors,
        )
    version = _store(session, campaign_id, label, qrels, topic_ids, source="imported")
    judged = qrels.topics[np.asarray(qrels.grades) >= 0].astype(str).tolist()
    version.unjudged_topics = topics_without(session, campaign_id, judged)
    return version


def _store(
    session: Session, campaign_id: int, label: str, qrels: Qrels, topic_ids: dict[str, int], *, source: str
) -> QrelsVersion:
    """COPY a parsed qrels into a new version."""
    stratified = qrels.strata is not None
    version = QrelsVersion(
        campaign_id=campaign_id,
        label=label,
        kind="sample_eval" if stratified else "trec",
        source=source,
        n_entries=len(qrels.topics),
    )
    session.add(version)
    session.flush()
    n = len(qrels.topics)
    copy_rows(
        session,
        "qrels_entries",
        ("qrels_version_id", "topic_id", "docno", "stratum", "grade"),
        [
            np.full(n, version.id),
            topic_id_column(qrels.topics, topic_ids),
            qrels.docs,
            qrels.strata if qrels.strata is not None else np.full(n, None, dtype=object),
            qrels.grades,
        ],
    )
    return version


def list_qrels(session: Session, principal: Principal, campaign_id: int) -> list[QrelsVersion]:
    """The campaign's qrels versions, oldest first."""
    get_organised(session, principal, campaign_id)
    return list(
        session.scalars(select(QrelsVersion).where(QrelsVersion.campaign_id == campaign_id).order_by(QrelsVersion.id))
    )


def get_qrels(session: Session, principal: Principal, qrels_id: int) -> QrelsVersion:
    """A qrels version of a campaign the caller organises."""
    version = session.get(QrelsVersion, qrels_id)
    if version is None:
        raise NotFound(f"qrels version {qrels_id} not found")
    get_organised(session, principal, version.campaign_id)
    return version


def export_qrels(session: Session, principal: Principal, qrels_id: int, fmt: str) -> Iterator[bytes]:
    """The version as a file: `trec` (topic 0 doc grade; unjudged lines left out) or `sample_eval` (with stratum)."""
    version = get_qrels(session, principal, qrels_id)
    if fmt not in ("trec", "sample_eval"):
        raise InvalidInput("unknown qrels format", [{"field": "format", "message": "trec or sample_eval"}])
    if fmt == "sample_eval" and version.kind != "sample_eval":
        raise InvalidInput("this version has no strata", [{"field": "format", "message": "use trec"}])
    columns = (
        "t.number, '0', e.docno, e.stratum, e.grade" if fmt == "sample_eval" else "t.number, '0', e.docno, e.grade"
    )
    where = "" if fmt == "sample_eval" else " AND e.grade <> -1"
    query = sql.SQL(
        "SELECT " + columns + " FROM qrels_entries e JOIN topics t ON t.id = e.topic_id "
        "WHERE e.qrels_version_id = {}" + where + ' ORDER BY length(t.number), t.number, e.docno COLLATE "C"'
    ).format(sql.Literal(version.id))
    return copy_out(session, query, delimiter=" ")


def load_qrels(session: Session, version: QrelsVersion) -> Qrels:
    """A stored version as the numeric core's Qrels (written as qrels text by PostgreSQL, read by the parser)."""
    body = session.execute(_QRELS_TEXT, {"version": version.id}).scalar()
    if not body:
        empty = np.array([], dtype=str)
        stratified = version.kind == "sample_eval"
        return Qrels(
            topics=empty,
            docs=empty,
            grades=np.array([], dtype=np.int64),
            strata=np.array([], dtype=np.int64) if stratified else None,
        )
    return parse_qrels(body, source=f"qrels version {version.id}")


_QRELS_TEXT = text(
    """
    SELECT string_agg(t.number || ' 0 ' || e.docno || ' ' || coalesce(e.stratum || ' ', '') || e.grade, E'\\n')
    FROM qrels_entries e JOIN topics t ON t.id = e.topic_id WHERE e.qrels_version_id = :version
    """
)
