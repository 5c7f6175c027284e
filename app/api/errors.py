"""The one place where errors become HTTP responses."""

from __future__ import annotations

import logging
from typing import Any

import psycopg
from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from psycopg import errors as pg_errors
from pydantic import BaseModel, Field
from sqlalchemy import exc as sa_exc
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Scope

from app.services.errors import (
    Conflict,
    Forbidden,
    InvalidInput,
    NotFound,
    PayloadTooLarge,
    ServiceError,
    TooManyAttempts,
    Unauthenticated,
    Unavailable,
)
from app.services.inputs import echo

log = logging.getLogger("trecpool.api")

MESSAGE_CHARS = 300  # error texts quote input: cut them so a huge value is not echoed back

STATUS_OF: dict[type[ServiceError], int] = {
    InvalidInput: 422,
    NotFound: 404,
    Conflict: 409,
    Forbidden: 403,
    Unauthenticated: 401,
    PayloadTooLarge: 413,
    TooManyAttempts: 429,
    Unavailable: 503,
}


class ErrorItem(BaseModel):
    """Where one problem is (a line of an uploaded file, or a field of the request) and what it is."""

    line: int | None = Field(default=None, description="Line of the uploaded file (1-based), when the error has one.")
    field: str | None = Field(default=None, description="Field of the request (dotted path), when the error has one.")
    message: str


class ErrorOut(BaseModel):
    """Every error body: `detail` says what went wrong, `errors` where (422 lists each problem)."""

    detail: str
    errors: list[ErrorItem] = Field(default_factory=list)


ERROR_MEANINGS = {
    401: "No token, or an invalid, revoked or expired one (WWW-Authenticate: Bearer).",
    403: "The token's role may not do this, or not now.",
    404: "Not found, or not yours to see.",
    409: "Conflicts with what is stored (a name taken, a limit reached, the wrong lifecycle step).",
    413: "The body is over the size limit.",
    422: "Invalid input: `errors` names each line or field.",
    429: "Too many failed authentications from this address: wait the Retry-After seconds.",
    503: "The database or the run file store is unreachable or could not serve the request now: retry after the "
    "Retry-After seconds.",
}

# Documented on every API operation (at include time in app.server); replaces FastAPI's own 422 schema.
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut, "description": meaning} for code, meaning in ERROR_MEANINGS.items()
}
ERROR_RESPONSES[429]["headers"] = {
    "Retry-After": {"description": "Seconds to wait before authenticating again.", "schema": {"type": "integer"}}
}
ERROR_RESPONSES[503]["headers"] = {
    "Retry-After": {"description": "Seconds to wait before trying again.", "schema": {"type": "integer"}}
}

UNAVAILABLE_RETRY_SECONDS = 5
# SQLSTATEs that pass by themselves: connection exceptions (08), insufficient resources (53: too many connections,
# disk full), the server shutting down or starting (57P01-57P03), a query cancelled (57014), serialization
# failures and deadlocks (40001, 40P01), a lock not available (55P03)
TRANSIENT_STATES = ("08", "53", "57P01", "57P02", "57P03", "57014", "40001", "40P01", "55P03")
UNAVAILABLE_PAGE = (
    "<!doctype html><html lang=en><meta charset=utf-8>"
    '<meta name="viewport" content="width=device-width, initial-scale=1"><title>trecpool: unavailable</title>'
    "<h1>Temporarily unavailable</h1><p>{message}</p><p>Try again in a few seconds.</p></html>"
)


BODY_LIMIT_KEY = "trecpool.body_limit"  # the request's body limit (bytes, setting name), set by api/limits.py


def too_large(scope: Scope) -> dict[str, object]:
    """The 413 error body of a request over its body limit, naming the limit and the setting that sets it."""
    size, setting = scope.get(BODY_LIMIT_KEY, (None, None))
    if size is None:
        return {"detail": "the request body is over the size limit", "errors": []}
    detail = f"the request body is over this endpoint's limit of {size} bytes (setting TRECPOOL_{setting.upper()})"
    return {"detail": detail, "errors": []}


async def _http_error(request: Request, exc: Exception) -> Response:
    """The body limiter's 413 in the documented error shape; other HTTP errors as FastAPI answers them."""
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code == 413:
        return JSONResponse(too_large(request.scope), status_code=413, headers={"Connection": "close"})
    return await http_exception_handler(request, exc)


def status_of(exc: ServiceError) -> int:
    """The HTTP status of a service error (its nearest mapped class)."""
    for cls in type(exc).__mro__:
        if cls in STATUS_OF:
            return STATUS_OF[cls]
    return 400


async def _service_error(request: Request, exc: Exception) -> JSONResponse:
    """A ServiceError as JSON: `detail` says what, `errors` says where."""
    assert isinstance(exc, ServiceError)
    body: dict[str, object] = {"detail": echo(exc.message, MESSAGE_CHARS)}
    if isinstance(exc, InvalidInput):
        body["errors"] = [_cut(e) for e in exc.errors]
    headers = {"WWW-Authenticate": "Bearer"} if isinstance(exc, Unauthenticated) else None
    if isinstance(exc, TooManyAttempts | Unavailable):
        headers = {"Retry-After": str(exc.retry_after)}
    if isinstance(exc, Unavailable):  # the operator's to fix: logged (the message names no secret)
        log.warning("%s %s: %s", request.method, request.url.path, exc.message)
    return JSONResponse(body, status_code=status_of(exc), headers=headers)


async def _request_error(request: Request, exc: Exception) -> JSONResponse:
    """FastAPI's request validation errors in the same shape, naming each field."""
    assert isinstance(exc, RequestValidationError)
    errors = [
        {
            "field": ".".join(str(p) for p in e["loc"] if p not in ("body", "query", "path", "form")) or None,
            "message": echo(e["msg"], MESSAGE_CHARS),
        }
        for e in exc.errors()
    ]
    return JSONResponse({"detail": "invalid request", "errors": errors}, status_code=422)


def _cut(error: dict[str, object]) -> dict[str, object]:
    """An error entry with its text values cut to a few hundred characters."""
    return {k: echo(v, MESSAGE_CHARS) if isinstance(v, str) else v for k, v in error.items()}


def _database_error(exc: BaseException) -> pg_errors.Error | None:
    """The PostgreSQL error behind an exception (SQLAlchemy wraps psycopg's)."""
    cause = exc.orig if isinstance(exc, sa_exc.DBAPIError) else exc
    return cause if isinstance(cause, pg_errors.Error) else None


async def _data_error(request: Request, exc: Exception) -> JSONResponse:
    """A value PostgreSQL refused (out of range, NUL in text...) is the caller's: 422, never 500."""
    cause = _database_error(exc)
    text = cause.diag.message_primary if cause is not None and cause.diag.message_primary else "invalid value"
    return JSONResponse({"detail": f"invalid value: {echo(text, MESSAGE_CHARS)}", "errors": []}, status_code=422)


async def _integrity_error(request: Request, exc: Exception) -> JSONResponse:
    """A unique violation lost to a concurrent request is a conflict (409); other integrity errors are 422."""
    cause = _database_error(exc)
    if isinstance(cause, pg_errors.UniqueViolation):
        return JSONResponse({"detail": "conflicts with a concurrent change: it already exists"}, status_code=409)
    text = cause.diag.message_primary if cause is not None and cause.diag.message_primary else "integrity error"
    return JSONResponse({"detail": f"refused by the database: {echo(text, MESSAGE_CHARS)}"}, status_code=422)


def database_unavailable(exc: BaseException) -> str | None:
    """Why the database cannot serve the request now (unreachable, or a transient refusal), else None."""
    if isinstance(exc, sa_exc.TimeoutError):  # no pooled connection came free in time
        return "every database connection is busy"
    cause = exc.orig if isinstance(exc, sa_exc.DBAPIError) else exc
    if isinstance(exc, sa_exc.DBAPIError) and exc.connection_invalidated:
        return "the database is unreachable"
    if not isinstance(cause, psycopg.OperationalError | psycopg.InterfaceError):
        return None
    state = cause.sqlstate
    if state is None or state.startswith(("08", "57P0")):  # no answer at all, a lost connection, a shutdown
        return "the database is unreachable"
    if state.startswith(TRANSIENT_STATES):
        return "the database could not serve the request now"
    return None


def unavailable_response(path: str, reason: str) -> Response:
    """503 with Retry-After: the documented JSON error body on API paths, a short HTML page on the others."""
    headers = {"Retry-After": str(UNAVAILABLE_RETRY_SECONDS)}
    if path.startswith("/api/"):
        detail = f"{reason}: try again in a few seconds"
        return JSONResponse({"detail": detail, "errors": []}, status_code=503, headers=headers)
    message = f"{reason[0].upper()}{reason[1:]}."
    return HTMLResponse(UNAVAILABLE_PAGE.format(message=message), status_code=503, headers=headers)


async def _database_unavailable(request: Request, exc: Exception) -> Response:
    """A database that cannot serve the request now is a 503 with Retry-After, never a plain-text 500."""
    reason = database_unavailable(exc)
    if reason is None:
        raise exc  # a real fault: the server's 500, logged with its traceback
    log.warning("%s %s: %s (%s)", request.method, request.url.path, reason, _first_line(exc))
    return unavailable_response(request.url.path, reason)


def _first_line(exc: BaseException) -> str:
    """The first line of an exception's text (drivers' messages run over several)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


async def _internal_error(request: Request, exc: Exception) -> Response:
    """Any other unexpected error: a 500 in the documented shape (JSON on API paths, a short page elsewhere)."""
    reason = database_unavailable(exc)
    if reason is not None:
        return unavailable_response(request.url.path, reason)
    if request.url.path.startswith("/api/"):
        return JSONResponse({"detail": "internal server error", "errors": []}, status_code=500)
    page = UNAVAILABLE_PAGE.replace("Temporarily unavailable", "Internal server error").format(
        message="Something went wrong on the server; it has been logged."
    )
    return HTMLResponse(page, status_code=500)


def install_error_handlers(app: FastAPI) -> None:
    """Register the handlers on an app."""
    app.add_exception_handler(ServiceError, _service_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _request_error)
    app.add_exception_handler(sa_exc.DataError, _data_error)
    app.add_exception_handler(pg_errors.DataError, _data_error)
    app.add_exception_handler(sa_exc.IntegrityError, _integrity_error)
    app.add_exception_handler(pg_errors.IntegrityError, _integrity_error)
    for unavailable in (
        sa_exc.OperationalError,
        sa_exc.InterfaceError,
        sa_exc.TimeoutError,
        psycopg.OperationalError,
        psycopg.InterfaceError,
    ):
        app.add_exception_handler(unavailable, _database_unavailable)
    app.add_exception_handler(Exception, _internal_error)  # Starlette calls it for 500s, then re-raises to log
