"""The assessor's side: next item, verdicts, putting off, going back, progress. Payloads never carry run data."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import BaseModel, Field, model_validator

from app.api.security import SessionDep, role
from app.services import judging
from app.services.auth import Principal
from app.services.inputs import Id
from app.services.judging import TaskView
from app.storage.models import Role, Verdict

router = APIRouter(prefix="/api/judging", tags=["judging"])
Assessor = Annotated[Principal, role(Role.assessor)]


CHANGE = (
    "Change your own earlier verdict on the item (going back to it). Without it, a verdict on an item you judged"
    " already is refused (409, naming your stored verdict): two tabs never overwrite each other silently."
)
GRADE = (
    "The grade on the campaign's scale 0..max_grade: relevant is 1..max_grade (1 when omitted), not_relevant 0,"
    " unsure none. A grade off the scale or contradicting the verdict is a 422 naming `grade`."
)


def _grade_agrees(verdict: Verdict | None, grade: int | None) -> None:
    """ValueError naming `grade` if it contradicts the verdict (the scale's top is checked against the campaign)."""
    if grade is None:
        return
    if verdict is None:
        raise ValueError("grade goes with a verdict")
    if verdict is Verdict.relevant and grade < 1:
        raise ValueError("grade: a relevant verdict's grade is 1 or more")
    if verdict is Verdict.not_relevant and grade != 0:
        raise ValueError("grade: a not_relevant verdict's grade is 0")
    if verdict is Verdict.unsure:
        raise ValueError("grade: an unsure verdict takes no grade")


class VerdictIn(BaseModel):
    """A verdict and, optionally, the seconds it took (measured from the lease otherwise)."""

    verdict: Verdict
    grade: int | None = Field(default=None, ge=0, le=10, description=GRADE)
    seconds_spent: float | None = Field(default=None, ge=0, le=10**6, allow_inf_nan=False)
    change: bool = Field(default=False, description=CHANGE)

    @model_validator(mode="after")
    def _grade(self) -> VerdictIn:
        """The grade agrees with the verdict."""
        _grade_agrees(self.verdict, self.grade)
        return self


class TopicProgressOut(BaseModel):
    """Your counts in one of your topics."""

    topic: str
    total: int = Field(description="Items of the topic's first round")
    left: int = Field(description="Of those, the items nobody has judged yet")
    judged_by_you: int = Field(description="Items of the topic you judged (any round)")


class ProgressOut(BaseModel):
    """How far you are: your own judgements, and your topics' items done and left."""

    done: int = Field(description="First-round items of your topics judged (by anyone sharing them)")
    total: int = Field(description="First-round items of your topics")
    judged_by_you: int = Field(description="Items you judged")
    topics: list[TopicProgressOut]


class StepIn(BaseModel):
    """One key press: a verdict on an item, or putting it off for later, or neither (just the next items)."""

    task_id: Id | None = Field(default=None, description="The item judged or put off")
    verdict: Verdict | None = None
    grade: int | None = Field(default=None, ge=0, le=10, description=GRADE)
    later: bool = Field(default=False, description="Put the item off, without a verdict, to the end of the queue")
    seconds_spent: float | None = Field(default=None, ge=0, le=10**6, allow_inf_nan=False)
    change: bool = Field(default=False, description=CHANGE)
    ahead: int = Field(default=1, ge=0, le=3, description="Items to lease beyond the next one (for preloading)")

    @model_validator(mode="after")
    def _one_action(self) -> StepIn:
        """A verdict or `later` needs a task_id, and not both at once; `change` goes with a verdict."""
        if self.verdict is not None and self.later:
            raise ValueError("give a verdict or later, not both")
        if self.change and self.verdict is None:
            raise ValueError("change goes with a verdict")
        if (self.verdict is not None or self.later) != (self.task_id is not None):
            raise ValueError("task_id goes with a verdict or later, and needs one of them")
        _grade_agrees(self.verdict, self.grade)
        return self


class StepOut(BaseModel):
    """What comes of a key press: the item judged (or put off), your next items (leased, in order), your progress,
    the campaign's grade scale and sound setting."""

    judged: TaskView | None = Field(description="The item judged, with your verdict")
    put_off: int | None = Field(description="The item put off for later")
    next: list[TaskView] = Field(description="Your next items: the one to judge now, then those leased ahead")
    progress: ProgressOut
    max_grade: int = Field(
        description="The campaign's grade scale 0..max_grade (1: binary); a relevant verdict's grade is 1..max_grade"
    )
    audio_on: bool = Field(description="The campaign's setting: the judging page starts with sound (until you choose)")


@router.post("/step", response_model=StepOut)
def step(request: Request, body: StepIn, session: SessionDep, principal: Assessor) -> StepOut:
    """Judge an item (or change your verdict with `change`, or put it off for later) and get your next items and
    progress, in one request. A verdict on an item you judged already, without `change`, is a 409 naming it."""
    done = judging.step(
        session,
        principal,
        lease_seconds=request.app.state.settings.judging_lease_seconds,
        ahead=body.ahead,
        task_id=body.task_id,
        verdict=body.verdict,
        later=body.later,
        seconds_spent=body.seconds_spent,
        change=body.change,
        grade=body.grade,
    )
    session.commit()
    return StepOut(
        judged=done.judged,
        put_off=done.put_off,
        next=done.next,
        progress=ProgressOut(**done.progress),
        max_grade=done.max_grade,
        audio_on=done.audio_on,
    )


class ReleasedOut(BaseModel):
    """The leases given back by a break."""

    released: list[int] = Field(description="The items that were leased to you, unanswered, and are free again")


@router.post("/release", response_model=ReleasedOut)
def release(session: SessionDep, principal: Assessor) -> ReleasedOut:
    """Take a break: your unanswered leases go back to the queue as free items (others may take them); your next
    step leases afresh. Verdicts given are untouched."""
    released = judging.release(session, principal)
    session.commit()
    return ReleasedOut(released=released)


@router.post("/next", response_model=TaskView, responses={204: {"description": "Nothing left to judge"}})
def next_item(request: Request, session: SessionDep, principal: Assessor) -> TaskView | Response:
    """Lease the next item of your queue (your current lease first)."""
    view = judging.next_task(session, principal, lease_seconds=request.app.state.settings.judging_lease_seconds)
    session.commit()
    if view is None:
        return Response(status_code=204)
    return view


@router.post("/items/{task_id}", response_model=TaskView)
def submit(task_id: Id, body: VerdictIn, session: SessionDep, principal: Assessor) -> TaskView:
    """Judge a leased item, or change your own earlier verdict on it with `change` (every change is kept).

    A verdict on an item you judged already, without `change` (another tab, say), is a 409 naming your verdict.
    """
    view = judging.judge(
        session,
        principal,
        task_id,
        body.verdict,
        seconds_spent=body.seconds_spent,
        change=body.change,
        grade=body.grade,
    )
    session.commit()
    return view


@router.get("/items/{task_id}", response_model=TaskView)
def own_item(task_id: Id, session: SessionDep, principal: Assessor) -> TaskView:
    """An item you judged, with your verdict."""
    return judging.own_task(session, principal, task_id)


@router.get("/history", response_model=list[int])
def history(session: SessionDep, principal: Assessor) -> list[int]:
    """Items you judged, newest first (for going back)."""
    return judging.own_history(session, principal)


@router.get("/progress", response_model=ProgressOut)
def progress(session: SessionDep, principal: Assessor) -> ProgressOut:
    """How far you are through your topics, and how many items you judged."""
    return ProgressOut(**judging.own_progress(session, principal))
