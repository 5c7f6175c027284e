"""What every console page shares: the signed-in check, CSRF-checked posts, form fields, errors shown in the page.

The organiser console's pages (`console.py`, `console_pools.py`, `console_results.py`) and the team console
(`team_console.py`) sign in the same way: the session cookie (or a bearer header, for the JSON twins), a redirect to
`/login?next=<this page>` without one (JSON: 401), and the session's CSRF value on every form. A change runs in
`changed`: committed and redirected to the page with a notice, or rolled back and the page shown again with the
error in the form it came from (the services' InvalidInput names fields and a file's lines).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from fastapi import Request
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse, RedirectResponse, Response
from sqlalchemy.orm import Session
from starlette.datastructures import FormData

from app import __version__
from app.services.errors import InvalidInput, ServiceError, Unauthenticated
from app.storage.models import Role
from app.web import session as web_session
from app.web.twins import error_page, wants_json

STATUS = {"NotFound": 404, "Conflict": 409, "Forbidden": 403, "Unauthenticated": 401, "InvalidInput": 422}
Failure = dict[str, Any]
Again = Callable[[Failure, int], Response]  # the page again, showing a form's failure, with this status


def status_of(error: ServiceError) -> int:
    """The HTTP status of a service error (as the API answers it)."""
    for cls in type(error).__mro__:
        if cls.__name__ in STATUS:
            return STATUS[cls.__name__]
    return 400


async def read_form(request: Request) -> FormData:
    """The request's form (urlencoded or multipart), parsed once."""
    return await request.form()


def text_field(form: Mapping[str, Any], name: str) -> str:
    """A text field of the form ('' when absent or a file)."""
    value = form.get(name)
    return value if isinstance(value, str) else ""


def given_of(form: Mapping[str, Any]) -> dict[str, str]:
    """The form's text fields as typed (the CSRF value left out), to fill the form again after an error."""
    return {k: v for k, v in form.items() if isinstance(v, str) and k != web_session.CSRF_FIELD}


def signed_in(request: Request, session: Session, role: Role | None = None) -> web_session.WebPrincipal | Response:
    """The request's principal (of `role` when given), or the answer to give without one: a redirect to /login
    (JSON: 401), 403 for another role."""
    try:
        web = web_session.current(request, session)
    except Unauthenticated as error:
        return error_page(request, 401, str(error))
    if web is not None and role is not None and web.principal.role is not role:
        return error_page(request, 403, f"this page needs a {role.value}'s token: sign in with one")
    if web is not None:
        return web
    if wants_json(request):
        return JSONResponse({"detail": "sign in first: POST /login (form field token)", "errors": []}, 401)
    return RedirectResponse(web_session.login_redirect(request), status_code=303)


def who(web: web_session.WebPrincipal) -> str:
    """A short line naming the signed-in principal."""
    principal = web.principal
    if principal.role is Role.organiser:
        return f"organiser of campaign {principal.campaign_id}" if principal.campaign_id else "organiser"
    return f"team token (team {principal.team_id})" if principal.team_id else principal.role.value


def extra(web: web_session.WebPrincipal, **more: Any) -> dict[str, Any]:
    """What every console template gets beyond its data: the CSRF value, who is signed in, the version."""
    return {"csrf": web.csrf, "signed_in": True, "version": __version__, "who": who(web), **more}


def failed(request: Request, web: web_session.WebPrincipal, error: ServiceError, home: str | None = None) -> Response:
    """A service error as a page (or the API's error body)."""
    errors = error.errors if isinstance(error, InvalidInput) else []
    more = extra(web, home=home) if home else extra(web)
    return error_page(request, status_of(error), error.message, errors, extra=more)


def posted(
    request: Request, session: Session, form: Mapping[str, Any], role: Role | None = None
) -> web_session.WebPrincipal | Response:
    """The principal of a console POST with its CSRF value checked, or the answer to give instead."""
    web = signed_in(request, session, role)
    if isinstance(web, Response):
        return web
    try:
        web_session.check_csrf(web, form.get(web_session.CSRF_FIELD))
    except ServiceError as error:
        return failed(request, web, error)
    return web


def problem(form: str, error: ServiceError, given: Mapping[str, Any] | None = None) -> Failure:
    """A form's failure as the page shows it: which form, the message, the errors by field or line."""
    errors = error.errors if isinstance(error, InvalidInput) else []
    return {"form": form, "detail": error.message, "errors": errors, "given": dict(given or {})}


def changed(
    request: Request,
    session: Session,
    web: web_session.WebPrincipal,
    *,
    form_name: str,
    change: Callable[[], str | dict[str, Any]],
    back: str,
    again: Again,
    given: Mapping[str, Any] | None = None,
    shown: Callable[[dict[str, Any]], Response] | None = None,
) -> Response:
    """Run one change: committed, then a redirect to `back` with `change()`'s notice (a query string), or, when
    `change()` gives a dict (a secret made this once: never put in a URL), `shown(that dict)`; or rolled back and
    `again(failure, status)`: the page with the error in the form it came from. JSON callers get the outcome as
    JSON (the API's error body on failure)."""
    try:
        notice = change()
    except ServiceError as error:
        session.rollback()
        if wants_json(request):
            return failed(request, web, error)
        return again(problem(form_name, error, given), status_of(error))
    session.commit()
    if isinstance(notice, dict):
        if wants_json(request) or shown is None:
            return JSONResponse(jsonable_encoder(notice), status_code=201)
        return shown(notice)
    if wants_json(request):
        return JSONResponse({"done": notice})
    separator = "&" if "?" in back else "?"
    return RedirectResponse(f"{back}{separator}{notice}" if notice else back, status_code=303)


class CampaignPage(Protocol):
    """A campaign page of the console, shown again with a form's failure."""

    def __call__(
        self,
        request: Request,
        session: Session,
        web: web_session.WebPrincipal,
        campaign_id: int,
        *,
        failure: Failure | None = None,
        status_code: int = 200,
    ) -> Response: ...


def back_to(page: CampaignPage, suffix: str) -> Callable[..., Response]:
    """The change runner of one campaign page (`/console/campaigns/{id}{suffix}`): `changed` going back to it with a
    notice, or showing it again with the error in the form it came from."""

    def run(
        request: Request,
        session: Session,
        web: web_session.WebPrincipal,
        campaign_id: int,
        form_name: str,
        change: Callable[[], str],
        given: Mapping[str, Any],
    ) -> Response:
        return changed(
            request, session, web, form_name=form_name, change=change, given=given,
            back=f"/console/campaigns/{campaign_id}{suffix}",
            again=lambda failure, status: page(request, session, web, campaign_id, failure=failure, status_code=status),
        )  # fmt: skip

    return run
