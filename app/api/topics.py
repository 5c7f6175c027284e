"""Topics of a campaign."""

from __future__ import annotations

from fastapi import APIRouter, Request, UploadFile
from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.api.security import Member, Organiser, SessionDep
from app.api.uploads import read_limited
from app.evaluation.formats.topics_file import TopicDef
from app.services import topics as service
from app.services.inputs import Id, Text

router = APIRouter(prefix="/api/campaigns/{campaign_id}/topics", tags=["topics"])


class ExampleIn(BaseModel):
    """An example image of a topic, shown beside the video while judging."""

    url: Text = Field(max_length=2000, pattern=r"^https?://\S+$", description="An http(s) URL of the image")
    caption: Text = Field(default="", max_length=500)


class TopicIn(BaseModel):
    """A topic to add."""

    number: Text = Field(min_length=1, max_length=64, pattern=r"^\S+$")
    title: Text = Field(min_length=1, max_length=10_000)
    description: Text = Field(default="", max_length=100_000)
    guidelines: Text = Field(default="", max_length=20_000, description="Judging guidelines shown beside the video")
    examples: list[ExampleIn] = Field(
        default=[], max_length=service.MAX_EXAMPLES, description="Example images, shown beside the video"
    )


class TopicOut(BaseModel):
    """A topic as stored."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    number: str
    title: str
    description: str
    guidelines: str
    examples: list[service.TopicExample] = []

    @field_validator("examples", mode="before")
    @classmethod
    def _none_is_empty(cls, value: object) -> object:
        """No examples stored (NULL) is an empty list."""
        return [] if value is None else value


@router.post("", status_code=201, response_model=list[TopicOut])
def add_topics(campaign_id: Id, body: list[TopicIn], session: SessionDep, principal: Organiser) -> list[TopicOut]:
    """Add topics given as JSON."""
    defs = [TopicDef(t.number, t.title, t.description) for t in body]
    guidance = [service.TopicGuidance(t.guidelines, tuple((e.url, e.caption) for e in t.examples)) for t in body]
    rows = service.add_topics(session, principal, campaign_id, defs, guidance)
    session.commit()
    return [TopicOut.model_validate(t) for t in rows]


@router.post("/file", status_code=201, response_model=list[TopicOut])
def add_topics_file(
    campaign_id: Id, request: Request, file: UploadFile, session: SessionDep, principal: Organiser
) -> list[TopicOut]:
    """Add topics from a file: TRECVID `number text` lines, TREC topics XML or TRECVID topics XML."""
    data = read_limited(request, file)
    rows = service.add_topics_file(
        session, principal, campaign_id, data, max_errors=request.app.state.settings.max_errors
    )
    session.commit()
    return [TopicOut.model_validate(t) for t in rows]


@router.get("", response_model=list[TopicOut])
def list_topics(campaign_id: Id, session: SessionDep, principal: Member) -> list[TopicOut]:
    """The campaign's topics."""
    return [TopicOut.model_validate(t) for t in service.list_topics(session, principal, campaign_id)]
