"""Qrels versions: cut from a pool's judgements, imported from files, exported as TREC or sample_eval qrels."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from psycopg import sql
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from app.evaluation.errors import FormatError
from app.evaluation.formats.trec_files import parse_qrels
from app.evaluation.records import Qrels
from app.evaluation.statistics.prediction_powered import VerifiedItems
from app.services import judging_orders, reused_verdicts, sealing
from app.services.auth import Principal
from app.services.campaigns import get_organised
from app.services.errors import Conflict, InvalidInput, NotFound
from app.services.pools import VerificationSpec, get_pool, verification_of
from app.services.quality import verdicts_by_round
from app.services.run_files import topic_id_column
from app.services.topics import topic_ids_by_number
from app.services.validation import from_format_error, invalid_file
from app.storage.bulk import copy_out, copy_rows
from app.storage.models import (
    Assessor,
    AssessorKind,
    Evaluation,
    Judgement,
    Pool,
    QrelsVersion,
    Verdict,
)

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


class Incomplete(Conflict):
    """A cut refused because judging is incomplete (a Conflict: 409), which `allow_incomplete` overrides."""


def refuse_incomplete(what: str, unjudged: int, total: int, items: str, topics: list[str], verb: str) -> Incomplete:
    """The Conflict of a cut that would leave topics without any judgement, saying how much is unjudged (raised
    unless the request says allow_incomplete)."""
    return Incomplete(
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


HUMAN, MODEL, COMBINED = "human", "model", "combined"
JUDGES = (HUMAN, MODEL, COMBINED)

# The pool's items with their verification design.
_CUT_ITEMS = text(
    """
    SELECT i.id, t.number, i.docno, i.stratum, i.sampled, i.verification_probability, i.verification_sampled
    FROM pool_items i JOIN topics t ON t.id = i.topic_id WHERE i.pool_id = :pool ORDER BY i.id
    """
)
# One model assessor's verdicts on the pool's items.
_MODEL_VERDICTS = text(
    """
    SELECT v.pool_item_id, v.grade, v.probability FROM model_verdicts v JOIN pool_items i ON i.id = v.pool_item_id
    WHERE i.pool_id = :pool AND v.assessor_id = :model
    """
)


def _model_assessor(session: Session, pool: Pool, given: int | None) -> Assessor:
    """The model assessor whose verdicts a version holds: the one given, else the pool's verified model, else the
    campaign's only model assessor (InvalidInput naming `model_assessor_id` otherwise)."""
    design = verification_of(pool)
    chosen = given if given is not None else design.model_assessor_id if design is not None else None
    models = list(
        session.scalars(
            select(Assessor)
            .where(Assessor.campaign_id == pool.campaign_id, Assessor.kind == AssessorKind.model.value)
            .order_by(Assessor.id)
        )
    )
    if chosen is None and len(models) == 1:
        return models[0]
    found = next((m for m in models if m.id == chosen), None)
    if found is not None:
        return found
    message = (
        f"{chosen} is not a model assessor of this campaign"
        if chosen is not None
        else f"the campaign has {len(models)} model assessors: name one"
    )
    raise InvalidInput("which model's verdicts?", [{"field": "model_assessor_id", "message": message}])


def cut_qrels(
    session: Session,
    principal: Principal,
    pool_id: int,
    label: str,
    *,
    allow_incomplete: bool = False,
    judges: str = HUMAN,
    model_assessor_id: int | None = None,
) -> QrelsVersion:
    """Freeze the pool's current judgements as a new, immutable qrels version.

    Stratified pools give sample_eval qrels (unsampled and not yet judged items graded -1); depth pools give TREC
    qrels of the judged items. Conflict, saying how much is unjudged, when nothing is judged yet, unless
    `allow_incomplete` (a cut before the last topic is judged is usual and allowed); the version records the topics
    without any judgement (`unjudged_topics`), and boards scored on it name them.

    `judges` says whose verdicts: `human` (people's, by `final_grade`), `model` (one model assessor's grade of every
    pooled item it judged) or `combined` (a model-assisted pool: a person's final grade where there is one, else
    the model's; each entry keeps `model_grade`, `model_probability`, `human_grade` and `verification_probability`,
    what the prediction-powered estimates need, with `human_grade` NULL for items outside the verification sample
    and -1 for drawn items no person has judged yet). The `human` version of a model-assisted pool holds only the
    verification sample: every pooled item is kept, graded -1 where no person judged it, and its provenance says so.
    """
    if judges not in JUDGES:
        raise InvalidInput("unknown judges", [{"field": "judges", "message": "human, model or combined"}])
    pool = get_pool(session, principal, pool_id)
    if pool.kind == "moments":
        raise Conflict(
            f"pool {pool.id} is a moment pool: cut its ground truth with POST /api/moment-pools/{pool.id}/truth"
        )
    design = verification_of(pool)
    if judges == COMBINED and design is None:
        raise InvalidInput(
            "a combined version needs a model-assisted pool",
            [{"field": "judges", "message": f"pool {pool.id} was built without verification: use human or model"}],
        )
    model = _model_assessor(session, pool, model_assessor_id) if judges != HUMAN else None
    _check_label(session, pool.campaign_id, label)
    by_item = verdicts_by_round(session, pool)
    items = session.execute(_CUT_ITEMS, {"pool": pool.id}).all()
    columns = list(zip(*items, strict=True)) if items else [()] * 7
    ids = np.array(columns[0], dtype=np.int64)
    topics = np.array(columns[1], dtype=str)
    sampled = np.array(columns[4], dtype=bool)
    drawn = np.array([d is True for d in columns[6]], dtype=bool)
    human = np.array([final_grade(by_item.get(i, {})) for i in columns[0]], dtype=np.int64)
    model_grade = np.full(len(items), UNJUDGED, dtype=np.int64)
    model_probability = np.full(len(items), np.nan)
    if model is not None:
        at = {int(i): k for k, i in enumerate(ids.tolist())}
        for item, grade, probability in session.execute(_MODEL_VERDICTS, {"pool": pool.id, "model": model.id}):
            model_grade[at[item]] = grade
            model_probability[at[item]] = np.nan if probability is None else probability
    if judges == HUMAN:
        grades = human
        unjudged = (human == UNJUDGED) & (drawn if design is not None else sampled)
    elif judges == MODEL:
        grades = model_grade
        unjudged = (model_grade == UNJUDGED) & sampled
    else:
        grades = np.where(human != UNJUDGED, human, model_grade)
        unjudged = (human == UNJUDGED) & drawn
    unjudged_sampled = int(unjudged.sum())
    judged_topics = set(topics[grades != UNJUDGED].tolist())
    unjudged_topics = topics_without(session, pool.campaign_id, judged_topics)
    if not judged_topics and not allow_incomplete:
        judged_by = {HUMAN: "", MODEL: f" (judged by model assessor {model.id if model else ''})", COMBINED: ""}
        raise refuse_incomplete(
            f"pool {pool.id}{judged_by[judges]}",
            int(((grades == UNJUDGED) & sampled).sum()),
            int(sampled.sum()),
            "sampled items",
            unjudged_topics,
            "unjudged",
        )
    stratified = pool.kind == "stratified"
    keep = np.ones(len(items), dtype=bool) if stratified or design is not None else grades != UNJUDGED
    if judges != HUMAN and not stratified:
        keep = grades != UNJUDGED
    qrels = Qrels(
        topics=topics[keep],
        docs=np.array(columns[2], dtype=str)[keep],
        grades=grades[keep],
        strata=np.array(columns[3], dtype=np.int64)[keep] if stratified else None,
    )
    extra = None
    if judges == COMBINED:
        probability = np.array([np.nan if p is None else p for p in columns[5]], dtype=np.float64)
        extra = {
            "model_grade": _nullable(model_grade[keep], model_grade[keep] == UNJUDGED),
            "model_probability": _nullable(model_probability[keep], np.isnan(model_probability[keep])),
            "human_grade": _nullable(human[keep], ~drawn[keep]),
            "verification_probability": _nullable(probability[keep], np.isnan(probability[keep])),
        }
    version = _store(
        session,
        pool.campaign_id,
        label,
        qrels,
        topic_ids_by_number(session, pool.campaign_id),
        source="cut",
        columns=extra,
    )
    version.pool_id = pool.id
    version.judging_order = judging_orders.order_of(pool)
    version.unjudged_sampled = unjudged_sampled
    version.unjudged_topics = unjudged_topics
    version.judges = judges
    kept_human = int((human[keep] != UNJUDGED).sum()) if judges != MODEL else 0
    kept_model = int((model_grade[keep] != UNJUDGED).sum()) if judges != HUMAN else 0
    provenance = _provenance(judges, design, model, kept_human, kept_model, int(drawn.sum()))
    if judges != MODEL and pool.series_set_id is not None:  # a series top-up pool: verdicts copied from earlier pools
        provenance["reused"] = reused_verdicts.reused_summary(session, pool.id)
    version.provenance = provenance
    session.flush()
    return version


def _nullable(values: np.ndarray, missing: np.ndarray) -> np.ndarray:
    """A COPY column: the values, None where missing."""
    out = np.array(values.tolist(), dtype=object)
    out[missing] = None
    return out


def _provenance(
    judges: str, design: VerificationSpec | None, model: Assessor | None, n_human: int, n_model: int, n_drawn: int
) -> dict[str, object]:
    """Whose judgements a cut version holds: the model assessors with their provenance, the verification design and
    the counts of items graded by people and by the model."""
    out: dict[str, object] = {
        "model_assessors": [{"id": model.id, "name": model.name, "provenance": model.provenance}] if model else [],
        "human_share": design.human_share if design is not None else None,
        "stratify": design.stratify if design is not None else None,
        "human_judgements": n_human,
        "model_judgements": n_model,
    }
    if design is not None:
        out["verification_drawn"] = n_drawn
    if design is not None and judges == HUMAN:
        out["verification_only"] = True
        out["note"] = (
            "people judged only the verification sample of this model-assisted pool: every other item is unjudged "
            "(-1); the combined version holds the model's verdicts corrected by this sample"
        )
    return out


def judges_of(version: QrelsVersion | None) -> dict[str, object] | None:
    """Whose judgements a version holds, as boards and reports show it (None for none)."""
    if version is None:
        return None
    return {"judges": version.judges or HUMAN, "provenance": version.provenance}


def evaluation_qrels(session: Session, evaluation: Evaluation) -> tuple[QrelsVersion, Qrels]:
    """The qrels version a (shots) evaluation scored against, and its qrels."""
    version = session.get(QrelsVersion, evaluation.qrels_version_id)
    assert version is not None
    return version, load_qrels(session, version)


@dataclass(frozen=True)
class Verified:
    """A combined version's items as the prediction-powered estimator takes them, and what the estimates rest on:
    topics without a verification sample (their estimates are the model's labels alone) and drawn items no person had
    judged when the version was cut."""

    items: VerifiedItems
    topics_without_sample: list[str]
    drawn_unjudged: int


_VERIFIED = text(
    """
    SELECT t.number, e.docno, e.model_grade, e.model_probability, e.human_grade, e.verification_probability
    FROM qrels_entries e JOIN topics t ON t.id = e.topic_id WHERE e.qrels_version_id = :version
    ORDER BY t.number, e.docno
    """
)


def verified_items(session: Session, version: QrelsVersion) -> Verified:
    """A combined version's entries as `VerifiedItems` (`cut_qrels` says what they hold).

    Drawn items no person judged yet are treated as a random part of the sample left out: in each topic the judged
    share q of the drawn items scales every item's inclusion probability (pi q), and those items count as not drawn.
    The judging queue takes a topic's drawn items in its seeded shuffled order, so the judged ones are a random
    subset of the drawn (an adaptive order makes that approximate). A topic without a sample, or none of whose drawn
    items is judged, is estimated from the model's labels alone (listed in `topics_without_sample`).
    """
    rows = session.execute(_VERIFIED, {"version": version.id}).all()
    columns = list(zip(*rows, strict=True)) if rows else [()] * 6
    topic = np.array(columns[0], dtype=str)
    model = np.array([UNJUDGED if g is None else g for g in columns[2]], dtype=np.int64)
    probability = np.array([np.nan if p is None else p for p in columns[3]], dtype=np.float64)
    drawn = np.array([h is not None for h in columns[4]], dtype=bool)
    human = np.array([UNJUDGED if h is None else h for h in columns[4]], dtype=np.int64)
    pi = np.array([np.nan if p is None else p for p in columns[5]], dtype=np.float64)
    judged = drawn & (human != UNJUDGED)
    names, at = np.unique(topic, return_inverse=True)
    n_drawn = np.bincount(at, weights=drawn, minlength=len(names))
    n_judged = np.bincount(at, weights=judged, minlength=len(names))
    share = np.divide(n_judged, n_drawn, out=np.zeros(len(names)), where=n_drawn > 0)
    inclusion = np.where(np.isnan(pi), 1.0, pi) * np.where(share > 0, share, 1.0)[at]
    # an item not drawn never enters the Horvitz-Thompson sums: its probability only has to be a valid one below 1
    inclusion = np.where(judged, inclusion, np.minimum(inclusion, 0.5))
    designed = np.bincount(at, weights=~np.isnan(pi), minlength=len(names)) > 0
    without = names[~designed | ((n_drawn > 0) & (n_judged == 0))].tolist()
    items = VerifiedItems(
        topic=topic,
        docno=np.array(columns[1], dtype=str),
        model_grade=model,
        model_probability=probability,
        human_grade=np.where(judged, human, UNJUDGED),
        inclusion=inclusion,
        sampled=judged,
    )
    return Verified(items, topic_order(without), int((drawn & ~judged).sum()))


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
    session: Session,
    campaign_id: int,
    label: str,
    qrels: Qrels,
    topic_ids: dict[str, int],
    *,
    source: str,
    columns: Mapping[str, np.ndarray] | None = None,
) -> QrelsVersion:
    """COPY a parsed qrels into a new version (with `columns`: more entry columns, parallel to the qrels lines)."""
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
    extra = dict(columns or {})
    copy_rows(
        session,
        "qrels_entries",
        ("qrels_version_id", "topic_id", "docno", "stratum", "grade", *extra),
        [
            np.full(n, version.id),
            topic_id_column(qrels.topics, topic_ids),
            qrels.docs,
            qrels.strata if qrels.strata is not None else np.full(n, None, dtype=object),
            qrels.grades,
            *extra.values(),
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
    """The version as a file: `trec` (topic 0 doc grade; unjudged lines left out) or `sample_eval` (with stratum).
    The lines of sealed progress topics are left out (`sealing.sealed_numbers_of_version` names them)."""
    version = get_qrels(session, principal, qrels_id)
    if fmt not in ("trec", "sample_eval"):
        raise InvalidInput("unknown qrels format", [{"field": "format", "message": "trec or sample_eval"}])
    if fmt == "sample_eval" and version.kind != "sample_eval":
        raise InvalidInput("this version has no strata", [{"field": "format", "message": "use trec"}])
    columns = (
        "t.number, '0', e.docno, e.stratum, e.grade" if fmt == "sample_eval" else "t.number, '0', e.docno, e.grade"
    )
    where = "" if fmt == "sample_eval" else " AND e.grade <> -1"
    where += f" AND NOT ({sealing.SEALED_TOPIC})"  # sealed judgements are never exported
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


# in the order the version's download lists its lines (topics by number, then docnos byte-wise): its scores, seeded
# imputation included, do not depend on the physical order of rows, and equal `trecpool eval` on the download
_QRELS_TEXT = text(
    """
    SELECT string_agg(
        t.number || ' 0 ' || e.docno || ' ' || coalesce(e.stratum || ' ', '') || e.grade, E'\\n'
        ORDER BY length(t.number), t.number, e.docno COLLATE "C"
    )
    FROM qrels_entries e JOIN topics t ON t.id = e.topic_id WHERE e.qrels_version_id = :version
    """
)
