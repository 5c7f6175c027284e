"""Sign-in by token (`/login`, form field `token`) into a browser session cookie, and `/logout`.

The login form has CSRF protection too, before any session exists: GET /login sets a random value in a short-lived
HttpOnly, SameSite=Strict cookie and the same value in the form; POST /login refuses a form whose value does not
match it (so another site cannot sign a browser in to its own account). Failed sign-ins go through the app's
failed-authentication throttle, handed in by the application as the roles are.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import RedirectResponse, Response
from sqlalchemy.orm import Session

from app import __version__
from app.services.errors import Forbidden, Unauthenticated
from app.storage.models import Role
from app.web import session as web_session
from app.web.twins import error_page, render, twin_paths

LOGIN_CSRF_COOKIE = "trecpool_login_csrf"
HOME = {Role.team: "/team/", Role.organiser: "/console/"}

Throttled = Callable[[Request, str | None, Callable[[str | None], Any]], Any]


def _form_page(request: Request, next_url: str, error: str | None, status_code: int) -> Response:
    """The sign-in form (with a fresh pre-session CSRF value in its cookie)."""
    value = secrets.token_urlsafe(24)
    data = {
        "page": "login",
        "signed_in": False,
        "action": "/login",
        "method": "POST",
        "fields": {"token": "your team or organiser token", "next": "where to go once signed in (a path)"},
        "next": next_url,
        "error": error,
    }
    extra = {
        "csrf": value,
        "version": __version__,
        "hours": round(request.app.state.settings.web_session_seconds / 3600),
    }
    response = render(request, "login.html", data, extra=extra, status_code=status_code)
    response.set_cookie(
        LOGIN_CSRF_COOKIE,
        value,
        max_age=3600,
        path="/login",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response


def make_router(page_role: Any, session_dependency: Any, throttled: Throttled) -> APIRouter:
    """/login and /logout (declared `page_role`: anyone may load them); `throttled(request, credential, use)` counts
    failed sign-ins per address."""
    router = APIRouter(tags=["web"], include_in_schema=False, dependencies=[page_role])
    SessionDep = Depends(session_dependency)

    def login_form(request: Request, next: str | None = None) -> Response:
        """The sign-in form."""
        return _form_page(request, web_session.safe_next(next, ""), None, 200)

    for path in twin_paths("/login"):
        router.add_api_route(path, login_form, methods=["GET"], name=f"login_form{'_json' if '.json' in path else ''}")

    @router.post("/login")
    def login(
        request: Request,
        token: Annotated[str, Form(max_length=500)] = "",
        next: Annotated[str, Form(max_length=2000)] = "",
        csrf_token: Annotated[str, Form(max_length=200)] = "",
        session: Session = SessionDep,
    ) -> Response:
        """Trade the form's token for a session cookie and go on to `next` (a path on this site only)."""
        next_url = web_session.safe_next(next, "")
        expected = request.cookies.get(LOGIN_CSRF_COOKIE, "")
        if not expected or not hmac.compare_digest(csrf_token, expected):
            return _form_page(request, next_url, "The form expired (CSRF token missing or wrong): try again.", 403)
        token = token.strip()
        if not token:
            return _form_page(request, next_url, "token: enter your token.", 422)
        try:
            lifetime = request.app.state.settings.web_session_seconds
            plain, principal = throttled(request, token, lambda t: web_session.sign_in(session, t or "", lifetime))
        except Unauthenticated as error:
            return _form_page(request, next_url, f"token: {error}", 401)
        except Forbidden as error:
            return _form_page(request, next_url, f"token: {error}", 403)
        session.commit()
        target = next_url or HOME.get(principal.role, "/")
        response = RedirectResponse(target, status_code=303, headers={"Cache-Control": "no-store"})
        web_session.set_cookie(request, response, plain, lifetime)
        response.delete_cookie(LOGIN_CSRF_COOKIE, path="/login")
        return response

    @router.post("/logout")
    def logout(
        request: Request, csrf_token: Annotated[str, Form(max_length=200)] = "", session: Session = SessionDep
    ) -> Response:
        """Revoke the browser session's token and drop its cookie (the form's CSRF value is required)."""
        web = web_session.current(request, session)
        if web is not None:
            try:
                web_session.check_csrf(web, csrf_token)
            except Forbidden as error:
                return error_page(request, 403, str(error))
            web_session.sign_out(session, web)
            session.commit()
        response = RedirectResponse("/login", status_code=303, headers={"Cache-Control": "no-store"})
        web_session.clear_cookie(request, response)
        return response

    return router
