"""The assessor's side: next item, verdicts, going back, progress. Payloads never carry run data."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import BaseModel, Field

from app.api.security import SessionDep, role
from app.services import judging
from app.services.auth import Principal
from app.services.inputs import Id
from app.storage.models import Role, Verdict

router = APIRouter(prefix="/api/judging", tags=["judging"])
Assessor = Annotated[Principal, role(Role.assessor)]


class ItemOut(BaseModel):
    """A shot to judge for a topic: nothing about runs, ranks, counts or others' verdicts."""

    task_id: int
    topic: str
    topic_title: str
    shot_id: str
    video_id: str | None
    start: float | None
    end: float | None
    media_url: str | None
    verdict: Verdict | None = Field(default=None, description="Your own verdict, when you go back to an item")


class VerdictIn(BaseModel):
    """A verdict and, optionally, the seconds it took (measured from the lease otherwise)."""

    verdict: Verdict
    seconds_spent: float | None = Field(default=None, ge=0, le=10**6, allow_inf_nan=False)


@router.post("/next", response_model=ItemOut, responses={204: {"description": "Nothing left to judge"}})
def next_item(request: Request, session: SessionDep, principal: Assessor) -> ItemOut | Response:
    """Lease the next item of your queue (your current lease first)."""
    view = judging.next_task(session, principal, lease_seconds=request.app.state.settings.judging_lease_seconds)
    session.commit()
    if view is None:
        return Response(status_code=204)
    return ItemOut(**view.__dict__)


@router.post("/items/{task_id}", response_model=ItemOut)
def submit(task_id: Id, body: VerdictIn, session: SessionDep, principal: Assessor) -> ItemOut:
    """Judge a leased item, or change your own earlier verdict on it (every change is kept)."""
    view = judging.judge(session, principal, task_id, body.verdict, seconds_spent=body.seconds_spent)
    session.commit()
    return ItemOut(**view.__dict__)


@router.get("/items/{task_id}", response_model=ItemOut)
def own_item(task_id: Id, session: SessionDep, principal: Assessor) -> ItemOut:
    """An item you judged, with your verdict."""
    return ItemOut(**judging.own_task(session, principal, task_id).__dict__)


@router.get("/history", response_model=list[int])
def history(session: SessionDep, principal: Assessor) -> list[int]:
    """Items you judged, newest first (for going back)."""
    return judging.own_history(session, principal)


@router.get("/progress")
def progress(session: SessionDep, principal: Assessor) -> dict[str, int]:
    """How far you are through your topics."""
    return judging.own_progress(session, principal)
