"""The API's documentation pages, /docs (Swagger UI) and /redoc (ReDoc), with their scripts served from the
fastapi-offline package instead of a CDN, so that they work with no internet. Declared public like every page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import fastapi_offline
from fastapi import APIRouter, FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS_URL = "/static-offline-docs"
ASSETS_DIR = Path(fastapi_offline.__file__).resolve().parent / "static"


def install_docs(app: FastAPI, page_role: Any) -> None:
    """Serve /docs, /redoc and their assets on `app` (built with docs_url=None and redoc_url=None)."""
    app.mount(ASSETS_URL, StaticFiles(directory=ASSETS_DIR), name="offline-docs-assets")
    router = APIRouter(include_in_schema=False, dependencies=[page_role])
    openapi_url = app.openapi_url or "/openapi.json"
    redirect_url = app.swagger_ui_oauth2_redirect_url or "/docs/oauth2-redirect"

    @router.get("/docs", response_class=HTMLResponse)
    def swagger_ui() -> HTMLResponse:
        """Swagger UI over the OpenAPI document."""
        return get_swagger_ui_html(
            openapi_url=openapi_url,
            title=f"{app.title} - Swagger UI",
            oauth2_redirect_url=redirect_url,
            swagger_js_url=f"{ASSETS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS_URL}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS_URL}/favicon.png",
        )

    @router.get(redirect_url, response_class=HTMLResponse)
    def swagger_ui_redirect() -> HTMLResponse:
        """Swagger UI's OAuth2 redirect helper."""
        return get_swagger_ui_oauth2_redirect_html()

    @router.get("/redoc", response_class=HTMLResponse)
    def redoc() -> HTMLResponse:
        """ReDoc over the OpenAPI document."""
        return get_redoc_html(
            openapi_url=openapi_url,
            title=f"{app.title} - ReDoc",
            redoc_js_url=f"{ASSETS_URL}/redoc.standalone.js",
            redoc_favicon_url=f"{ASSETS_URL}/favicon.png",
            with_google_fonts=False,
        )

    app.include_router(router)
