"""Evaluation jobs and ground truth."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Request, UploadFile
from pydantic import BaseModel, ConfigDict, Field

from app.api.qrels import JudgingOrderMark
from app.api.security import Organiser, SessionDep
from app.api.uploads import read_limited
from app.services import evaluations, jobs, qrels
from app.services.inputs import Id, Text

router = APIRouter(prefix="/api", tags=["evaluations"])


class EvaluationIn(BaseModel):
    """What to evaluate against: a qrels version (the newest when omitted) and measures (those that fit)."""

    qrels_version_id: Id | None = None
    measures: list[Annotated[Text, Field(max_length=100)]] | None = Field(default=None, max_length=200)


class EvaluationOut(BaseModel):
    """An evaluation job and its state."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    campaign_id: int
    qrels_version_id: int | None
    judging_order: JudgingOrderMark | None = Field(
        default=None, description="How the qrels' judgements were ordered; `biased` marks every score of it"
    )
    status: str
    progress: float
    measures: dict[str, object]
    error: str | None
    created_at: datetime
    finished_at: datetime | None


def _out(session: SessionDep, evaluation: jobs.Evaluation) -> EvaluationOut:
    """An evaluation's output, with the judging-order mark of its qrels."""
    out = EvaluationOut.model_validate(evaluation)
    mark = qrels.order_mark_of(session, evaluation.qrels_version_id)
    return out.model_copy(update={"judging_order": JudgingOrderMark(**mark) if mark else None})


@router.post("/campaigns/{campaign_id}/evaluations", status_code=202, response_model=EvaluationOut)
def start(
    campaign_id: Id,
    body: EvaluationIn,
    request: Request,
    session: SessionDep,
    principal: Organiser,
) -> EvaluationOut:
    """Queue a bulk evaluation of every run; poll GET /api/evaluations/{id} for status and progress."""
    evaluation = evaluations.start_evaluation(
        session, principal, campaign_id, qrels_version_id=body.qrels_version_id, measures=body.measures
    )
    jobs.enqueue(session, evaluation, campaign_concurrency=request.app.state.settings.job_campaign_concurrency)
    session.commit()
    return _out(session, evaluation)


@router.get("/evaluations/{evaluation_id}", response_model=EvaluationOut)
def status(evaluation_id: Id, session: SessionDep, principal: Organiser) -> EvaluationOut:
    """An evaluation's status and progress."""
    return _out(session, evaluations.get_evaluation(session, principal, evaluation_id))


@router.post("/evaluations/{evaluation_id}/cancel", response_model=EvaluationOut)
def cancel(evaluation_id: Id, session: SessionDep, principal: Organiser) -> EvaluationOut:
    """Cancel an evaluation: a queued one at once, a running one at its next progress report (409 once finished)."""
    evaluation = jobs.cancel(session, principal, jobs.Evaluation, evaluation_id)
    session.commit()
    return _out(session, evaluation)


@router.put("/campaigns/{campaign_id}/ground-truth")
def ground_truth(
    campaign_id: Id, request: Request, file: UploadFile, session: SessionDep, principal: Organiser
) -> dict[str, int]:
    """Replace a moment campaign's ground truth: `topic video_id start end` per line (TSV or JSON lines)."""
    data = read_limited(request, file)
    count = evaluations.replace_ground_truth(
        session, principal, campaign_id, data, max_errors=request.app.state.settings.max_errors
    )
    session.commit()
    return {"segments": count}
