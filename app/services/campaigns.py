"""Campaign use cases: create, read, change settings and move through the lifecycle."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

from sqlalchemy import select, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.services.auth import Principal, require_organiser
from app.services.errors import Conflict, Forbidden, InvalidInput, NotFound
from app.storage.models import Campaign, CampaignStatus, Role, TaskKind, TeamResults

# Which statuses each manual transition may start from. The rest of the lifecycle follows the work: a pool makes a
# closed campaign `pooled` (pools.create_pool), its first topic assignment `judging` (pools.assign_topics), a finished
# evaluation of a pooled or judging campaign `evaluated` (evaluations.run_evaluation: draft, open and closed ones keep
# their status) and publishing a closed or later one `published` (publication.publish).
TRANSITIONS: dict[CampaignStatus, tuple[CampaignStatus, ...]] = {
    CampaignStatus.open: (CampaignStatus.draft, CampaignStatus.closed),
    CampaignStatus.closed: (CampaignStatus.open,),
}


@dataclass(frozen=True)
class CampaignSpec:
    """What an organiser gives to create a campaign."""

    name: str
    task_kind: TaskKind
    description: str = ""
    max_results: int = 1000
    max_runs_per_team: int = 10
    submission_opens_at: datetime | None = None
    submission_closes_at: datetime | None = None
    media_url_template: str | None = None
    team_results: TeamResults = TeamResults.own
    max_grade: int = 1  # the grade scale 0..max_grade (1: binary)


URL_FIELDS = ("shot_id", "video_id", "start", "end")


def check_url_template(template: str) -> None:
    """InvalidInput unless the template is an http(s) URL using only {shot_id}, {video_id}, {start} and {end}."""
    try:
        example = template.format(shot_id="s", video_id="v", start=0.0, end=1.0)
    except (KeyError, IndexError, ValueError) as exc:
        raise InvalidInput(
            "bad media URL template",
            [{"field": "media_url_template", "message": f"may use only {{{'}, {'.join(URL_FIELDS)}}}: {exc}"}],
        ) from None
    parsed = urlsplit(example.strip())
    if parsed.scheme.lower() not in ("http", "https") or not parsed.netloc:
        raise InvalidInput(
            "bad media URL template",
            [{"field": "media_url_template", "message": "must be an http:// or https:// URL with a host"}],
        )


def _check_window(opens: datetime | None, closes: datetime | None) -> None:
    """InvalidInput if the submission window ends before it starts."""
    if opens and closes and closes <= opens:
        raise InvalidInput(
            "submission window is empty",
            [{"field": "submission_closes_at", "message": "must be after submission_opens_at"}],
        )


def create_campaign(session: Session, principal: Principal, spec: CampaignSpec) -> Campaign:
    """Create a draft campaign; only unbound organiser tokens may."""
    if principal.role is not Role.organiser or principal.campaign_id is not None:
        raise Forbidden("only an organiser token not bound to a campaign may create campaigns")
    _check_window(spec.submission_opens_at, spec.submission_closes_at)
    if spec.media_url_template is not None:
        check_url_template(spec.media_url_template)
    if session.scalar(select(Campaign.id).where(Campaign.name == spec.name)) is not None:
        raise Conflict(f"a campaign named {spec.name!r} exists already")
    campaign = Campaign(**spec.__dict__, status=CampaignStatus.draft)
    session.add(campaign)
    try:
        session.flush()
    except IntegrityError:
        raise Conflict(f"a campaign named {spec.name!r} exists already") from None
    return campaign


def get_campaign(session: Session, principal: Principal, campaign_id: int) -> Campaign:
    """The campaign if the caller belongs to it (NotFound otherwise, so ids are not probed)."""
    campaign = session.get(Campaign, campaign_id)
    if campaign is None or not _may_see(principal, campaign):
        raise NotFound(f"campaign {campaign_id} not found")
    return campaign


def get_organised(session: Session, principal: Principal, campaign_id: int) -> Campaign:
    """The campaign, checked that the caller organises it."""
    campaign = get_campaign(session, principal, campaign_id)
    require_organiser(principal, campaign_id)
    return campaign


def _may_see(principal: Principal, campaign: Campaign) -> bool:
    """Organisers see what they organise; teams and assessors see their own campaign."""
    if principal.role is Role.organiser:
        return principal.may_organise(campaign.id)
    return principal.campaign_id == campaign.id


def list_campaigns(session: Session, principal: Principal) -> list[Campaign]:
    """Campaigns the caller may see, oldest first."""
    query = select(Campaign).order_by(Campaign.id)
    if principal.campaign_id is not None:
        query = query.where(Campaign.id == principal.campaign_id)
    return list(session.scalars(query))


def _time_change(changes: dict[str, object], field: str, current: datetime | None) -> datetime | None:
    """The time `field` will hold (its current value unless changed); InvalidInput if a change is not a time."""
    value = changes.get(field, current)
    if value is not None and not isinstance(value, datetime):
        raise InvalidInput("invalid submission window", [{"field": field, "message": "a date and time, or null"}])
    return value


def update_campaign(session: Session, principal: Principal, campaign_id: int, changes: dict[str, object]) -> Campaign:
    """Change settings of a campaign (window, limits, description, media URL template, what teams see)."""
    campaign = get_organised(session, principal, campaign_id)
    allowed = {
        "description",
        "max_results",
        "max_runs_per_team",
        "submission_opens_at",
        "submission_closes_at",
        "media_url_template",
        "team_results",
        "max_grade",
        "audio_on",  # the judging page starts with sound
        "interleave_every",  # second opinions and put-off items every N first-round verdicts (0: at the topic's end)
        "anonymise_teams",  # the published board names teams Team A, B, ...
    }
    unknown = sorted(set(changes) - allowed)
    if unknown:
        raise InvalidInput("unknown fields", [{"field": f, "message": "cannot be changed"} for f in unknown])
    if "max_results" in changes and campaign.status not in (CampaignStatus.draft, CampaignStatus.open):
        raise Forbidden("max_results is fixed once submissions have closed")
    opens = _time_change(changes, "submission_opens_at", campaign.submission_opens_at)
    closes = _time_change(changes, "submission_closes_at", campaign.submission_closes_at)
    _check_window(opens, closes)
    template = changes.get("media_url_template")
    if template is not None:
        if not isinstance(template, str):
            raise InvalidInput("invalid media URL template", [{"field": "media_url_template", "message": "text"}])
        check_url_template(template)
    if "max_grade" in changes:
        _check_max_grade(session, campaign_id, changes["max_grade"])
    for key, value in changes.items():
        setattr(campaign, key, value)
    session.flush()
    return campaign


MAX_GRADE = 10
# The highest grade stored in a campaign: people's judgements and models' verdicts.
_HIGHEST_GRADE = text(
    """
    SELECT greatest(
        (SELECT max(j.grade) FROM judgements j JOIN pool_items i ON i.id = j.pool_item_id
         JOIN pools p ON p.id = i.pool_id WHERE p.campaign_id = :campaign),
        (SELECT max(v.grade) FROM model_verdicts v JOIN pool_items i ON i.id = v.pool_item_id
         JOIN pools p ON p.id = i.pool_id WHERE p.campaign_id = :campaign)
    )
    """
)


def _check_max_grade(session: Session, campaign_id: int, value: object) -> None:
    """InvalidInput unless `value` is a grade scale 1..MAX_GRADE; Conflict if a stored grade lies above it."""
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_GRADE:
        raise InvalidInput("invalid grade scale", [{"field": "max_grade", "message": f"from 1 to {MAX_GRADE}"}])
    highest = session.scalar(_HIGHEST_GRADE, {"campaign": campaign_id})
    if highest is not None and highest > value:
        raise Conflict(f"max_grade {value} is below a stored grade ({highest}): the scale cannot shrink under it")


def set_status(session: Session, principal: Principal, campaign_id: int, target: CampaignStatus) -> Campaign:
    """Open or close submissions, following the lifecycle."""
    campaign = get_organised(session, principal, campaign_id)
    sources = TRANSITIONS.get(target)
    if sources is None or campaign.status not in sources:
        raise Conflict(f"cannot move campaign from {campaign.status.value} to {target.value}")
    campaign.status = target
    session.flush()
    return campaign


def submissions_open(campaign: Campaign, now: datetime) -> bool:
    """Whether runs may be submitted or deleted at `now`."""
    if campaign.status is not CampaignStatus.open:
        return False
    if campaign.submission_opens_at and now < campaign.submission_opens_at:
        return False
    return not (campaign.submission_closes_at and now >= campaign.submission_closes_at)
