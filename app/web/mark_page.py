"""The moment marking page: a shell over the moment-judging API (/api/moment-judging/...), like the judging page."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from app.web.pages import assessor_page


def make_router(page_role: Any) -> APIRouter:
    """The marking page's router; the page depends on `page_role` (a role declaration, handed in by the app)."""
    router = APIRouter(tags=["web"], include_in_schema=False, dependencies=[page_role])

    @router.get("/mark", response_class=HTMLResponse, name="mark_page")
    def mark_page(request: Request) -> Response:
        """The assessor's page for marking relevant moments on a timeline, by keyboard or mouse."""
        return assessor_page(request, "mark.html")

    return router
