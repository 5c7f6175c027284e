"""The one place where errors become HTTP responses."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from app.services.errors import (
    Conflict,
    Forbidden,
    InvalidInput,
    NotFound,
    PayloadTooLarge,
    ServiceError,
    Unauthenticated,
)

STATUS_OF: dict[type[ServiceError], int] = {
    InvalidInput: 422,
    NotFound: 404,
    Conflict: 409,
    Forbidden: 403,
    Unauthenticated: 401,
    PayloadTooLarge: 413,
}


def status_of(exc: ServiceError) -> int:
    """The HTTP status of a service error (its nearest mapped class)."""
    for cls in type(exc).__mro__:
        if cls in STATUS_OF:
            return STATUS_OF[cls]
    return 400


async def _service_error(request: Request, exc: Exception) -> JSONResponse:
    """A ServiceError as JSON: `detail` says what, `errors` says where."""
    assert isinstance(exc, ServiceError)
    body: dict[str, object] = {"detail": exc.message}
    if isinstance(exc, InvalidInput):
        body["errors"] = exc.errors
    headers = {"WWW-Authenticate": "Bearer"} if isinstance(exc, Unauthenticated) else None
    return JSONResponse(body, status_code=status_of(exc), headers=headers)


async def _request_error(request: Request, exc: Exception) -> JSONResponse:
    """FastAPI's request validation errors in the same shape, naming each field."""
    assert isinstance(exc, RequestValidationError)
    errors = [
        {
            "field": ".".join(str(p) for p in e["loc"] if p not in ("body", "query", "path", "form")) or None,
            "message": e["msg"],
        }
        for e in exc.errors()
    ]
    return JSONResponse({"detail": "invalid request", "errors": errors}, status_code=422)


def install_error_handlers(app: FastAPI) -> None:
    """Register the handlers on an app."""
    app.add_exception_handler(ServiceError, _service_error)
    app.add_exception_handler(RequestValidationError, _request_error)
