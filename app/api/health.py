"""Liveness and version."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy import exc as sa_exc
from sqlalchemy import text

from app import __version__
from app.api.errors import UNAVAILABLE_RETRY_SECONDS, ErrorOut, database_unavailable
from app.api.security import SessionDep, public

router = APIRouter(prefix="/api", tags=["meta"])


class HealthOut(BaseModel):
    """The service answers, and so does its database."""

    status: str = "ok"
    database: str = "ok"
    version: str


class UnhealthyOut(ErrorOut):
    """The service answers but its database does not: `database` is "unreachable" (the error body's fields too)."""

    status: str = "unavailable"
    database: str
    version: str


@router.get(
    "/health",
    dependencies=[public()],
    response_model=HealthOut,
    responses={
        503: {
            "model": UnhealthyOut,
            "description": "The database is unreachable (or refuses work for now): retry after Retry-After seconds.",
        }
    },
)
def health(session: SessionDep) -> HealthOut | JSONResponse:
    """Whether the service and its database answer: 200, or 503 saying the database is unreachable."""
    try:
        session.execute(text("SELECT 1"))
    except (sa_exc.OperationalError, sa_exc.InterfaceError, sa_exc.TimeoutError) as exc:
        reason = database_unavailable(exc)
        if reason is None:
            raise
        state = "unreachable" if "unreachable" in reason else "unavailable"
        body = UnhealthyOut(detail=f"{reason}: try again in a few seconds", database=state, version=__version__)
        return JSONResponse(body.model_dump(), status_code=503, headers={"Retry-After": str(UNAVAILABLE_RETRY_SECONDS)})
    return HealthOut(version=__version__)
