"""A run's per-topic chart against the median and best of all runs (teams: their own runs; no other run named)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel

from app.api.security import SessionDep, Submitter
from app.evaluation.measures.registry import measure_help
from app.services import run_charts
from app.services.inputs import Id, Text

router = APIRouter(prefix="/api", tags=["runs"])


class TopicPoint(BaseModel):
    """One topic: the run's score, and the median and best over all runs (null: no score)."""

    topic: str
    score: float | None
    median: float | None
    best: float | None


class RunVersusAll(BaseModel):
    """A run against all runs, per topic (the chart NIST sends each team)."""

    measure: str
    run: str
    run_id: int
    campaign_id: int
    evaluation_id: int
    published: bool
    n_runs: int
    above_median: int
    at_best: int
    topics: list[TopicPoint]


RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "model": RunVersusAll,
        "description": "JSON by default; with `format=svg` or `format=png` the chart",
        "content": {"image/svg+xml": {"schema": {"type": "string"}}, "image/png": {"schema": {"type": "string"}}},
    }
}


@router.get("/runs/{run_id}/versus", response_model=None, responses=RESPONSES)
def versus(
    run_id: Id,
    session: SessionDep,
    principal: Submitter,
    measure: Annotated[Text | None, Query(description=measure_help())] = None,
    format: Literal["json", "svg", "png"] = "json",
) -> Any:
    """The run's score per topic next to each topic's median and best over all runs, as JSON or a chart. A team asks
    for its own runs (others are 404) and sees no other run: before publication only if the campaign's
    `team_results` is `own`, after it from the published evaluation."""
    chart = run_charts.run_versus_all(session, principal, run_id, measure)
    if format == "json":
        return RunVersusAll.model_validate(chart)
    from app.figures.analyses import render  # matplotlib: only when a chart is asked for
    from app.figures.campaign_analyses import run_vs_median_best

    image = render(run_vs_median_best(chart), format)
    return Response(image, media_type="image/svg+xml" if format == "svg" else "image/png")
