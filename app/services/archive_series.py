"""The series part of a campaign archive: the campaign's series (name, description), its progress sets with their
topic numbers and release (a sealed set is marked, its judgements archived: archives are the organiser's), and a
series pool's set; import joins the series of the same name on the server, or makes it (`series.create_series`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.services import series as series_service
from app.services.archive_format import bad
from app.services.auth import Principal
from app.services.errors import Conflict
from app.services.scores import topic_key
from app.storage.models import Campaign, Pool, Role, Run, Series, SeriesTopicSet

OPERATOR = Principal(role=Role.organiser, token_id=0)  # the server's own operator, as the CLI acts


def check_pool(session: Session, campaign: Campaign, pool: Pool) -> None:
    """Conflict for a series pool that pools runs of other campaigns (an archive holds one campaign's runs)."""
    run_ids = [int(r) for r in pool.params.get("run_ids") or []]
    if not run_ids:
        return
    others = sorted(
        set(session.scalars(select(Campaign.name).join(Run, Run.campaign_id == Campaign.id).where(Run.id.in_(run_ids))))
        - {campaign.name}
    )
    if others:
        raise Conflict(
            f"campaign {campaign.name!r}: its pool {pool.id} pools runs of {', '.join(map(repr, others))} too (a "
            "series pool over several years): an archive holds one campaign's runs, so it cannot be archived yet"
        )


def series_record(session: Session, campaign: Campaign) -> dict[str, object] | None:
    """The `series` record of a campaign in a series (None otherwise): every set with its topics and release."""
    if campaign.series_id is None:
        return None
    found = session.get_one(Series, campaign.series_id)
    view = series_service.series_view(session, found)
    return {
        "type": "series",
        "name": view.name,
        "description": view.description,
        "sets": [
            {"name": s.name, "topics": s.topics, "released_at": s.released_at, "sealed": s.sealed} for s in view.sets
        ],
    }


def sealed_sets(record: dict[str, object] | None) -> list[str]:
    """The sealed progress sets of a `series` record, by name."""
    sets: list[dict[str, Any]] = record["sets"] if record else []  # type: ignore[assignment]  # the record's list
    return [s["name"] for s in sets if s["sealed"]]


def set_name(session: Session, pool: Pool) -> str | None:
    """A series pool's progress set, by name (None for a campaign's own pool)."""
    if pool.series_set_id is None:
        return None
    return session.get_one(SeriesTopicSet, pool.series_set_id).name


@dataclass
class Joined:
    """The series an import joined or made: its id, its sets by name, the progress topics it already had."""

    series_id: int
    sets: dict[str, int] = field(default_factory=dict)
    progress: dict[str, str] = field(default_factory=dict)  # topic number -> set name, of the series' campaigns


def import_series(session: Session, line: int, record: dict[str, Any], campaign: Campaign) -> Joined:
    """Join the series of the record's name (its sets kept as the server has them, a set it lacks added as
    archived) or make it with the archived sets and their release; the campaign joins it."""
    name = str(record["name"])
    existing = session.scalar(select(Series).where(Series.name == name))
    if existing is None:
        existing = series_service.create_series(session, OPERATOR, name, str(record.get("description") or ""))
    joined = Joined(existing.id)
    joined.progress = {t.number: t.set for t in series_service.progress_topics(session, existing.id)}
    have = {s.name: s for s in session.scalars(select(SeriesTopicSet).where(SeriesTopicSet.series_id == existing.id))}
    for given in record["sets"]:
        topic_set = have.get(given["name"])
        if topic_set is None:
            released = given.get("released_at")
            topic_set = SeriesTopicSet(
                series_id=existing.id,
                name=str(given["name"]),
                released_at=None if released is None else datetime.fromisoformat(str(released)),
            )
            session.add(topic_set)
            session.flush()
        joined.sets[topic_set.name] = topic_set.id
        moved = [n for n in given["topics"] if joined.progress.get(n, topic_set.name) != topic_set.name]
        if moved:
            raise bad(
                line,
                f"series {name!r} has topics {', '.join(sorted(moved, key=topic_key))} in another progress set than "
                f"the archive's {topic_set.name!r}",
            )
    campaign.series_id = existing.id
    session.flush()
    return joined


def check_topic(joined: Joined | None, line: int, number: str, progress_set: str | None) -> None:
    """A topic's progress set must be one of the series' (InvalidInput naming the line)."""
    if progress_set is None:
        return
    if joined is None:
        raise bad(line, f"topic {number} is in progress set {progress_set!r} but the archive names no series")
    if progress_set not in joined.sets:
        raise bad(line, f"topic {number}: progress set {progress_set!r} is not a set of the archive's series")


def pool_params(joined: Joined | None, campaign_id: int, params: dict[str, Any]) -> dict[str, Any]:
    """A series pool's params with the new series and campaign ids (the pool pools this campaign's runs only)."""
    if not isinstance(params.get("series"), dict) or joined is None:
        return params
    return {**params, "series": {**params["series"], "series_id": joined.series_id, "campaign_ids": [campaign_id]}}
