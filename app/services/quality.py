"""Quality control of judgements: second opinions, the adjudication queue and assessor agreement."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
from sqlalchemy import and_, insert, select
from sqlalchemy.orm import Session, aliased

from app.evaluation.statistics.agreement import cohen_kappa, neighbour_disagreements
from app.services.auth import Principal
from app.services.collection import format_media_url
from app.services.errors import Conflict, InvalidInput, NotFound
from app.services.judging import GRADES
from app.services.pools import get_pool
from app.storage.models import (
    Assessor,
    Campaign,
    CollectionItem,
    Judgement,
    JudgementChange,
    JudgingTask,
    Pool,
    PoolItem,
    Topic,
    Verdict,
)

FREQUENT_REASON = "returned by many runs, judged not relevant"
NEIGHBOUR_REASON = "neighbouring shots judged differently"
MAX_WINDOW = 100  # neighbours compared on each side; the check does one pass per offset
MAX_MIN_RUNS = 100_000


def _video_positions(session: Session, campaign_id: int) -> dict[str, tuple[str, int]]:
    """Each shot's video and its index in the video by start time."""
    rows = session.execute(
        select(CollectionItem.shot_id, CollectionItem.video_id)
        .where(CollectionItem.campaign_id == campaign_id)
        .order_by(CollectionItem.video_id, CollectionItem.start, CollectionItem.shot_id)
    )
    out: dict[str, tuple[str, int]] = {}
    last_video, index = None, 0
    for shot, video in rows:
        index = index + 1 if video == last_video else 0
        last_video = video
        out[shot] = (video, index)
    return out


def run_quality_control(
    session: Session, principal: Principal, pool_id: int, *, min_runs: int = 10, window: int = 5
) -> dict[str, int]:
    """Queue blind second judgements (by another assessor) for items the TRECVID rules find doubtful."""
    if not 1 <= window <= MAX_WINDOW:
        raise InvalidInput("window out of range", [{"field": "window", "message": f"1 to {MAX_WINDOW}"}])
    if not 1 <= min_runs <= MAX_MIN_RUNS:
        raise InvalidInput("min_runs out of range", [{"field": "min_runs", "message": f"1 to {MAX_MIN_RUNS}"}])
    pool = get_pool(session, principal, pool_id)
    rows = session.execute(
        select(
            PoolItem.id, PoolItem.topic_id, PoolItem.docno, PoolItem.n_runs, Judgement.verdict, Judgement.assessor_id
        )
        .join(Judgement, and_(Judgement.pool_item_id == PoolItem.id, Judgement.round == 1))
        .where(PoolItem.pool_id == pool.id)
    ).all()
    if not rows:
        return {"frequent_false_positives": 0, "neighbour_disagreements": 0, "queued": 0}
    item_ids = np.array([r[0] for r in rows])
    topic_ids = np.array([r[1] for r in rows])
    n_runs = np.array([r[3] for r in rows])
    verdicts = np.array([r[4].value for r in rows])
    frequent = (n_runs >= min_runs) & (verdicts == Verdict.not_relevant.value)
    where = _video_positions(session, pool.campaign_id)
    known = np.array([r[2] in where for r in rows])
    groups = np.array(
        [
            f"{t}\x00{where[r[2]][0]}" if k else f"{t}\x00?{i}"
            for i, (t, r, k) in enumerate(zip(topic_ids.tolist(), rows, known.tolist(), strict=True))
        ]
    )
    positions = np.array([where[r[2]][1] if k else 0 for r, k in zip(rows, known.tolist(), strict=True)])
    decided = verdicts != Verdict.unsure.value
    neighbours = np.zeros(len(rows), dtype=bool)
    neighbours[decided & known] = neighbour_disagreements(
        groups[decided & known], positions[decided & known], verdicts[decided & known], window
    )
    existing = set(
        session.scalars(
            select(JudgingTask.pool_item_id).join(PoolItem).where(PoolItem.pool_id == pool.id, JudgingTask.round == 2)
        )
    )
    new = []
    for i in np.flatnonzero(frequent | neighbours).tolist():
        if int(item_ids[i]) in existing:
            continue
        reason = FREQUENT_REASON if frequent[i] else NEIGHBOUR_REASON
        new.append({"pool_item_id": int(item_ids[i]), "round": 2, "reason": reason, "excluded_assessor_id": rows[i][5]})
    if new:
        session.execute(insert(JudgingTask), new)
    session.flush()
    return {
        "frequent_false_positives": int(frequent.sum()),
        "neighbour_disagreements": int(neighbours.sum()),
        "queued": len(new),
    }


def verdicts_by_round(session: Session, pool: Pool) -> dict[int, dict[int, Judgement]]:
    """Item id -> round -> judgement."""
    out: dict[int, dict[int, Judgement]] = defaultdict(dict)
    for judgement in session.scalars(select(Judgement).join(PoolItem).where(PoolItem.pool_id == pool.id)):
        out[judgement.pool_item_id][judgement.round] = judgement
    return out


def needs_adjudication(rounds: dict[int, Judgement]) -> bool:
    """Whether an item's judgements disagree or say unsure, with no adjudication yet."""
    if 3 in rounds:
        return False
    verdicts = {j.verdict for j in rounds.values()}
    return Verdict.unsure in verdicts or len(verdicts) > 1


def adjudication_queue(session: Session, principal: Principal, pool_id: int) -> list[dict[str, object]]:
    """Items an organiser must decide: disagreements between rounds, and `unsure` verdicts; each with its topic (number
    and title), shot, the shot's video, window and media URL (None without a collection row or a template), the
    verdicts by round and, per round, who gave the verdict (`judgements`: the assessor's id and name)."""
    pool = get_pool(session, principal, pool_id)
    by_item = verdicts_by_round(session, pool)
    pending = [item_id for item_id, rounds in by_item.items() if needs_adjudication(rounds)]
    items = {i.id: i for i in session.scalars(select(PoolItem).where(PoolItem.id.in_(pending)))}
    topics = {t.id: t for t in session.scalars(select(Topic).where(Topic.campaign_id == pool.campaign_id))}
    names = {a.id: a.name for a in session.scalars(select(Assessor).where(Assessor.campaign_id == pool.campaign_id))}
    campaign = session.get(Campaign, pool.campaign_id)
    template = campaign.media_url_template if campaign is not None else None
    shots = {
        c.shot_id: c
        for c in session.scalars(
            select(CollectionItem).where(
                CollectionItem.campaign_id == pool.campaign_id,
                CollectionItem.shot_id.in_({i.docno for i in items.values()}),
            )
        )
    }
    out: list[dict[str, object]] = []
    for item_id in sorted(pending):
        item = items[item_id]
        shot = shots.get(item.docno)
        rounds = sorted(by_item[item_id].items())
        out.append(
            {
                "pool_item_id": item_id,
                "topic": topics[item.topic_id].number,
                "topic_title": topics[item.topic_id].title,
                "shot_id": item.docno,
                "verdicts": {str(r): j.verdict.value for r, j in rounds},
                "judgements": [
                    {
                        "round": r,
                        "verdict": j.verdict.value,
                        "assessor_id": j.assessor_id,
                        "assessor": names.get(j.assessor_id) if j.assessor_id is not None else None,
                    }
                    for r, j in rounds
                ],
                "video_id": shot.video_id if shot else None,
                "start": shot.start if shot else None,
                "end": shot.end if shot else None,
                "media_url": format_media_url(template, shot.shot_id, shot.video_id, shot.start, shot.end)
                if shot
                else None,
            }
        )
    return out


def adjudicate(session: Session, principal: Principal, pool_id: int, item_id: int, verdict: Verdict) -> None:
    """Record the organiser's final verdict (round 3) on a pooled item."""
    pool = get_pool(session, principal, pool_id)
    item = session.get(PoolItem, item_id)
    if item is None or item.pool_id != pool.id:
        raise NotFound(f"pool item {item_id} not found in pool {pool_id}")
    if verdict is Verdict.unsure:
        raise Conflict("an adjudication must decide: relevant or not_relevant")
    current = session.scalar(select(Judgement).where(Judgement.pool_item_id == item_id, Judgement.round == 3))
    if current is None:
        current = Judgement(pool_item_id=item_id, assessor_id=None, round=3, verdict=verdict, grade=GRADES[verdict])
        session.add(current)
        session.flush()
        session.add(
            JudgementChange(
                judgement_id=current.id, changed_by_token_id=principal.token_id, old_verdict=None, new_verdict=verdict
            )
        )
    elif current.verdict is not verdict:
        session.add(
            JudgementChange(
                judgement_id=current.id,
                changed_by_token_id=principal.token_id,
                old_verdict=current.verdict,
                new_verdict=verdict,
            )
        )
        current.verdict, current.grade = verdict, GRADES[verdict]
    session.flush()


def agreement(session: Session, principal: Principal, pool_id: int) -> dict[str, list[dict[str, object]]]:
    """Cohen's kappa between first and second judgements, per topic and per assessor pair."""
    pool = get_pool(session, principal, pool_id)
    first, second = aliased(Judgement), aliased(Judgement)
    rows = session.execute(
        select(Topic.number, first.assessor_id, second.assessor_id, first.verdict, second.verdict)
        .select_from(PoolItem)
        .join(Topic, Topic.id == PoolItem.topic_id)
        .join(first, and_(first.pool_item_id == PoolItem.id, first.round == 1))
        .join(second, and_(second.pool_item_id == PoolItem.id, second.round == 2))
        .where(PoolItem.pool_id == pool.id)
    ).all()
    names: dict[int | None, str] = {
        a.id: a.name for a in session.scalars(select(Assessor).where(Assessor.campaign_id == pool.campaign_id))
    }
    by_topic: dict[str, list[tuple[str, str]]] = defaultdict(list)
    by_pair: dict[tuple[int | None, int | None], list[tuple[str, str]]] = defaultdict(list)
    for topic, a1, a2, v1, v2 in rows:
        by_topic[topic].append((v1.value, v2.value))
        by_pair[(a1, a2)].append((v1.value, v2.value))

    def kappa(pairs: list[tuple[str, str]]) -> dict[str, object]:
        a, b = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
        value = cohen_kappa(a, b)
        return {"items": len(pairs), "agreement": float(np.mean(a == b)), "kappa": None if np.isnan(value) else value}

    return {
        "topics": [{"topic": t, **kappa(p)} for t, p in sorted(by_topic.items())],
        "assessor_pairs": [
            {"first": names.get(a1), "second": names.get(a2), **kappa(p)}
            for (a1, a2), p in sorted(by_pair.items(), key=lambda kv: (kv[0][0] or 0, kv[0][1] or 0))
        ],
    }
