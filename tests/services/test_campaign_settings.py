"""update_campaign takes a plain dict (the API validates it first): a value of the wrong kind is refused by field,
before anything is stored, instead of failing in PostgreSQL or in str.format."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.orm import Session

from app.services import campaigns
from app.services.errors import InvalidInput
from app.storage.models import Campaign, TaskKind
from tests.services.conftest import ORGANISER

_names = itertools.count(1)


def new_campaign(session: Session) -> Campaign:
    """A draft campaign to change, committed."""
    spec = campaigns.CampaignSpec(name=f"settings-{next(_names)}", task_kind=TaskKind.shots)
    campaign = campaigns.create_campaign(session, ORGANISER, spec)
    session.commit()
    return campaign


def test_a_window_change_that_is_not_a_time_names_its_field(session: Session) -> None:
    campaign = new_campaign(session)
    with pytest.raises(InvalidInput) as caught:
        campaigns.update_campaign(session, ORGANISER, campaign.id, {"submission_opens_at": "next week"})
    assert caught.value.errors == [{"field": "submission_opens_at", "message": "a date and time, or null"}]
    session.rollback()
    assert campaigns.get_campaign(session, ORGANISER, campaign.id).submission_opens_at is None


def test_a_media_template_that_is_not_text_names_its_field(session: Session) -> None:
    campaign = new_campaign(session)
    with pytest.raises(InvalidInput) as caught:
        campaigns.update_campaign(session, ORGANISER, campaign.id, {"media_url_template": 42})
    assert caught.value.errors == [{"field": "media_url_template", "message": "text"}]


def test_times_and_templates_of_the_right_kind_are_checked_and_stored(session: Session) -> None:
    campaign = new_campaign(session)
    opens = datetime(2026, 3, 1, tzinfo=UTC)
    changed = campaigns.update_campaign(
        session,
        ORGANISER,
        campaign.id,
        {
            "submission_opens_at": opens,
            "submission_closes_at": opens + timedelta(days=7),
            "media_url_template": "https://media.example/{video_id}.mp4",
        },
    )
    assert (changed.submission_opens_at, changed.submission_closes_at) == (opens, opens + timedelta(days=7))
    assert changed.media_url_template == "https://media.example/{video_id}.mp4"
    with pytest.raises(InvalidInput) as caught:  # the window's own rule still holds against the stored opening
        campaigns.update_campaign(session, ORGANISER, campaign.id, {"submission_closes_at": opens})
    assert caught.value.errors == [{"field": "submission_closes_at", "message": "must be after submission_opens_at"}]
