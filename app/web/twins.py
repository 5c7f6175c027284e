"""JSON twins (Datasette-style): one view, rendered as HTML or as JSON, with a Link header naming the twin.

A page's route is registered twice, at `PATH` and `PATH.json` (`twin_paths`); `render` answers JSON for the `.json`
path or for an Accept header that prefers JSON, HTML otherwise, and every answer carries
`Link: <PATH.json?query>; rel="alternate"; type="application/json"`. The JSON is the view's data itself (the same
dict the template reads), so the two cannot drift.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import Request
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse, Response

from app.web.pages import templates

HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; object-src 'none'; "
        "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
}


def twin_paths(path: str) -> list[str]:
    """The HTML path and its JSON twin's (a trailing slash becomes `index.json`: /team/ -> /team/index.json)."""
    return [path, f"{path}index.json" if path.endswith("/") else f"{path}.json"]


def json_path(path: str) -> str:
    """The JSON twin's path of a page's path (itself when it is the twin)."""
    if path.endswith(".json"):
        return path
    return twin_paths(path)[1]


def wants_json(request: Request) -> bool:
    """Whether the request asks for JSON: the `.json` path, or an Accept header preferring JSON to HTML."""
    if request.url.path.endswith(".json"):
        return True
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/html" not in accept


def twin_url(request: Request) -> str:
    """The JSON twin's URL of this request (its query kept)."""
    query = f"?{request.url.query}" if request.url.query else ""
    return json_path(request.url.path) + query


def link_header(request: Request) -> str:
    """The Link header naming the JSON twin."""
    return f'<{twin_url(request)}>; rel="alternate"; type="application/json"'


def render(
    request: Request,
    template: str,
    data: Mapping[str, Any],
    *,
    extra: Mapping[str, Any] | None = None,
    status_code: int = 200,
    headers: Mapping[str, str] | None = None,
) -> Response:
    """The view as JSON (`data`) or as HTML (`template` over `data` plus `extra`, which JSON never shows: helpers,
    the CSRF value), with the Link header; `headers` are added to (or override) the defaults."""
    merged = {**HEADERS, "Link": link_header(request), "Vary": "Accept", **(headers or {})}
    if wants_json(request):
        merged.pop("Content-Security-Policy", None)  # JSON gets the app's default policy (loads nothing)
        return JSONResponse(jsonable_encoder(data), status_code=status_code, headers=merged)
    context = {**data, **(extra or {}), "json_url": twin_url(request)}
    return templates.TemplateResponse(request, template, context, status_code=status_code, headers=merged)


def error_page(
    request: Request,
    status_code: int,
    detail: str,
    errors: list[dict[str, object]] | None = None,
    *,
    extra: Mapping[str, Any] | None = None,
) -> Response:
    """An error as a page (or, for JSON, the API's error body: `detail` and `errors` by line or field)."""
    from app import __version__

    data = {"detail": detail, "errors": errors or []}
    context = {"version": __version__, "status": status_code, **(extra or {})}
    return render(request, "team/error.html", data, extra=context, status_code=status_code)
