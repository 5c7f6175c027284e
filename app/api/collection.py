"""The collection (master shot reference) of a campaign."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request, UploadFile
from pydantic import BaseModel

from app.api.security import Member, Organiser, SessionDep
from app.api.uploads import read_limited
from app.services import collection as service
from app.services.inputs import Id, Text

router = APIRouter(prefix="/api/campaigns/{campaign_id}/collection", tags=["collection"])


class CollectionOut(BaseModel):
    """Size of a collection and its media URL template."""

    campaign_id: int
    n_shots: int
    n_videos: int
    media_url_template: str | None


@router.put("", response_model=CollectionOut)
def upload_collection(
    campaign_id: Id,
    request: Request,
    file: UploadFile,
    session: SessionDep,
    principal: Organiser,
    media_url_template: Annotated[Text | None, Form(max_length=2000)] = None,
) -> CollectionOut:
    """Replace the master shot reference with a TSV file: `shot_id video_id start end` per line."""
    data = read_limited(request, file)
    summary = service.replace_collection(
        session,
        principal,
        campaign_id,
        data,
        media_url_template=media_url_template,
        max_errors=request.app.state.settings.max_errors,
    )
    session.commit()
    return CollectionOut(**summary.__dict__)


@router.get("", response_model=CollectionOut)
def get_collection(campaign_id: Id, session: SessionDep, principal: Member) -> CollectionOut:
    """How many shots and videos the collection holds."""
    return CollectionOut(**service.collection_summary(session, principal, campaign_id).__dict__)
