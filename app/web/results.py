"""Public result pages: the index of published campaigns, leaderboards and reports, each with its JSON twin."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy.orm import Session

from app import __version__
from app.evaluation.measures.registry import describe
from app.services import leaderboards, snapshots
from app.services.inputs import Id
from app.web.pages import templates

HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
}


_FIGURES: dict[tuple[int, bool], dict[str, str]] = {}
MAX_CACHED = 64


def report_figures(snapshot_id: int, report: dict[str, Any]) -> dict[str, str]:
    """The report's figures as SVG, rendered once per (immutable) snapshot and naming of teams (real or anonymous)."""
    key = (snapshot_id, bool(report.get("anonymised")))
    if key not in _FIGURES:
        from app.figures import report as plots  # matplotlib: only when a report is drawn

        if len(_FIGURES) >= MAX_CACHED:
            _FIGURES.clear()
        figures = {
            "overall": plots.overall_scores(report["overall"], report["measure"]),
            "topics": plots.topic_boxes(report["per_topic"], report["measure"]),
        }
        if "judgements" in report:
            rows = report["judgements"]
            figures["hits"] = plots.bars([r["topic"] for r in rows], [r["hits"] for r in rows], "relevant shots (hits)")
            if "novelty" not in report:  # a report published before the sorted chart
                teams = report["hits_by_team"]["teams"]
                figures["unique"] = plots.bars(
                    list(teams), [t["unique_hits"] for t in teams.values()], "unique relevant shots", colour="#1e7a3c"
                )
        figures.update(analysis_figures(report))
        _FIGURES[key] = figures
    return _FIGURES[key]


def analysis_figures(report: dict[str, Any]) -> dict[str, str]:
    """The figures of the report's analysis sections it has (reports published before them have none)."""
    from app.figures import campaign_analyses as drawn  # matplotlib: only when a report is drawn

    figures = {}
    if "novelty" in report:  # unique hits by team, sorted (replaces the unsorted chart)
        figures["unique"] = drawn.svg(drawn.unique_hits(report["novelty"]))
    if report.get("strata", {}).get("stratified"):
        figures["inferred"] = drawn.svg(drawn.inferred_relevant(report["strata"]))
        figures["strata"] = drawn.svg(drawn.judged_share_per_stratum(report["strata"]))
    if any(level["overall"] is not None for level in report.get("judged_fraction", {}).get("depths", [])):
        figures["judged_fraction"] = drawn.svg(drawn.judged_fraction(report["judged_fraction"]))  # not all empty
    if "efficiency" in report:
        figures["efficiency"] = drawn.svg(drawn.score_vs_time(report["efficiency"]))
    return figures


def make_router(page_role: Any, session_dependency: Any) -> APIRouter:
    """The public result pages; `page_role` declares them public, `session_dependency` yields a DB session."""
    router = APIRouter(tags=["web"], include_in_schema=False, dependencies=[page_role])
    SessionDep = Depends(session_dependency)

    @router.get("/", response_class=HTMLResponse, name="home")
    def home(request: Request, session: Session = SessionDep) -> Response:
        """Published campaigns."""
        campaigns = snapshots.published_campaigns(session)
        return templates.TemplateResponse(
            request, "index.html", {"campaigns": campaigns, "version": __version__}, headers=HEADERS
        )

    @router.get("/campaigns/{campaign_id}/leaderboard", response_class=HTMLResponse, name="leaderboard_page")
    def leaderboard_page(
        request: Request,
        campaign_id: Id,
        filters: Annotated[leaderboards.Filters, Query()],
        measure: str | None = None,
        session: Session = SessionDep,
    ) -> Response:
        """A published leaderboard; its JSON twin is /api/public/campaigns/{id}/leaderboard."""
        board = leaderboards.published_leaderboard(session, campaign_id, measure, filters)
        snapshot = snapshots.published_snapshot(session, campaign_id)
        query = {
            k: v
            for k, v in {
                "measure": board["measure"],
                **filters.model_dump(),
            }.items()
            if v is not None
        }
        api = f"/api/public/campaigns/{campaign_id}/leaderboard"
        return templates.TemplateResponse(
            request,
            "leaderboard.html",
            {
                "board": board,
                "significance": leaderboards.published_significance(session, campaign_id, filters),
                "campaign_id": campaign_id,
                "json_url": f"{api}?{urlencode(query)}",
                "csv_url": f"{api}?{urlencode({**query, 'format': 'csv'})}",
                "topics_csv_url": f"{api}?{urlencode({**query, 'format': 'topics.csv'})}",
                "published_at": snapshot.published_at,
                "describe": describe,
                "version": __version__,
            },
            headers=HEADERS,
        )

    @router.get("/campaigns/{campaign_id}/report", response_class=HTMLResponse, name="report_page")
    def report_page(request: Request, campaign_id: Id, session: Session = SessionDep) -> Response:
        """A published campaign report; its JSON twin is /api/public/campaigns/{id}/report."""
        snapshot = snapshots.published_snapshot(session, campaign_id)
        report = snapshots.published_report(session, snapshot)
        return templates.TemplateResponse(
            request,
            "report.html",
            {
                "report": report,
                "figures": report_figures(snapshot.id, report),
                "campaign_id": campaign_id,
                "significance": snapshot.content.get("significance"),
                "published_at": snapshot.published_at,
                "json_url": f"/api/public/campaigns/{campaign_id}/report",
                "version": __version__,
            },
            headers=HEADERS,
        )

    return router
