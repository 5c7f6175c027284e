"""Sealed progress topics (SPEC section 10): the one rule every path to a team or the public goes through.

A topic of a campaign series' progress set (`topics.progress_set`) is sealed until the organiser releases its set
(`series_topic_sets.released_at`); a set not recorded at all is sealed too. An evaluation whose qrels version (or
moment ground truth) holds a judgement of a sealed topic is sealed: no team and no one without a token sees a number
of it (`visibility`: team boards, reports and charts; `publication`: a publication freezes it for the public), and a
qrels export leaves the sealed topics' lines out (`qrels.export_qrels`). Organisers see everything else as before.
"""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.orm import Session

from app.services.errors import Conflict, Forbidden
from app.storage.models import Evaluation

# A topic (alias t) is sealed while its progress set is not released in its campaign's series.
SEALED_TOPIC = _SEALED = """
    t.progress_set IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM campaigns c JOIN series_topic_sets s ON s.series_id = c.series_id
        WHERE c.id = t.campaign_id AND s.name = t.progress_set AND s.released_at IS NOT NULL)
"""
_SEALED_TOPICS = text(
    f"SELECT t.id, t.number, t.progress_set FROM topics t WHERE t.campaign_id = :campaign AND {_SEALED} ORDER BY t.id"
)
_SEALED_IN_VERSION = text(
    f"""
    SELECT DISTINCT t.progress_set FROM topics t
    WHERE {_SEALED} AND t.campaign_id = (SELECT v.campaign_id FROM qrels_versions v WHERE v.id = :version) AND (
        EXISTS (SELECT 1 FROM qrels_entries e WHERE e.qrels_version_id = :version AND e.topic_id = t.id)
        OR EXISTS (SELECT 1 FROM moment_truth_segments m WHERE m.qrels_version_id = :version AND m.topic_id = t.id))
    ORDER BY 1
    """
)


def sealed_topics(session: Session, campaign_id: int) -> dict[int, tuple[str, str]]:
    """The campaign's sealed topics: topic id -> (number, progress set)."""
    rows = session.execute(_SEALED_TOPICS, {"campaign": campaign_id})
    return {topic_id: (number, name) for topic_id, number, name in rows}


def sealed_sets_of_version(session: Session, qrels_version_id: int | None) -> list[str]:
    """The unreleased progress sets a qrels version (or moment ground-truth version) judges topics of, by name."""
    if qrels_version_id is None:
        return []
    return list(session.scalars(_SEALED_IN_VERSION, {"version": qrels_version_id}))


def sealed_numbers_of_version(session: Session, qrels_version_id: int) -> list[str]:
    """The sealed topics a qrels version judges, by number (what an export leaves out)."""
    query = text(
        f"SELECT t.number FROM topics t WHERE {_SEALED} AND EXISTS "
        "(SELECT 1 FROM qrels_entries e WHERE e.qrels_version_id = :version AND e.topic_id = t.id) ORDER BY 1"
    )
    return list(session.scalars(query, {"version": qrels_version_id}))


def sealed_note(sets: list[str]) -> str:
    """Why numbers of an evaluation judging the given sealed sets are withheld."""
    named = ", ".join(sets)
    return (
        f"the judgements of progress set{'s' if len(sets) > 1 else ''} {named} are sealed until the organisers "
        "release the set"
    )


def require_unsealed(session: Session, evaluation: Evaluation) -> None:
    """Forbidden when the evaluation judges a sealed topic: what a team may be shown passes this."""
    sets = sealed_sets_of_version(session, evaluation.qrels_version_id)
    if sets:
        raise Forbidden(sealed_note(sets))


def refuse_publishing_sealed(session: Session, evaluation: Evaluation) -> None:
    """Conflict when the evaluation judges a sealed topic: a publication is public."""
    sets = sealed_sets_of_version(session, evaluation.qrels_version_id)
    if sets:
        raise Conflict(f"evaluation {evaluation.id} cannot be published: {sealed_note(sets)}")
