"""Who is changing the database: the actor the audit trigger (migration 0004) records with every state change.

The trail itself is written by a trigger on each audited table, so every path (ORM, bulk SQL, job workers) is
covered. The application only names the actor: `set_actor` keeps it in `session.info["actor"]` and puts it in the
transaction-local setting `trecpool.actor`, now and at the start of each later transaction of the session. Changes
made with no actor set are recorded as {"kind": "system"}.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import ColumnElement, Connection, Text, cast, event, func, text
from sqlalchemy.orm import Session, SessionTransaction

ACTOR_KEY = "actor"
SET_ACTOR = text("SELECT set_config('trecpool.actor', :actor, true)")

# the tables the audit triggers watch: 0004's, 0007's moment marks and 0009's runs, topics, collection and ground
# truth (the last three summarised per statement), 0014's series and their topic sets; a later revision that adds one
# adds it here too
AUDITED_TABLES = (
    "campaigns",
    "teams",
    "assessors",
    "api_tokens",
    "judge_links",
    "pools",
    "assignments",
    "judgements",
    "qrels_versions",
    "evaluations",
    "analysis_jobs",
    "leaderboard_snapshots",
    "moment_judgements",
    "model_verdicts",
    "runs",
    "topics",
    "collection_items",
    "ground_truth_segments",
    "moment_truth_segments",
    "series",
    "series_topic_sets",
)


def actor_of(kind: str, **fields: Any) -> dict[str, Any]:
    """An actor record: its kind ("token", "cli", "system", "worker") and what identifies it."""
    return {"kind": kind, **{k: v for k, v in fields.items() if v is not None}}


def set_actor(session: Session, actor: dict[str, Any]) -> None:
    """Record `actor` as the author of every change this session makes from now on."""
    remember_actor(session, actor)
    if session.in_transaction():
        session.execute(SET_ACTOR, {"actor": json.dumps(actor)})


def remember_actor(session: Session, actor: dict[str, Any]) -> None:
    """Name `actor` for the session's later transactions (the current one names it with `actor_setting`)."""
    session.info[ACTOR_KEY] = actor


def actor_setting(actor: ColumnElement[Any]) -> ColumnElement[str]:
    """A SQL expression naming the JSON `actor` the actor of the current transaction, to select in a query."""
    return func.set_config("trecpool.actor", cast(actor, Text), True)


@event.listens_for(Session, "after_begin")
def _name_actor(session: Session, transaction: SessionTransaction, connection: Connection) -> None:
    """Carry the session's actor into each transaction it begins."""
    actor = session.info.get(ACTOR_KEY)
    if actor is not None:
        connection.execute(SET_ACTOR, {"actor": json.dumps(actor)})
