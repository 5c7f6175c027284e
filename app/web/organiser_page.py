"""The organiser page of a campaign: judging progress, time left, QC and adjudication queues, jobs with cancel.

`/organise/campaigns/{id}` is a shell with no data (anyone may load it); its script sends the organiser's token,
kept in the tab's sessionStorage, in an Authorization header (never in a URL) to `/organise/campaigns/{id}/panel`,
the view rendered on the server for organisers only. Its JSON twin is `/api/campaigns/{id}/overview`. The roles are
handed in by the application, as for the other pages (`app.web` stays independent of `app.api`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy.orm import Session

from app import __version__
from app.services import live_view, organiser_view
from app.services.auth import Principal
from app.services.errors import ServiceError
from app.services.inputs import Id
from app.web import session as web_session
from app.web.pages import templates

HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; "
        "frame-ancestors 'none'"
    ),
}


def duration(seconds: float | None) -> str:
    """A working time for people: '45 s', '12 min', '3 h 05 min', '2 d 4 h'; an en dash when unknown."""
    if seconds is None:
        return "–"
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours} h {minutes:02d} min"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h"


def moment(value: datetime | None) -> str:
    """A time stamp in UTC, to the second; an en dash when there is none."""
    return value.strftime("%Y-%m-%d %H:%M:%S UTC") if value is not None else "–"


def make_router(page_role: Any, organiser_role: Any, session_dependency: Any) -> APIRouter:
    """The organiser page (declared `page_role`) and its server-rendered panel (declared `organiser_role`)."""
    router = APIRouter(tags=["web"], include_in_schema=False)
    SessionDep = Depends(session_dependency)

    @router.get("/organise/campaigns/{campaign_id}", response_class=HTMLResponse, dependencies=[page_role])
    def organiser_page(request: Request, campaign_id: Id) -> Response:
        """The page shell: it asks for the organiser's token and shows the panel."""
        context = {
            "campaign_id": campaign_id,
            "panel_url": f"/organise/campaigns/{campaign_id}/panel",
            "json_url": f"/api/campaigns/{campaign_id}/overview",
            "has_session": bool(request.cookies.get(web_session.COOKIE)),
            "version": __version__,
        }
        return templates.TemplateResponse(request, "organiser.html", context, headers=HEADERS)

    @router.get("/organise/campaigns/{campaign_id}/panel", response_class=HTMLResponse)
    def organiser_panel(
        request: Request, campaign_id: Id, principal: Principal = organiser_role, session: Session = SessionDep
    ) -> Response:
        """The campaign's organiser view, rendered on the server (an HTML fragment the page shows)."""
        view = organiser_view.campaign_view(session, principal, campaign_id)
        context = {
            "view": view,
            "csrf": _cookie_csrf(request),
            "live": _live(session, principal, view.pool_id, view.pool_kind),
            "json_url": f"/api/campaigns/{campaign_id}/overview",
            "duration": duration,
            "moment": moment,
        }
        return templates.TemplateResponse(request, "organiser_panel.html", context, headers=HEADERS)

    return router


def _live(session: Session, principal: Principal, pool_id: int | None, pool_kind: str | None) -> dict | None:
    """The live view of the campaign's shot pool (cached per pool until the next verdict), if it has one."""
    if pool_id is None or pool_kind == "moments":
        return None
    try:
        return live_view.live_view(session, principal, pool_id)
    except ServiceError:  # a pool the live view cannot read (no runs): the rest of the page still shows
        return None


def _cookie_csrf(request: Request) -> str | None:
    """The CSRF value of the browser session the request came with (None for a bearer request): a cookie session's
    Cancel buttons post to the console's cancel forms with it."""
    cookie = request.cookies.get(web_session.COOKIE)
    return web_session.csrf_token(cookie) if cookie and web_session.bearer(request) is None else None
