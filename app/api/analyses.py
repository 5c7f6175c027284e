"""Reusability and meta-evaluation analyses as background jobs: pool depth, leave-out, agreement, stability..."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, Union

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationInfo, create_model, field_validator
from pydantic.json_schema import GetJsonSchemaHandler, JsonSchemaValue
from pydantic_core import CoreSchema

from app.api.qrels import JudgingOrderMark
from app.api.security import Organiser, SessionDep
from app.services import analyses, jobs
from app.services.analysis_registry import ANALYSES, Analysis, checked_params, figure_data
from app.services.errors import InvalidInput
from app.services.inputs import Id, Text

router = APIRouter(prefix="/api", tags=["analyses"])


def _request_model(record: Analysis) -> type[BaseModel]:
    """The request body of one kind, as the OpenAPI schema documents it: its `kind` and its parameter model."""
    kind: Any = Literal[record.name]  # the one kind's name, made at run time
    return create_model(
        record.name.title().replace("-", "") + "Analysis",
        __doc__=f"{record.description} Reproduces: {record.reproduces}.",
        kind=(kind, ...),
        params=(record.params, Field(default_factory=record.params)),
    )


def _request_schema() -> TypeAdapter[Any]:
    """The request bodies of every registered kind, one schema each, told apart by `kind`."""
    models = tuple(_request_model(record) for record in ANALYSES.values())
    body: Any = Annotated[Union[models], Field(discriminator="kind")]  # noqa: UP007 - a union of a tuple of types
    return TypeAdapter(body)


class AnalysisIn(BaseModel):
    """An analysis to run on the newest finished evaluation: its kind and that kind's parameters (documented as one
    schema per kind, from the analysis registry; `trecpool analyses` lists them too)."""

    kind: Text = Field(description="the analysis kind (`trecpool analyses` lists them)")
    params: dict[str, Any] = Field(
        default_factory=dict,
        description="the kind's parameters: unknown names are refused, numbers are bounded, omitted ones take the "
        "defaults of SPEC section 6 and the papers",
    )

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, kind: str) -> str:
        """A kind of the analysis registry."""
        if kind not in ANALYSES:
            raise ValueError(f"one of {', '.join(ANALYSES)}")
        return kind

    @field_validator("params")
    @classmethod
    def _params_of_kind(cls, params: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        """The params checked against the kind's model (errors name `params.<name>`)."""
        kind = info.data.get("kind")
        return params if kind is None else checked_params(kind, params)

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        """The schema of the body: one per registered kind (its `kind` and its parameter model), by `kind`."""
        return handler(_request_schema().core_schema)


class AnalysisOut(BaseModel):
    """An analysis job, its progress and (when done) its result."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    campaign_id: int
    kind: str
    params: dict[str, Any]
    status: str
    progress: float
    result: dict[str, Any] | None
    judging_order: JudgingOrderMark | None = Field(
        default=None, description="How the evaluation's qrels were judged; `biased` marks every number of the result"
    )
    error: str | None
    created_at: datetime
    finished_at: datetime | None


def _out(session: SessionDep, job: jobs.AnalysisJob) -> AnalysisOut:
    """An analysis job's output, with the judging-order mark of its qrels."""
    mark = analyses.analysis_order_mark(session, job)
    out = AnalysisOut.model_validate(job)
    return out.model_copy(update={"judging_order": JudgingOrderMark(**mark) if mark else None})


@router.post("/campaigns/{campaign_id}/analyses", status_code=202, response_model=AnalysisOut)
def start(
    campaign_id: Id,
    body: AnalysisIn,
    request: Request,
    session: SessionDep,
    principal: Organiser,
) -> AnalysisOut:
    """Queue an analysis; poll GET /api/analyses/{id} for progress and the result."""
    job = analyses.start_analysis(session, principal, campaign_id, body.kind, body.params)
    jobs.enqueue(session, job, campaign_concurrency=request.app.state.settings.job_campaign_concurrency)
    session.commit()
    return _out(session, job)


@router.get("/analyses/{job_id}", response_model=AnalysisOut)
def get(job_id: Id, session: SessionDep, principal: Organiser) -> AnalysisOut:
    """An analysis job and its result."""
    return _out(session, analyses.get_analysis(session, principal, job_id))


@router.post("/analyses/{job_id}/cancel", response_model=AnalysisOut)
def cancel(job_id: Id, session: SessionDep, principal: Organiser) -> AnalysisOut:
    """Cancel an analysis: a queued one at once, a running one at its next progress report (409 once finished)."""
    job = jobs.cancel(session, principal, jobs.AnalysisJob, job_id)
    session.commit()
    return _out(session, job)


@router.get(
    "/analyses/{job_id}/figure",
    response_class=Response,
    responses={200: {"content": {"image/svg+xml": {}, "image/png": {}}}},
)
def figure(
    job_id: Id,
    session: SessionDep,
    principal: Organiser,
    format: Literal["svg", "png"] = "svg",
    run: Annotated[
        Text | None, Query(max_length=200, description="run-vs-median: the run whose chart to draw (required)")
    ] = None,
) -> Response:
    """The analysis's figure (Westerveld Fig. 2-4, AxIoU paper Fig. 4-7, the overview's charts), drawn from its
    stored result; a run-vs-median analysis draws one run's chart (`run`)."""
    from app.figures.analyses import draw, render  # matplotlib: only when a figure is asked for

    job = analyses.finished_analysis(session, principal, job_id)
    try:
        data = figure_data(job.kind, job.result or {}, run)
    except ValueError as exc:
        raise InvalidInput("cannot draw this figure", [{"field": "run", "message": str(exc)}]) from None
    image = render(draw(ANALYSES[job.kind].figure, data), format)
    return Response(image, media_type="image/svg+xml" if format == "svg" else "image/png")
