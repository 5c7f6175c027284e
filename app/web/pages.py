"""HTML pages. Each page is a thin shell: its data comes from the JSON API, called by the page with the user's token.

The layer contract keeps `app.web` independent of `app.api`, so the role dependency a page declares is handed in by
the application (`make_router(public())` in `app.server`); the same access test then checks pages and API alike.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, Response
from fastapi.templating import Jinja2Templates

from app import __version__
from app.services import tokens
from app.storage.audit import actor_of, set_actor

HERE = Path(__file__).resolve().parent
STATIC_DIR = HERE / "static"
STATIC_TYPES = {".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}
templates = Jinja2Templates(directory=HERE / "templates")


def datetime_local(moment: datetime | str | None) -> str:
    """A time as a datetime-local form value in UTC ('' for none; text, as typed, kept)."""
    if moment is None or isinstance(moment, str):
        return moment or ""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M")


templates.env.filters["datetime_local"] = datetime_local

# The page URL carries a one-time judging link (never a token) in its fragment (`#link=...`, which no browser sends
# to a server) until the script trades it, by POST, for a session token kept in sessionStorage: never leak it to
# media hosts through Referer, never cache the page, and let scripts and styles come only from here. Media may come
# from any host (the collection's media URL template names it); the judging page draws its keyframe strip from that
# media into canvases; a topic's example images (its `examples`, http(s) URLs the organiser gave) may come from any
# host too, which the no-referrer policy keeps from learning the page's URL.
PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": (
        "default-src 'self'; media-src * data: blob:; img-src 'self' data: https: http:; object-src 'none'; "
        "base-uri 'none'; frame-ancestors 'none'"
    ),
}


def _static_files() -> dict[str, Path]:
    """The files a static URL may name: exactly those shipped in web/static (no paths, no traversal)."""
    return {p.name: p for p in STATIC_DIR.iterdir() if p.is_file() and p.suffix in STATIC_TYPES}


def withdraw_query_link(request: Request) -> None:
    """Withdraw a judging link sent in the page's query string (`?link=`, the old form of `judge_url`).

    A link in a query string has reached the server (and any proxy) in the request line: it is expired at once and
    the page refuses it, saying so. The access log never shows it (`app/web/access_log.py`).
    """
    link = request.query_params.get("link")
    if not link:
        return
    session = request.app.state.session_factory()
    try:
        set_actor(session, actor_of("judge_link"))
        tokens.withdraw_judge_link(session, link)
        session.commit()
    finally:
        session.close()


def assessor_page(request: Request, template: str) -> Response:
    """An assessor's page (judging or marking), a link in its query string withdrawn first."""
    withdraw_query_link(request)
    return templates.TemplateResponse(request, template, {"version": __version__}, headers=PAGE_HEADERS)


def make_router(page_role: Any) -> APIRouter:
    """The web pages' router; every page and static file depends on `page_role` (a role declaration)."""
    router = APIRouter(tags=["web"], include_in_schema=False, dependencies=[page_role])
    files = _static_files()

    @router.get("/judge", response_class=HTMLResponse, name="judge_page")
    def judge_page(request: Request) -> Response:
        """The assessor's judging page; its JSON twin is the judging API (/api/judging/...)."""
        return assessor_page(request, "judge.html")

    @router.get("/static/{name}", name="web_static")
    def static(name: str) -> Response:
        """A script or stylesheet of the pages."""
        path = files.get(name)
        if path is None:
            return Response(status_code=404)
        return FileResponse(
            path,
            media_type=STATIC_TYPES[path.suffix],
            headers={"Cache-Control": "public, max-age=300"},
        )

    return router
