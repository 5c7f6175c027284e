"""The API's documentation pages, /docs (Swagger UI) and /redoc (ReDoc), with their scripts served from the
fastapi-offline package instead of a CDN, so that they work with no internet. Declared public like every page."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import fastapi_offline
from fastapi import APIRouter, FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS_URL = "/static-offline-docs"
ASSETS_DIR = Path(fastapi_offline.__file__).resolve().parent / "static"

# Each page's Content-Security-Policy: its own inline scripts and styles by hash (`{scripts}`, `{styles}`), its
# assets, spec and "Try it out" calls from this origin only. ReDoc injects its styles at run time (styled-components)
# and searches in a worker made from a blob.
_COMMON = "default-src 'none'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'"
SWAGGER_CSP = f"{_COMMON}; script-src 'self' {{scripts}}; style-src 'self' {{styles}}; form-action 'self'"
REDOC_CSP = (
    f"{_COMMON}; script-src 'self' {{scripts}}; style-src 'self' 'unsafe-inline'; font-src 'self'; worker-src blob:"
)


def _hashes(html: str, tag: str) -> str:
    """The CSP source list of the inline `tag` elements (script or style) of `html`: one 'sha256-...' each."""
    bodies = re.findall(rf"<{tag}>(.*?)</{tag}>", html, re.S)  # inline ones only: no attributes (no src)
    digests = [base64.b64encode(hashlib.sha256(body.encode()).digest()).decode() for body in bodies]
    return " ".join(f"'sha256-{digest}'" for digest in digests)


def with_csp(page: HTMLResponse, policy: str) -> HTMLResponse:
    """`page` with `policy` as its Content-Security-Policy, its inline scripts and styles allowed by hash."""
    html = bytes(page.body).decode()
    filled = policy.format(scripts=_hashes(html, "script"), styles=_hashes(html, "style"))
    page.headers["Content-Security-Policy"] = re.sub(r" +;", ";", filled)
    return page


# Swagger UI's and ReDoc's pages pass axe-core (WCAG 2.1 AA) with this: a language, our stylesheet after theirs
# (colours with enough contrast), our script naming the controls Swagger UI leaves unnamed, and no deep links (in
# Swagger UI they are links inside each operation's expand button: a control nested in another).
VIEWPORT = '<meta name="viewport" content="width=device-width, initial-scale=1">'
ADDED = '<link rel="stylesheet" type="text/css" href="/static/docs.css">\n<script src="/static/docs.js" defer></script>'


# ReDoc's theme (its `theme` attribute): code in a colour with enough contrast (docs.css sets the others)
REDOC_THEME = {"typography": {"code": {"color": "#b3261e"}}}


def accessible(page: HTMLResponse) -> HTMLResponse:
    """`page` with `lang` on its <html>, a viewport, and our docs.css and docs.js last in its <head>."""
    html = bytes(page.body).decode()
    if 'name="viewport"' not in html:  # Swagger UI's sign-in helper: a phone would draw it 980 px wide
        html = html.replace("</head>", f"{VIEWPORT}\n</head>", 1)
    html = html.replace("<html>", '<html lang="en">', 1).replace("</head>", f"{ADDED}\n</head>", 1)
    html = html.replace("<redoc ", f"<redoc theme='{json.dumps(REDOC_THEME)}' ", 1)
    return HTMLResponse(html, status_code=page.status_code)


def install_docs(app: FastAPI, page_role: Any) -> None:
    """Serve /docs, /redoc and their assets on `app` (built with docs_url=None and redoc_url=None)."""
    app.mount(ASSETS_URL, StaticFiles(directory=ASSETS_DIR), name="offline-docs-assets")
    router = APIRouter(include_in_schema=False, dependencies=[page_role])
    openapi_url = app.openapi_url or "/openapi.json"
    redirect_url = app.swagger_ui_oauth2_redirect_url or "/docs/oauth2-redirect"

    @router.get("/docs", response_class=HTMLResponse)
    def swagger_ui() -> HTMLResponse:
        """Swagger UI over the OpenAPI document."""
        page = get_swagger_ui_html(
            openapi_url=openapi_url,
            title=f"{app.title} - Swagger UI",
            oauth2_redirect_url=redirect_url,
            swagger_js_url=f"{ASSETS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS_URL}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS_URL}/favicon.png",
            swagger_ui_parameters={"deepLinking": False},
        )
        return with_csp(accessible(page), SWAGGER_CSP)

    @router.get(redirect_url, response_class=HTMLResponse)
    def swagger_ui_redirect() -> HTMLResponse:
        """Swagger UI's OAuth2 redirect helper."""
        return with_csp(accessible(get_swagger_ui_oauth2_redirect_html()), SWAGGER_CSP)

    @router.get("/redoc", response_class=HTMLResponse)
    def redoc() -> HTMLResponse:
        """ReDoc over the OpenAPI document."""
        page = get_redoc_html(
            openapi_url=openapi_url,
            title=f"{app.title} - ReDoc",
            redoc_js_url=f"{ASSETS_URL}/redoc.standalone.js",
            redoc_favicon_url=f"{ASSETS_URL}/favicon.png",
            with_google_fonts=False,
        )
        return with_csp(accessible(page), REDOC_CSP)

    app.include_router(router)
