"""Model assessors' batch judging: their provenance, pulling leased items of their topics, pushing graded verdicts.

A model assessor (`assessors.kind = 'model'`) judges through the batch API only, as blind as a person: an item carries
its topic and shot, never runs, ranks, strata or anyone's verdicts (SPEC section 7). Pulls lease items in
`model_leases`: an item leased to the caller and not expired is never handed out again, so several client processes
sharing one token split the work (their pulls take the assessor's advisory lock in turn; the upsert itself refuses a
lease that holds). Pushes are idempotent per (item, assessor): the same grade again is `unchanged`, a different one a
Conflict, and the whole batch is checked before one INSERT ... ON CONFLICT DO NOTHING writes it; the items newly
judged go to `verification.after_model_verdicts` (a model-assisted pool draws its human sample from them).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import urldefrag

from pydantic import Field
from pydantic import dataclasses as pydantic_dataclasses
from sqlalchemy import text
from sqlalchemy.orm import Session

from app.services import judging_orders, verification
from app.services.auth import Principal
from app.services.campaigns import MAX_GRADE
from app.services.collection import format_media_url
from app.services.errors import Conflict, Forbidden, InvalidInput, NotFound
from app.services.pools import current_pool
from app.storage.models import AssessorKind, Role, TaskKind

PROVENANCE_MAX_BYTES = 16_384  # the provenance object as compact JSON
PROVENANCE_TEXT = {"model": 200, "version": 200, "config_hash": 64}  # its text fields and their longest lengths
KEYFRAMES = 3  # instants per shot in `keyframe_urls`
MAX_NAMED = 10  # items named in a message
ITEM_ID_MAX = 2**63 - 1  # pool item ids are bigint
# The key of a model assessor's pull lock: pg_advisory_xact_lock's one-bigint key space (which never meets the
# two-int keys of judging_orders.lock_topic), offset so that other one-bigint users stay clear of it.
PULL_LOCK_BASE = 25 << 40
NOT_MODEL = "the batch API is for model assessors"
MOMENTS_NOT_SERVED = (
    "the batch API serves shot pools; this campaign judges moments (moment proposals are not served to models yet)"
)


def check_provenance(kind: AssessorKind, provenance: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The provenance to store for an assessor of `kind`: a model's (`model` required; `version`, `config_hash`,
    `parameters` optional), None for a person; InvalidInput naming the field otherwise."""
    if kind is AssessorKind.human:
        if provenance is not None:
            raise InvalidInput(
                "provenance is for model assessors", [{"field": "provenance", "message": "only for kind model"}]
            )
        return None
    if provenance is None:
        raise InvalidInput(
            "a model assessor needs its provenance",
            [{"field": "provenance", "message": 'required for kind model: at least {"model": NAME}'}],
        )
    errors: list[dict[str, object]] = []
    unknown = sorted(set(provenance) - {*PROVENANCE_TEXT, "parameters"})
    errors += [{"field": f"provenance.{key}", "message": "unknown field"} for key in unknown]
    for key, longest in PROVENANCE_TEXT.items():
        value = provenance.get(key)
        if value is None and key != "model":
            continue
        if not isinstance(value, str) or not value.strip() or len(value) > longest or "\x00" in value:
            errors.append({"field": f"provenance.{key}", "message": f"text of 1 to {longest} characters"})
    parameters = provenance.get("parameters")
    if parameters is not None and not isinstance(parameters, dict):
        errors.append({"field": "provenance.parameters", "message": "an object"})
    if errors:
        raise InvalidInput("invalid provenance", errors)
    stored = {key: value for key, value in provenance.items() if value is not None}
    try:
        encoded = json.dumps(stored, allow_nan=False, separators=(",", ":"))
    except ValueError:
        raise InvalidInput(
            "invalid provenance", [{"field": "provenance.parameters", "message": "numbers must be finite"}]
        ) from None
    if "\\u0000" in encoded:
        raise InvalidInput("invalid provenance", [{"field": "provenance", "message": "NUL characters are not allowed"}])
    if len(encoded.encode()) > PROVENANCE_MAX_BYTES:
        raise InvalidInput(
            "provenance too large",
            [{"field": "provenance", "message": f"at most {PROVENANCE_MAX_BYTES} bytes as JSON"}],
        )
    return stored


# Pydantic dataclasses: the REST endpoints return them as they are (their response models).
@pydantic_dataclasses.dataclass(frozen=True)
class BatchInfo:
    """Who the caller is to the batch API, and its limits."""

    assessor: str
    kind: str
    provenance: dict[str, Any] | None
    max_grade: Annotated[int, Field(description="Grades run 0..max_grade (1: binary)")]
    max_batch: Annotated[int, Field(description="Most items per pull and verdicts per push")]
    lease_seconds: Annotated[float, Field(description="How long a pulled item stays yours")]


@pydantic_dataclasses.dataclass(frozen=True)
class BatchItem:
    """A pooled shot to judge for a topic: nothing about runs, ranks, strata or anyone's verdicts."""

    item_id: Annotated[int, Field(description="The pool item (give it back with the verdict)")]
    topic: str
    title: str
    description: str
    shot_id: str
    video_id: str | None
    start: float | None
    end: float | None
    media_url: str | None
    keyframe_urls: Annotated[
        list[str], Field(description="The media URL at instants across the shot (Media Fragments #t=SECONDS)")
    ]


@pydantic_dataclasses.dataclass(frozen=True)
class Pulled:
    """Items leased to the caller (empty when nothing is left), and the grade scale."""

    items: list[BatchItem]
    max_grade: int


@pydantic_dataclasses.dataclass(frozen=True)
class Pushed:
    """What came of a batch of verdicts: newly stored, and repeated ones (the same grade again)."""

    accepted: int
    unchanged: int


# A pydantic dataclass: the push endpoint takes it as it is (its body's items), so its bounds are declared here.
@pydantic_dataclasses.dataclass(frozen=True)
class ModelVerdictIn:
    """A model's verdict on one pulled item: its grade and, optionally, the judge's probability of relevance."""

    item_id: Annotated[int, Field(ge=1, le=ITEM_ID_MAX, description="The item's `item_id` from a pull")]
    grade: Annotated[int, Field(ge=0, le=MAX_GRADE, description="0 (not relevant) .. the campaign's max_grade")]
    probability: Annotated[
        float | None,
        Field(ge=0, le=1, allow_inf_nan=False, description="The judge's probability that the item is relevant"),
    ] = None


@dataclass(frozen=True)
class _Me:
    """The calling model assessor and its campaign's scale."""

    id: int
    name: str
    provenance: dict[str, Any] | None
    campaign_id: int
    max_grade: int
    task_kind: TaskKind


_ME = text(
    """
    SELECT a.id, a.name, a.kind, a.provenance, a.campaign_id, c.max_grade, c.task_kind
    FROM assessors a JOIN campaigns c ON c.id = a.campaign_id
    WHERE a.id = :me
    """
)
_ME_LOCKED = text(
    """
    SELECT a.id, a.name, a.kind, a.provenance, a.campaign_id, c.max_grade, c.task_kind,
           pg_advisory_xact_lock(CAST(:lock AS bigint)) IS NULL AS locked
    FROM assessors a JOIN campaigns c ON c.id = a.campaign_id
    WHERE a.id = :me
    """
)


def _model_assessor(session: Session, principal: Principal, *, lock: bool = False) -> _Me:
    """The calling model assessor (Forbidden for people and other roles); with `lock`, its pull lock taken."""
    if principal.role is not Role.assessor or principal.assessor_id is None:
        raise Forbidden(NOT_MODEL)
    params = {"me": principal.assessor_id, "lock": PULL_LOCK_BASE + principal.assessor_id}
    row = session.execute(_ME_LOCKED if lock else _ME, params).one_or_none()
    if row is None or row.kind != AssessorKind.model.value:
        raise Forbidden(NOT_MODEL)
    return _Me(row.id, row.name, row.provenance, row.campaign_id, row.max_grade, TaskKind(row.task_kind))


def batch_info(session: Session, principal: Principal, *, max_batch: int, lease_seconds: float) -> BatchInfo:
    """The caller's name, provenance and grade scale, with the API's limits."""
    me = _model_assessor(session, principal)
    return BatchInfo(me.name, AssessorKind.model.value, me.provenance, me.max_grade, max_batch, lease_seconds)


def keyframe_urls(media_url: str | None, start: float | None, end: float | None, n: int = KEYFRAMES) -> list[str]:
    """The media URL at `n` instants spread across the shot, as Media Fragments (`URL#t=SECONDS`), the instants the
    judging page draws its strip at (the middle of each of `n` equal parts); empty without a URL or a span."""
    if media_url is None or start is None or end is None:
        return []
    base = urldefrag(media_url).url
    width = max(0.0, end - start)
    return [f"{base}#t={round(start + (k + 0.5) * width / n, 3):g}" for k in range(n)]


# Lease the caller's next items, in one statement: items of its assigned topics in the current pool (sampled), with
# no verdict of its own and no lease of its own that holds; those it was handed before and never answered (an expired
# lease) first, then topic by topic in judging order. The upsert renews only an expired lease (its WHERE), so an item
# leased meanwhile by a concurrent pull of the same assessor is never handed out twice.
_LEASE = text(
    """
    WITH candidate AS (
        SELECT i.id, i.topic_id, i.judging_order, l.pool_item_id IS NOT NULL AS again
        FROM assignments a
        JOIN pool_items i ON i.pool_id = a.pool_id AND i.topic_id = a.topic_id
        LEFT JOIN model_leases l ON l.pool_item_id = i.id AND l.assessor_id = a.assessor_id
        WHERE a.pool_id = :pool AND a.assessor_id = :me AND i.sampled
          AND (l.expires_at IS NULL OR l.expires_at < now())
          AND NOT EXISTS (SELECT 1 FROM model_verdicts v WHERE v.pool_item_id = i.id AND v.assessor_id = :me)
        ORDER BY again DESC, i.topic_id, i.judging_order
        LIMIT :n
    ), leased AS (
        INSERT INTO model_leases (pool_item_id, assessor_id, expires_at)
        SELECT id, :me, now() + make_interval(secs => :lease) FROM candidate
        ON CONFLICT (pool_item_id, assessor_id) DO UPDATE SET expires_at = EXCLUDED.expires_at
        WHERE model_leases.expires_at < now()
        RETURNING pool_item_id
    )
    SELECT i.id AS item_id, tp.number AS topic, tp.title, tp.description, i.docno AS shot_id,
           ci.video_id, ci.start, ci."end", c.media_url_template
    FROM leased
    JOIN candidate k ON k.id = leased.pool_item_id
    JOIN pool_items i ON i.id = leased.pool_item_id
    JOIN topics tp ON tp.id = i.topic_id
    JOIN campaigns c ON c.id = tp.campaign_id
    LEFT JOIN collection_items ci ON ci.campaign_id = c.id AND ci.shot_id = i.docno
    ORDER BY k.again DESC, k.topic_id, k.judging_order
    """
)


def _item(row: Any) -> BatchItem:
    """The blind view of a leased item."""
    media_url = None
    if row.video_id is not None:
        media_url = format_media_url(row.media_url_template, row.shot_id, row.video_id, row.start, row.end)
    return BatchItem(
        item_id=row.item_id,
        topic=row.topic,
        title=row.title,
        description=row.description or "",
        shot_id=row.shot_id,
        video_id=row.video_id,
        start=row.start,
        end=row.end,
        media_url=media_url,
        keyframe_urls=keyframe_urls(media_url, row.start, row.end),
    )


def pull(session: Session, principal: Principal, n: int, *, max_batch: int, lease_seconds: float) -> Pulled:
    """Lease up to `n` items to the calling model assessor (1..max_batch); an empty list when nothing is left."""
    if not 1 <= n <= max_batch:
        raise InvalidInput("invalid batch size", [{"field": "n", "message": f"from 1 to {max_batch}"}])
    me = _model_assessor(session, principal, lock=True)
    if me.task_kind is TaskKind.moments:
        raise Conflict(MOMENTS_NOT_SERVED)
    pool = current_pool(session, me.campaign_id)
    if pool is None:
        return Pulled([], me.max_grade)
    rows = session.execute(_LEASE, {"pool": pool.id, "me": me.id, "n": n, "lease": lease_seconds}).all()
    return Pulled([_item(row) for row in rows], me.max_grade)


# Each pushed item: whether it is a sampled item of the caller's assigned topics in the pool, and the caller's stored
# grade of it (if any).
_CHECK = text(
    """
    SELECT x.item_id, i.id IS NOT NULL AS known, v.grade AS stored
    FROM unnest(CAST(:items AS bigint[])) AS x(item_id)
    LEFT JOIN pool_items i ON i.id = x.item_id AND i.pool_id = :pool AND i.sampled AND EXISTS (
        SELECT 1 FROM assignments a WHERE a.pool_id = :pool AND a.topic_id = i.topic_id AND a.assessor_id = :me
    )
    LEFT JOIN model_verdicts v ON v.pool_item_id = x.item_id AND v.assessor_id = :me
    """
)
# The verdicts in one statement (a verdict stored meanwhile by a concurrent push is left as it is), the caller's
# leases of the items released; the items newly judged.
_WRITE = text(
    """
    WITH written AS (
        INSERT INTO model_verdicts (pool_item_id, assessor_id, grade, probability, config_hash)
        SELECT x.item_id, :me, x.grade, x.probability, :config_hash
        FROM unnest(CAST(:items AS bigint[]), CAST(:grades AS integer[]), CAST(:probabilities AS double precision[]))
             AS x(item_id, grade, probability)
        ON CONFLICT (pool_item_id, assessor_id) DO NOTHING
        RETURNING pool_item_id
    ), released AS (
        DELETE FROM model_leases WHERE assessor_id = :me AND pool_item_id = ANY(CAST(:items AS bigint[]))
    )
    SELECT pool_item_id FROM written
    """
)
_STORED = text(
    "SELECT pool_item_id, grade FROM model_verdicts"
    " WHERE assessor_id = :me AND pool_item_id = ANY(CAST(:items AS bigint[]))"
)


def _named(items: Sequence[object]) -> str:
    """Items for a message: the first MAX_NAMED, and how many more."""
    more = f" and {len(items) - MAX_NAMED} more" if len(items) > MAX_NAMED else ""
    return ", ".join(str(i) for i in items[:MAX_NAMED]) + more


def _changed(pairs: Sequence[tuple[int, int, int]]) -> Conflict:
    """The 409 of grades that differ from the caller's stored ones: (item, stored, given)."""
    named = _named([f"item {item} (stored grade {stored}, this batch {given})" for item, stored, given in pairs])
    return Conflict(f"judged already with another grade: {named}; a model's verdict is never changed")


def _check_batch(verdicts: Sequence[ModelVerdictIn], max_grade: int, max_batch: int) -> None:
    """InvalidInput naming the field: too many verdicts, a repeated item, a grade off the scale, a bad probability."""
    if len(verdicts) > max_batch:
        raise InvalidInput("too many verdicts", [{"field": "verdicts", "message": f"at most {max_batch} per request"}])
    errors: list[dict[str, object]] = []
    seen: set[int] = set()
    for k, verdict in enumerate(verdicts):
        if verdict.item_id in seen:
            errors.append({"field": f"verdicts[{k}].item_id", "message": f"item {verdict.item_id} is given twice"})
        seen.add(verdict.item_id)
        if not 0 <= verdict.grade <= max_grade:
            errors.append({"field": f"verdicts[{k}].grade", "message": f"from 0 to {max_grade}"})
        if verdict.probability is not None and not 0.0 <= verdict.probability <= 1.0:
            errors.append({"field": f"verdicts[{k}].probability", "message": "from 0 to 1"})
    if errors:
        raise InvalidInput("invalid verdicts", errors)


def push(
    session: Session,
    principal: Principal,
    verdicts: Sequence[ModelVerdictIn],
    *,
    config_hash: str | None = None,
    max_batch: int,
) -> Pushed:
    """Store the calling model assessor's verdicts, all or none: NotFound naming items outside its assigned topics
    of the current pool, Conflict naming items it judged already with another grade; the same grade again counts
    as unchanged (a retried push is safe). Its leases of the items are released."""
    me = _model_assessor(session, principal)
    _check_batch(verdicts, me.max_grade, max_batch)
    if not verdicts:
        return Pushed(0, 0)
    pool = current_pool(session, me.campaign_id)
    items = [v.item_id for v in verdicts]
    given = {v.item_id: v.grade for v in verdicts}
    found = session.execute(_CHECK, {"items": items, "pool": pool.id if pool else None, "me": me.id}).all()
    unknown = [row.item_id for row in found if not row.known]
    if unknown:
        raise NotFound(f"not items of your assigned topics in the current pool: {_named(unknown)}")
    changed = [
        (row.item_id, row.stored, given[row.item_id]) for row in found if row.stored not in (None, given[row.item_id])
    ]
    if changed:
        raise _changed(changed)
    params = {
        "me": me.id,
        "items": items,
        "grades": [v.grade for v in verdicts],
        "probabilities": [v.probability for v in verdicts],
        "config_hash": config_hash,
    }
    written = set(session.execute(_WRITE, params).scalars())
    repeated = [item for item in items if item not in written]
    if repeated:
        # stored before this batch, or by a concurrent push while this one waited on it: the same grade, or a Conflict
        stored = {row.pool_item_id: row.grade for row in session.execute(_STORED, {"me": me.id, "items": repeated})}
        changed = [(item, stored[item], given[item]) for item in repeated if stored.get(item) != given[item]]
        if changed:
            raise _changed(changed)
    if written:
        judged = [item for item in items if item in written]
        verification.after_model_verdicts(session, judged)
        judging_orders.after_model_verdicts(session, judged)
    session.flush()
    return Pushed(len(written), len(repeated))
