"""Role declarations: every endpoint depends on exactly one of these, and tests check that.

A role declaration also declares the bearer token in the OpenAPI (`BEARER`, the `bearerToken` security scheme), so
every operation but the public ones carries `security` and /docs has its Authorize button: derived from the role
dependency itself, it cannot drift from who may call what.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Annotated, Any

from fastapi import Depends, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session

from app.api.throttle import FailureThrottle
from app.services.auth import SESSION_COOKIE, Principal, authenticate_actor
from app.services.errors import Forbidden, Unauthenticated
from app.storage.audit import set_actor
from app.storage.models import Role

_throttle_lock = threading.Lock()

ROLE_MARKER = "__trecpool_roles__"


def get_session(request: Request) -> Iterator[Session]:
    """A session for one request; endpoints commit their own unit of work."""
    session = request.app.state.session_factory()
    try:
        yield session
    finally:
        session.rollback()
        session.close()


SessionDep = Annotated[Session, Depends(get_session)]

# The OpenAPI security schemes. Both only read the Authorization header (auto_error off): the role check answers 401.
BEARER = HTTPBearer(
    scheme_name="bearerToken",
    description="A trecpool token (tp_...): an organiser's, a team's, an assessor's, or an assessor's judging session.",
    auto_error=False,
)
JUDGE_LINK = HTTPBearer(
    scheme_name="judgingLink",
    description="A one-time judging link: the secret after `#link=` in a `judge_url` (only POST /api/judging/session).",
    auto_error=False,
)
Credentials = Annotated[HTTPAuthorizationCredentials | None, Security(BEARER)]
LinkCredentials = Annotated[HTTPAuthorizationCredentials | None, Security(JUDGE_LINK)]


def credential_of(credentials: HTTPAuthorizationCredentials | None) -> str | None:
    """The secret of a parsed `Authorization: Bearer ...` header (None without one)."""
    return credentials.credentials.strip() if credentials is not None else None


def bearer_token(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer ...` header."""
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None


def throttle_of(request: Request) -> FailureThrottle:
    """The app's failed-authentication throttle (made on first use from its settings)."""
    state = request.app.state
    with _throttle_lock:
        if getattr(state, "auth_throttle", None) is None:
            settings = state.settings
            state.auth_throttle = FailureThrottle(settings.auth_max_failures, settings.auth_failure_window_seconds)
    throttle: FailureThrottle = state.auth_throttle
    return throttle


def client_address(request: Request) -> str:
    """The caller's address (behind a proxy: run uvicorn with --proxy-headers to see the real one)."""
    return request.client.host if request.client else "unknown"


def checked_credential(request: Request, credential: str | None, use: Callable[[str | None], Any]) -> Any:
    """`use(credential)`, throttled: a failure counted, and refused (429) once the address is over its failures."""
    throttle, address = throttle_of(request), client_address(request)
    try:
        return use(credential)
    except Unauthenticated:
        if credential:
            throttle.failed(address)
        raise


PRINCIPAL_KEY = "trecpool_principal"


def remember_principal(request: Request, token: str | None, principal: Principal) -> None:
    """Keep the principal a token was just authenticated as, for this request's role check."""
    setattr(request.state, PRINCIPAL_KEY, (token, principal))


def remembered_principal(request: Request, token: str | None) -> Principal | None:
    """The principal this request's token was authenticated as before its body was read, if it was."""
    found = getattr(request.state, PRINCIPAL_KEY, None)
    return found[1] if found is not None and found[0] == token else None


def role(*roles: Role, session_cookie_reads: bool = False) -> Any:
    """A dependency admitting callers whose token has one of `roles`; yields their Principal.

    The principal becomes the actor of the audit trail for every change the request's session makes.
    `session_cookie_reads`: a GET without a bearer header may present the browser session's cookie instead (a
    read: no CSRF to check), as the organiser page's panels do for an organiser signed in at /login.
    """

    def check(request: Request, session: SessionDep, credentials: Credentials) -> Principal:
        token = credential_of(credentials)
        if token is None and session_cookie_reads and request.method in ("GET", "HEAD"):
            token = request.cookies.get(SESSION_COOKIE) or None
        principal = remembered_principal(request, token)
        if principal is None:
            principal = checked_credential(request, token, lambda token: authenticate_actor(session, token))
        else:
            set_actor(session, principal.actor())
        if principal.role not in roles:
            raise Forbidden(f"this endpoint is for {' or '.join(r.value for r in roles)} tokens")
        return principal

    setattr(check, ROLE_MARKER, tuple(r.value for r in roles))
    return Depends(check)


def public() -> Any:
    """A dependency declaring an endpoint open to everyone, token or not."""

    def open_to_all() -> None:
        return None

    setattr(open_to_all, ROLE_MARKER, ("public",))
    return Depends(open_to_all)


def declared_roles(dependency: Callable[..., Any]) -> tuple[str, ...] | None:
    """The roles a dependency declares, or None for other dependencies."""
    return getattr(dependency, ROLE_MARKER, None)


Organiser = Annotated[Principal, role(Role.organiser)]
Member = Annotated[Principal, role(Role.organiser, Role.team, Role.assessor)]
Submitter = Annotated[Principal, role(Role.organiser, Role.team)]
