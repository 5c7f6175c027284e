"""Browser sessions: a token traded at /login for a short-lived session token in an HttpOnly cookie, and CSRF.

The cookie never holds the long-lived token: signing in issues a new `api_tokens` row of the same role and principal
with an expiry (as a judging link is traded for a judging session), and /logout revokes it. Every form of a cookie
session carries a hidden `csrf_token`: an HMAC of the session token (the key only the cookie holds, which scripts of
other origins cannot read), so no server-side secret is needed and any process can check it; a POST from a cookie
session without it is refused (403 naming the field). Requests with an `Authorization: Bearer` header are API
calls: their principal is the bearer's, and CSRF does not apply (a browser never adds that header by itself).
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import quote

from fastapi import Request, Response
from sqlalchemy.orm import Session

from app.services.auth import SESSION_COOKIE, Principal, authenticate, authenticate_actor, issue_token
from app.services.errors import Forbidden, Unauthenticated
from app.services.tokens import now, revoke_token
from app.storage.audit import set_actor
from app.storage.models import Role

COOKIE = SESSION_COOKIE
CSRF_FIELD = "csrf_token"
SESSION_SECONDS = 12 * 3600.0  # a working day; the long-lived token stays with its owner
SIGN_IN_ROLES = (Role.organiser, Role.team)  # assessors keep their one-time judging link


@dataclass(frozen=True)
class WebPrincipal:
    """Who a page request speaks for, and how: by the session cookie (CSRF applies) or a bearer header (API)."""

    principal: Principal
    token: str
    by_cookie: bool

    @property
    def csrf(self) -> str:
        """The CSRF value of this session's forms."""
        return csrf_token(self.token)


def csrf_token(session_token: str) -> str:
    """The CSRF value of a session: HMAC-SHA256 of a fixed label keyed by the session token (hex)."""
    return hmac.new(session_token.encode(), b"trecpool csrf v1", hashlib.sha256).hexdigest()


def sign_in(session: Session, token: str, seconds: float = SESSION_SECONDS) -> tuple[str, Principal]:
    """A new session token (plain) for an organiser's or team's token, expiring in `seconds`; Unauthenticated or
    Forbidden (assessors) otherwise. The caller commits."""
    given = authenticate(session, token.strip())
    if given.role not in SIGN_IN_ROLES:
        raise Forbidden("assessors open their judging link (judge_url) instead of signing in")
    set_actor(session, given.actor())
    row, plain = issue_token(
        session,
        given.role,
        label=f"browser session (token {given.token_id})",
        campaign_id=given.campaign_id if given.role is Role.organiser else None,
        team_id=given.team_id,
        expires_at=now() + timedelta(seconds=seconds),
    )
    return plain, authenticate(session, plain)


def bearer(request: Request) -> str | None:
    """The token of the request's `Authorization: Bearer` header, if any."""
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    return value.strip() or None if scheme.lower() == "bearer" else None


def current(request: Request, session: Session) -> WebPrincipal | None:
    """The request's principal (bearer header first, then the session cookie), the audit actor of its changes;
    None without either. A bad bearer token is Unauthenticated; a stale cookie is simply no session."""
    token = bearer(request)
    if token is not None:
        return WebPrincipal(authenticate_actor(session, token), token, by_cookie=False)
    cookie = request.cookies.get(COOKIE)
    if not cookie:
        return None
    try:
        return WebPrincipal(authenticate_actor(session, cookie), cookie, by_cookie=True)
    except Unauthenticated:
        return None


def check_csrf(web: WebPrincipal, submitted: object) -> None:
    """Forbidden unless a cookie session's POST carries its CSRF value (bearer requests need none)."""
    if not web.by_cookie:
        return
    if not isinstance(submitted, str) or not hmac.compare_digest(submitted, web.csrf):
        raise Forbidden(f"missing or wrong CSRF token (form field {CSRF_FIELD}): reload the page and try again")


def set_cookie(request: Request, response: Response, token: str, seconds: float = SESSION_SECONDS) -> None:
    """Put the session token in the response's cookie: HttpOnly, SameSite=Lax, Path=/, Secure over https."""
    response.set_cookie(
        COOKIE,
        token,
        max_age=int(seconds),
        path="/",
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
    )


def clear_cookie(request: Request, response: Response) -> None:
    """Remove the session cookie."""
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="lax", secure=request.url.scheme == "https")


def sign_out(session: Session, web: WebPrincipal | None) -> None:
    """Revoke the cookie session's token (a bearer token is left alone: it is not the browser's). Caller commits."""
    if web is not None and web.by_cookie:
        revoke_token(session, web.principal, web.principal.token_id)


def safe_next(target: str | None, default: str = "/team/") -> str:
    """A redirect target that stays on this site: a path starting with one '/' (never '//' or a scheme)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return default
    if any(ord(c) < 32 for c in target):
        return default
    return target


def login_redirect(request: Request) -> str:
    """The /login URL that comes back to this page once signed in."""
    path = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return f"/login?next={quote(path, safe='')}"
