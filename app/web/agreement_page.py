"""The organiser's agreement page: a model qrels version against a human one (issue 25), with its JSON twin.

`/organise/campaigns/{id}/agreement?human=<version id>&model=<version id>` is a shell with no data (anyone may load
it; defaults: the newest human and the newest model version). Its script sends the organiser's token, kept in the
tab's sessionStorage as on the organiser page, in an Authorization header (never in a URL) to
`/organise/campaigns/{id}/agreement/panel`, the report rendered on the server for organisers only. The JSON twin is
`/organise/campaigns/{id}/agreement.json` (the same document, `services.agreement_report`), also given by the panel
and the shell to `Accept: application/json` (the shell redirects there); every answer names it in a
`Link: <...>; rel="alternate"; type="application/json"` header. The roles are handed in by the application.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from sqlalchemy.orm import Session

from app import __version__
from app.services import agreement_report
from app.services.auth import SESSION_COOKIE, Principal
from app.services.inputs import Id
from app.web.organiser_page import HEADERS
from app.web.pages import templates


def _query(human: int | None, model: int | None) -> str:
    """The versions chosen, as a query string ('' for the defaults)."""
    given = {k: v for k, v in (("human", human), ("model", model)) if v is not None}
    return f"?{urlencode(given)}" if given else ""


def _links(campaign_id: int, human: int | None, model: int | None) -> dict[str, str]:
    """The page's URLs for the versions chosen: the shell, the panel and the JSON twin."""
    base, query = f"/organise/campaigns/{campaign_id}/agreement", _query(human, model)
    return {"page": base + query, "panel": f"{base}/panel{query}", "json": f"{base}.json{query}"}


def _alternate(json_url: str) -> dict[str, str]:
    """The headers of every answer: no caching, the page's CSP, and the Link to the JSON twin."""
    return {**HEADERS, "Link": f'<{json_url}>; rel="alternate"; type="application/json"'}


def wants_json(request: Request) -> bool:
    """Whether the request's Accept header prefers JSON to HTML."""
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/html" not in accept


def make_router(page_role: Any, organiser_role: Any, session_dependency: Any) -> APIRouter:
    """The agreement page (declared `page_role`), its panel and its JSON twin (declared `organiser_role`)."""
    router = APIRouter(tags=["web"], include_in_schema=False)
    SessionDep = Depends(session_dependency)

    @router.get("/organise/campaigns/{campaign_id}/agreement", response_class=HTMLResponse, dependencies=[page_role])
    def agreement_page(request: Request, campaign_id: Id, human: Id | None = None, model: Id | None = None) -> Response:
        """The page shell: it asks for the organiser's token and shows the report (JSON: see the twin)."""
        links = _links(campaign_id, human, model)
        if wants_json(request):
            return RedirectResponse(links["json"], status_code=303, headers=_alternate(links["json"]))
        context = {
            "campaign_id": campaign_id,
            "panel_url": links["panel"],
            "json_url": links["json"],
            "sign_in_url": "/login?" + urlencode({"next": links["page"]}),
            "has_session": bool(request.cookies.get(SESSION_COOKIE)),
            "version": __version__,
        }
        return templates.TemplateResponse(request, "agreement.html", context, headers=_alternate(links["json"]))

    @router.get("/organise/campaigns/{campaign_id}/agreement/panel", response_class=HTMLResponse)
    def agreement_panel(
        request: Request,
        campaign_id: Id,
        human: Id | None = None,
        model: Id | None = None,
        principal: Principal = organiser_role,
        session: Session = SessionDep,
    ) -> Response:
        """The report, rendered on the server (an HTML fragment the page shows; JSON to Accept: application/json)."""
        report = agreement_report.agreement_report(session, principal, campaign_id, human, model)
        links = _links(campaign_id, human, model)
        if wants_json(request):
            return JSONResponse(report, headers=_alternate(links["json"]))
        context = {"report": report, "json_url": links["json"], "page_url": links["page"]}
        return templates.TemplateResponse(request, "agreement_panel.html", context, headers=_alternate(links["json"]))

    @router.get("/organise/campaigns/{campaign_id}/agreement.json")
    def agreement_json(
        campaign_id: Id,
        human: Id | None = None,
        model: Id | None = None,
        principal: Principal = organiser_role,
        session: Session = SessionDep,
    ) -> Response:
        """The report as JSON: the document the page shows."""
        report = agreement_report.agreement_report(session, principal, campaign_id, human, model)
        return JSONResponse(report, headers=_alternate(_links(campaign_id, human, model)["json"]))

    return router
