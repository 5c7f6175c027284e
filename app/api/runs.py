"""Runs: upload with metadata, list, read, download (converted or as uploaded), explanations and delete."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Form, Query, Request, Response, UploadFile
from pydantic import BaseModel, ConfigDict, Field

from app.api.media import TEXT, TEXT_FILE
from app.api.security import Organiser, SessionDep, Submitter
from app.api.uploads import read_limited
from app.services import run_explanations
from app.services import runs as service
from app.services.inputs import INT32_MAX, Id, Text
from app.services.tables import attachment

router = APIRouter(prefix="/api", tags=["runs"])


class RunOut(BaseModel):
    """A run's metadata as the API shows it."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    campaign_id: int
    team_id: int
    name: str
    tag: str | None
    format: str
    system_type: str
    novelty: bool
    training_type: str
    priority: int
    description: str
    n_entries: int
    n_topics: int
    elapsed_seconds: dict[str, float] | None = Field(
        description="An XML run's elapsedTime per topic, in seconds (null when the run states none)"
    )
    sha256: str
    baseline: bool = Field(description="Marked by an organiser as a baseline: the boards show it so (ranked)")
    created_at: datetime


class RunPatch(BaseModel):
    """What an organiser may change of a run after submission."""

    model_config = ConfigDict(extra="forbid")

    baseline: bool = Field(description="A baseline run (the organisers' reference system), marked on the boards")


@router.post("/campaigns/{campaign_id}/runs", status_code=201, response_model=RunOut)
def upload_run(
    campaign_id: Id,
    request: Request,
    file: UploadFile,
    session: SessionDep,
    principal: Submitter,
    name: Annotated[Text, Form(max_length=200, description="Run name, unique within the team")],
    system_type: Annotated[
        Text | None,
        Form(
            max_length=1,
            description="F (fully automatic), M (manually assisted), R (relevance feedback); default: the XML run's "
            "class, else F",
        ),
    ] = None,
    novelty: Annotated[
        bool | None, Form(description="Novelty run (N); default: the XML run's novelty (N or C), else false")
    ] = None,
    training_type: Annotated[
        Text | None,
        Form(max_length=1, description="A, D, E or F (TRECVID training types); default: the XML run's trType, else D"),
    ] = None,
    priority: Annotated[
        int | None,
        Form(
            ge=1,
            le=INT32_MAX,
            description="1 = highest; pools may take priority runs only; default: the XML run's priority, else 1",
        ),
    ] = None,
    description: Annotated[
        Text | None, Form(max_length=100_000, description="Default: the XML run's desc, else empty")
    ] = None,
    format: Annotated[Literal["trec", "xml", "moments"] | None, Form(description="Detected when omitted")] = None,
    team_id: Annotated[Id | None, Form(description="Organisers only: the team the run is for")] = None,
) -> RunOut:
    """Upload a run (TREC 6 columns, TRECVID AVS XML or moment TSV/JSONL; gzip-compressed or not); it is validated
    whole first, in one pass reporting every error by line. The metadata the form leaves out is taken from an XML
    run's attributes (class, trType, novelty, priority, desc); the form's values override them."""
    data = read_limited(request, file)
    metadata = service.RunMetadata(
        name=name,
        system_type=system_type,
        novelty=novelty,
        training_type=training_type,
        priority=priority,
        description=description,
    )
    submission = service.Submission(data=data, metadata=metadata, format=format, team_id=team_id)
    settings = request.app.state.settings
    cpu = service.CpuPolicy(processes=settings.parse_processes, niceness=settings.worker_niceness)
    run = service.submit_run(session, principal, campaign_id, submission, max_errors=settings.max_errors, cpu=cpu)
    session.commit()
    return RunOut.model_validate(run)


@router.get("/campaigns/{campaign_id}/runs", response_model=list[RunOut])
def list_runs(campaign_id: Id, session: SessionDep, principal: Submitter) -> list[RunOut]:
    """Runs of the campaign: all for organisers, its own for a team."""
    return [RunOut.model_validate(r) for r in service.list_runs(session, principal, campaign_id)]


@router.get("/runs/{run_id}", response_model=RunOut)
def get_run(run_id: Id, session: SessionDep, principal: Submitter) -> RunOut:
    """One run's metadata."""
    return RunOut.model_validate(service.visible_run(session, principal, run_id))


@router.patch("/runs/{run_id}", response_model=RunOut)
def update_run(run_id: Id, body: RunPatch, session: SessionDep, principal: Organiser) -> RunOut:
    """Mark a run as a baseline, or unmark it (organisers of its campaign). Boards, live and published, show it."""
    run = service.set_baseline(session, principal, run_id, body.baseline)
    session.commit()
    return RunOut.model_validate(run)


RUN_FILE: dict[int | str, dict[str, Any]] = {
    200: {**TEXT_FILE[200], "content": {"text/plain": TEXT, "application/xml": TEXT}},
}


@router.get("/runs/{run_id}/download", response_class=Response, responses=RUN_FILE)
def download_run(
    run_id: Id,
    session: SessionDep,
    principal: Submitter,
    original: Annotated[
        bool, Query(description="The file exactly as uploaded (an XML or JSON-lines run with its explanations)")
    ] = False,
) -> Response:
    """The run as a file: TREC 6 columns for shot runs, `topic video start end score tag` TSV for moments; with
    `original=true` the uploaded file itself (after any gzip), explanations included."""
    if original:
        run, data, filename, media_type = service.original_upload(session, principal, run_id)
        return Response(data, media_type=media_type, headers={"Content-Disposition": attachment(filename)})
    run, chunks = service.download_run(session, principal, run_id)
    body = b"".join(chunks)
    filename = f"{run.name}.{'tsv' if run.format == 'moments' else 'txt'}"
    return Response(
        body,
        media_type="text/plain; charset=utf-8",
        headers={"Content-Disposition": attachment(filename)},
    )


@router.get("/runs/{run_id}/explanations", response_model=run_explanations.ExplanationsPage)
def list_explanations(
    run_id: Id,
    session: SessionDep,
    principal: Submitter,
    offset: Annotated[int, Query(ge=0, le=INT32_MAX)] = 0,
    limit: Annotated[int, Query(ge=1, le=run_explanations.MAX_PAGE)] = 100,
    topic: Annotated[Text | None, Query(max_length=200, description="Only this topic's explanations")] = None,
) -> run_explanations.ExplanationsPage:
    """Why the run returned its results (a frame's time and box, or a text, per result, as the run file gives them),
    a page at a time in file order: for the run's team and its campaign's organisers, never for assessors."""
    return run_explanations.explanations_page(session, principal, run_id, offset=offset, limit=limit, topic=topic)


@router.delete("/runs/{run_id}", status_code=204, response_class=Response)
def delete_run(run_id: Id, session: SessionDep, principal: Submitter) -> Response:
    """Delete a run (teams: while submissions are open); 409 for everyone once the campaign has a pool. The audit
    trail keeps who deleted it, when, and its metadata and sha256."""
    service.delete_run(session, principal, run_id)
    session.commit()
    return Response(status_code=204)
