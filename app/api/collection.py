"""The collection (master shot reference) of a campaign."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request, UploadFile

from app.api.security import Member, Organiser, SessionDep
from app.api.uploads import read_limited
from app.services import collection as service
from app.services.inputs import Id, Text

router = APIRouter(prefix="/api/campaigns/{campaign_id}/collection", tags=["collection"])


@router.put("", response_model=service.CollectionSummary)
def upload_collection(
    campaign_id: Id,
    request: Request,
    file: UploadFile,
    session: SessionDep,
    principal: Organiser,
    media_url_template: Annotated[Text | None, Form(max_length=2000)] = None,
) -> service.CollectionSummary:
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
    return summary


@router.get("", response_model=service.CollectionSummary)
def get_collection(campaign_id: Id, session: SessionDep, principal: Member) -> service.CollectionSummary:
    """How many shots and videos the collection holds."""
    return service.collection_summary(session, principal, campaign_id)
