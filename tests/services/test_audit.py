"""The audit trigger: every write path is recorded, with the session's actor, only the changed columns, no secrets."""

from __future__ import annotations

from sqlalchemy import delete, select, update

from app.services.auth import create_token
from app.services.tokens import revoke_token
from app.storage.audit import actor_of, set_actor
from app.storage.models import ApiToken, AuditEvent, Campaign, Evaluation, Role, TaskKind

_counter = iter(range(1, 10**6))


def _events(session, table: str, row_id: int) -> list[AuditEvent]:  # type: ignore[no-untyped-def]
    """A row's audit events, oldest first."""
    query = select(AuditEvent).where(AuditEvent.table_name == table, AuditEvent.row_id == str(row_id))
    return list(session.scalars(query.order_by(AuditEvent.id)))


def _campaign(sessions, actor: dict | None) -> int:  # type: ignore[no-untyped-def,type-arg]
    """A new campaign made by `actor` (None: no actor named)."""
    with sessions() as session:
        if actor is not None:
            set_actor(session, actor)
        campaign = Campaign(name=f"audit-{next(_counter)}-{id(session)}", task_kind=TaskKind.shots)
        session.add(campaign)
        session.commit()
        return campaign.id


def test_orm_and_bulk_changes_are_recorded_with_their_actor(sessions):
    campaign_id = _campaign(sessions, actor_of("cli"))
    with sessions() as session:
        set_actor(session, actor_of("token", token_id=7, role="organiser"))
        session.get(Campaign, campaign_id).description = "first"  # type: ignore[union-attr]
        session.commit()
        # a later transaction of the same session keeps its actor; a bulk UPDATE (as the job code uses) is seen too
        session.execute(update(Campaign).where(Campaign.id == campaign_id).values(max_results=5))
        session.commit()
    with sessions() as session:
        insert, first, bulk = _events(session, "campaigns", campaign_id)
    assert (insert.action, insert.actor, insert.before, insert.campaign_id) == (
        "insert",
        {"kind": "cli"},
        None,
        campaign_id,
    )
    assert insert.after is not None and insert.after["max_results"] == 1000 and insert.after["id"] == campaign_id
    assert (first.action, first.before, first.after) == ("update", {"description": ""}, {"description": "first"})
    assert first.actor == {"kind": "token", "token_id": 7, "role": "organiser"}
    assert (bulk.before, bulk.after, bulk.actor["token_id"]) == ({"max_results": 1000}, {"max_results": 5}, 7)
    assert first.at <= bulk.at


def test_no_actor_is_system_and_an_actor_never_leaks_to_the_next_session(sessions):
    named = _campaign(sessions, actor_of("cli"))
    # pooled connections are reused: the actor was transaction-local, so the next session has none
    anonymous = _campaign(sessions, None)
    with sessions() as session:
        assert _events(session, "campaigns", named)[0].actor == {"kind": "cli"}
        assert _events(session, "campaigns", anonymous)[0].actor == {"kind": "system"}


def test_updates_of_left_out_columns_only_write_nothing(sessions):
    campaign_id = _campaign(sessions, None)
    with sessions() as session:
        evaluation = Evaluation(campaign_id=campaign_id, status="running")
        session.add(evaluation)
        session.commit()
        for progress in (0.25, 0.5):  # progress reports: no event
            session.execute(update(Evaluation).where(Evaluation.id == evaluation.id).values(progress=progress))
        session.execute(update(Evaluation).where(Evaluation.id == evaluation.id).values(status="done", progress=1.0))
        session.execute(update(Evaluation).where(Evaluation.id == evaluation.id).values(status="done"))  # no change
        session.commit()
        events = _events(session, "evaluations", evaluation.id)
    assert [e.action for e in events] == ["insert", "update"]
    assert (events[1].before, events[1].after) == ({"status": "running"}, {"status": "done"})
    assert "progress" not in events[0].after  # type: ignore[operator]


def test_tokens_are_recorded_without_their_hash_and_deletes_keep_the_row(sessions):
    campaign_id = _campaign(sessions, None)
    with sessions() as session:
        set_actor(session, actor_of("cli"))
        plain = create_token(session, Role.organiser, campaign_id=campaign_id, label="audited")
        token = session.scalar(select(ApiToken).where(ApiToken.label == "audited", ApiToken.campaign_id == campaign_id))
        assert token is not None
        revoke_token(session, None, token.id)
        session.commit()
        session.execute(delete(ApiToken).where(ApiToken.id == token.id))
        session.commit()
        insert, revoke, gone = _events(session, "api_tokens", token.id)
    assert "token_hash" not in insert.after and insert.after["label"] == "audited"  # type: ignore[operator]
    assert plain not in str(insert.after) and insert.campaign_id == campaign_id
    assert revoke.before == {"revoked_at": None} and revoke.after["revoked_at"] is not None  # type: ignore[index]
    assert gone.action == "delete" and gone.after is None and gone.before["label"] == "audited"  # type: ignore[index]
    assert "token_hash" not in gone.before  # type: ignore[operator]
