"""Liveness and version."""

from __future__ import annotations

from fastapi import APIRouter
from sqlalchemy import text

from app import __version__
from app.api.security import SessionDep, public

router = APIRouter(prefix="/api", tags=["meta"])


@router.get("/health", dependencies=[public()])
def health(session: SessionDep) -> dict[str, str]:
    """Whether the service and its database answer."""
    session.execute(text("SELECT 1"))
    return {"status": "ok", "version": __version__}
