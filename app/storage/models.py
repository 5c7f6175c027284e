"""SQLAlchemy models of the whole campaign domain."""

from __future__ import annotations

import enum
import hashlib
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    DateTime,
    Double,
    Enum,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    """Declarative base with stable constraint names for migrations."""

    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map = {dict[str, Any]: JSONB, dict[str, Any] | None: JSONB}


def _enum(cls: type[enum.Enum], name: str) -> Enum:
    """A PostgreSQL enum type storing the members' values."""
    return Enum(cls, name=name, values_callable=lambda e: [m.value for m in e])


class TaskKind(enum.StrEnum):
    """What a campaign's runs rank: shots (AVS) or moments (VMR)."""

    shots = "shots"
    moments = "moments"


class CampaignStatus(enum.StrEnum):
    """Campaign lifecycle, in order."""

    draft = "draft"
    open = "open"
    closed = "closed"
    pooled = "pooled"
    judging = "judging"
    evaluated = "evaluated"
    published = "published"


class Role(enum.StrEnum):
    """Who a token speaks for."""

    organiser = "organiser"
    team = "team"
    assessor = "assessor"


class TeamResults(enum.StrEnum):
    """What a team sees of the scores before publication (SPEC section 7)."""

    hidden = "hidden"
    own = "own"


class Verdict(enum.StrEnum):
    """An assessor's answer about one pooled item."""

    relevant = "relevant"
    not_relevant = "not_relevant"
    unsure = "unsure"


class Series(Base):
    """A campaign series (TRECVID's Progress task): campaigns of several years sharing progress topics."""

    __tablename__ = "series"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    description: Mapped[str] = mapped_column(Text, default="", server_default=text("''"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class SeriesTopicSet(Base):
    """A named set of a series' progress topics; sealed (no judgement of it reaches a team or the public) until
    `released_at`."""

    __tablename__ = "series_topic_sets"

    id: Mapped[int] = mapped_column(primary_key=True)
    series_id: Mapped[int] = mapped_column(ForeignKey("series.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(64))
    released_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())

    __table_args__ = (UniqueConstraint("series_id", "name"),)


class Campaign(Base):
    """One evaluation campaign (a task of one year, say)."""

    __tablename__ = "campaigns"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    description: Mapped[str] = mapped_column(Text, default="")
    task_kind: Mapped[TaskKind] = mapped_column(_enum(TaskKind, "task_kind"))
    status: Mapped[CampaignStatus] = mapped_column(
        _enum(CampaignStatus, "campaign_status"), default=CampaignStatus.draft
    )
    max_results: Mapped[int] = mapped_column(Integer, default=1000)
    max_runs_per_team: Mapped[int] = mapped_column(Integer, default=10)
    submission_opens_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    submission_closes_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    media_url_template: Mapped[str | None] = mapped_column(Text)
    team_results: Mapped[TeamResults] = mapped_column(
        _enum(TeamResults, "team_results"), default=TeamResults.own, server_default=TeamResults.own.value
    )
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    max_grade: Mapped[int] = mapped_column(Integer, default=1, server_default=text("1"))  # grades 0..max_grade
    anonymise_teams: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))
    audio_on: Mapped[bool] = mapped_column(Boolean, default=True, server_default=text("true"))  # pages start with sound
    # an assessor's second opinions and put-off shots come back after every this many first-round verdicts of the
    # topic (0: when the topic's first round is done)
    interleave_every: Mapped[int] = mapped_column(Integer, default=10, server_default=text("10"))
    # the campaign series it belongs to, sharing progress topics with the series' other campaigns (migration 0014)
    series_id: Mapped[int | None] = mapped_column(ForeignKey("series.id", ondelete="SET NULL"), index=True)
    # drawn anew from the sequence collection_versions by a trigger whenever a statement changes the campaign's
    # collection_items (migration 0017): the key of the collection's ids cached in a process (services/collection.py)
    collection_version: Mapped[int] = mapped_column(BigInteger, server_default=text("nextval('collection_versions')"))

    __table_args__ = (
        CheckConstraint("max_results > 0", name="max_results_positive"),
        CheckConstraint("max_runs_per_team > 0", name="max_runs_positive"),
        CheckConstraint("max_grade BETWEEN 1 AND 10", name="max_grade_range"),
        CheckConstraint("interleave_every BETWEEN 0 AND 1000", name="interleave_every_range"),
    )


class CollectionItem(Base):
    """One shot of the master shot reference."""

    __tablename__ = "collection_items"

    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id", ondelete="CASCADE"), primary_key=True)
    shot_id: Mapped[str] = mapped_column(Text, primary_key=True)
    video_id: Mapped[str] = mapped_column(Text)
    start: Mapped[float] = mapped_column(Double)
    end: Mapped[float] = mapped_column(Double)

    __table_args__ = (
        Index("ix_collection_items_video", "campaign_id", "video_id", "start"),
        CheckConstraint('start >= 0 AND "end" >= start', name="valid_interval"),
    )


class Topic(Base):
    """A search topic; `number` is its id in files (e.g. 1661)."""

    __tablename__ = "topics"

    id: Mapped[int] = mapped_column(primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id", ondelete="CASCADE"), index=True)
    number: Mapped[str] = mapped_column(String(64))
    title: Mapped[str] = mapped_column(Text)
    description: Mapped[str] = mapped_column(Text, default="")
    guidelines: Mapped[str] = mapped_column(Text, default="", server_default=text("''"))  # shown beside the video
    examples: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONB(none_as_null=True))  # [{"url", "caption"}]
    progress_set: Mapped[str | None] = mapped_column(String(64))  # a series' progress set (NULL: a main topic)

    __table_args__ = (UniqueConstraint("campaign_id", "number"),)


class Team(Base):
    """A participating team."""

    __tablename__ = "teams"

    id: Mapped[int] = mapped_column(primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())

    __table_args__ = (UniqueConstraint("campaign_id", "name"),)


class AssessorKind(enum.StrEnum):
    """Who an assessor is: a person (the judging page) or a model (the batch judging API)."""

    human = "human"
    model = "model"


class Assessor(Base):
    """A person, or a model, that judges pooled items."""

    __tablename__ = "assessors"

    id: Mapped[int] = mapped_column(primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(16), default="human", server_default=text("'human'"))
    # a model's name, version, configuration hash and parameters, as registered (NULL for people)
    provenance: Mapped[dict[str, Any] | None] = mapped_column(JSONB(none_as_null=True))

    __table_args__ = (
        UniqueConstraint("campaign_id", "name"),
        CheckConstraint("kind IN ('human', 'model')", name="kind_known"),
    )


class ApiToken(Base):
    """A bearer token; only its SHA-256 is stored."""

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    role: Mapped[Role] = mapped_column(_enum(Role, "role"))
    label: Mapped[str] = mapped_column(String(200), default="")
    campaign_id: Mapped[int | None] = mapped_column(ForeignKey("campaigns.id", ondelete="CASCADE"))
    team_id: Mapped[int | None] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"))
    assessor_id: Mapped[int | None] = mapped_column(ForeignKey("assessors.id", ondelete="CASCADE"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    __table_args__ = (
        CheckConstraint(
            "(role <> 'team' OR team_id IS NOT NULL) AND (role <> 'assessor' OR assessor_id IS NOT NULL)",
            name="principal_present",
        ),
        Index("ix_api_tokens_campaign_id", "campaign_id"),
    )


class JudgeLink(Base):
    """A short-lived, one-time judging link: the judging page trades it for an assessor session token (by POST).

    Only its SHA-256 is stored; the long-lived assessor token never travels in a URL.
    """

    __tablename__ = "judge_links"

    id: Mapped[int] = mapped_column(primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    assessor_id: Mapped[int] = mapped_column(ForeignKey("assessors.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    session_token_id: Mapped[int | None] = mapped_column(ForeignKey("api_tokens.id", ondelete="SET NULL"))


class AuditEvent(Base):
    """One state change, written by a database trigger: who (`actor`), when, what (table, row, action), before, after.

    No foreign keys: the trail outlives the rows it describes.
    """

    __tablename__ = "audit_events"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    campaign_id: Mapped[int | None] = mapped_column(Integer)
    table_name: Mapped[str] = mapped_column(String(64))
    row_id: Mapped[str | None] = mapped_column(Text)
    action: Mapped[str] = mapped_column(String(8))  # insert | update | delete
    actor: Mapped[dict[str, Any]] = mapped_column(default=dict)
    before: Mapped[dict[str, Any] | None] = mapped_column()
    after: Mapped[dict[str, Any] | None] = mapped_column()

    __table_args__ = (Index("ix_audit_events_campaign", "campaign_id", "id"),)


def _content_key(context: Any) -> str | None:
    """A new run's storage_key when its writer set only `content` (the file kept in PostgreSQL): its SHA-256."""
    content = context.get_current_parameters().get("content")
    return hashlib.sha256(content).hexdigest() if content is not None else None


class Run(Base):
    """A submitted run with its metadata; `content` (the validated upload) is its only record of rows."""

    __tablename__ = "runs"

    id: Mapped[int] = mapped_column(primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id", ondelete="CASCADE"), index=True)
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    tag: Mapped[str | None] = mapped_column(String(200))
    format: Mapped[str] = mapped_column(String(16))
    system_type: Mapped[str] = mapped_column(String(1))
    novelty: Mapped[bool] = mapped_column(Boolean, default=False)
    training_type: Mapped[str] = mapped_column(String(1))
    priority: Mapped[int] = mapped_column(Integer, default=1)
    description: Mapped[str] = mapped_column(Text, default="")
    n_entries: Mapped[int] = mapped_column(Integer, default=0)
    n_topics: Mapped[int] = mapped_column(Integer, default=0)
    # an XML run's elapsedTime per topic ({topic number: seconds}); NULL for runs that state none (migration 0006)
    elapsed_seconds: Mapped[dict[str, Any] | None] = mapped_column(JSONB(none_as_null=True))
    sha256: Mapped[str] = mapped_column(String(64))
    baseline: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))  # marked on boards
    # the validated upload, zlib-compressed: here while `storage` is 'postgres', else in the store it names
    # ('dir:/path' or 's3://bucket/prefix', app/storage/run_store.py) under `storage_key`, its SHA-256 (migration 0015)
    content: Mapped[bytes | None] = mapped_column(LargeBinary, deferred=True)
    storage: Mapped[str] = mapped_column(Text, default="postgres", server_default="postgres")
    storage_key: Mapped[str] = mapped_column(String(64), index=True, default=_content_key)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())

    team: Mapped[Team] = relationship(lazy="joined")

    __table_args__ = (
        UniqueConstraint("team_id", "name"),
        CheckConstraint("system_type IN ('F', 'M', 'R')", name="system_type"),
        CheckConstraint("training_type IN ('A', 'D', 'E', 'F')", name="training_type"),
        CheckConstraint("priority >= 1", name="priority_positive"),
        CheckConstraint(
            "elapsed_seconds IS NULL OR jsonb_typeof(elapsed_seconds) = 'object'", name="elapsed_seconds_object"
        ),
        CheckConstraint("(storage = 'postgres') = (content IS NOT NULL)", name="content_in_postgres"),
    )


class GroundTruthSegment(Base):
    """A relevant moment of a topic (uploaded or marked by an assessor)."""

    __tablename__ = "ground_truth_segments"

    id: Mapped[int] = mapped_column(primary_key=True)
    topic_id: Mapped[int] = mapped_column(ForeignKey("topics.id", ondelete="CASCADE"), index=True)
    video_id: Mapped[str] = mapped_column(Text)
    start: Mapped[float] = mapped_column(Double)
    end: Mapped[float] = mapped_column(Double)
    assessor_id: Mapped[int | None] = mapped_column(ForeignKey("assessors.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())

    __table_args__ = (CheckConstraint('start >= 0 AND "end" > start', name="valid_interval"),)


class Pool(Base):
    """A reproducible pool: its parameters and seed are stored with it."""

    __tablename__ = "pools"

    id: Mapped[int] = mapped_column(primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(16))  # depth | stratified
    params: Mapped[dict[str, Any]] = mapped_column(default=dict)
    seed: Mapped[int] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    # a series pool: one progress set over the runs of several campaigns of the series (NULL: the campaign's own)
    series_set_id: Mapped[int | None] = mapped_column(ForeignKey("series_topic_sets.id", ondelete="SET NULL"))


class PoolRun(Base):
    """Which runs a pool was built from."""

    __tablename__ = "pool_runs"

    pool_id: Mapped[int] = mapped_column(ForeignKey("pools.id", ondelete="CASCADE"), primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)


class PoolItem(Base):
    """One pooled shot of a topic, with its stratum and place in the judging order."""

    __tablename__ = "pool_items"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    pool_id: Mapped[int] = mapped_column(ForeignKey("pools.id", ondelete="CASCADE"))
    topic_id: Mapped[int] = mapped_column(ForeignKey("topics.id", ondelete="CASCADE"))
    docno: Mapped[str] = mapped_column(Text)
    stratum: Mapped[int] = mapped_column(Integer, default=1)
    sampled: Mapped[bool] = mapped_column(Boolean, default=True)
    best_rank: Mapped[int] = mapped_column(Integer)
    n_runs: Mapped[int] = mapped_column(Integer)
    judging_order: Mapped[int] = mapped_column(Integer)  # -1 when not sampled
    # a model-assisted pool: the item's inclusion probability in the human verification sample and whether it was
    # drawn (set with the item's first model verdict); NULL in other pools
    verification_probability: Mapped[float | None] = mapped_column(Double)
    verification_sampled: Mapped[bool | None] = mapped_column(Boolean)

    __table_args__ = (
        UniqueConstraint("pool_id", "topic_id", "docno"),
        Index("ix_pool_items_queue", "pool_id", "topic_id", "judging_order"),
    )


class Assignment(Base):
    """An assessor owns (or shares) the judging of a topic."""

    __tablename__ = "assignments"

    pool_id: Mapped[int] = mapped_column(ForeignKey("pools.id", ondelete="CASCADE"), primary_key=True)
    topic_id: Mapped[int] = mapped_column(ForeignKey("topics.id", ondelete="CASCADE"), primary_key=True)
    assessor_id: Mapped[int] = mapped_column(ForeignKey("assessors.id", ondelete="CASCADE"), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class JudgingTask(Base):
    """One judgement to be made: round 1 for every sampled item, round 2 for items quality control flags.

    A task is leased to one assessor at a time; an expired lease returns it to the queue.
    """

    __tablename__ = "judging_tasks"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    pool_item_id: Mapped[int] = mapped_column(ForeignKey("pool_items.id", ondelete="CASCADE"))
    round: Mapped[int] = mapped_column(Integer, default=1)
    reason: Mapped[str] = mapped_column(String(200), default="pooled")
    excluded_assessor_id: Mapped[int | None] = mapped_column(ForeignKey("assessors.id", ondelete="SET NULL"))
    leased_to: Mapped[int | None] = mapped_column(ForeignKey("assessors.id", ondelete="SET NULL"))
    leased_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    lease_expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    done_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    __table_args__ = (
        UniqueConstraint("pool_item_id", "round"),
        Index("ix_judging_tasks_open", "pool_item_id", "round", postgresql_where=text("done_at IS NULL")),
        Index("ix_judging_tasks_leased", "leased_to", postgresql_where=text("done_at IS NULL")),
    )


class Judgement(Base):
    """An assessor's current verdict on a pool item in one round (1 = first, 2 = QC re-judgement, 3 = adjudication)."""

    __tablename__ = "judgements"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    pool_item_id: Mapped[int] = mapped_column(ForeignKey("pool_items.id", ondelete="CASCADE"))
    assessor_id: Mapped[int | None] = mapped_column(ForeignKey("assessors.id", ondelete="SET NULL"))
    round: Mapped[int] = mapped_column(Integer, default=1)
    verdict: Mapped[Verdict] = mapped_column(_enum(Verdict, "verdict"))
    grade: Mapped[int | None] = mapped_column(Integer)
    seconds_spent: Mapped[float | None] = mapped_column(Double)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    # a top-up pool's verdict copied from an earlier series pool: where it was originally given (services/series.py)
    reused_from: Mapped[dict[str, Any] | None] = mapped_column(JSONB(none_as_null=True))

    __table_args__ = (UniqueConstraint("pool_item_id", "round"),)


class ModelVerdict(Base):
    """A model assessor's verdict on a pool item: its grade and the judge's probability that the item is relevant."""

    __tablename__ = "model_verdicts"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    pool_item_id: Mapped[int] = mapped_column(ForeignKey("pool_items.id", ondelete="CASCADE"))
    assessor_id: Mapped[int] = mapped_column(ForeignKey("assessors.id", ondelete="CASCADE"), index=True)
    grade: Mapped[int] = mapped_column(Integer)
    probability: Mapped[float | None] = mapped_column(Double)  # P(relevant), in [0, 1]
    config_hash: Mapped[str | None] = mapped_column(String(64))  # the configuration the client reported
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())

    __table_args__ = (
        UniqueConstraint("pool_item_id", "assessor_id"),
        CheckConstraint("grade >= 0", name="grade_not_negative"),
        CheckConstraint("probability IS NULL OR (probability >= 0 AND probability <= 1)", name="probability_range"),
    )


class ModelLease(Base):
    """A pool item handed to a model assessor and not answered yet (free again when it expires)."""

    __tablename__ = "model_leases"

    pool_item_id: Mapped[int] = mapped_column(ForeignKey("pool_items.id", ondelete="CASCADE"), primary_key=True)
    assessor_id: Mapped[int] = mapped_column(
        ForeignKey("assessors.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class JudgementChange(Base):
    """History of every judgement change: who, when, old, new."""

    __tablename__ = "judgement_changes"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    judgement_id: Mapped[int] = mapped_column(ForeignKey("judgements.id", ondelete="CASCADE"), index=True)
    changed_by: Mapped[int | None] = mapped_column(ForeignKey("assessors.id", ondelete="SET NULL"))
    # the token that made the change: an organiser's for adjudications (their `changed_by` is no assessor)
    changed_by_token_id: Mapped[int | None] = mapped_column(ForeignKey("api_tokens.id", ondelete="SET NULL"))
    old_verdict: Mapped[Verdict | None] = mapped_column(_enum(Verdict, "verdict"))
    new_verdict: Mapped[Verdict] = mapped_column(_enum(Verdict, "verdict"))
    changed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class QrelsVersion(Base):
    """An immutable set of judgements (cut from the pool or imported) that scores refer to."""

    __tablename__ = "qrels_versions"

    id: Mapped[int] = mapped_column(primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id", ondelete="CASCADE"), index=True)
    label: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(16))  # trec | sample_eval
    source: Mapped[str] = mapped_column(String(16))  # cut | imported
    pool_id: Mapped[int | None] = mapped_column(ForeignKey("pools.id", ondelete="SET NULL"))
    n_entries: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    judging_order: Mapped[str | None] = mapped_column(String(32))  # the cutting pool's order; NULL if imported
    unjudged_sampled: Mapped[int | None] = mapped_column(Integer)  # sampled items without a judgement at the cut
    combine: Mapped[str | None] = mapped_column(String(16))  # a moment cut: how assessors' marks were combined
    # the campaign's topics without any judgement in the version (numbers); NULL when not known (migration 0009)
    unjudged_topics: Mapped[list[str] | None] = mapped_column(JSONB(none_as_null=True))
    judges: Mapped[str] = mapped_column(String(16), default="human", server_default=text("'human'"))
    # human | model | combined; for model and combined versions the model assessors and the human share
    provenance: Mapped[dict[str, Any] | None] = mapped_column(JSONB(none_as_null=True))

    __table_args__ = (
        UniqueConstraint("campaign_id", "label"),
        CheckConstraint("judges IN ('human', 'model', 'combined')", name="judges_known"),
    )


class QrelsEntry(Base):
    """One line of a qrels version; grade -1 = pooled but not sampled."""

    __tablename__ = "qrels_entries"

    qrels_version_id: Mapped[int] = mapped_column(ForeignKey("qrels_versions.id", ondelete="CASCADE"), primary_key=True)
    topic_id: Mapped[int] = mapped_column(ForeignKey("topics.id", ondelete="CASCADE"), primary_key=True)
    docno: Mapped[str] = mapped_column(Text, primary_key=True)
    stratum: Mapped[int | None] = mapped_column(Integer)
    grade: Mapped[int] = mapped_column(Integer)
    # a combined version's inputs of its prediction-powered estimates (NULL in other versions)
    model_grade: Mapped[int | None] = mapped_column(Integer)
    model_probability: Mapped[float | None] = mapped_column(Double)
    human_grade: Mapped[int | None] = mapped_column(Integer)
    verification_probability: Mapped[float | None] = mapped_column(Double)


class JobState:
    """The bookkeeping a durable job row carries (evaluations, analyses): tries, cancel, its queue job, liveness."""

    attempts: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))
    queue_job_id: Mapped[int | None] = mapped_column(BigInteger)  # the procrastinate job that runs it
    worker: Mapped[str | None] = mapped_column(String(200))  # host:pid of the worker running (or last running) it
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class Evaluation(JobState, Base):
    """A bulk evaluation job of a campaign's runs against one qrels version."""

    __tablename__ = "evaluations"

    id: Mapped[int] = mapped_column(primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id", ondelete="CASCADE"), index=True)
    qrels_version_id: Mapped[int | None] = mapped_column(ForeignKey("qrels_versions.id", ondelete="CASCADE"))
    status: Mapped[str] = mapped_column(String(16), default="queued")  # queued|running|done|failed|cancelled
    progress: Mapped[float] = mapped_column(Double, default=0.0)
    measures: Mapped[dict[str, Any]] = mapped_column(default=dict)
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class ScoreArray(Base):
    """A run's values of one measure in an evaluation, one per topic of the evaluation's order (`ScoreTopics`):
    per_topic[i] is the value of topics[i], NULL where the run has none (a shorter array: NULL beyond its end)."""

    __tablename__ = "score_arrays"

    evaluation_id: Mapped[int] = mapped_column(ForeignKey("evaluations.id", ondelete="CASCADE"), primary_key=True)
    measure: Mapped[str] = mapped_column(String(64), primary_key=True)  # (evaluation, measure): one board's range
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True, index=True)
    per_topic: Mapped[list[float | None]] = mapped_column(ARRAY(Double))


class ScoreTopics(Base):
    """An evaluation's topic order, which its score arrays index ('all' is the run's mean); only ever appended to."""

    __tablename__ = "score_topics"

    evaluation_id: Mapped[int] = mapped_column(ForeignKey("evaluations.id", ondelete="CASCADE"), primary_key=True)
    topics: Mapped[list[str]] = mapped_column(ARRAY(String(64)))


class EvaluationBlockParts(Base):
    """What one finished block of a fanned-out sampled, incomplete or combined evaluation keeps for the block that
    reduces it (`services.held_blocks.HeldBlock` as bytes: a few numbers per run and topic); deleted by the reduce."""

    __tablename__ = "evaluation_block_parts"

    evaluation_id: Mapped[int] = mapped_column(ForeignKey("evaluations.id", ondelete="CASCADE"), primary_key=True)
    block: Mapped[int] = mapped_column(Integer, primary_key=True)
    data: Mapped[bytes] = mapped_column(LargeBinary)


VIEWS = MetaData()  # views the migrations make: neither created from the models nor compared with the tables


class Score(Base):
    """One number: run x topic (or 'all') x measure, for an evaluation: a row of the view `scores`, which unnests
    the score arrays (read only; services.score_store writes them)."""

    __table__ = Table(
        "scores",
        VIEWS,
        Column("evaluation_id", Integer, ForeignKey(Evaluation.__table__.c.id), primary_key=True),
        Column("run_id", Integer, ForeignKey(Run.__table__.c.id), primary_key=True),
        Column("measure", String(64), primary_key=True),
        Column("topic", String(64), primary_key=True),
        Column("value", Double),
    )
    evaluation_id: Mapped[int]
    run_id: Mapped[int]
    measure: Mapped[str]
    topic: Mapped[str]
    value: Mapped[float]


class RunMean(Base):
    """A run's mean of one measure in an evaluation (the scores' 'all' row), written with them for leaderboards."""

    __tablename__ = "run_means"

    evaluation_id: Mapped[int] = mapped_column(ForeignKey("evaluations.id", ondelete="CASCADE"), primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True, index=True)
    measure: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[float] = mapped_column(Double)
    # the run's confidence interval of the measure and the standard error judgement sampling adds (services.
    # score_intervals); NULL for rows written before migration 0011 and for counts
    ci_low: Mapped[float | None] = mapped_column(Double)
    ci_high: Mapped[float | None] = mapped_column(Double)
    sampling_se: Mapped[float | None] = mapped_column(Double)
    estimator: Mapped[str | None] = mapped_column(String(32))  # NULL: the plain mean; prediction_powered


class LeaderboardSnapshot(Base):
    """A frozen, published leaderboard: public without a token once made."""

    __tablename__ = "leaderboard_snapshots"

    id: Mapped[int] = mapped_column(primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id", ondelete="CASCADE"), index=True)
    evaluation_id: Mapped[int] = mapped_column(ForeignKey("evaluations.id", ondelete="CASCADE"))
    content: Mapped[dict[str, Any]] = mapped_column(default=dict)
    published_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class AnalysisJob(JobState, Base):
    """A background analysis (pool depth, leave-one-out, stability...) and its result."""

    __tablename__ = "analysis_jobs"

    id: Mapped[int] = mapped_column(primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(40))
    params: Mapped[dict[str, Any]] = mapped_column(default=dict)
    status: Mapped[str] = mapped_column(String(16), default="queued")
    progress: Mapped[float] = mapped_column(Double, default=0.0)
    result: Mapped[dict[str, Any] | None] = mapped_column()
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class MomentPoolItem(Base):
    """One proposed segment of a moment pool (runs' moments of one video merged by IoU), in the topic's judging
    order; `best_rank` and `n_runs` are for organisers only."""

    __tablename__ = "moment_pool_items"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    pool_id: Mapped[int] = mapped_column(ForeignKey("pools.id", ondelete="CASCADE"))
    topic_id: Mapped[int] = mapped_column(ForeignKey("topics.id", ondelete="CASCADE"))
    video_id: Mapped[str] = mapped_column(Text)
    start: Mapped[float] = mapped_column(Double)
    end: Mapped[float] = mapped_column(Double)
    best_rank: Mapped[int] = mapped_column(Integer)
    n_runs: Mapped[int] = mapped_column(Integer)
    judging_order: Mapped[int] = mapped_column(Integer)

    __table_args__ = (
        UniqueConstraint("pool_id", "topic_id", "judging_order"),
        CheckConstraint('start >= 0 AND "end" >= start', name="valid_interval"),
    )


class MomentJudgement(Base):
    """An assessor's marks on one proposed segment: the relevant moments of its video they marked
    (`segments`, [[start, end], ...]; empty = none relevant). One per item and assessor; changes are audited."""

    __tablename__ = "moment_judgements"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("moment_pool_items.id", ondelete="CASCADE"))
    assessor_id: Mapped[int] = mapped_column(ForeignKey("assessors.id", ondelete="CASCADE"), index=True)
    segments: Mapped[list[Any]] = mapped_column(JSONB, default=list)
    seconds_spent: Mapped[float | None] = mapped_column(Double)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())

    __table_args__ = (
        UniqueConstraint("item_id", "assessor_id"),
        CheckConstraint("jsonb_typeof(segments) = 'array'", name="segments_array"),
    )


class MomentTruthSegment(Base):
    """One relevant segment of a moment ground-truth version (a `qrels_versions` row of kind `moments`)."""

    __tablename__ = "moment_truth_segments"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    qrels_version_id: Mapped[int] = mapped_column(ForeignKey("qrels_versions.id", ondelete="CASCADE"), index=True)
    topic_id: Mapped[int] = mapped_column(ForeignKey("topics.id", ondelete="CASCADE"))
    video_id: Mapped[str] = mapped_column(Text)
    start: Mapped[float] = mapped_column(Double)
    end: Mapped[float] = mapped_column(Double)

    __table_args__ = (CheckConstraint('start >= 0 AND "end" > start', name="valid_interval"),)
