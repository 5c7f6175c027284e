"""Bounded requests: a body to the API needs a valid token before it is read, and is counted as it arrives."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.middleware.body_limit import RequestBodyLimitResponder
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.security import bearer_token, client_address, remember_principal, throttle_of
from app.services.auth import authenticate
from app.services.errors import TooManyAttempts, Unauthenticated

MULTIPART_SLACK = 1 << 20  # form fields and part headers around an upload of the largest accepted size
READ_ONLY = frozenset({"GET", "HEAD", "OPTIONS"})
PUBLIC_PREFIX = "/api/public/"


def _has_body(headers: Headers) -> bool:
    """Whether the request announces a body (a non-zero length, or chunked transfer)."""
    length = headers.get("content-length")
    return "transfer-encoding" in headers or (length is not None and length.strip() not in ("", "0"))


def _needs_token(scope: Scope, headers: Headers) -> bool:
    """Whether the request carries a body to an authenticated API endpoint."""
    path: str = scope["path"]
    return (
        scope["method"] not in READ_ONLY
        and path.startswith("/api/")
        and not path.startswith(PUBLIC_PREFIX)
        and _has_body(headers)
    )


def _check_token(scope: Scope, token: str | None) -> None:
    """Unauthenticated unless the token is known, live and not revoked (the endpoint checks the role); throttled.

    The principal found is kept in the request's state for the endpoint's role check (`checked_principal`).
    """
    request = Request(scope)
    throttle, address = throttle_of(request), client_address(request)
    session = scope["app"].state.session_factory()
    try:
        session.connection(execution_options={"isolation_level": "AUTOCOMMIT"})  # one query: no BEGIN, no ROLLBACK
        remember_principal(request, token, authenticate(session, token))
    except Unauthenticated:
        if token:
            throttle.failed(address)
        raise
    finally:
        session.rollback()
        session.close()


class RequestLimits:
    """ASGI middleware: 401 before reading the body of a request without a valid token, 413 past the byte limit.

    The limit counts the bytes actually received (chunked bodies included), not only the declared Content-Length.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the token of a body-carrying API request, then pass it on with its body counted."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if _needs_token(scope, headers):
            try:
                await run_in_threadpool(_check_token, scope, bearer_token(headers.get("authorization")))
            except Unauthenticated as exc:
                response = JSONResponse(
                    {"detail": exc.message},
                    status_code=401,
                    headers={"WWW-Authenticate": "Bearer", "Connection": "close"},
                )
                await response(scope, receive, send)
                return
            except TooManyAttempts as exc:
                response = JSONResponse(
                    {"detail": exc.message},
                    status_code=429,
                    headers={"Retry-After": str(exc.retry_after), "Connection": "close"},
                )
                await response(scope, receive, send)
                return
        limit = scope["app"].state.settings.max_upload_bytes + MULTIPART_SLACK
        await RequestBodyLimitResponder(self.app, limit)(scope, receive, _json_413(send))


TOO_LARGE = b'{"detail":"the request body is over the size limit","errors":[]}'


def _json_413(send: Send) -> Send:
    """`send`, with the body limiter's plain-text 413 replaced by the JSON error body the API documents."""
    rewriting = False

    async def wrapped(message: Message) -> None:
        nonlocal rewriting
        if message["type"] == "http.response.start" and message["status"] == 413:
            headers = Headers(raw=message["headers"])
            if headers.get("content-type", "").startswith("text/plain"):
                rewriting = True
                raw = [(k, v) for k, v in message["headers"] if k not in (b"content-type", b"content-length")]
                raw += [(b"content-type", b"application/json"), (b"content-length", str(len(TOO_LARGE)).encode())]
                message = {**message, "headers": raw}
        elif message["type"] == "http.response.body" and rewriting:
            message = {**message, "body": TOO_LARGE if not message.get("more_body") else b""}
            if not message.get("more_body"):
                rewriting = False
        await send(message)

    return wrapped
