"""Bounded requests: a body to the API needs a valid token before it is read, and is counted as it arrives against
the limit of what its endpoint takes.

File uploads (multipart endpoints) may send `max_upload_bytes`; an organiser's bulk JSON (a topic list, pool
assignments: BULK_JSON_ROUTES) `max_bulk_json_bytes`; every other body `max_json_bytes`, so that no caller can make
the server read and decode a big JSON body (decoding holds the GIL: every request waits for it). Which endpoints take
uploads is read from the app's OpenAPI document, once per app.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.middleware.body_limit import RequestBodyLimitResponder
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.errors import BODY_LIMIT_KEY, database_unavailable, too_large, unavailable_response
from app.api.security import bearer_token, client_address, remember_principal, throttle_of
from app.services.auth import Principal, authenticate
from app.services.errors import TooManyAttempts, Unauthenticated
from app.storage.models import Role

log = logging.getLogger("trecpool.api")

MULTIPART_SLACK = 1 << 20  # form fields and part headers around an upload of the largest accepted size
READ_ONLY = frozenset({"GET", "HEAD", "OPTIONS"})
PUBLIC_PREFIX = "/api/public/"
# organisers' JSON bodies that may be large (each checked to exist by tests/api/test_limits.py)
BULK_JSON_ROUTES = frozenset(
    {("POST", "/api/campaigns/{campaign_id}/topics"), ("POST", "/api/pools/{pool_id}/assignments")}
)
UPLOAD_MEDIA_TYPE = "multipart/form-data"
# the pages' forms that upload files (not in the OpenAPI document: pages are left out of it)
WEB_UPLOAD_ROUTES = frozenset(
    {
        ("POST", "/team/runs"),
        ("POST", "/console/campaigns/{campaign_id}/topics"),
        ("POST", "/console/campaigns/{campaign_id}/collection"),
        ("POST", "/console/campaigns/{campaign_id}/qrels/upload"),
    }
)


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


def _check_token(scope: Scope, token: str | None) -> Principal:
    """The token's principal, throttled; Unauthenticated unless it is known, live and not revoked.

    The endpoint checks the role: the principal found is kept in the request's state for that check
    (`remembered_principal`).
    """
    request = Request(scope)
    throttle, address = throttle_of(request), client_address(request)
    session = scope["app"].state.session_factory()
    try:
        session.connection(execution_options={"isolation_level": "AUTOCOMMIT"})  # one query: no BEGIN, no ROLLBACK
        principal = authenticate(session, token)
        remember_principal(request, token, principal)
        return principal
    except Unauthenticated:
        if token:
            throttle.failed(address)
        raise
    finally:
        session.rollback()
        session.close()


@dataclass(frozen=True)
class BodyRoutes:
    """The (method, path pattern) pairs of the endpoints that take file uploads, and of the bulk JSON ones."""

    uploads: tuple[tuple[str, re.Pattern[str]], ...]
    bulk: tuple[tuple[str, re.Pattern[str]], ...]

    def kind(self, method: str, path: str) -> str:
        """ "upload", "bulk" or "json": what an endpoint's body is."""
        for kind, routes in (("upload", self.uploads), ("bulk", self.bulk)):
            if any(m == method and pattern.fullmatch(path) for m, pattern in routes):
                return kind
        return "json"


def path_pattern(template: str) -> re.Pattern[str]:
    """A regular expression matching the paths of an OpenAPI path template (`{name}` is one path segment)."""
    parts = re.split(r"(\{[^{}/]+\})", template)
    return re.compile("".join("[^/]+" if p.startswith("{") and p.endswith("}") else re.escape(p) for p in parts))


def body_routes_of(openapi: dict[str, object]) -> BodyRoutes:
    """Upload and bulk endpoints of an OpenAPI document (uploads: those whose body is multipart form data), and the
    pages' upload forms."""
    uploads: list[tuple[str, re.Pattern[str]]] = []
    paths = openapi.get("paths", {})
    assert isinstance(paths, dict)
    for template, operations in paths.items():
        for method, operation in operations.items():
            content = operation.get("requestBody", {}).get("content", {}) if isinstance(operation, dict) else {}
            if UPLOAD_MEDIA_TYPE in content:
                uploads.append((method.upper(), path_pattern(template)))
    uploads += [(method, path_pattern(template)) for method, template in sorted(WEB_UPLOAD_ROUTES)]
    bulk = tuple((method, path_pattern(template)) for method, template in sorted(BULK_JSON_ROUTES))
    return BodyRoutes(uploads=tuple(uploads), bulk=bulk)


async def _body_routes(scope: Scope) -> BodyRoutes:
    """The app's BodyRoutes, made from its OpenAPI document on first use (in a thread: it takes a while)."""
    state = scope["app"].state
    routes: BodyRoutes | None = getattr(state, "body_routes", None)
    if routes is None:
        routes = await run_in_threadpool(lambda: body_routes_of(scope["app"].openapi()))
        state.body_routes = routes
    return routes


@dataclass(frozen=True)
class Limit:
    """A body's limit in bytes, and the setting that sets it (named in the 413 answer)."""

    size: int
    setting: str


async def body_limit(scope: Scope, principal: Principal | None) -> Limit:
    """The most bytes the request's body may have: by what its endpoint takes, and for bulk JSON who sends it."""
    settings = scope["app"].state.settings
    kind = (await _body_routes(scope)).kind(scope["method"], scope["path"])
    if kind == "upload":
        return Limit(settings.max_upload_bytes + MULTIPART_SLACK, "max_upload_bytes")
    if kind == "bulk" and principal is not None and principal.role == Role.organiser:
        return Limit(settings.max_bulk_json_bytes, "max_bulk_json_bytes")
    return Limit(settings.max_json_bytes, "max_json_bytes")


class RequestLimits:
    """ASGI middleware: 401 before reading the body of a request without a valid token, 413 past the byte limit.

    The limit counts the bytes actually received (chunked bodies included), not only the declared Content-Length:
    a declared length over the limit is refused before any of the body is read, any other body once it is over.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the token of a body-carrying API request, then pass it on with its body counted."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        principal: Principal | None = None
        if _needs_token(scope, headers):
            try:
                principal = await run_in_threadpool(_check_token, scope, bearer_token(headers.get("authorization")))
            except Unauthenticated as exc:
                response = JSONResponse(
                    {"detail": exc.message, "errors": []},
                    status_code=401,
                    headers={"WWW-Authenticate": "Bearer", "Connection": "close"},
                )
                await response(scope, receive, send)
                return
            except TooManyAttempts as exc:
                response = JSONResponse(
                    {"detail": exc.message, "errors": []},
                    status_code=429,
                    headers={"Retry-After": str(exc.retry_after), "Connection": "close"},
                )
                await response(scope, receive, send)
                return
            except Exception as exc:
                reason = database_unavailable(exc)
                if reason is None:
                    raise
                log.warning("%s %s: %s while checking its token", scope["method"], scope["path"], reason)
                unavailable = unavailable_response(scope["path"], reason)
                unavailable.headers["Connection"] = "close"  # the body is not read
                await unavailable(scope, receive, send)
                return
        limit = await body_limit(scope, principal)
        scope[BODY_LIMIT_KEY] = (limit.size, limit.setting)  # for the 413 answer (api/errors.too_large)
        await RequestBodyLimitResponder(self.app, limit.size)(scope, receive, _json_413(scope, send))


def _json_413(scope: Scope, send: Send) -> Send:
    """`send`, with the body limiter's plain-text 413 replaced by the JSON error body the API documents."""
    rewriting = False
    body = json.dumps(too_large(scope)).encode()

    async def wrapped(message: Message) -> None:
        nonlocal rewriting
        if message["type"] == "http.response.start" and message["status"] == 413:
            headers = Headers(raw=message["headers"])
            if headers.get("content-type", "").startswith("text/plain"):
                rewriting = True
                raw = [(k, v) for k, v in message["headers"] if k not in (b"content-type", b"content-length")]
                raw += [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
                raw += [(b"connection", b"close")]  # the rest of the body is not read: the connection cannot be reused
                message = {**message, "headers": raw}
        elif message["type"] == "http.response.body" and rewriting:
            message = {**message, "body": body if not message.get("more_body") else b""}
            if not message.get("more_body"):
                rewriting = False
        await send(message)

    return wrapped
